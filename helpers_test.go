package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/backendtest"
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
	checkAtEnd(t, s, dir, opts)
	return s, dir
}

// leftBroken holds the tests whose point is memory that breaks a rule
// (testing.TB → the reason), which checkAtEnd leaves unchecked.
var leftBroken sync.Map

// leavesBroken says that t leaves memory a person broke or a crash cut
// short on purpose, for the reason given: the check of checkAtEnd is not
// made for it. A test calls it in its own body, where a reader sees it.
func leavesBroken(t testing.TB, reason string) {
	t.Helper()
	if strings.TrimSpace(reason) == "" {
		t.Fatal("leavesBroken needs the reason the test leaves broken memory")
	}
	leftBroken.Store(t, reason)
}

// checkAtEnd registers, as bbolt's test DB runs tx.Check, a check of the
// memory in dir for when t ends, after the test's own cleanups registered
// later and before s is closed and dir removed (cleanups run last
// registered first): checkMemory, unless t called leavesBroken. Of the
// stores a test opens on one directory, the last one checks it.
func checkAtEnd(t testing.TB, s *memory.Store, dir string, opts *memory.Options) {
	t.Helper()
	if _, ok := t.(*testing.B); ok {
		return // a benchmark's memory is made to measure, not to keep
	}
	o := *opts
	t.Cleanup(func() {
		if _, ok := leftBroken.Load(t); ok {
			return
		}
		if _, done := checked.LoadOrStore(checkedDir{t, dir}, true); done {
			return
		}
		checkMemory(t, s, dir, &o)
	})
}

// checked holds the directories checkAtEnd has checked, per test.
var checked sync.Map // checkedDir → true

type checkedDir struct {
	t   testing.TB
	dir string
}

// checkMemory reports on t, with Errorf, every rule the memory in dir
// breaks that the library keeps when it writes:
//
//   - a temporary file left behind (a name with ".tmp-"), or another file
//     List does not show (a dot-file, or a file in a dot-folder) that the
//     library does not write (it writes ".lock" and, for Embedder's cache,
//     .cache/vectors-<model>.bin);
//   - every finding of Store.Check, warnings included: a file outside the
//     grammar, one that is not text or over 1 MiB, a file without its
//     title or summary, a month's text outside its "## " entries or an
//     entry not dated in its month, a procedures.md line that is not a
//     rule, the facts, world and procedures budgets. The one warning left
//     out is text outside the bullets of a fact file or world topic, which
//     the library writes when it is given it (a fact may be prose).
//
// Check runs on s, or, when the test closed s, on a store opened on dir
// with opts (without its Embedder, whose cache is not checked).
func checkMemory(t testing.TB, s *memory.Store, dir string, opts *memory.Options) {
	t.Helper()
	const hint = " (a test whose point is such memory says so with leavesBroken(t, reason))"
	walk := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("memory left by the test: %s cannot be read: %v%s", p, err, hint)
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch hidden := strings.HasPrefix(rel, ".") || strings.Contains(rel, "/."); {
		case d.IsDir() || !hidden:
			// A file List shows: Check reports it if it is outside the grammar.
		case strings.Contains(d.Name(), ".tmp-"):
			t.Errorf("memory left by the test: %s is a temporary file left behind: the library renames or removes every one it writes%s", rel, hint)
		case rel == ".lock", strings.HasPrefix(rel, ".cache/vectors-") && strings.HasSuffix(rel, ".bin") && !strings.Contains(rel[len(".cache/"):], "/"):
		case strings.HasPrefix(rel, ".history/") && strings.HasSuffix(rel, ".log") && !strings.Contains(rel[len(".history/"):], "/."):
			// A log of the history, which Check reads.
		default:
			t.Errorf("memory left by the test: %s is a hidden file the library does not write (it writes .lock, .cache/vectors-<model>.bin and .history/<path>.log)%s", rel, hint)
		}
		return nil
	})
	if walk != nil {
		t.Errorf("memory left by the test: walking %s: %v", dir, walk)
	}
	o := *opts
	o.Embedder = nil
	backendtest.CheckLeft(t, s, func() (*memory.Store, error) { return memory.Open(dir, &o) }, "the test", hint)
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

// firstSegment is the path under a memory folder of the first segment of
// the log of the memory file at p, as the library starts it.
func firstSegment(p string) string { return ".history/" + p + "/00000001.log" }

// logText is the log of the memory file at p under the memory folder dir:
// its segments' lines, in order.
func logText(t testing.TB, dir, p string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, ".history", filepath.FromSlash(p), "*.log"))
	require.NoError(t, err)
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		b.Write(data)
	}
	return b.String()
}
