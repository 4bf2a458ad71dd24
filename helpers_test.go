package memory_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// feb26 is the fixed clock of the tests.
func feb26() time.Time { return time.Date(2026, 2, 26, 9, 30, 0, 0, time.UTC) }

// open opens a store in a fresh directory with the fixed clock.
func open(t testing.TB, opts *memory.Options) (*memory.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	if opts == nil {
		opts = &memory.Options{}
	}
	if opts.Now == nil {
		opts.Now = feb26
	}
	s, err := memory.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// writeFile puts a file into the store's directory as a person would.
func writeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func readFile(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

// tool finds a tool by name.
func tool(t testing.TB, tools []memory.Tool, name string) memory.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return memory.Tool{}
}

// conversations holds one tool set per store, as an agent keeps one per
// conversation: what its memory_read saw, its memory_write may replace.
var conversations sync.Map // *memory.Store → []memory.Tool

// call runs a tool of s's conversation with args and requires no host error.
func call(t testing.TB, s *memory.Store, name, args string) memory.ToolResult {
	t.Helper()
	tools, _ := conversations.LoadOrStore(s, s.NewSession().Tools())
	r, err := tool(t, tools.([]memory.Tool), name).Call(context.Background(), json.RawMessage(args))
	require.NoError(t, err)
	return r
}

// conversation returns a caller of one fresh tool set of s: a new
// conversation, with its own record of what it has read.
func conversation(t testing.TB, s *memory.Store) func(name, args string) memory.ToolResult {
	tools := s.NewSession().Tools()
	return func(name, args string) memory.ToolResult {
		t.Helper()
		r, err := tool(t, tools, name).Call(context.Background(), json.RawMessage(args))
		require.NoError(t, err)
		return r
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// hint returns the model-facing text of a *memory.Error, requiring err to
// be one.
func hint(t testing.TB, err error) string {
	t.Helper()
	var me *memory.Error
	require.ErrorAs(t, err, &me)
	return me.Hint
}
