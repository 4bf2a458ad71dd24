package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// fixedNow is the clock of the reflector tests: 27 February 2026.
var fixedNow = time.Date(2026, 2, 27, 15, 4, 5, 0, time.UTC)

func openAt(t *testing.T, dir string, opts *memory.Options) *memory.Store {
	t.Helper()
	if opts == nil {
		opts = &memory.Options{}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	s, err := memory.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	checkAtEnd(t, s, dir, opts)
	return s
}

func openStore(t *testing.T, opts *memory.Options) *memory.Store {
	t.Helper()
	return openAt(t, t.TempDir(), opts)
}

// seedStore gives s a user fact file and two months of episodes.
func seedStore(t *testing.T, s *memory.Store) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Jianjun, prefers Chinese, wife's birthday Mar 15\n\n"+
		"- Name: 建军 (Jianjun)\n- Language: prefers Chinese conversation\n- Wife's birthday: March 15\n"))
	require.NoError(t, s.Append(ctx, "episodes/2026-01.md", "## Laptop purchase\n- Summary: chose a ThinkPad X1 for battery life\n- Date: 2026-01-12", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Tokyo flight research\n- Summary: Spring Airlines cheapest for April Tokyo trip\n- Date: 2026-02-26\n- Lesson: cross-check airline sites", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Birthday gift brainstorm\n- Summary: wife likes ceramics, chose a Jingdezhen tea set", ""))
}

// step is one scripted model reply: a response or an error.
type step struct {
	resp memory.Response
	err  error
}

func reply(content string, calls ...memory.ToolCall) step {
	return step{resp: memory.Response{Content: content, ToolCalls: calls}}
}

func toolCall(id, name, args string) memory.ToolCall {
	return memory.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// fakeLLM replays its steps in order and records every request. A call past
// the script fails the test.
type fakeLLM struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	reqs  []memory.Request
	// before, when set, runs at the start of each call.
	before func(ctx context.Context, n int)
}

func script(t *testing.T, steps ...step) *fakeLLM {
	return &fakeLLM{t: t, steps: steps}
}

func (f *fakeLLM) Complete(ctx context.Context, req memory.Request) (memory.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	n := len(f.reqs)
	if f.before != nil {
		f.before(ctx, n)
	}
	if n > len(f.steps) {
		f.t.Errorf("model called %d times, script has %d steps", n, len(f.steps))
		return memory.Response{}, errors.New("script ended")
	}
	return f.steps[n-1].resp, f.steps[n-1].err
}

// toolMessages returns the tool messages of req that follow its last
// assistant message: the answers to the previous round's calls.
func toolMessages(req memory.Request) []memory.Message {
	var out []memory.Message
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == "tool"; i-- {
		out = append([]memory.Message{req.Messages[i]}, out...)
	}
	return out
}

func readMem(t *testing.T, s *memory.Store, path string) string {
	t.Helper()
	text, err := s.Read(context.Background(), path)
	require.NoError(t, err)
	return text
}

func TestShouldReflect(t *testing.T) {
	long := strings.Repeat("x", 500)
	tests := []struct {
		name string
		task memory.Task
		want bool
	}{
		{"zero task", memory.Task{}, false},
		{"one iteration, no action", memory.Task{Iterations: 1, Result: long + long}, false},
		{"one iteration, one action, short result", memory.Task{Iterations: 1, Actions: 1, Result: "ok"}, false},
		{"one iteration, one action, 499 characters", memory.Task{Iterations: 1, Actions: 1, Result: long[1:]}, false},
		{"one iteration, one action, 500 characters", memory.Task{Iterations: 1, Actions: 1, Result: long}, true},
		{"500 bytes but 250 runes is short", memory.Task{Iterations: 1, Actions: 1, Result: strings.Repeat("é", 250)}, false},
		{"499 runes of three bytes is short", memory.Task{Iterations: 1, Actions: 1, Result: strings.Repeat("名", 499)}, false},
		{"500 runes of three bytes", memory.Task{Iterations: 1, Actions: 1, Result: strings.Repeat("名", 500)}, true},
		{"one iteration, two actions", memory.Task{Iterations: 1, Actions: 2, Result: "ok"}, true},
		{"two iterations, no action", memory.Task{Iterations: 2, Result: "ok"}, true},
		{"two iterations, one action", memory.Task{Iterations: 2, Actions: 1}, true},
		{"zero iterations, one action", memory.Task{Actions: 1}, false},
		{"negative counts", memory.Task{Iterations: -1, Actions: -1, Result: long}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, memory.ShouldReflect(tt.task))
		})
	}
}

func TestReflectorPromptGolden(t *testing.T) {
	s := openStore(t, nil)
	seedStore(t, s)
	llm := script(t, reply("Nothing new worth recording."))
	r := memory.NewReflector(s, llm, &memory.ReflectorOptions{Persona: memory.Persona{
		Name:        "Pegasus",
		Role:        "a general-purpose personal assistant",
		Personality: []string{"precise", " ", "warm", "curious"},
		Values:      []string{"honesty", "respect for the user's time"},
	}})
	_, err := r.Reflect(context.Background(), memory.Task{Input: "hi", Iterations: 2})
	require.NoError(t, err)
	require.Len(t, llm.reqs, 1)
	golden(t, "reflector_prompt.golden", []byte(llm.reqs[0].System))
}

func TestReflectorPromptReadsTheStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	leavesBroken(t, "a person's fact file without a head is one of the files the prompt shows")
	s := openAt(t, dir, &memory.Options{
		FactFiles:   []memory.FactFile{{Name: "prefs.md", Purpose: "the user's preferences"}, {Name: "notes.md"}},
		FactsBudget: 4096,
	})
	require.NoError(t, s.Write(ctx, "facts/notes.md", "# Notes\n\n> Summary: one note\n\n- the build needs Go 1.26"))
	llm := script(t, reply("Nothing."))
	_, err := memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{})
	require.NoError(t, err)
	sys := llm.reqs[0].System

	require.True(t, strings.HasPrefix(sys, "You are an AI agent, looking back"), "no persona: a neutral opening")
	require.NotContains(t, sys, "## Who you are")
	require.Contains(t, sys, "- facts/prefs.md: the user's preferences\n- facts/notes.md\n")
	require.Contains(t, sys, "at most 4,096 bytes. They hold 56 bytes now.")
	require.Contains(t, sys, "facts/prefs.md: does not exist yet.")
	notes := "# Notes\n\n> Summary: one note\n\n- the build needs Go 1.26\n"
	require.Contains(t, sys, "<file path=\"facts/notes.md\" version=\""+memory.Version(notes)+"\">\n"+notes+"</file version=\""+memory.Version(notes)+"\">")
	require.Contains(t, sys, "No episodes recorded yet.")
	require.Contains(t, sys, "This month's file is episodes/2026-02.md.")
	require.Contains(t, sys, "Today is 2026-02-27.")
	require.NotContains(t, sys, "user.md")

	// A hand edit is seen by the next reflection.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "facts", "prefs.md"), []byte("- likes tea"), 0o644))
	llm = script(t, reply("Nothing."))
	_, err = memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{})
	require.NoError(t, err)
	require.Contains(t, llm.reqs[0].System, "<file path=\"facts/prefs.md\" version=\""+memory.Version("- likes tea")+"\">\n- likes tea\n</file version=")
}

func toolNames(tools []memory.Tool) []string {
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	return names
}

// zhangSanTask is a task in which the user gave their name and the agent
// used a tool the reflector does not have.
func zhangSanTask() memory.Task {
	return memory.Task{
		Input:      "I'm Zhang San. Find me a flight to Tokyo in April.",
		Iterations: 3,
		Actions:    1,
		Result:     "Spring Airlines is cheapest at ¥1200.",
		Messages: []memory.Message{
			{Role: "user", Content: "I'm Zhang San. Find me a flight to Tokyo in April."},
			{Role: "assistant", ToolCalls: []memory.ToolCall{toolCall("s1", "web_search", `{"q":"Tokyo flights April"}`)}},
			{Role: "tool", ToolCallID: "s1", Content: "Spring ¥1200, ANA ¥2800"},
			{Role: "assistant", Content: "Spring Airlines is cheapest at ¥1200."},
		},
	}
}

func TestReflectFullRun(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, nil)
	seedStore(t, s)
	episode := "## Tokyo flight for Zhang San\n- Summary: Spring Airlines cheapest, ¥1200\n- Lesson: prices move daily"
	llm := script(t,
		reply("Zhang San is the user's new name; the flight search is worth an episode.",
			toolCall("c1", "memory_patch", `{"path":"facts/user.md","patches":[{"oldText":"- Name: 建军 (Jianjun)","newText":"- Name: Zhang San"}]}`),
			toolCall("c2", "memory_append", fmt.Sprintf(`{"path":"episodes/2026-02.md","entry":%q,"summary":null}`, episode)),
		),
		reply("", toolCall("c3", "memory_read", `{"path":"facts/user.md"}`)),
		reply("  Recorded the user's name and the flight search.  "),
	)
	task := zhangSanTask()
	ref, err := memory.NewReflector(s, llm, nil).Reflect(ctx, task)
	require.NoError(t, err)
	require.Equal(t, memory.Reflection{
		Assessment: "Recorded the user's name and the flight search.",
		ToolCalls:  3,
		Rounds:     3,
		Changed:    []string{"episodes/2026-02.md", "facts/user.md"},
	}, ref)

	require.Contains(t, readMem(t, s, "facts/user.md"), "\n- Name: Zhang San\n")
	require.NotContains(t, readMem(t, s, "facts/user.md"), "Jianjun)")
	require.Contains(t, readMem(t, s, "episodes/2026-02.md"),
		"## Tokyo flight for Zhang San\n- Summary: Spring Airlines cheapest, ¥1200\n- Date: 2026-02-27\n- Lesson: prices move daily\n")

	require.Len(t, llm.reqs, 3)
	for _, req := range llm.reqs {
		require.Equal(t, []string{"memory_read", "memory_write", "memory_patch", "memory_append"}, toolNames(req.Tools))
		require.Equal(t, llm.reqs[0].System, req.System, "one system prompt per run")
	}
	first := llm.reqs[0].Messages
	require.Len(t, first, len(task.Messages)+2)
	require.Equal(t, "user", first[0].Role)
	require.Equal(t, "The task to reflect on:\n\nInput:\nI'm Zhang San. Find me a flight to Tokyo in April.\n\n"+
		"Iterations: 3\nActions: 1\n\nResult:\nSpring Airlines is cheapest at ¥1200.\n\n"+
		"The task's conversation follows, oldest first.", first[0].Content)
	require.Equal(t, task.Messages, first[1:len(first)-1], "the task's messages, as they are")
	require.Equal(t, "user", first[len(first)-1].Role)
	require.Contains(t, first[len(first)-1].Content, "If nothing is worth remembering, say so and change nothing.")

	// Round 2 sees round 1: the assistant's calls, then one result per call.
	second := llm.reqs[1].Messages
	require.Equal(t, first, second[:len(first)])
	require.Equal(t, memory.Message{Role: "assistant", Content: "Zhang San is the user's new name; the flight search is worth an episode.",
		ToolCalls: llm.steps[0].resp.ToolCalls}, second[len(first)])
	results := toolMessages(llm.reqs[1])
	require.Len(t, results, 2)
	require.Equal(t, "c1", results[0].ToolCallID)
	user := readMem(t, s, "facts/user.md")
	require.JSONEq(t, fmt.Sprintf(`{"path":"facts/user.md","size":%d,"appliedCount":1,"version":%q}`, len(user), memory.Version(user)), results[0].Content)
	require.Equal(t, "c2", results[1].ToolCallID)
	require.Contains(t, results[1].Content, `"path":"episodes/2026-02.md"`)

	results = toolMessages(llm.reqs[2])
	require.Len(t, results, 1)
	user = readMem(t, s, "facts/user.md")
	require.Equal(t, memory.Message{Role: "tool", ToolCallID: "c3", Content: "version: " + memory.Version(user) + "\n\n" + user}, results[0])
}

// snapshot returns every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}

func TestReflectNothingWorthRecording(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	seedStore(t, s)
	before := snapshot(t, dir)
	llm := script(t, reply("Nothing worth remembering: a routine lookup with no new insight."))
	ref, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
	require.NoError(t, err)
	require.Equal(t, memory.Reflection{Assessment: "Nothing worth remembering: a routine lookup with no new insight.", Rounds: 1}, ref)
	require.Equal(t, before, snapshot(t, dir))
}

func TestReflectModelErrorsFedBack(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, nil)
	seedStore(t, s)
	llm := script(t,
		reply("",
			toolCall("a", "web_search", `{"q":"x"}`),
			toolCall("b", "memory_list", `{}`),
			toolCall("c", "memory_write", `{"path":"facts/user.md",`),
			toolCall("d", "memory_write", `["facts/user.md"]`),
			toolCall("e", "memory_read", `{"path":"facts/user.md","extra":1}`),
			toolCall("f", "memory_read", `{"path":"../secret.md"}`),
			toolCall("a", "memory_append", `{"path":"facts/memory.md","entry":"- should not be written","summary":null}`),
			toolCall("", "memory_read", `{"path":"facts/user.md"}`),
			toolCall("", "memory_read", `{"path":"facts/user.md"}`),
			toolCall("g", "memory_read", `null`),
			toolCall("h", strings.Repeat("x", 300), `{}`),
		),
		reply("I made mistakes; nothing recorded."),
	)
	ref, err := memory.NewReflector(s, llm, nil).Reflect(ctx, zhangSanTask())
	require.NoError(t, err)
	require.Equal(t, memory.Reflection{Assessment: "I made mistakes; nothing recorded.", ToolCalls: 11, Rounds: 2}, ref)

	results := toolMessages(llm.reqs[1])
	require.Len(t, results, 11, "every call is answered, in order")
	wantIDs := []string{"a", "b", "c", "d", "e", "f", "a", "", "", "g", "h"}
	for i, m := range results {
		require.Equal(t, wantIDs[i], m.ToolCallID)
	}
	errorsWith := map[int]string{
		0:  `there is no tool named "web_search" here; the tools are memory_read, memory_write, memory_patch, memory_append`,
		1:  `there is no tool named "memory_list" here`,
		2:  "the arguments are not valid JSON",
		3:  "the arguments must be a JSON object, not an array",
		4:  `unknown argument "extra"`,
		5:  "the path may not contain . or .. segments",
		6:  `the call ID "a" was already used in this conversation, so this call was not run`,
		9:  "missing required argument path",
		10: `there is no tool named "xxxxxxxx`,
	}
	for i, m := range results {
		if want, ok := errorsWith[i]; ok {
			require.True(t, strings.HasPrefix(m.Content, "Error: "), "result %d: %s", i, m.Content)
			require.Contains(t, m.Content, want, "result %d", i)
		} else {
			require.False(t, strings.HasPrefix(m.Content, "Error: "), "result %d: %s", i, m.Content)
			user := readMem(t, s, "facts/user.md")
			require.Equal(t, "version: "+memory.Version(user)+"\n\n"+user, m.Content, "calls without an ID are run")
		}
	}
	require.Less(t, len(results[10].Content), 250, "a long tool name is cut")
	require.Contains(t, results[10].Content, "x…\" here")
	_, err = s.Read(ctx, "facts/memory.md")
	require.ErrorIs(t, err, memory.ErrNotFound, "the call with a duplicate ID was not run")
}

func TestReflectLLMError(t *testing.T) {
	errAPI := errors.New("api: 503 overloaded")
	s := openStore(t, nil)
	llm := script(t,
		reply("", toolCall("c1", "memory_append", `{"path":"facts/memory.md","entry":"- the API fails under load","summary":null}`)),
		step{err: errAPI},
	)
	ref, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
	require.ErrorIs(t, err, errAPI)
	require.EqualError(t, err, "memory: reflect: round 2: api: 503 overloaded")
	require.Equal(t, memory.Reflection{ToolCalls: 1, Rounds: 2, Changed: []string{"facts/memory.md"}}, ref,
		"the Reflection returned with an error says what was done")
}

func TestReflectCancelled(t *testing.T) {
	t.Run("before the run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		llm := script(t)
		_, err := memory.NewReflector(openStore(t, nil), llm, nil).Reflect(ctx, zhangSanTask())
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, llm.reqs)
	})
	t.Run("while the model runs", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := openStore(t, nil)
		llm := script(t, reply("", toolCall("c1", "memory_append", `{"path":"facts/memory.md","entry":"- x","summary":null}`)))
		llm.before = func(context.Context, int) { cancel() }
		ref, err := memory.NewReflector(s, llm, nil).Reflect(ctx, zhangSanTask())
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, memory.Reflection{ToolCalls: 1, Rounds: 1}, ref)
		_, err = s.Read(context.Background(), "facts/memory.md")
		require.ErrorIs(t, err, memory.ErrNotFound)
	})
	t.Run("between rounds", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The reply arrives, then the host cancels; the call needs no store,
		// so only the check before the next round can stop the run.
		llm := script(t, reply("", toolCall("c1", "no_such_tool", `{}`)))
		r := memory.NewReflector(openStore(t, nil), memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
			defer cancel()
			return llm.Complete(ctx, req)
		}), nil)
		ref, err := r.Reflect(ctx, zhangSanTask())
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, memory.Reflection{ToolCalls: 1, Rounds: 1}, ref)
		require.Len(t, llm.reqs, 1)
	})
	t.Run("the model returns the context's error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := memory.NewReflector(openStore(t, nil), memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
			cancel()
			return memory.Response{}, ctx.Err()
		}), nil)
		ref, err := r.Reflect(ctx, zhangSanTask())
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 1, ref.Rounds)
	})
}

func TestReflectClosedStore(t *testing.T) {
	t.Run("before the run", func(t *testing.T) {
		s := openStore(t, nil)
		require.NoError(t, s.Close())
		llm := script(t)
		_, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
		require.ErrorIs(t, err, memory.ErrClosed)
		require.Empty(t, llm.reqs)
	})
	t.Run("while the model runs", func(t *testing.T) {
		s := openStore(t, nil)
		llm := script(t, reply("", toolCall("c1", "memory_write", `{"path":"facts/user.md","content":"- x"}`)))
		llm.before = func(context.Context, int) { require.NoError(t, s.Close()) }
		ref, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
		require.ErrorIs(t, err, memory.ErrClosed)
		require.Equal(t, memory.Reflection{ToolCalls: 1, Rounds: 1}, ref)
	})
}

func TestReflectMaxRounds(t *testing.T) {
	appendFact := func(id, line string) step {
		return reply("still going", toolCall(id, "memory_append", fmt.Sprintf(`{"path":"facts/memory.md","entry":%q,"summary":null}`, line)))
	}
	t.Run("option", func(t *testing.T) {
		s := openStore(t, nil)
		llm := script(t, appendFact("c1", "- one"), appendFact("c2", "- two"))
		ref, err := memory.NewReflector(s, llm, &memory.ReflectorOptions{MaxRounds: 2}).Reflect(context.Background(), zhangSanTask())
		require.NoError(t, err)
		require.Equal(t, memory.Reflection{
			Assessment: "Reflection stopped: the model was still calling tools after 2 rounds (MaxRounds); the calls of the last round were run. Its last text: still going",
			ToolCalls:  2,
			Rounds:     2,
			Changed:    []string{"facts/memory.md"},
		}, ref)
		require.Contains(t, readMem(t, s, "facts/memory.md"), "- one\n- two\n", "the last round's call ran")
	})
	t.Run("default", func(t *testing.T) {
		s := openStore(t, nil)
		var steps []step
		for i := range memory.DefaultMaxRounds {
			steps = append(steps, reply("", toolCall(fmt.Sprint(i), "memory_read", `{"path":"facts/user.md"}`)))
		}
		llm := script(t, steps...)
		ref, err := memory.NewReflector(s, llm, &memory.ReflectorOptions{MaxRounds: -1}).Reflect(context.Background(), zhangSanTask())
		require.NoError(t, err)
		require.Equal(t, 5, ref.Rounds)
		require.Equal(t, 5, ref.ToolCalls)
		require.Equal(t, "Reflection stopped: the model was still calling tools after 5 rounds (MaxRounds); the calls of the last round were run.", ref.Assessment)
	})
}

func TestReflectChangedSortedAndDeduplicated(t *testing.T) {
	s := openStore(t, nil)
	llm := script(t,
		reply("",
			toolCall("1", "memory_write", `{"path":"facts/user.md","content":"# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n"}`),
			toolCall("2", "memory_append", `{"path":"episodes/2026-02.md","entry":"## Flight search\n- Summary: Spring cheapest","summary":null}`),
			toolCall("3", "memory_append", `{"path":"facts/memory.md","entry":"- Spring Airlines is often cheapest","summary":"airline tips"}`),
			toolCall("4", "memory_write", `{"path":"episodes/2025-13.md","content":"x"}`),
			toolCall("5", "memory_read", `{"path":"episodes/2026-02.md"}`),
		),
		reply("",
			toolCall("6", "memory_patch", `{"path":"facts/user.md","patches":[{"oldText":"- Name: Zhang San\n","newText":"- Name: Zhang San (张三)\n"}]}`),
			toolCall("7", "memory_patch", `{"path":"facts/memory.md","patches":[{"oldText":"not there","newText":""}]}`),
		),
		reply("Done."),
	)
	ref, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
	require.NoError(t, err)
	require.Equal(t, []string{"episodes/2026-02.md", "facts/memory.md", "facts/user.md"}, ref.Changed)
	require.Equal(t, 7, ref.ToolCalls)
	require.Contains(t, readMem(t, s, "facts/user.md"), "- Name: Zhang San (张三)\n")
}

func TestReflectBudgetExceeded(t *testing.T) {
	s := openStore(t, &memory.Options{FactsBudget: 200})
	big := strings.Repeat("- a fact that takes room\n", 10)
	llm := script(t,
		reply("", toolCall("c1", "memory_write", fmt.Sprintf(`{"path":"facts/user.md","content":%q}`, "# User\n\n> Summary: many facts\n\n"+big))),
		reply("", toolCall("c2", "memory_write", `{"path":"facts/user.md","content":"# User\n\n> Summary: condensed\n\n- one fact\n"}`)),
		reply("Condensed and recorded."),
	)
	ref, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
	require.NoError(t, err)
	require.Equal(t, memory.Reflection{Assessment: "Condensed and recorded.", ToolCalls: 2, Rounds: 3, Changed: []string{"facts/user.md"}}, ref)

	refused := toolMessages(llm.reqs[1])
	require.Len(t, refused, 1)
	require.Equal(t, "c1", refused[0].ToolCallID)
	require.True(t, strings.HasPrefix(refused[0].Content, "Error: facts/ would be 281 bytes, over the 200-byte budget"), refused[0].Content)
	require.Equal(t, "# User\n\n> Summary: condensed\n\n- one fact\n", readMem(t, s, "facts/user.md"))
	require.Contains(t, llm.reqs[0].System, "at most 200 bytes. They hold 0 bytes now.")
}

func TestNewReflectorCopiesOptions(t *testing.T) {
	opts := &memory.ReflectorOptions{Persona: memory.Persona{Name: "Pegasus", Values: []string{"honesty"}}, MaxRounds: 1}
	s := openStore(t, nil)
	llm := script(t, reply("ok"))
	r := memory.NewReflector(s, llm, opts)
	opts.Persona.Name = "Other"
	opts.Persona.Values[0] = "changed"
	opts.MaxRounds = 9
	_, err := r.Reflect(context.Background(), memory.Task{})
	require.NoError(t, err)
	sys := llm.reqs[0].System
	require.True(t, strings.HasPrefix(sys, "You are Pegasus, looking back"), sys[:80])
	require.Contains(t, sys, "\n- Values: honesty\n")
	require.NotContains(t, sys, "- Role:")
	require.NotContains(t, sys, "- Personality:")
}

func TestReflectorNeedsStoreAndLLM(t *testing.T) {
	s := openStore(t, nil)
	for name, r := range map[string]*memory.Reflector{
		"nil Reflector":  nil,
		"zero Reflector": {},
		"nil Store":      memory.NewReflector(nil, script(t), nil),
		"nil LLM":        memory.NewReflector(s, nil, nil),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.Reflect(context.Background(), memory.Task{})
			require.EqualError(t, err, "memory: reflect: the Reflector needs a Store and an LLM; make it with NewReflector")
		})
	}
}

func size(req memory.Request) int {
	n := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		n += msgSize(m)
	}
	return n
}

func msgSize(m memory.Message) int {
	n := utf8.RuneCountInString(m.Content)
	for _, c := range m.ToolCalls {
		n += utf8.RuneCount(c.Arguments)
	}
	return n
}

// checkTrimmed checks the trimming rules on the first request of a run: the
// header and the closing message are kept, the task's messages are a whole
// suffix with no tool result cut from its call, the total fits the budget,
// and no more was dropped than needed. It returns how many were dropped.
func checkTrimmed(t *testing.T, req memory.Request, task memory.Task, budget int) int {
	t.Helper()
	msgs := req.Messages
	require.GreaterOrEqual(t, len(msgs), 2)
	require.True(t, strings.HasPrefix(msgs[0].Content, "The task to reflect on:"), "the header is first")
	require.Contains(t, msgs[len(msgs)-1].Content, "The task is over.")
	kept := msgs[1 : len(msgs)-1]
	dropped := len(task.Messages) - len(kept)
	require.Equal(t, task.Messages[dropped:], kept, "a suffix of the task's messages, as they are")

	calls := map[string]bool{}
	for _, m := range kept {
		if m.Role == "assistant" {
			calls = map[string]bool{}
			for _, c := range m.ToolCalls {
				calls[c.ID] = true
			}
		}
		if m.Role == "tool" {
			require.True(t, calls[m.ToolCallID], "tool result %q kept without its call", m.ToolCallID)
		}
	}

	switch {
	case dropped == 0:
		require.True(t, strings.HasSuffix(msgs[0].Content, "The task's conversation follows, oldest first."))
	case dropped == len(task.Messages):
		require.Contains(t, msgs[0].Content, fmt.Sprintf("The task's conversation (%d messages) was left out to fit the context window.", dropped))
	case dropped == 1:
		require.True(t, strings.HasSuffix(msgs[0].Content, "oldest first; its first message was left out to fit the context window."))
	default:
		require.True(t, strings.HasSuffix(msgs[0].Content, fmt.Sprintf("oldest first; its first %d messages were left out to fit the context window.", dropped)))
	}
	if dropped > 0 {
		if dropped < len(task.Messages) {
			require.LessOrEqual(t, size(req), budget)
		}
		// Keeping the previous turn as well would not have fitted.
		prev := dropped - 1
		for prev > 0 && task.Messages[prev].Role == "tool" {
			prev--
		}
		more := 0
		for _, m := range task.Messages[prev:dropped] {
			more += msgSize(m)
		}
		require.Greater(t, size(req)+more, budget, "dropped more than needed")
	}
	return dropped
}

func TestReflectTrimsTheConversation(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, nil)
	seedStore(t, s)
	text := func(c string, n int) string { return strings.Repeat(c, n) }
	args := func(n int) json.RawMessage { return json.RawMessage(`{"q":"` + text("q", n-8) + `"}`) }
	// Six turns, with sizes 2000, 8100, 2000, 500, 3500 and 1000 characters.
	task := memory.Task{
		Input: "compare flights", Iterations: 4, Actions: 3, Result: "done",
		Messages: []memory.Message{
			{Role: "user", Content: text("a", 2000)},
			{Role: "assistant", Content: text("b", 100), ToolCalls: []memory.ToolCall{
				{ID: "t1", Name: "web_search", Arguments: args(1000)},
				{ID: "t2", Name: "web_search", Arguments: args(1000)},
			}},
			{Role: "tool", ToolCallID: "t1", Content: text("c", 3000)},
			{Role: "tool", ToolCallID: "t2", Content: text("d", 3000)},
			{Role: "user", Content: text("e", 2000)},
			{Role: "assistant", Content: text("f", 500)},
			{Role: "assistant", ToolCalls: []memory.ToolCall{{ID: "t3", Name: "fetch", Arguments: args(500)}}},
			{Role: "tool", ToolCallID: "t3", Content: text("g", 3000)},
			{Role: "user", Content: "名" + text("h", 999)},
		},
	}
	first := func(window int) memory.Request {
		t.Helper()
		llm := script(t, reply("nothing"))
		_, err := memory.NewReflector(s, llm, &memory.ReflectorOptions{ContextWindow: window}).Reflect(ctx, task)
		require.NoError(t, err)
		return llm.reqs[0]
	}
	budget := func(window int) int { return window * 4 * 60 / 100 }

	// The default window holds it all.
	full := first(0)
	require.Zero(t, checkTrimmed(t, full, task, budget(memory.DefaultContextWindow)))
	fixed := size(full) - 17100 // system prompt, header and closing message

	// Room for turns 2 to 5 but not turn 1: the call and both its results go.
	window := (fixed + 100 + 2000 + 500 + 3500 + 1000) * 10 / 24
	req := first(window)
	require.Equal(t, 4, checkTrimmed(t, req, task, budget(window)))
	require.Equal(t, task.Messages[4], req.Messages[1])

	// Every window: the rules hold, and a smaller window never keeps more.
	last := 0
	for w := window * 2; w > 0; w -= 97 {
		n := checkTrimmed(t, first(w), task, budget(w))
		require.GreaterOrEqual(t, n, last, "window %d", w)
		last = n
	}
	require.Equal(t, len(task.Messages), last, "a tiny window leaves the header only")
}

func TestReflectTrimsAHugeTask(t *testing.T) {
	s := openStore(t, nil)
	task := memory.Task{
		Input:    strings.Repeat("i", 100000),
		Result:   strings.Repeat("r", 100000),
		Messages: []memory.Message{{Role: "tool", ToolCallID: "orphan", Content: "kept as it is"}, {Role: "user", Content: "hi"}},
	}
	llm := script(t, reply("nothing"))
	_, err := memory.NewReflector(s, llm, &memory.ReflectorOptions{ContextWindow: 20000}).Reflect(context.Background(), task)
	require.NoError(t, err)
	header := llm.reqs[0].Messages[0].Content
	require.Contains(t, header, "\nInput:\n"+strings.Repeat("i", 9599)+"…\n\n", "input cut to a fifth of the budget")
	require.Contains(t, header, "\nResult:\n"+strings.Repeat("r", 9599)+"…\n\n")
	require.Equal(t, task.Messages, llm.reqs[0].Messages[1:3], "a leading tool message the caller sent is passed through")

	llm = script(t, reply("nothing"))
	_, err = memory.NewReflector(s, llm, &memory.ReflectorOptions{ContextWindow: 1000}).Reflect(context.Background(), task)
	require.NoError(t, err)
	require.Len(t, llm.reqs[0].Messages, 2, "header and closing message only")
	require.Contains(t, llm.reqs[0].Messages[0].Content, "\nInput:\n"+strings.Repeat("i", 999)+"…\n\n", "a field keeps at least 1000 characters")
	require.Contains(t, llm.reqs[0].Messages[0].Content, "The task's conversation (2 messages) was left out")

	llm = script(t, reply("nothing"))
	_, err = memory.NewReflector(s, llm, nil).Reflect(context.Background(), memory.Task{Iterations: 1})
	require.NoError(t, err)
	require.Equal(t, "The task to reflect on:\n\nInput:\n(none)\n\nIterations: 1\nActions: 0\n\nResult:\n(none)\n\n"+
		"The task's conversation was not provided.", llm.reqs[0].Messages[0].Content)
}

func TestReflectorEpisodeIndex(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	leavesBroken(t, "its months are a person's, without heads or dates")
	month := func(m string, n int) {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s Episodes\n\n> Summary: many\n", m)
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "\n## Entry %s #%02d\n- Summary: a summary of sixty characters or so, to fill the index\n- Date: %s-%02d\n", m, i, m, i%28+1)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "episodes", m+".md"), []byte(b.String()), 0o644))
	}
	month("2026-02", 10)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "episodes", "2026-01.md"), []byte("notes a person wrote, no entries\n"), 0o644))
	month("2025-12", 40)
	month("2025-11", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "episodes", "2025-10.md"),
		[]byte("# 2025-10 Episodes\n\n## Untitled work\n\n```\n## not an entry\n```\n"), 0o644))

	llm := script(t, reply("nothing"))
	_, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), memory.Task{})
	require.NoError(t, err)
	sys := llm.reqs[0].System
	_, index, ok := strings.Cut(sys, "## Episode index\n\n")
	require.True(t, ok)
	lines := strings.Split(strings.TrimSuffix(index, "\n"), "\n")
	require.Equal(t, "Newest first, one line per entry: date, title and summary. memory_read a month file for the full entries.", lines[0])
	require.Empty(t, lines[1])
	lines = append(lines[:1], lines[2:]...)
	require.Equal(t, "episodes/2026-02.md:", lines[1])
	require.Equal(t, "- 2026-02-11 Entry 2026-02 #10: a summary of sixty characters or so, to fill the index", lines[2])
	require.Equal(t, "- 2026-02-02 Entry 2026-02 #01: a summary of sixty characters or so, to fill the index", lines[11])
	require.Equal(t, "episodes/2025-12.md:", lines[12], "a month file without entries is skipped")
	require.Equal(t, "- 2025-12-13 Entry 2025-12 #40: a summary of sixty characters or so, to fill the index", lines[13])
	shown := len(lines) - 13 - 1
	oldest := 40 - shown + 1
	require.Equal(t, fmt.Sprintf("- 2025-12-%02d Entry 2025-12 #%02d: a summary of sixty characters or so, to fill the index", oldest%28+1, oldest), lines[len(lines)-2])
	require.Equal(t, fmt.Sprintf("(Not shown, to keep this short: %d older entries of episodes/2025-12.md and 2 older months.)", oldest-1), lines[len(lines)-1])
	require.LessOrEqual(t, utf8.RuneCountInString(strings.Join(lines[1:len(lines)-1], "\n")), 3000)
	require.Greater(t, utf8.RuneCountInString(strings.Join(lines[1:len(lines)-1], "\n")), 3000-90, "the budget is used")
}

func TestReflectorEpisodeIndexCutAtAMonth(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	leavesBroken(t, "its month is a person's, without a summary or dates")
	var b strings.Builder
	b.WriteString("# 2026-02 Episodes\n")
	for i := range 15 {
		fmt.Fprintf(&b, "\n## %s\n- Summary: %s\n", strings.Repeat("t", 90), strings.Repeat(string(rune('a'+i)), 150))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "episodes", "2026-02.md"), []byte(b.String()), 0o644))
	require.NoError(t, s.Append(context.Background(), "episodes/2026-01.md", "## Older\n- Summary: old\n- Date: 2026-01-31", ""))

	llm := script(t, reply("nothing"))
	_, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), memory.Task{})
	require.NoError(t, err)
	_, index, _ := strings.Cut(llm.reqs[0].System, "## Episode index\n\n")
	lines := strings.Split(strings.TrimSuffix(index, "\n"), "\n")
	require.Len(t, lines, 3+14+1, "14 long entries fit, 200 characters each")
	require.Equal(t, "- "+strings.Repeat("t", 90)+": "+strings.Repeat("o", 105)+"…", lines[3], "a long line is cut")
	require.Equal(t, "- "+strings.Repeat("t", 90)+": "+strings.Repeat("b", 105)+"…", lines[len(lines)-2])
	require.Equal(t, "(Not shown, to keep this short: 1 older entry of episodes/2026-02.md and 1 older month.)", lines[len(lines)-1])
}

func TestReflectorPromptSymlinkedFact(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	leavesBroken(t, "a fact file that links out of the directory is its point")
	outside := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(outside, []byte("- the-secret-value\n"), 0o644))
	if err := os.Symlink(outside, filepath.Join(dir, "facts", "user.md")); err != nil {
		t.Skipf("cannot make a symbolic link: %v", err)
	}
	llm := script(t, reply("nothing"))
	_, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), memory.Task{})
	require.NoError(t, err)
	sys := llm.reqs[0].System
	require.NotContains(t, sys, "the-secret-value")
	require.Contains(t, sys, "\nfacts/user.md: cannot be read: facts/user.md is a symbolic link that leads outside the memory directory")
}

func TestReflectDiskError(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	leavesBroken(t, "a folder in a fact file's place is its point")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "facts", "user.md"), 0o755))
	// A fact file that cannot be read is noted in the prompt; the
	// reflection goes on with the rest.
	llm := script(t, reply("nothing to record"))
	_, err := memory.NewReflector(s, llm, nil).Reflect(context.Background(), zhangSanTask())
	require.NoError(t, err)
	require.Contains(t, llm.reqs[0].System, "\nfacts/user.md: cannot be read")
}

// The model may take long; the store stays usable meanwhile. A lock held
// across the call would deadlock the Write and the Close below.
func TestReflectHoldsNoLockWhileTheModelRuns(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, nil)
	llm := memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
		require.NoError(t, s.Write(ctx, "facts/memory.md", "- written while the model ran"))
		require.NoError(t, s.Close())
		return memory.Response{Content: "done"}, nil
	})
	ref, err := memory.NewReflector(s, llm, nil).Reflect(ctx, zhangSanTask())
	require.NoError(t, err)
	require.Equal(t, "done", ref.Assessment)
}

func TestReflectorConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, nil)
	// A stateless model: it appends one episode named after the task, then
	// reports.
	llm := memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
		if req.Messages[len(req.Messages)-1].Role == "tool" {
			return memory.Response{Content: "recorded"}, nil
		}
		input := strings.Split(req.Messages[0].Content, "\n")[3]
		entry := fmt.Sprintf(`{"path":"episodes/2026-02.md","entry":"## %s\n- Summary: concurrent","summary":null}`, input)
		return memory.Response{ToolCalls: []memory.ToolCall{toolCall("c1", "memory_append", entry)}}, nil
	})
	r := memory.NewReflector(s, llm, nil)
	const n = 8
	refs := make([]memory.Reflection, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			refs[i], errs[i] = r.Reflect(ctx, memory.Task{Input: fmt.Sprintf("Task %d", i), Iterations: 2})
		})
	}
	wg.Wait()
	month := readMem(t, s, "episodes/2026-02.md")
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, memory.Reflection{Assessment: "recorded", ToolCalls: 1, Rounds: 2, Changed: []string{"episodes/2026-02.md"}}, refs[i])
		require.Contains(t, month, fmt.Sprintf("\n## Task %d\n- Summary: concurrent\n- Date: 2026-02-27\n", i))
	}
}
