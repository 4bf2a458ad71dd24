package anthropicmem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/anthropicmem"
	"github.com/stretchr/testify/require"
)

// fakeAPI plays the Messages API on loopback for the real SDK client: it
// answers each POST /v1/messages with the next scripted message and keeps
// the requests, decoded, for the test to inspect.
type fakeAPI struct {
	t        *testing.T
	mu       sync.Mutex
	replies  []string
	requests []request
}

// request is the part of a Messages API request the tests look at.
type request struct {
	Path     string
	Tools    []map[string]any `json:"tools"`
	Messages []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	} `json:"messages"`
}

func newFakeAPI(t *testing.T, replies ...string) (*fakeAPI, anthropic.Client) {
	f := &fakeAPI{t: t, replies: replies}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return f, client
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Path = r.Method + " " + r.URL.Path
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, req)
	if len(f.replies) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"the script has no more replies"}}`)
		return
	}
	reply := f.replies[0]
	f.replies = f.replies[1:]
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, reply)
}

// sent returns the requests the fake API received.
func (f *fakeAPI) sent() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.requests...)
}

// toolUse is a tool_use content block of a scripted message.
func toolUse(id, name string, input any) string {
	b, _ := json.Marshal(map[string]any{"type": "tool_use", "id": id, "name": name, "input": input})
	return string(b)
}

// message is a scripted assistant message: tool_use blocks stop for tool
// use, a text ends the turn.
func message(blocks ...string) string {
	stop := "end_turn"
	for _, b := range blocks {
		if strings.Contains(b, `"type":"tool_use"`) {
			stop = "tool_use"
		}
	}
	return fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":"claude-test","content":[%s],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`,
		time.Now().UnixNano(), strings.Join(blocks, ","), stop)
}

func text(s string) string {
	b, _ := json.Marshal(map[string]any{"type": "text", "text": s})
	return string(b)
}

// result is a tool_result block as the API received it.
type result struct {
	ID      string
	Text    string
	IsError bool
}

// results returns the tool_result blocks of a request's last message.
func results(t *testing.T, r request) []result {
	t.Helper()
	last := r.Messages[len(r.Messages)-1]
	require.Equal(t, "user", last.Role)
	var out []result
	for _, b := range last.Content {
		require.Equal(t, "tool_result", b["type"])
		var texts []string
		for _, c := range b["content"].([]any) {
			texts = append(texts, c.(map[string]any)["text"].(string))
		}
		isErr, _ := b["is_error"].(bool)
		out = append(out, result{ID: b["tool_use_id"].(string), Text: strings.Join(texts, ""), IsError: isErr})
	}
	return out
}

const userFacts = "# User\n\n> Summary: Jianjun, likes tea\n\n- Name: Jianjun\n- Likes: tea\n"

func openStore(t *testing.T) (*memory.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	s, err := memory.Open(dir, &memory.Options{Now: func() time.Time { return time.Date(2026, 2, 26, 9, 0, 0, 0, time.UTC) }})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "facts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "facts", "user.md"), []byte(userFacts), 0o644))
	return s, dir
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

// TestToolRunner runs the SDK's own tool runner against a scripted model:
// the runner offers the six memory tools and Claude's memory tool as the
// memory_20250818 type, runs the calls of each message (in parallel, as it
// does) through the conversation, and sends back their results, a model
// error as an is_error result; the files change on disk.
func TestToolRunner(t *testing.T) {
	s, dir := openStore(t)
	api, client := newFakeAPI(t,
		message(text("Let me check my memory."),
			toolUse("toolu_1", "memory", map[string]any{"command": "view", "path": "/memories"}),
			toolUse("toolu_2", "memory_search", map[string]any{"query": "tea", "limit": nil})),
		message(toolUse("toolu_3", "memory", map[string]any{"command": "view", "path": "/memories/facts/user.md"})),
		message(toolUse("toolu_4", "memory", map[string]any{"command": "str_replace", "path": "/memories/facts/user.md", "old_str": "- Likes: tea", "new_str": "- Likes: green tea"}),
			toolUse("toolu_5", "memory", map[string]any{"command": "delete", "path": "/memories/facts/user.md"})),
		message(text("Noted: you like green tea.")),
	)
	session := s.Session("conversation-1")
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	tools := append(anthropicmem.BetaTools(session, stop), anthropicmem.BetaMemoryTool(session, stop))
	runner := client.Beta.Messages.NewToolRunner(tools, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model:     anthropic.ModelClaudeSonnet5_5,
			MaxTokens: 1024,
			Messages:  []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("I prefer green tea now."))},
		},
		MaxIterations: 10,
	})
	anthropicmem.UseMemoryTool(&runner.Params)
	final, err := runner.RunToCompletion(ctx)
	require.NoError(t, err)
	require.Equal(t, "Noted: you like green tea.", final.Content[0].Text)
	require.NoError(t, context.Cause(ctx))

	reqs := api.sent()
	require.Len(t, reqs, 4)
	require.Equal(t, "POST /v1/messages", reqs[0].Path)

	// The tools: the six memory tools with their schemas, and the memory tool.
	var names []string
	want := session.Tools()
	for i, tool := range reqs[0].Tools {
		names = append(names, tool["name"].(string))
		if tool["name"] == "memory" {
			require.Equal(t, map[string]any{"type": "memory_20250818", "name": "memory"}, tool)
			continue
		}
		require.Equal(t, want[i].Description, tool["description"])
		require.Equal(t, want[i].SchemaMap(), tool["input_schema"], tool["name"])
	}
	require.Equal(t, []string{"memory_list", "memory_search", "memory_read", "memory_write", "memory_patch", "memory_append", "memory"}, names)

	got := results(t, reqs[1])
	require.Len(t, got, 2)
	require.Equal(t, "toolu_1", got[0].ID)
	require.False(t, got[0].IsError)
	require.True(t, strings.HasPrefix(got[0].Text, "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n68B\t/memories\n0B\t/memories/episodes/\n68B\t/memories/facts/\n68B\t/memories/facts/user.md\n"), got[0].Text)
	require.Equal(t, "toolu_2", got[1].ID)
	require.False(t, got[1].IsError)
	require.Contains(t, got[1].Text, `"path":"facts/user.md"`)

	got = results(t, reqs[2])
	require.Equal(t, []result{{ID: "toolu_3", Text: "Here's the content of /memories/facts/user.md with line numbers:\n     1\t# User\n     2\t\n     3\t> Summary: Jianjun, likes tea\n     4\t\n     5\t- Name: Jianjun\n     6\t- Likes: tea"}}, got)

	got = results(t, reqs[3])
	require.Len(t, got, 2)
	require.Equal(t, result{ID: "toolu_4", Text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     4\t\n     5\t- Name: Jianjun\n     6\t- Likes: green tea"}, got[0])
	require.Equal(t, "toolu_5", got[1].ID)
	require.True(t, got[1].IsError)
	require.True(t, strings.HasPrefix(got[1].Text, "Error: Cannot delete /memories/facts/user.md: memory here is a closed set of files"), got[1].Text)

	require.Equal(t, strings.Replace(userFacts, "- Likes: tea", "- Likes: green tea", 1), readFile(t, dir, "facts/user.md"))
}

// TestToolRunnerModelErrors: through the runner, the conversation's guard
// and the memory_* tools' model errors reach the model as is_error results
// that say what to do, and the run goes on.
func TestToolRunnerModelErrors(t *testing.T) {
	s, dir := openStore(t)
	api, client := newFakeAPI(t,
		message(toolUse("toolu_1", "memory", map[string]any{"command": "create", "path": "/memories/facts/user.md", "file_text": "# User\n"}),
			toolUse("toolu_2", "memory_write", map[string]any{"path": "notes.md", "content": "x", "version": nil})),
		message(text("I will view it first.")),
	)
	session := s.NewSession()
	tools := append(anthropicmem.BetaTools(session, nil), anthropicmem.BetaMemoryTool(session, nil))
	runner := client.Beta.Messages.NewToolRunner(tools, anthropic.BetaToolRunnerParams{
		BetaMessageNewParams: anthropic.BetaMessageNewParams{
			Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
			Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Forget everything about me."))},
		},
	})
	anthropicmem.UseMemoryTool(&runner.Params)
	_, err := runner.RunToCompletion(context.Background())
	require.NoError(t, err)
	got := results(t, api.sent()[1])
	require.Len(t, got, 2)
	require.True(t, got[0].IsError)
	require.Equal(t, "Error: File /memories/facts/user.md already exists and was not viewed in this conversation, so create would overwrite text you have not seen: nothing was changed. view it first (whole, without view_range), then create it with the whole new text, or change part of it with str_replace or insert", got[0].Text)
	require.True(t, got[1].IsError)
	require.True(t, strings.HasPrefix(got[1].Text, "Error: notes.md is not a memory file"), got[1].Text)
	require.Equal(t, userFacts, readFile(t, dir, "facts/user.md"))
}

// TestToolRunnerHostFailure: a failure of the host (here a closed store)
// stops the runner with an error when onHostFailure cancels its context,
// context.Cause giving the failure, and the model is not sent another
// request; with a nil onHostFailure the runner shows the tool's error to
// the model, as it does for any tool.
func TestToolRunnerHostFailure(t *testing.T) {
	for _, withCancel := range []bool{true, false} {
		t.Run(fmt.Sprint("cancel=", withCancel), func(t *testing.T) {
			s, _ := openStore(t)
			api, client := newFakeAPI(t,
				message(toolUse("toolu_1", "memory", map[string]any{"command": "view", "path": "/memories"})),
				message(text("done")),
			)
			session := s.NewSession()
			require.NoError(t, s.Close())
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			var onHostFailure func(error)
			if withCancel {
				onHostFailure = stop
			}
			runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{anthropicmem.BetaMemoryTool(session, onHostFailure)}, anthropic.BetaToolRunnerParams{
				BetaMessageNewParams: anthropic.BetaMessageNewParams{
					Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
					Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("hi"))},
				},
			})
			anthropicmem.UseMemoryTool(&runner.Params)
			_, err := runner.RunToCompletion(ctx)
			if withCancel {
				require.Error(t, err)
				require.ErrorIs(t, context.Cause(ctx), memory.ErrClosed)
				require.Len(t, api.sent(), 1, "no request after the failure")
				return
			}
			require.NoError(t, err)
			got := results(t, api.sent()[1])
			require.Equal(t, []result{{ID: "toolu_1", Text: "Error: memory: view: store is closed", IsError: true}}, got)
		})
	}
	// The text the model reads when the program was told.
	s, _ := openStore(t)
	session := s.NewSession()
	require.NoError(t, s.Close())
	var told error
	tool := anthropicmem.BetaTools(session, func(err error) { told = err })[2] // memory_read
	_, err := tool.Execute(context.Background(), json.RawMessage(`{"path":"facts/user.md","line":null}`))
	require.EqualError(t, err, "memory failed on the host's side (not a mistake in this call); go on without memory")
	require.ErrorIs(t, told, memory.ErrClosed)
}

// TestUseMemoryTool: UseMemoryTool replaces only the runner's custom
// definition named "memory".
func TestUseMemoryTool(t *testing.T) {
	s, _ := openStore(t)
	p := anthropic.BetaToolRunnerParams{}
	p.Tools = append(anthropicmem.BetaToolParams(s.NewSession()), anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{Name: "memory"}})
	anthropicmem.UseMemoryTool(&p)
	require.Len(t, p.Tools, 7)
	for _, tool := range p.Tools[:6] {
		require.NotNil(t, tool.OfTool)
		require.True(t, strings.HasPrefix(tool.OfTool.Name, "memory_"))
	}
	require.NotNil(t, p.Tools[6].OfMemoryTool20250818)
	b, err := json.Marshal(p.Tools[6])
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"memory_20250818","name":"memory"}`, string(b))

	// A runner whose "memory" tool is not declared sends it as a custom
	// tool, with a schema of the commands.
	tool := anthropicmem.BetaMemoryTool(s.NewSession(), nil)
	require.Equal(t, "memory", tool.Name())
	b, err = json.Marshal(tool.InputSchema())
	require.NoError(t, err)
	require.Contains(t, string(b), `"enum":["view","create","str_replace","insert","delete","rename"]`)
	require.Contains(t, tool.Description(), "UseMemoryTool")
}

// TestBetaAnswerLoop is a loop of the program's own on
// client.Beta.Messages.New: BetaAnswer answers every tool call of each
// message, Claude's memory tool and the memory_* tools, and a call of a
// tool that is not there gets an is_error result.
func TestBetaAnswerLoop(t *testing.T) {
	s, dir := openStore(t)
	api, client := newFakeAPI(t,
		message(toolUse("toolu_1", "memory", map[string]any{"command": "view", "path": "/memories/facts/memory.md"}),
			toolUse("toolu_2", "memory_append", map[string]any{"path": "facts/memory.md", "entry": "- Check airline sites for prices", "summary": nil})),
		message(toolUse("toolu_3", "memory", map[string]any{"command": "insert", "path": "/memories/facts/memory.md", "insert_line": 5, "insert_text": "- Book early for April"}),
			toolUse("toolu_4", "weather", map[string]any{"city": "Tokyo"})),
		message(text("Done.")),
	)
	session := s.NewSession()
	ctx := context.Background()
	params := anthropic.BetaMessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Remember the travel lessons."))},
	}
	// The user's glue, as the README shows it.
	params.Tools = append(anthropicmem.BetaToolParams(session), anthropicmem.BetaMemoryToolParam())
	msg, err := client.Beta.Messages.New(ctx, params)
	for err == nil && msg.StopReason == anthropic.BetaStopReasonToolUse {
		answer, aerr := anthropicmem.BetaAnswer(ctx, session, *msg)
		require.NoError(t, aerr)
		params.Messages = append(params.Messages, msg.ToParam(), answer)
		msg, err = client.Beta.Messages.New(ctx, params)
	}
	require.NoError(t, err)
	require.Equal(t, "Done.", msg.Content[0].Text)

	reqs := api.sent()
	require.Len(t, reqs, 3)
	require.Len(t, reqs[0].Tools, 7)
	require.Equal(t, map[string]any{"type": "memory_20250818", "name": "memory"}, reqs[0].Tools[6])
	got := results(t, reqs[1])
	require.Equal(t, result{ID: "toolu_1", IsError: true, Text: "The path /memories/facts/memory.md does not exist. Please provide a valid path. It can be made with create."}, got[0])
	require.Equal(t, "toolu_2", got[1].ID)
	require.False(t, got[1].IsError, got[1].Text)
	got = results(t, reqs[2])
	require.Equal(t, result{ID: "toolu_3", Text: "The file /memories/facts/memory.md has been edited."}, got[0])
	require.Equal(t, "toolu_4", got[1].ID)
	require.True(t, got[1].IsError)
	require.Contains(t, got[1].Text, `there is no tool named "weather" here`)
	require.Equal(t, "# Memory\n\n> Summary: Check airline sites…\n\n- Check airline sites for prices\n- Book early for April\n", readFile(t, dir, "facts/memory.md"))
}

// TestAnswerLoop is the same loop on client.Messages.New, with the
// definitions of ToolParams and MemoryToolParam.
func TestAnswerLoop(t *testing.T) {
	s, dir := openStore(t)
	api, client := newFakeAPI(t,
		message(toolUse("toolu_1", "memory_read", map[string]any{"path": "facts/user.md", "line": nil})),
		message(toolUse("toolu_2", "memory", map[string]any{"command": "str_replace", "path": "/memories/facts/user.md", "old_str": "- Name: Jianjun", "new_str": "- Name: 建军"}),
			toolUse("toolu_3", "memory", map[string]any{"command": "rename", "old_path": "/memories/facts/user.md", "new_path": "/memories/me.md"})),
		message(text("Done.")),
	)
	session := s.NewSession()
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model: anthropic.ModelClaudeSonnet5_5, MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("My name is 建军."))},
		Tools:    append(anthropicmem.ToolParams(session), anthropicmem.MemoryToolParam()),
	}
	msg, err := client.Messages.New(ctx, params)
	for err == nil && msg.StopReason == anthropic.StopReasonToolUse {
		answer, aerr := anthropicmem.Answer(ctx, session, *msg)
		require.NoError(t, aerr)
		params.Messages = append(params.Messages, msg.ToParam(), answer)
		msg, err = client.Messages.New(ctx, params)
	}
	require.NoError(t, err)

	reqs := api.sent()
	require.Len(t, reqs, 3)
	for i, tool := range session.Tools() {
		require.Equal(t, tool.Name, reqs[0].Tools[i]["name"])
		require.Equal(t, tool.SchemaMap(), reqs[0].Tools[i]["input_schema"])
	}
	require.Equal(t, map[string]any{"type": "memory_20250818", "name": "memory"}, reqs[0].Tools[6])
	got := results(t, reqs[1])
	require.Len(t, got, 1)
	require.True(t, strings.HasPrefix(got[0].Text, "version: "), got[0].Text)
	got = results(t, reqs[2])
	// A memory_read counts as a view: the memory tool's str_replace goes ahead.
	require.Equal(t, result{ID: "toolu_2", Text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     3\t> Summary: Jianjun, likes tea\n     4\t\n     5\t- Name: 建军\n     6\t- Likes: tea"}, got[0])
	require.True(t, got[1].IsError)
	require.True(t, strings.HasPrefix(got[1].Text, "Cannot rename /memories/facts/user.md to /memories/me.md: memory here is a closed set of files"), got[1].Text)
	require.Equal(t, strings.Replace(userFacts, "- Name: Jianjun", "- Name: 建军", 1), readFile(t, dir, "facts/user.md"))
}

// TestAnswerHostFailure: Answer, BetaAnswer, Result and BetaResult return a
// failure of the host as an error and no result.
func TestAnswerHostFailure(t *testing.T) {
	s, _ := openStore(t)
	session := s.NewSession()
	require.NoError(t, s.Close())
	ctx := context.Background()

	var msg anthropic.Message
	require.NoError(t, json.Unmarshal([]byte(message(text("checking"), toolUse("toolu_1", "memory", map[string]any{"command": "view", "path": "/memories"}))), &msg))
	_, err := anthropicmem.Answer(ctx, session, msg)
	require.ErrorIs(t, err, memory.ErrClosed)
	var beta anthropic.BetaMessage
	require.NoError(t, json.Unmarshal([]byte(message(text("checking"), toolUse("toolu_1", "memory_list", map[string]any{}))), &beta))
	_, err = anthropicmem.BetaAnswer(ctx, session, beta)
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = anthropicmem.Result(ctx, session, anthropic.ToolUseBlock{ID: "toolu_2", Name: "memory_list", Input: json.RawMessage(`{}`)})
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = anthropicmem.BetaResult(ctx, session, anthropic.BetaToolUseBlock{ID: "toolu_3", Name: "memory", Input: map[string]any{"command": "view", "path": "/memories"}})
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = anthropicmem.BetaResult(ctx, session, anthropic.BetaToolUseBlock{ID: "toolu_4", Name: "memory", Input: func() {}})
	require.Error(t, err, "an input that is not JSON")
	require.False(t, errors.Is(err, memory.ErrClosed))
}

// TestBetaResultInCode: a tool call made in code, not decoded from the API,
// is answered from its Input value.
func TestBetaResultInCode(t *testing.T) {
	s, _ := openStore(t)
	r, err := anthropicmem.BetaResult(context.Background(), s.NewSession(), anthropic.BetaToolUseBlock{
		ID: "toolu_1", Name: "memory", Input: map[string]any{"command": "view", "path": "/memories/facts/user.md", "view_range": []int{5, -1}},
	})
	require.NoError(t, err)
	require.Equal(t, "toolu_1", r.ToolUseID)
	require.False(t, r.IsError.Valid())
	require.Equal(t, "Here's the content of /memories/facts/user.md with line numbers:\n     5\t- Name: Jianjun\n     6\t- Likes: tea", r.Content[0].OfText.Text)
}
