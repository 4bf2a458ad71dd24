package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		want    config
		wantErr string
	}{
		{"defaults", map[string]string{"MODEL": "m", "OPENAI_API_KEY": "k"},
			config{baseURL: "https://api.openai.com/v1", apiKey: "k", model: "m", dir: "data/memory"}, ""},
		{"local server needs no key", map[string]string{"MODEL": "llama3", "OPENAI_BASE_URL": "http://localhost:11434/v1", "MEMORY_DIR": "/tmp/m"},
			config{baseURL: "http://localhost:11434/v1", model: "llama3", dir: "/tmp/m"}, ""},
		{"nothing set", nil, config{},
			"set MODEL (the model name, such as gpt-4o-mini) and OPENAI_API_KEY (or set OPENAI_BASE_URL to a server that needs no key)"},
		{"no model", map[string]string{"OPENAI_API_KEY": "k"}, config{}, "set MODEL (the model name, such as gpt-4o-mini)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := configFrom(env(tt.vars))
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestRunNeedsConfigAndInput(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), env(nil), []string{"hi"}, &out, http.DefaultClient)
	require.ErrorContains(t, err, "set MODEL")
	err = run(context.Background(), env(map[string]string{"MODEL": "m", "OPENAI_API_KEY": "k"}), []string{" "}, &out, http.DefaultClient)
	require.EqualError(t, err, `usage: go run ./examples/openai "your request"`)
	require.Empty(t, out.String())
}

// fakeModel plays both the agent and the reflector over the wire: the
// reflector is the one offered four tools.
func fakeModel(t *testing.T) func(request) (int, string) {
	return func(r request) (int, string) {
		var req chatRequest
		if err := json.Unmarshal(r.body, &req); err != nil {
			t.Errorf("decode request: %v", err)
			return http.StatusBadRequest, `{"error": {"message": "bad request"}}`
		}
		last := req.Messages[len(req.Messages)-1]
		text := func(s string) (int, string) {
			b, _ := json.Marshal(s)
			return http.StatusOK, `{"choices": [{"message": {"role": "assistant", "content": ` + string(b) + `}}]}`
		}
		callTool := func(name, args string) (int, string) {
			b, _ := json.Marshal(args)
			return http.StatusOK, `{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
				{"id": "call_` + name + `", "type": "function", "function": {"name": "` + name + `", "arguments": ` + string(b) + `}}]}}]}`
		}
		reflector := len(req.Tools) == 4
		index := ""
		if !reflector {
			index = *req.Messages[1].Content
		}
		switch {
		case reflector && last.Role == "tool":
			return text("Recorded the user's name.")
		case reflector && strings.Contains(*req.Messages[1].Content, "I'm Zhang San"):
			return callTool("memory_append", `{"path": "facts/user.md", "entry": "- Name: Zhang San", "summary": null}`)
		case reflector:
			return text("Nothing new worth recording.")
		case last.Role == "tool" && strings.Contains(*last.Content, "- Name: Zhang San"):
			return text("Your name is Zhang San.")
		case last.Role == "tool":
			return text("Nice to meet you, Zhang San.")
		case strings.Contains(index, "facts/user.md"):
			return callTool("memory_read", `{"path": "facts/user.md"}`)
		default:
			return callTool("memory_list", `{}`)
		}
	}
}

// TestRunRemembersAcrossRestarts is the seed's first acceptance criterion
// over the wire: the user gives their name, the reflector records it, and
// a later run (a new Store on the same directory) answers from memory.
func TestRunRemembersAcrossRestarts(t *testing.T) {
	srv, got := serverFunc(t, fakeModel(t))
	vars := env(map[string]string{"MODEL": "m", "OPENAI_BASE_URL": srv.URL, "MEMORY_DIR": t.TempDir()})

	var out bytes.Buffer
	require.NoError(t, run(context.Background(), vars, []string{"I'm Zhang San.", "Remember my name."}, &out, srv.Client()))
	require.Equal(t, "Nice to meet you, Zhang San.\n\n[memory] Recorded the user's name.\n[memory] changed: [facts/user.md]\n", out.String())
	require.Len(t, got, 4, "two agent calls, two reflector calls")
	var first chatRequest
	require.NoError(t, json.Unmarshal((<-got).body, &first))
	require.Equal(t, "Available memory: none yet.\n\nNothing has been remembered so far.\n", *first.Messages[1].Content, "the index is the first user message")
	require.Equal(t, "I'm Zhang San. Remember my name.", *first.Messages[2].Content)
	require.Len(t, first.Tools, 6)

	out.Reset()
	require.NoError(t, run(context.Background(), vars, []string{"What's my name?"}, &out, srv.Client()))
	require.Equal(t, "Your name is Zhang San.\n\n[memory] Nothing new worth recording.\n[memory] changed: []\n", out.String())
}

func TestRunStopsAModelThatNeverAnswers(t *testing.T) {
	srv, _ := serverFunc(t, func(request) (int, string) {
		return http.StatusOK, `{"choices": [{"message": {"role": "assistant", "tool_calls": [
			{"id": "c", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}]}}]}`
	})
	vars := env(map[string]string{"MODEL": "m", "OPENAI_BASE_URL": srv.URL, "MEMORY_DIR": t.TempDir()})
	var out bytes.Buffer
	err := run(context.Background(), vars, []string{"loop"}, &out, srv.Client())
	require.EqualError(t, err, "no answer after 10 model calls")
}

func TestRunSkipsTrivialTasks(t *testing.T) {
	srv, got := server(t, `{"choices": [{"message": {"role": "assistant", "content": "Hello!"}}]}`)
	vars := env(map[string]string{"MODEL": "m", "OPENAI_BASE_URL": srv.URL, "MEMORY_DIR": t.TempDir()})
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), vars, []string{"hi"}, &out, srv.Client()))
	require.Equal(t, "Hello!\n\n[memory] a trivial task: nothing to reflect on\n", out.String())
	require.Len(t, got, 1, "no reflection")
}

func TestRunReportsAPIErrors(t *testing.T) {
	srv, _ := serverFunc(t, func(request) (int, string) {
		return http.StatusUnauthorized, `{"error": {"message": "Incorrect API key provided"}}`
	})
	vars := env(map[string]string{"MODEL": "m", "OPENAI_BASE_URL": srv.URL, "MEMORY_DIR": t.TempDir()})
	err := run(context.Background(), vars, []string{"hi"}, &bytes.Buffer{}, srv.Client())
	require.EqualError(t, err, "openai: 401 Unauthorized: Incorrect API key provided")
}
