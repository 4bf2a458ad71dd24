package langchaingomem_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/langchaingomem"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
)

var update = flag.Bool("update", false, "rewrite testdata/descriptions.golden")

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
	if err := os.WriteFile(filepath.Join(dir, "facts", "user.md"), []byte(personFile), 0o644); err != nil {
		t.Fatal(err)
	}
	store, err := memory.Open(dir, &memory.Options{Now: feb26})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
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
		store.Close()
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

// scriptedLLM is an llms.Model that answers each call with the next reply
// of its script; a reply sees the prompt it answers. It records the prompts.
type scriptedLLM struct {
	t       *testing.T
	mu      sync.Mutex
	replies []func(prompt string) string
	prompts []string
}

func (m *scriptedLLM) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	var b strings.Builder
	for _, mc := range msgs {
		for _, p := range mc.Parts {
			if tc, ok := p.(llms.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prompts = append(m.prompts, b.String())
	if len(m.replies) == 0 {
		return nil, errors.New("scripted model: the script has no reply left")
	}
	reply := m.replies[0]
	m.replies = m.replies[1:]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply(b.String())}}}, nil
}

func (m *scriptedLLM) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

// lastObservation returns the text after the prompt's last "Observation: ".
func lastObservation(prompt string) string {
	i := strings.LastIndex(prompt, "Observation: ")
	if i < 0 {
		return ""
	}
	return strings.TrimSpace(prompt[i+len("Observation: "):])
}

// TestOneShotAgent runs langchaingo's MRKL agent through its executor with a
// scripted model that lists, tries to overwrite a file it has not read,
// reads it with a bare path, patches it with fenced JSON that leaves out the
// nullable version, and appends an episode.
func TestOneShotAgent(t *testing.T) {
	store, dir := newStore(t)
	conv := store.NewSession()
	llm := &scriptedLLM{t: t}
	llm.replies = []func(string) string{
		func(prompt string) string {
			for _, want := range []string{
				"- memory_read: Read one memory file.",
				`"required":["path","line"]`,
				"Plain text that is not a JSON object is taken as the path.",
				"Action: the action to take, should be one of [ memory_list, memory_search, memory_read, memory_write, memory_patch, memory_append ]",
			} {
				if !strings.Contains(prompt, want) {
					t.Errorf("first prompt lacks %q:\n%s", want, prompt)
				}
			}
			return "Thought: I should see what I remember.\nAction: memory_list\nAction Input: None"
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.Contains(obs, `"path":"facts/user.md"`) {
				t.Errorf("memory_list observation = %q", obs)
			}
			return "Thought: The user moved.\nAction: memory_write\nAction Input: " +
				`{"path": "facts/user.md", "content": "# User\n\n- Name: Zhang San\n- City: Hangzhou\n", "version": null}`
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.HasPrefix(obs, "Error: ") || !strings.Contains(obs, "memory_read") {
				t.Errorf("the refused write came back as %q, want an Error: observation that says to memory_read", obs)
			}
			return "Thought: I must read it first.\nAction: memory_read\nAction Input: facts/user.md"
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.HasPrefix(obs, "version: ") || !strings.Contains(obs, "- City: Beijing") {
				t.Errorf("memory_read observation = %q", obs)
			}
			return "Thought: Now I can patch it.\nAction: memory_patch\nAction Input: ```json\n" +
				`{"path": "facts/user.md", "patches": [{"oldText": "- City: Beijing", "newText": "- City: Hangzhou"}]}` + "\n```"
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.Contains(obs, `"appliedCount":1`) {
				t.Errorf("memory_patch observation = %q", obs)
			}
			return "Thought: And record the task.\nAction: memory_append\nAction Input: " +
				`{"path": "episodes/2026-02.md", "entry": "## Moved to Hangzhou\n- Task: update the user's city", "summary": null}`
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.Contains(obs, `"path":"episodes/2026-02.md"`) {
				t.Errorf("memory_append observation = %q", obs)
			}
			return "Thought: I now know the final answer\nFinal Answer: Noted: you live in Hangzhou now."
		},
	}

	agent := agents.NewOneShotAgent(llm, langchaingomem.Tools(conv))
	executor := agents.NewExecutor(agent, agents.WithMaxIterations(10), agents.WithReturnIntermediateSteps())
	out, err := chains.Call(context.Background(), executor, map[string]any{"input": "I moved to Hangzhou."})
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	if got := out["output"]; got != "Noted: you live in Hangzhou now." {
		t.Errorf("output = %q", got)
	}
	if len(llm.replies) != 0 || len(llm.prompts) != 6 {
		t.Errorf("model called %d times, %d replies left; want 6 and 0", len(llm.prompts), len(llm.replies))
	}

	steps, _ := out["intermediateSteps"].([]schema.AgentStep)
	var names []string
	for _, s := range steps {
		names = append(names, s.Action.Tool)
	}
	if want := "memory_list memory_write memory_read memory_patch memory_append"; strings.Join(names, " ") != want {
		t.Errorf("executor ran %v, want %s", names, want)
	}
	if len(steps) == 5 {
		refusal := steps[1].Observation
		if !strings.HasPrefix(refusal, "Error: ") {
			t.Errorf("refused write's observation = %q", refusal)
		}
		if !strings.Contains(llm.prompts[2], refusal) {
			t.Errorf("the refusal did not reach the model's next prompt")
		}
	}

	user := readFile(t, dir, "facts/user.md")
	if want := "# User\n\n> Summary: Name, City\n\n- Name: Zhang San\n- City: Hangzhou\n"; user != want {
		t.Errorf("facts/user.md = %q, want %q (patched, not overwritten by the refused write)", user, want)
	}
	if ep := readFile(t, dir, "episodes/2026-02.md"); !strings.Contains(ep, "## Moved to Hangzhou\n- Date: 2026-02-26\n- Task: update the user's city\n") {
		t.Errorf("episodes/2026-02.md = %q", ep)
	}
}

// TestConversationalAgent runs langchaingo's conversational agent: a bare
// search query, then a write with the version token the read gave.
func TestConversationalAgent(t *testing.T) {
	store, dir := newStore(t)
	llm := &scriptedLLM{t: t}
	var version string
	llm.replies = []func(string) string{
		func(string) string {
			return "Thought: Do I need to use a tool? Yes\nAction: memory_search\nAction Input: \"Beijing\""
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.Contains(obs, `"snippet":"City: Beijing"`) {
				t.Errorf("memory_search observation = %q", obs)
			}
			return "Thought: Do I need to use a tool? Yes\nAction: memory_read\nAction Input: {\"path\": \"facts/user.md\", \"line\": null}"
		},
		func(prompt string) string {
			obs := lastObservation(prompt)
			first, _, _ := strings.Cut(obs, "\n")
			version = strings.TrimPrefix(first, "version: ")
			if version == first || version == "" {
				t.Errorf("memory_read observation = %q", obs)
			}
			return "Thought: Do I need to use a tool? Yes\nAction: memory_write\nAction Input: " +
				`{"path": "facts/user.md", "content": "# User\n\n- Name: Zhang San\n- City: Shanghai\n", "version": "` + version + `"}`
		},
		func(prompt string) string {
			if obs := lastObservation(prompt); !strings.Contains(obs, `"path":"facts/user.md"`) || strings.HasPrefix(obs, "Error") {
				t.Errorf("memory_write observation = %q", obs)
			}
			return "Thought: Do I need to use a tool? No\nAI: Updated."
		},
	}
	// A conversation that has read nothing: the version token alone lets the write through.
	agent := agents.NewConversationalAgent(llm, langchaingomem.Tools(store.NewSession()))
	out, err := chains.Run(context.Background(), agents.NewExecutor(agent), "Where do I live?")
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	if strings.TrimSpace(out) != "Updated." {
		t.Errorf("output = %q", out)
	}
	if got := readFile(t, dir, "facts/user.md"); !strings.Contains(got, "- City: Shanghai\n") {
		t.Errorf("facts/user.md = %q", got)
	}
}

// functionsLLM is a scripted model for the OpenAI functions agent: it
// answers with tool calls, and records each request's options.
type functionsLLM struct {
	replies []func(msgs []llms.MessageContent) *llms.ContentChoice
	opts    []llms.CallOptions
}

func (m *functionsLLM) GenerateContent(_ context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	m.opts = append(m.opts, o)
	if len(m.replies) == 0 {
		return nil, errors.New("scripted model: the script has no reply left")
	}
	reply := m.replies[0]
	m.replies = m.replies[1:]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{reply(msgs)}}, nil
}

func (m *functionsLLM) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, opts...)
}

func toolCall(id, name, args string) *llms.ContentChoice {
	return &llms.ContentChoice{ToolCalls: []llms.ToolCall{{
		ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args},
	}}}
}

// lastToolResponse returns the content of the last tool message.
func lastToolResponse(msgs []llms.MessageContent) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, p := range msgs[i].Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				return r.Content
			}
		}
	}
	return ""
}

// TestOpenAIFunctionsAgent runs langchaingo's functions agent, which offers
// every tool one "__arg1" string: a bare path wrapped in __arg1, JSON
// arguments wrapped in __arg1, and JSON arguments given directly.
func TestOpenAIFunctionsAgent(t *testing.T) {
	store, dir := newStore(t)
	llm := &functionsLLM{}
	llm.replies = []func([]llms.MessageContent) *llms.ContentChoice{
		func([]llms.MessageContent) *llms.ContentChoice {
			return toolCall("call_1", "memory_read", `{"__arg1": "facts/user.md"}`)
		},
		func(msgs []llms.MessageContent) *llms.ContentChoice {
			if got := lastToolResponse(msgs); !strings.Contains(got, "- City: Beijing") {
				t.Errorf("memory_read result = %q", got)
			}
			return toolCall("call_2", "memory_patch", `{"__arg1": "{\"path\": \"facts/user.md\", \"patches\": [{\"oldText\": \"Beijing\", \"newText\": \"Hangzhou\"}], \"version\": null}"}`)
		},
		func(msgs []llms.MessageContent) *llms.ContentChoice {
			if got := lastToolResponse(msgs); !strings.Contains(got, `"appliedCount":1`) {
				t.Errorf("memory_patch result = %q", got)
			}
			return toolCall("call_3", "memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "Beijing", "newText": "Shanghai"}], "version": null}`)
		},
		func(msgs []llms.MessageContent) *llms.ContentChoice {
			if got := lastToolResponse(msgs); !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, "oldText was not found") {
				t.Errorf("a patch whose oldText is gone came back as %q", got)
			}
			return &llms.ContentChoice{Content: "You live in Hangzhou."}
		},
	}
	agent := agents.NewOpenAIFunctionsAgent(llm, langchaingomem.Tools(store.NewSession()))
	out, err := chains.Run(context.Background(), agents.NewExecutor(agent), "I moved to Hangzhou.")
	if err != nil {
		t.Fatalf("executor: %v", err)
	}
	if out != "You live in Hangzhou." || len(llm.replies) != 0 {
		t.Errorf("output = %q with %d replies left", out, len(llm.replies))
	}
	if len(llm.opts) > 0 {
		var found bool
		for _, f := range llm.opts[0].Functions {
			if f.Name == "memory_patch" {
				found = strings.Contains(f.Description, `"required":["path","patches","version"]`)
			}
		}
		if !found {
			t.Errorf("memory_patch's function description lacks its schema: %+v", llm.opts[0].Functions)
		}
	}
	if got := readFile(t, dir, "facts/user.md"); !strings.Contains(got, "- City: Hangzhou\n") {
		t.Errorf("facts/user.md = %q", got)
	}
}

// TestHostErrorEndsRun: a closed store and a cancelled context are Go
// errors that end the executor's run, not observations for the model.
func TestHostErrorEndsRun(t *testing.T) {
	t.Run("closed store", func(t *testing.T) {
		store, _ := newStore(t)
		conv := store.NewSession()
		store.Close()
		llm := &scriptedLLM{t: t, replies: []func(string) string{
			func(string) string { return "Action: memory_read\nAction Input: facts/user.md" },
			func(string) string { return "Final Answer: the failure was hidden from the host" },
		}}
		_, err := chains.Run(context.Background(), agents.NewExecutor(agents.NewOneShotAgent(llm, langchaingomem.Tools(conv))), "hi")
		if !errors.Is(err, memory.ErrClosed) || !strings.HasPrefix(err.Error(), "memory_read: ") {
			t.Errorf("err = %v, want memory_read: … wrapping memory.ErrClosed", err)
		}
		if len(llm.prompts) != 1 {
			t.Errorf("model called %d times, want 1", len(llm.prompts))
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		store, dir := newStore(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		llm := &scriptedLLM{t: t, replies: []func(string) string{
			func(string) string {
				cancel() // the host gives up while the model answers
				return "Action: memory_append\nAction Input: {\"path\": \"facts/user.md\", \"entry\": \"- Pet: cat\", \"summary\": null}"
			},
		}}
		_, err := chains.Run(ctx, agents.NewExecutor(agents.NewOneShotAgent(llm, langchaingomem.Tools(store.NewSession()))), "hi")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if got := readFile(t, dir, "facts/user.md"); got != personFile {
			t.Errorf("facts/user.md changed after cancellation: %q", got)
		}
	})
}

// TestInput calls the tools directly with the inputs models write.
func TestInput(t *testing.T) {
	tests := []struct {
		name, tool, input string
		want              string // a part of the output
		wantError         bool   // the output starts with "Error: "
	}{
		{"list with None", "memory_list", "None", `"path":"facts/user.md"`, false},
		{"list empty", "memory_list", "", `"path":"facts/user.md"`, false},
		{"list with {}", "memory_list", "{}", `"path":"facts/user.md"`, false},
		{"list with an argument", "memory_list", `{"path": "facts/user.md"}`, `unknown argument "path"`, true},
		{"read bare path", "memory_read", "facts/user.md", "- City: Beijing", false},
		{"read quoted path", "memory_read", `"facts/user.md"`, "- City: Beijing", false},
		{"read padded path", "memory_read", "  facts/user.md\n", "- City: Beijing", false},
		{"read JSON", "memory_read", `{"path": "facts/user.md", "line": null}`, "- City: Beijing", false},
		{"read JSON leaving out line", "memory_read", `{"path": "facts/user.md"}`, "- City: Beijing", false},
		{"read JSON from line", "memory_read", `{"path": "facts/user.md", "line": 6}`, "- City: Beijing", false},
		{"read fenced JSON", "memory_read", "```json\n{\"path\": \"facts/user.md\"}\n```", "- City: Beijing", false},
		{"read fenced bare path", "memory_read", "```\nfacts/user.md\n```", "- City: Beijing", false},
		{"read outside the memory", "memory_read", "../secrets.txt", "", true},
		{"read empty", "memory_read", "", "", true},
		{"read invalid JSON", "memory_read", `{"path": facts/user.md}`, "", true},
		{"search bare query", "memory_search", "Beijing", `"snippet":"City: Beijing"`, false},
		{"search JSON", "memory_search", `{"query": "Zhang", "limit": 5}`, `"snippet":"Name: Zhang San"`, false},
		{"write plain text", "memory_write", "facts/user.md", `give memory_write its arguments as one JSON object, {"path": …, "content": …, "version": …}`, true},
		{"append plain text", "memory_append", "- Pet: cat", `{"path": …, "entry": …, "summary": …}`, true},
		{"append JSON", "memory_append", `{"path": "facts/user.md", "entry": "- Pet: cat"}`, `"path":"facts/user.md"`, false},
		{"patch unknown argument", "memory_patch", `{"path": "facts/user.md", "patch": []}`, `unknown argument "patch"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, _ := newStore(t)
			var tool tools.Tool
			for _, tl := range langchaingomem.Tools(store.NewSession()) {
				if tl.Name() == tt.tool {
					tool = tl
				}
			}
			if tool == nil {
				t.Fatalf("no tool %s", tt.tool)
			}
			out, err := tool.Call(context.Background(), tt.input)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if gotError := strings.HasPrefix(out, "Error: "); gotError != tt.wantError {
				t.Errorf("output %q: error = %v, want %v", out, gotError, tt.wantError)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output %q lacks %q", out, tt.want)
			}
		})
	}
}

// TestDescriptions pins the descriptions the model reads (go test -update
// rewrites the golden file) and checks that each carries its schema.
func TestDescriptions(t *testing.T) {
	store, _ := newStore(t)
	conv := store.NewSession()
	lts := langchaingomem.Tools(conv)
	mts := conv.Tools()
	if len(lts) != len(mts) || len(lts) != 6 {
		t.Fatalf("Tools gave %d tools, the session %d", len(lts), len(mts))
	}
	var b strings.Builder
	for i, lt := range lts {
		if lt.Name() != mts[i].Name {
			t.Errorf("tool %d is %s, want %s", i, lt.Name(), mts[i].Name)
		}
		d := lt.Description()
		if !strings.HasPrefix(d, mts[i].Description) {
			t.Errorf("%s: description does not start with the library's", lt.Name())
		}
		if strings.Contains(d, "\n") {
			t.Errorf("%s: description has a line break, which breaks the agent's tool list", lt.Name())
		}
		if lt.Name() != "memory_list" && !strings.Contains(d, `"additionalProperties":false}`) {
			t.Errorf("%s: description lacks the schema", lt.Name())
		}
		b.WriteString("- " + lt.Name() + ": " + d + "\n")
	}
	golden := filepath.Join("testdata", "descriptions.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("descriptions differ from %s (go test -update to accept):\n%s", golden, b.String())
	}
}

func TestToolsNil(t *testing.T) {
	if got := langchaingomem.Tools(nil); got != nil {
		t.Errorf("Tools(nil) = %v, want nil", got)
	}
}
