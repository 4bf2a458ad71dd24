package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

func TestClientSpeaksChatCompletions(t *testing.T) {
	store, err := memory.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer store.Close()
	read := store.NewSession().ReflectionTools()[0]

	srv, got := server(t, `{"id": "x", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
		"role": "assistant", "content": "let me look",
		"tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "memory_write", "arguments": "{\"path\":\"facts/user.md\",\"content\":\"- x\"}"}}]}}]}`)
	c := &chatClient{baseURL: srv.URL + "/v1/", apiKey: "sk-test", model: "test-model", http: srv.Client()}
	resp, err := c.Complete(context.Background(), memory.Request{
		System: "be brief",
		Messages: []memory.Message{
			{Role: "user", Content: "hi"},
			{Role: "assistant", ToolCalls: []memory.ToolCall{
				{ID: "call_1", Name: "memory_read", Arguments: json.RawMessage(`{"path":"facts/user.md"}`)},
				{ID: "call_2", Name: "memory_list"},
			}},
			{Role: "tool", ToolCallID: "call_1", Content: "# User"},
			{Role: "assistant", Content: "thinking", ToolCalls: []memory.ToolCall{{ID: "call_3", Name: "memory_read", Arguments: json.RawMessage(`{}`)}}},
			{Role: "assistant"},
		},
		Tools: []memory.Tool{read},
	})
	require.NoError(t, err)
	require.Equal(t, memory.Response{Content: "let me look", ToolCalls: []memory.ToolCall{
		{ID: "call_9", Name: "memory_write", Arguments: json.RawMessage(`{"path":"facts/user.md","content":"- x"}`)},
	}}, resp)

	r := <-got
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, "/v1/chat/completions", r.path)
	require.Equal(t, "Bearer sk-test", r.header.Get("Authorization"))
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.JSONEq(t, `{
		"model": "test-model",
		"messages": [
			{"role": "system", "content": "be brief"},
			{"role": "user", "content": "hi"},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "memory_read", "arguments": "{\"path\":\"facts/user.md\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "memory_list", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_1", "content": "# User"},
			{"role": "assistant", "content": "thinking", "tool_calls": [
				{"id": "call_3", "type": "function", "function": {"name": "memory_read", "arguments": "{}"}}
			]},
			{"role": "assistant", "content": ""}
		],
		"tools": [{"type": "function", "function": {"name": "memory_read", "description": `+quote(t, read.Description)+`, "parameters": `+string(read.InputSchema)+`}}]
	}`, string(r.body))
}

// request is what a test server received.
type request struct {
	method, path string
	header       http.Header
	body         []byte
}

// server answers every request with status 200 and reply, and hands each
// request it receives to the test through the returned channel.
func server(t *testing.T, reply string) (*httptest.Server, <-chan request) {
	return serverFunc(t, func(request) (int, string) { return http.StatusOK, reply })
}

// serverFunc answers each request with what reply returns for it.
func serverFunc(t *testing.T, reply func(request) (int, string)) (*httptest.Server, <-chan request) {
	got := make(chan request, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request: %v", err)
		}
		req := request{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		got <- req
		status, text := reply(req)
		w.WriteHeader(status)
		io.WriteString(w, text)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func quote(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

func TestClientTextReplyAndNoKey(t *testing.T) {
	srv, got := server(t, `{"choices": [{"message": {"role": "assistant", "content": "hello"}}]}`)
	c := &chatClient{baseURL: srv.URL, model: "m", http: srv.Client()}
	resp, err := c.Complete(context.Background(), memory.Request{Messages: []memory.Message{{Role: "user", Content: "hi"}}})
	require.NoError(t, err)
	require.Equal(t, memory.Response{Content: "hello"}, resp)
	r := <-got
	require.Empty(t, r.header.Get("Authorization"), "no key, no header")
	require.JSONEq(t, `{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`, string(r.body),
		"no system prompt, no system message; no tools, no tools field")
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{"API error", http.StatusUnauthorized, `{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}`,
			"openai: 401 Unauthorized: Incorrect API key provided"},
		{"plain error", http.StatusBadGateway, "upstream down\n", "openai: 502 Bad Gateway: upstream down"},
		{"no choices", http.StatusOK, `{"choices": []}`, "openai: the response has no choices"},
		{"not JSON", http.StatusOK, `<html>`, "openai: decode response: invalid character '<' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serverFunc(t, func(request) (int, string) { return tt.status, tt.body })
			c := &chatClient{baseURL: srv.URL, model: "m", http: srv.Client()}
			_, err := c.Complete(context.Background(), memory.Request{})
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestClientCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("no request expected")
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := &chatClient{baseURL: srv.URL, model: "m", http: srv.Client()}
	_, err := c.Complete(ctx, memory.Request{})
	require.ErrorIs(t, err, context.Canceled)
}
