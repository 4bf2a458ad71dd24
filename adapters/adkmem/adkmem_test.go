package adkmem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/adkmem"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"
)

const appName = "memtest"

// call is one function call the scripted model makes: a tool name and its
// arguments as the model writes them, in JSON.
type call struct{ name, args string }

// turn is one scripted model response: function calls, or, when there are
// none, a final text.
type turn struct {
	calls []call
	text  string
}

// request is what the fake model was sent, kept as it was at the time.
type request struct {
	system    string                                // the system instruction's text
	order     []string                              // declared functions, in order
	tools     map[string]*genai.FunctionDeclaration // declared functions by name
	decls     map[string]map[string]any             // their ParametersJsonSchema
	responses []*genai.FunctionResponse             // function responses in the contents, oldest first
	raw       string                                // the contents as JSON, for messages
}

// scriptedLLM is a model.LLM that plays turns in order and records every
// request it gets.
type scriptedLLM struct {
	mu       sync.Mutex
	turns    []turn
	next     int
	requests []request
}

func (m *scriptedLLM) Name() string { return "scripted" }

func (m *scriptedLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, record(req))
		if m.next >= len(m.turns) {
			m.mu.Unlock()
			yield(nil, fmt.Errorf("the script has no turn %d", m.next+1))
			return
		}
		tr := m.turns[m.next]
		m.next++
		n := m.next
		m.mu.Unlock()

		content := &genai.Content{Role: genai.RoleModel}
		for i, c := range tr.calls {
			// Arguments reach adk as genai decodes the model's JSON.
			var args map[string]any
			if err := json.Unmarshal([]byte(c.args), &args); err != nil {
				yield(nil, fmt.Errorf("script: %s: %w", c.name, err))
				return
			}
			content.Parts = append(content.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{
				ID: fmt.Sprintf("call-%d-%d", n, i), Name: c.name, Args: args,
			}})
		}
		if len(tr.calls) == 0 {
			content.Parts = append(content.Parts, genai.NewPartFromText(tr.text))
		}
		yield(&model.LLMResponse{Content: content, TurnComplete: true}, nil)
	}
}

func record(req *model.LLMRequest) request {
	r := request{decls: map[string]map[string]any{}, tools: map[string]*genai.FunctionDeclaration{}}
	if req.Config != nil {
		if si := req.Config.SystemInstruction; si != nil {
			for _, p := range si.Parts {
				r.system += p.Text + "\n"
			}
		}
		for _, t := range req.Config.Tools {
			for _, d := range t.FunctionDeclarations {
				schema, _ := d.ParametersJsonSchema.(map[string]any)
				r.decls[d.Name] = schema
				r.order = append(r.order, d.Name)
				r.tools[d.Name] = d
			}
		}
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				r.responses = append(r.responses, p.FunctionResponse)
			}
		}
	}
	b, _ := json.Marshal(req.Contents)
	r.raw = string(b)
	return r
}

func (m *scriptedLLM) request(t *testing.T, i int) request {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if i >= len(m.requests) {
		t.Fatalf("the model got %d requests, want at least %d", len(m.requests), i+1)
	}
	return m.requests[i]
}

func (m *scriptedLLM) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// harness is an adk agent with the memory toolset, run by adk's runner on
// an in-memory session service, over a store in a temporary directory.
type harness struct {
	dir     string
	store   *memory.Store
	ts      *adkmem.Toolset
	llm     *scriptedLLM
	runner  *runner.Runner
	toolErr []error // errors OnToolErrorCallbacks got
	mu      sync.Mutex
}

func newHarness(t *testing.T, opts *adkmem.Options, cfg func(*llmagent.Config)) *harness {
	t.Helper()
	dir := t.TempDir()
	store, err := memory.Open(dir, &memory.Options{Now: func() time.Time { return time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := &harness{dir: dir, store: store, llm: &scriptedLLM{}}
	h.ts = adkmem.New(store, opts)
	c := llmagent.Config{
		Name:        "assistant",
		Model:       h.llm,
		Instruction: "You are a helpful assistant.",
		Toolsets:    []tool.Toolset{h.ts},
		OnToolErrorCallbacks: []llmagent.OnToolErrorCallback{
			func(_ agent.Context, _ tool.Tool, _ map[string]any, err error) (map[string]any, error) {
				h.mu.Lock()
				h.toolErr = append(h.toolErr, err)
				h.mu.Unlock()
				return nil, nil
			},
		},
	}
	if cfg != nil {
		cfg(&c)
	}
	a, err := llmagent.New(c)
	if err != nil {
		t.Fatal(err)
	}
	h.runner, err = runner.New(runner.Config{
		AppName:           appName,
		Agent:             a,
		SessionService:    session.InMemoryService(),
		AutoCreateSession: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// script adds turns to the model's script.
func (h *harness) script(turns ...turn) {
	h.llm.mu.Lock()
	defer h.llm.mu.Unlock()
	h.llm.turns = append(h.llm.turns, turns...)
}

// run runs one user message in the adk session of user and sessionID to the
// end, and returns the final text.
func (h *harness) run(t *testing.T, user, sessionID, text string) (string, error) {
	t.Helper()
	var final string
	for ev, err := range h.runner.Run(context.Background(), user, sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return final, err
		}
		if ev.Content != nil && ev.IsFinalResponse() {
			for _, p := range ev.Content.Parts {
				final += p.Text
			}
		}
	}
	return final, nil
}

func (h *harness) mustRun(t *testing.T, user, sessionID, text string) string {
	t.Helper()
	out, err := h.run(t, user, sessionID, text)
	if err != nil {
		t.Fatalf("run in %s/%s: %v", user, sessionID, err)
	}
	return out
}

func (h *harness) file(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lastResponse returns the function response the model got last, in
// request i, and checks its name.
func lastResponse(t *testing.T, r request, name string) map[string]any {
	t.Helper()
	if len(r.responses) == 0 {
		t.Fatalf("the request has no function response; contents: %s", r.raw)
	}
	fr := r.responses[len(r.responses)-1]
	if fr.Name != name {
		t.Fatalf("the last function response is %s's, want %s's", fr.Name, name)
	}
	return fr.Response
}

func jsonArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const userFile = "# User\n\n> Summary: Ada, a pilot\n\n- Name: Ada\n- Job: pilot\n"

// TestWriteThroughRunner runs a model's memory_write through adk's runner:
// the agent declares the six tools with the library's schemas, the file is
// written, and the function response reaches the model's next request.
func TestWriteThroughRunner(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.script(
		turn{calls: []call{{"memory_write", jsonArgs(t, map[string]any{"path": "facts/user.md", "content": userFile, "version": nil})}}},
		turn{text: "Noted: you are Ada."},
	)
	if got := h.mustRun(t, "u1", "s1", "I'm Ada, a pilot."); got != "Noted: you are Ada." {
		t.Errorf("final text %q", got)
	}
	if got := h.file(t, "facts/user.md"); got != userFile {
		t.Errorf("facts/user.md is\n%s\nwant\n%s", got, userFile)
	}

	first := h.llm.request(t, 0)
	lib := h.store.NewSession().Tools()
	if len(first.order) != len(lib) {
		t.Fatalf("declared %v, want the %d memory tools", first.order, len(lib))
	}
	for i, want := range lib {
		if first.order[i] != want.Name {
			t.Errorf("declaration %d is %s, want %s", i, first.order[i], want.Name)
		}
		d := first.tools[want.Name]
		if d == nil {
			continue
		}
		if d.Description != want.Description {
			t.Errorf("%s: description differs from the library's", want.Name)
		}
		if !reflect.DeepEqual(first.decls[want.Name], want.SchemaMap()) {
			t.Errorf("%s: ParametersJsonSchema %v, want the library's %v", want.Name, first.decls[want.Name], want.SchemaMap())
		}
	}
	if strings.Contains(first.system, "Available memory") {
		t.Errorf("the index is in the system instruction without Options.Index:\n%s", first.system)
	}

	resp := lastResponse(t, h.llm.request(t, 1), "memory_write")
	text, _ := resp["result"].(string)
	if _, isErr := resp["error"]; isErr || !strings.Contains(text, `"path":"facts/user.md"`) {
		t.Errorf("the model got %v, want a result naming facts/user.md", resp)
	}
}

// TestSessionsAreConversations shows that one adk session is one memory
// conversation across its runs, and that another session, or another user's
// session of the same id, is another conversation: a write without a version
// to a file only session A read is refused elsewhere and allowed in A.
func TestSessionsAreConversations(t *testing.T) {
	h := newHarness(t, nil, nil)
	if err := h.store.Write(context.Background(), "facts/user.md", userFile); err != nil {
		t.Fatal(err)
	}
	read := call{"memory_read", `{"path":"facts/user.md","line":null}`}
	write := func(content string) call {
		return call{"memory_write", jsonArgs(t, map[string]any{"path": "facts/user.md", "content": content, "version": nil})}
	}
	byB := strings.Replace(userFile, "pilot\n", "pilot\n- Written by: B\n", 1)
	byOtherUser := strings.Replace(userFile, "pilot\n", "pilot\n- Written by: u2\n", 1)
	patch := call{"memory_patch", `{"path":"facts/user.md","patches":[{"oldText":"- Job: pilot","newText":"- Job: captain"}],"version":null}`}

	// A reads the file in its first run.
	h.script(turn{calls: []call{read}}, turn{text: "read"})
	h.mustRun(t, "u1", "A", "What do you know about me?")
	if got := lastResponse(t, h.llm.request(t, 1), "memory_read"); got["result"] == nil || !strings.Contains(got["result"].(string), "- Name: Ada") {
		t.Fatalf("memory_read answered %v", got)
	}

	// B never read it: its write without a version is refused, as a result
	// the model sees.
	h.script(turn{calls: []call{write(byB)}}, turn{text: "tried"})
	h.mustRun(t, "u1", "B", "Note that B was here.")
	resp := lastResponse(t, h.llm.request(t, 3), "memory_write")
	if msg, _ := resp["error"].(string); !strings.Contains(msg, "memory_read") {
		t.Errorf("session B's write got %v, want an error telling it to read the file first", resp)
	}
	// Another user's session with A's id is another conversation too.
	h.script(turn{calls: []call{write(byOtherUser)}}, turn{text: "tried"})
	h.mustRun(t, "u2", "A", "Note that u2 was here.")
	if resp := lastResponse(t, h.llm.request(t, 5), "memory_write"); resp["error"] == nil {
		t.Errorf("user u2's session A wrote: %v", resp)
	}
	if got := h.file(t, "facts/user.md"); got != userFile {
		t.Fatalf("a refused write changed the file:\n%s", got)
	}

	// A, in a second run, patches what it read in its first: same conversation.
	h.script(turn{calls: []call{patch}}, turn{text: "patched"})
	h.mustRun(t, "u1", "A", "I'm a captain now.")
	if resp := lastResponse(t, h.llm.request(t, 7), "memory_patch"); resp["error"] != nil {
		t.Fatalf("session A's patch was refused: %v", resp)
	}
	if got := h.file(t, "facts/user.md"); !strings.Contains(got, "- Job: captain") {
		t.Errorf("the patch did not reach the file:\n%s", got)
	}
	if n := len(h.toolErr); n != 0 {
		t.Errorf("OnToolErrorCallbacks got %d host errors: %v", n, h.toolErr)
	}

	// Toolset.Session is that conversation: it may write what A read, and
	// once it is ended, A starts over with nothing read.
	conv := h.ts.Session(appName, "u1", "A")
	res, err := conv.Call(context.Background(), "memory_write", json.RawMessage(jsonArgs(t, map[string]any{"path": "facts/user.md", "content": userFile, "version": nil})))
	if err != nil || res.IsError {
		t.Fatalf("Toolset.Session's write: %v %v", res, err)
	}
	conv.End()
	h.script(turn{calls: []call{write(byB)}}, turn{text: "tried"})
	h.mustRun(t, "u1", "A", "Note this.")
	if resp := lastResponse(t, h.llm.request(t, 9), "memory_write"); resp["error"] == nil {
		t.Errorf("an ended conversation still wrote without reading: %v", resp)
	}
}

// TestErrors: a model's mistake is an {"error": ...} result with no Go
// error, a host failure is a Go error that adk's OnToolErrorCallbacks get,
// wrapping the library's sentinel.
func TestErrors(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.script(
		turn{calls: []call{{"memory_read", `{"path":"../secrets.md","line":null}`}}},
		turn{calls: []call{{"memory_read", `{"path":"facts/user.md","line":null,"extra":1}`}}},
		turn{text: "done"},
	)
	h.mustRun(t, "u1", "s1", "Read something.")
	for i, want := range []string{".. segments", "extra"} {
		resp := lastResponse(t, h.llm.request(t, i+1), "memory_read")
		msg, _ := resp["error"].(string)
		if !strings.Contains(msg, want) || resp["result"] != nil {
			t.Errorf("mistake %d: the model got %v, want an error naming %q", i, resp, want)
		}
	}
	if len(h.toolErr) != 0 {
		t.Errorf("a model mistake reached OnToolErrorCallbacks as a host error: %v", h.toolErr)
	}

	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	h.script(turn{calls: []call{{"memory_list", `{}`}}}, turn{text: "done"})
	h.mustRun(t, "u1", "s1", "List.")
	if len(h.toolErr) != 1 || !errors.Is(h.toolErr[0], memory.ErrClosed) {
		t.Fatalf("OnToolErrorCallbacks got %v, want one error wrapping memory.ErrClosed", h.toolErr)
	}
	if !strings.HasPrefix(h.toolErr[0].Error(), "memory_list: ") {
		t.Errorf("the host error %q does not name the tool", h.toolErr[0])
	}
}

// TestParallelCalls: adk runs a response's calls at once; each is answered,
// and nested and numeric arguments reach the library as the model wrote
// them.
func TestParallelCalls(t *testing.T) {
	h := newHarness(t, nil, nil)
	memoryFile := "# Memory\n\n> Summary: lessons\n\n- Book flights early.\n"
	h.script(
		turn{calls: []call{
			{"memory_write", jsonArgs(t, map[string]any{"path": "facts/user.md", "content": userFile, "version": nil})},
			{"memory_write", jsonArgs(t, map[string]any{"path": "facts/memory.md", "content": memoryFile, "version": nil})},
			{"memory_append", jsonArgs(t, map[string]any{"path": "episodes/2026-03.md", "entry": "## Flight to Oslo\n\nBooked the 9:40 flight.", "summary": nil})},
		}},
		turn{calls: []call{{"memory_search", `{"query":"Oslo flight","limit":1}`}}},
		turn{text: "done"},
	)
	h.mustRun(t, "u1", "s1", "Remember all that.")
	if got := h.file(t, "facts/user.md"); got != userFile {
		t.Errorf("facts/user.md:\n%s", got)
	}
	if got := h.file(t, "facts/memory.md"); got != memoryFile {
		t.Errorf("facts/memory.md:\n%s", got)
	}
	if got := h.file(t, "episodes/2026-03.md"); !strings.Contains(got, "## Flight to Oslo") {
		t.Errorf("episodes/2026-03.md:\n%s", got)
	}
	second := h.llm.request(t, 1)
	names := map[string]int{}
	for _, fr := range second.responses {
		names[fr.Name]++
		if fr.Response["error"] != nil {
			t.Errorf("%s failed: %v", fr.Name, fr.Response)
		}
	}
	if names["memory_write"] != 2 || names["memory_append"] != 1 {
		t.Errorf("function responses %v, want two writes and an append", names)
	}
	resp := lastResponse(t, h.llm.request(t, 2), "memory_search")
	text, _ := resp["result"].(string)
	if !strings.Contains(text, "Flight to Oslo") || strings.Count(text, `"path"`) != 1 {
		t.Errorf("memory_search with limit 1 answered %v", resp)
	}
}

// TestIndex: with Options.Index, every model request carries the memory
// index after the agent's instruction, as it is at that moment.
func TestIndex(t *testing.T) {
	h := newHarness(t, &adkmem.Options{Index: true}, nil)
	if err := h.store.Write(context.Background(), "facts/user.md", userFile); err != nil {
		t.Fatal(err)
	}
	h.script(
		turn{calls: []call{{"memory_write", jsonArgs(t, map[string]any{"path": "facts/memory.md", "content": "# Memory\n\n> Summary: book flights early\n\n- Book flights early.\n", "version": nil})}}},
		turn{text: "done"},
	)
	h.mustRun(t, "u1", "s1", "Remember to book early.")
	first, second := h.llm.request(t, 0), h.llm.request(t, 1)
	for i, r := range []request{first, second} {
		inst := strings.Index(r.system, "You are a helpful assistant.")
		idx := strings.Index(r.system, "Available memory")
		if inst < 0 || idx < inst {
			t.Errorf("request %d: want the instruction, then the index:\n%s", i, r.system)
		}
		if !strings.Contains(r.system, "facts/user.md") || !strings.Contains(r.system, "Ada, a pilot") {
			t.Errorf("request %d: the index lacks facts/user.md's summary:\n%s", i, r.system)
		}
	}
	if strings.Contains(first.system, "book flights early") || !strings.Contains(second.system, "book flights early") {
		t.Errorf("the index is not read anew for each request:\nfirst:\n%s\nsecond:\n%s", first.system, second.system)
	}

	// An index that cannot be read fails the run, as a host error.
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	n := h.llm.count()
	if _, err := h.run(t, "u1", "s1", "Hello."); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("run on a closed store: %v, want an error wrapping memory.ErrClosed", err)
	}
	if h.llm.count() != n {
		t.Errorf("the model was called without its index")
	}
}

// TestNilStore: a Toolset made with a nil store fails the run instead of
// panicking.
func TestNilStore(t *testing.T) {
	ts := adkmem.New(nil, nil)
	if ts.Session(appName, "u1", "s1") != nil {
		t.Error("Session of a nil store is not nil")
	}
	llm := &scriptedLLM{turns: []turn{{text: "hi"}}}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Toolsets: []tool.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	var runErr error
	for _, err := range r.Run(context.Background(), "u1", "s1", genai.NewContentFromText("hi", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			runErr = err
		}
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "nil *memory.Store") {
		t.Errorf("run with a nil store: %v", runErr)
	}
	if llm.count() != 0 {
		t.Error("the model was called")
	}

	// With Options.Index, the request is refused before the tools are.
	ts = adkmem.New(nil, &adkmem.Options{Index: true})
	if err := ts.ProcessRequest(nil, &model.LLMRequest{}); err == nil || !strings.Contains(err.Error(), "nil *memory.Store") {
		t.Errorf("ProcessRequest with a nil store: %v", err)
	}
}

// TestEmptySessionID: an adk session without an id names no conversation:
// each lookup gives a new one, which the store does not keep.
func TestEmptySessionID(t *testing.T) {
	h := newHarness(t, nil, nil)
	a, b := h.ts.Session(appName, "u1", ""), h.ts.Session(appName, "u1", "")
	if a == b || a.ID() != "" {
		t.Errorf("Session with an empty id: %p (id %q) and %p, want two unkept sessions", a, a.ID(), b)
	}
	if s := h.ts.Session(appName, "u1", "s1"); s != h.ts.Session(appName, "u1", "s1") || s.ID() == "" {
		t.Error("Session with an id is not kept")
	}
}
