package einomem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/einomem"
)

// feb26 is the store's clock in every test.
func feb26() time.Time { return time.Date(2026, 2, 26, 9, 0, 0, 0, time.UTC) }

// personFile is facts/user.md as a person wrote it before the conversation.
const personFile = "# User\n\n> Summary: Name, City\n\n- Name: Zhang San\n- City: Beijing\n"

// newStore opens a store in a temporary directory holding personFile, and
// checks every memory file when the test ends.
func newStore(t *testing.T) (*memory.Store, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "facts"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "facts/user.md", personFile)
	store, err := memory.Open(dir, &memory.Options{Now: feb26})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		store.Close()
		check, err := memory.Open(dir, &memory.Options{Now: feb26})
		if err != nil {
			t.Errorf("reopen: %v", err)
			return
		}
		defer check.Close()
		files, err := check.List(context.Background())
		if err != nil {
			t.Errorf("list: %v", err)
		}
		for _, f := range files {
			if f.Error != "" {
				t.Errorf("%s: %s", f.Path, f.Error)
			}
			if _, err := check.Read(context.Background(), f.Path); err != nil {
				t.Errorf("read %s: %v", f.Path, err)
			}
		}
	})
	return store, dir
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// call is a tool call the model makes.
func call(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

// results maps each tool message to its call's ID, checking its name.
func results(t *testing.T, msgs []*schema.Message, calls []schema.ToolCall) map[string]string {
	t.Helper()
	if len(msgs) != len(calls) {
		t.Fatalf("%d tool messages for %d calls", len(msgs), len(calls))
	}
	out := map[string]string{}
	for i, m := range msgs {
		if m.Role != schema.Tool || m.ToolCallID != calls[i].ID || m.ToolName != calls[i].Function.Name {
			t.Errorf("message %d: role %s, call %s, tool %s; want tool, %s, %s", i, m.Role, m.ToolCallID, m.ToolName, calls[i].ID, calls[i].Function.Name)
		}
		out[m.ToolCallID] = m.Content
	}
	return out
}

// TestToolsNode runs the tools through eino's ToolsNode, which runs one
// message's tool calls in parallel: a read, a search, an append and a new
// file at once; then a patch with no version after that read; then a patch
// refused after a person's edit, and one refused in another conversation.
func TestToolsNode(t *testing.T) {
	ctx := context.Background()
	store, dir := newStore(t)
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: einomem.Tools(store.NewSession())})
	if err != nil {
		t.Fatal(err)
	}
	invoke := func(calls ...schema.ToolCall) map[string]string {
		t.Helper()
		msgs, err := node.Invoke(ctx, schema.AssistantMessage("", calls))
		if err != nil {
			t.Fatalf("Invoke: %v", err)
		}
		return results(t, msgs, calls)
	}

	got := invoke(
		call("r", "memory_read", `{"path": "facts/user.md", "line": null}`),
		call("s", "memory_search", `{"query": "Beijing", "limit": null}`),
		call("a", "memory_append", `{"path": "episodes/2026-02.md", "entry": "## Moved\n- Task: note the move", "summary": null}`),
		call("w", "memory_write", `{"path": "facts/memory.md", "content": "# Memory\n\n- Prefers short answers\n", "version": null}`),
	)
	if !strings.HasPrefix(got["r"], "version: ") || !strings.Contains(got["r"], "- City: Beijing") {
		t.Errorf("memory_read = %q", got["r"])
	}
	if !strings.Contains(got["s"], `"path":"facts/user.md"`) {
		t.Errorf("memory_search = %q", got["s"])
	}
	for _, id := range []string{"a", "w"} {
		if strings.HasPrefix(got[id], "Error") {
			t.Errorf("call %s = %q", id, got[id])
		}
	}
	if ep := readFile(t, dir, "episodes/2026-02.md"); !strings.Contains(ep, "## Moved\n- Date: 2026-02-26\n") {
		t.Errorf("episodes/2026-02.md = %q", ep)
	}
	if m := readFile(t, dir, "facts/memory.md"); !strings.Contains(m, "- Prefers short answers\n") {
		t.Errorf("facts/memory.md = %q", m)
	}

	// The conversation read the file: a patch needs no version.
	got = invoke(call("p1", "memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "Beijing", "newText": "Hangzhou"}], "version": null}`))
	if !strings.Contains(got["p1"], `"appliedCount":1`) {
		t.Errorf("memory_patch after the read = %q", got["p1"])
	}

	// A person's edit since: the next patch is refused, as a result.
	edited := strings.Replace(readFile(t, dir, "facts/user.md"), "Zhang San", "Zhang San (Sam)", 1)
	writeFile(t, dir, "facts/user.md", edited)
	got = invoke(call("p2", "memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "Hangzhou", "newText": "Shanghai"}], "version": null}`))
	if !strings.HasPrefix(got["p2"], "Error: ") || !strings.Contains(got["p2"], "memory_read") {
		t.Errorf("patch after a person's edit = %q, want an Error: that says to memory_read", got["p2"])
	}
	if now := readFile(t, dir, "facts/user.md"); now != edited {
		t.Errorf("the person's edit was overwritten: %q", now)
	}

	// Another conversation has read nothing.
	other, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: einomem.Tools(store.NewSession())})
	if err != nil {
		t.Fatal(err)
	}
	calls := []schema.ToolCall{call("p3", "memory_write", `{"path": "facts/user.md", "content": "# User\n", "version": null}`)}
	msgs, err := other.Invoke(ctx, schema.AssistantMessage("", calls))
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if got := results(t, msgs, calls)["p3"]; !strings.HasPrefix(got, "Error: ") {
		t.Errorf("write by a conversation that never read the file = %q", got)
	}
	if now := readFile(t, dir, "facts/user.md"); now != edited {
		t.Errorf("facts/user.md = %q, want the person's edit", now)
	}

	// Mistakes in the arguments are results too.
	got = invoke(
		call("bad1", "memory_read", `{"path": "../secret.txt", "line": null}`),
		call("bad2", "memory_read", `{"path": "facts/user.md", "lines": 3}`),
		call("bad3", "memory_append", `not json`),
	)
	for id, res := range got {
		if !strings.HasPrefix(res, "Error: ") {
			t.Errorf("%s = %q, want an Error: result", id, res)
		}
	}
}

// scriptedModel is an eino ToolCallingChatModel that answers from a script
// per conversation, keyed by the content of the conversation's first
// message; a reply sees the messages it answers. It records the tools it
// was given and every input.
type scriptedModel struct {
	t       *testing.T
	mu      sync.Mutex
	scripts map[string][]func(ctx context.Context, in []*schema.Message) *schema.Message
	tools   []*schema.ToolInfo
	calls   int
}

func (m *scriptedModel) Generate(ctx context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	m.calls++
	key := in[0].Content
	script := m.scripts[key]
	if len(script) == 0 {
		m.mu.Unlock()
		return nil, fmt.Errorf("scripted model: no reply left for %q", key)
	}
	m.scripts[key] = script[1:]
	m.mu.Unlock()
	return script[0](ctx, in), nil
}

func (m *scriptedModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scriptedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools = tools
	return m, nil
}

// toolResults returns the tool messages at the end of in, by call ID.
func toolResults(in []*schema.Message) map[string]string {
	out := map[string]string{}
	for i := len(in) - 1; i >= 0 && in[i].Role == schema.Tool; i-- {
		out[in[i].ToolCallID] = in[i].Content
	}
	return out
}

func newAgent(t *testing.T, m *scriptedModel, tools []tool.BaseTool) *react.Agent {
	t.Helper()
	agent, err := react.NewAgent(context.Background(), &react.AgentConfig{
		ToolCallingModel: m,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools},
		MaxStep:          20,
	})
	if err != nil {
		t.Fatal(err)
	}
	return agent
}

// TestReactAgent runs eino's react agent with a scripted model: a write
// without a read (refused; the model gets the refusal as the tool message),
// a read and a search in one turn, a patch carrying the read's version, and
// a final answer.
func TestReactAgent(t *testing.T) {
	store, dir := newStore(t)
	const question = "I moved to Hangzhou."
	m := &scriptedModel{t: t}
	m.scripts = map[string][]func(context.Context, []*schema.Message) *schema.Message{question: {
		func(_ context.Context, in []*schema.Message) *schema.Message {
			return schema.AssistantMessage("", []schema.ToolCall{
				call("c1", "memory_write", `{"path": "facts/user.md", "content": "# User\n\n- City: Hangzhou\n", "version": null}`),
			})
		},
		func(_ context.Context, in []*schema.Message) *schema.Message {
			if got := toolResults(in)["c1"]; !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, "memory_read") {
				t.Errorf("the refused write reached the model as %q", got)
			}
			return schema.AssistantMessage("", []schema.ToolCall{
				call("c2", "memory_read", `{"path": "facts/user.md", "line": null}`),
				call("c3", "memory_search", `{"query": "Hangzhou Beijing", "limit": 3}`),
			})
		},
		func(_ context.Context, in []*schema.Message) *schema.Message {
			got := toolResults(in)
			first, _, _ := strings.Cut(got["c2"], "\n")
			version, ok := strings.CutPrefix(first, "version: ")
			if !ok {
				t.Errorf("memory_read result = %q", got["c2"])
			}
			if !strings.Contains(got["c3"], `"line":6`) {
				t.Errorf("memory_search result = %q", got["c3"])
			}
			return schema.AssistantMessage("", []schema.ToolCall{
				call("c4", "memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "- City: Beijing", "newText": "- City: Hangzhou"}], "version": "`+version+`"}`),
			})
		},
		func(_ context.Context, in []*schema.Message) *schema.Message {
			if got := toolResults(in)["c4"]; !strings.Contains(got, `"appliedCount":1`) {
				t.Errorf("memory_patch result = %q", got)
			}
			return schema.AssistantMessage("Noted: you live in Hangzhou now.", nil)
		},
	}}

	agent := newAgent(t, m, einomem.Tools(store.NewSession()))
	out, err := agent.Generate(context.Background(), []*schema.Message{schema.UserMessage(question)})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if out.Content != "Noted: you live in Hangzhou now." || m.calls != 4 {
		t.Errorf("answer %q after %d model calls, want 4", out.Content, m.calls)
	}
	if want := strings.Replace(personFile, "Beijing", "Hangzhou", 1); readFile(t, dir, "facts/user.md") != want {
		t.Errorf("facts/user.md = %q, want %q", readFile(t, dir, "facts/user.md"), want)
	}
	var names []string
	for _, ti := range m.tools {
		names = append(names, ti.Name)
	}
	if want := "memory_list memory_search memory_read memory_write memory_patch memory_append"; strings.Join(names, " ") != want {
		t.Errorf("the model was given %v", names)
	}
}

// TestStoreTools builds one react agent with StoreTools and runs two
// conversations through it, each in the Session WithSession gives: what one
// read does not let the other write.
func TestStoreTools(t *testing.T) {
	store, dir := newStore(t)
	patch := func(id, from, to string) schema.ToolCall {
		return call(id, "memory_patch", fmt.Sprintf(`{"path": "facts/user.md", "patches": [{"oldText": %q, "newText": %q}], "version": null}`, from, to))
	}
	read := call("read", "memory_read", `{"path": "facts/user.md", "line": null}`)
	final := func(context.Context, []*schema.Message) *schema.Message { return schema.AssistantMessage("done", nil) }
	m := &scriptedModel{t: t}
	m.scripts = map[string][]func(context.Context, []*schema.Message) *schema.Message{
		"conversation A": {
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("", []schema.ToolCall{read})
			},
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("", []schema.ToolCall{patch("a", "Beijing", "Hangzhou")})
			},
			func(_ context.Context, in []*schema.Message) *schema.Message {
				if got := toolResults(in)["a"]; !strings.Contains(got, `"appliedCount":1`) {
					t.Errorf("A's patch after its read = %q", got)
				}
				return schema.AssistantMessage("done", nil)
			},
		},
		"conversation B": {
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("", []schema.ToolCall{patch("b1", "Zhang San", "Li Si")})
			},
			func(_ context.Context, in []*schema.Message) *schema.Message {
				if got := toolResults(in)["b1"]; !strings.HasPrefix(got, "Error: ") {
					t.Errorf("B's patch before any read of its own = %q, want refused", got)
				}
				return schema.AssistantMessage("", []schema.ToolCall{read})
			},
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("", []schema.ToolCall{patch("b2", "Zhang San", "Li Si")})
			},
			func(_ context.Context, in []*schema.Message) *schema.Message {
				if got := toolResults(in)["b2"]; !strings.Contains(got, `"appliedCount":1`) {
					t.Errorf("B's patch after its read = %q", got)
				}
				return schema.AssistantMessage("done", nil)
			},
		},
		"no session": {
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("", []schema.ToolCall{read})
			},
			final,
		},
	}
	agent := newAgent(t, m, einomem.StoreTools(store))

	for _, id := range []string{"A", "B"} {
		ctx := einomem.WithSession(context.Background(), store.Session(id))
		if _, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("conversation " + id)}); err != nil {
			t.Fatalf("conversation %s: %v", id, err)
		}
	}
	if want := "- Name: Li Si\n- City: Hangzhou\n"; !strings.HasSuffix(readFile(t, dir, "facts/user.md"), want) {
		t.Errorf("facts/user.md = %q, want both patches", readFile(t, dir, "facts/user.md"))
	}

	_, err := agent.Generate(context.Background(), []*schema.Message{schema.UserMessage("no session")})
	if !errors.Is(err, einomem.ErrNoSession) {
		t.Errorf("a call without WithSession: err = %v, want ErrNoSession", err)
	}
	if n := len(m.scripts["no session"]); n != 1 {
		t.Errorf("the model was called again after the host error (%d replies left, want 1)", n)
	}
}

// TestHostError: a closed store and a cancelled context are Go errors that
// end the run, never results for the model.
func TestHostError(t *testing.T) {
	t.Run("closed store, react agent", func(t *testing.T) {
		store, _ := newStore(t)
		conv := store.NewSession()
		m := &scriptedModel{t: t, scripts: map[string][]func(context.Context, []*schema.Message) *schema.Message{"hi": {
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("", []schema.ToolCall{call("c", "memory_list", `{}`)})
			},
			func(context.Context, []*schema.Message) *schema.Message {
				return schema.AssistantMessage("hidden", nil)
			},
		}}}
		agent := newAgent(t, m, einomem.Tools(conv))
		store.Close()
		_, err := agent.Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")})
		if !errors.Is(err, memory.ErrClosed) || !strings.Contains(err.Error(), "memory_list: ") {
			t.Errorf("err = %v, want memory_list: … wrapping memory.ErrClosed", err)
		}
		if m.calls != 1 {
			t.Errorf("model called %d times, want 1", m.calls)
		}
	})
	t.Run("cancelled context, tools node", func(t *testing.T) {
		store, dir := newStore(t)
		node, err := compose.NewToolNode(context.Background(), &compose.ToolsNodeConfig{Tools: einomem.Tools(store.NewSession())})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
			call("c", "memory_append", `{"path": "facts/user.md", "entry": "- Pet: cat", "summary": null}`),
		}))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if got := readFile(t, dir, "facts/user.md"); got != personFile {
			t.Errorf("facts/user.md changed: %q", got)
		}
	})
}

// TestInfo: each tool is an InvokableTool whose ToolInfo has the library's
// name and description and, as a JSON Schema, exactly the library's schema.
func TestInfo(t *testing.T) {
	store, _ := newStore(t)
	conv := store.NewSession()
	mts := conv.Tools()
	for name, ts := range map[string][]tool.BaseTool{"Tools": einomem.Tools(conv), "StoreTools": einomem.StoreTools(store)} {
		if len(ts) != len(mts) {
			t.Fatalf("%s gave %d tools, want %d", name, len(ts), len(mts))
		}
		for i, bt := range ts {
			if _, ok := bt.(tool.InvokableTool); !ok {
				t.Errorf("%s[%d] is not an InvokableTool", name, i)
			}
			info, err := bt.Info(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != mts[i].Name || info.Desc != mts[i].Description {
				t.Errorf("%s[%d] = %s %q, want %s and the library's description", name, i, info.Name, info.Desc, mts[i].Name)
			}
			js, err := info.ParamsOneOf.ToJSONSchema()
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(js)
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(mts[i].InputSchema, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: schema given to the model\n%s\nwant\n%s", info.Name, b, mts[i].InputSchema)
			}
		}
	}
}

func TestNil(t *testing.T) {
	if got := einomem.Tools(nil); got != nil {
		t.Errorf("Tools(nil) = %v", got)
	}
	if got := einomem.StoreTools(nil); got != nil {
		t.Errorf("StoreTools(nil) = %v", got)
	}
	ctx := context.Background()
	if got := einomem.WithSession(ctx, nil); got != ctx {
		t.Errorf("WithSession(ctx, nil) is not ctx")
	}
}
