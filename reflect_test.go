package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

func call(id, name, args string) memory.ToolCall {
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

func readFile(t *testing.T, s *memory.Store, path string) string {
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
	require.Contains(t, sys, "<file path=\"facts/notes.md\">\n# Notes\n\n> Summary: one note\n\n- the build needs Go 1.26\n</file>")
	require.Contains(t, sys, "No episodes recorded yet.")
	require.Contains(t, sys, "This month's file is episodes/2026-02.md.")
	require.Contains(t, sys, "Today is 2026-02-27.")
	require.NotContains(t, sys, "user.md")

	// A hand edit is seen by the next reflection.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "facts", "prefs.md"), []byte("- likes tea"), 0o644))
	llm = script(t, reply("Nothing."))
	_, err = memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{})
	require.NoError(t, err)
	require.Contains(t, llm.reqs[0].System, "<file path=\"facts/prefs.md\">\n- likes tea\n</file>")
}
