package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of conversations: parallel tool calls of one conversation,
// stateless clients carrying version tokens, and registries built once
// that serve many conversations by id.

// runs is how many times each parallel case runs: the interleavings differ
// from run to run, and every one must hold.
const runs = 5

// parallel runs f(0) … f(n-1) in n goroutines released together, and waits
// for all of them.
func parallel(n int, f func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	for i := range n {
		done.Go(func() {
			ready.Done()
			<-start
			f(i)
		})
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// sessionCall runs a tool of c and requires no host error.
func sessionCall(t testing.TB, c *memory.Session, name, args string) memory.ToolResult {
	t.Helper()
	r, err := c.Call(context.Background(), name, json.RawMessage(args))
	require.NoError(t, err)
	return r
}

// readVersion reads path through c and returns the version its result
// states, checking that it is the version of the content that follows.
func readVersion(t testing.TB, c *memory.Session, path string) (version, content string) {
	t.Helper()
	r := sessionCall(t, c, "memory_read", mustJSON(t, map[string]string{"path": path}))
	require.False(t, r.IsError, r.Text)
	head, content, ok := strings.Cut(r.Text, "\n\n")
	require.True(t, ok, r.Text)
	version, ok = strings.CutPrefix(head, "version: ")
	require.True(t, ok, r.Text)
	require.Equal(t, memory.Version(content), version, "the version stated is the content's")
	return version, content
}

func patchArgs(path, oldText, newText string, version any) string {
	return fmt.Sprintf(`{"path": %q, "patches": [{"oldText": %q, "newText": %q}], "version": %s}`, path, oldText, newText, jsonOrNull(version))
}

func jsonOrNull(v any) string {
	if v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// lines makes a fact file with n numbered lines "- line i: old".
func lines(n int) string {
	var b strings.Builder
	b.WriteString("# User\n\n> Summary: many lines\n\n")
	for i := range n {
		fmt.Fprintf(&b, "- line %02d: old\n", i)
	}
	return b.String()
}

// TestParallelCallsOfOneConversation: whatever the interleaving, a
// conversation's parallel calls never refuse its own changes, and nothing
// they did is lost.
func TestParallelCallsOfOneConversation(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, s *memory.Store, dir string)
	}{
		{"32 parallel patches of distinct lines after one read", func(t *testing.T, s *memory.Store, dir string) {
			writeFile(t, dir, "facts/user.md", lines(32))
			c := s.NewSession()
			readVersion(t, c, "facts/user.md")
			parallel(32, func(i int) {
				r, err := c.Call(context.Background(), "memory_patch", json.RawMessage(patchArgs("facts/user.md", fmt.Sprintf("- line %02d: old", i), fmt.Sprintf("- line %02d: new", i), nil)))
				assert.NoError(t, err)
				assert.False(t, r.IsError, r.Text)
			})
			require.Equal(t, strings.ReplaceAll(lines(32), ": old", ": new"), readFile(t, dir, "facts/user.md"))
		}},
		{"32 parallel patches carrying the version of one read", func(t *testing.T, s *memory.Store, dir string) {
			writeFile(t, dir, "facts/user.md", lines(32))
			c := s.NewSession()
			v, _ := readVersion(t, c, "facts/user.md")
			parallel(32, func(i int) {
				r, err := c.Call(context.Background(), "memory_patch", json.RawMessage(patchArgs("facts/user.md", fmt.Sprintf("- line %02d: old", i), fmt.Sprintf("- line %02d: new", i), v)))
				assert.NoError(t, err)
				assert.False(t, r.IsError, r.Text)
			})
			require.Equal(t, strings.ReplaceAll(lines(32), ": old", ": new"), readFile(t, dir, "facts/user.md"))
		}},
		{"4 × 15 parallel writes of one file", func(t *testing.T, s *memory.Store, dir string) {
			writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: start\n\n- start\n")
			tools := s.NewSession().Tools()
			_, err := tool(t, tools, "memory_read").Call(context.Background(), json.RawMessage(`{"path": "facts/user.md"}`))
			require.NoError(t, err)
			write := tool(t, tools, "memory_write")
			var mu sync.Mutex
			var written []string
			parallel(4, func(w int) {
				for i := range 15 {
					content := fmt.Sprintf("# User\n\n> Summary: writer %d\n\n- write %d of writer %d\n", w, i, w)
					r, err := write.Call(context.Background(), json.RawMessage(mustJSON(t, map[string]any{"path": "facts/user.md", "content": content, "version": nil})))
					assert.NoError(t, err)
					assert.False(t, r.IsError, r.Text)
					mu.Lock()
					written = append(written, content)
					mu.Unlock()
				}
			})
			require.Len(t, written, 60)
			require.Contains(t, written, readFile(t, dir, "facts/user.md"), "the file is one of the writes")
			// The conversation's record is the last write: it can write again
			// without reading.
			r, err := write.Call(context.Background(), json.RawMessage(`{"path": "facts/user.md", "content": "- final", "version": null}`))
			require.NoError(t, err)
			require.False(t, r.IsError, r.Text)
		}},
		{"16 parallel reads, patches and appends of one fact file", func(t *testing.T, s *memory.Store, dir string) {
			writeFile(t, dir, "facts/user.md", lines(16))
			c := s.NewSession()
			readVersion(t, c, "facts/user.md")
			parallel(48, func(i int) {
				var r memory.ToolResult
				var err error
				switch i % 3 {
				case 0:
					r, err = c.Call(context.Background(), "memory_read", json.RawMessage(`{"path": "facts/user.md"}`))
				case 1:
					n := i / 3
					r, err = c.Call(context.Background(), "memory_patch", json.RawMessage(patchArgs("facts/user.md", fmt.Sprintf("- line %02d: old", n), fmt.Sprintf("- line %02d: new", n), nil)))
				case 2:
					r, err = c.Call(context.Background(), "memory_append", json.RawMessage(fmt.Sprintf(`{"path": "facts/user.md", "entry": "- appended %d", "summary": "many lines"}`, i/3)))
				}
				assert.NoError(t, err)
				assert.False(t, r.IsError, r.Text)
			})
			got := readFile(t, dir, "facts/user.md")
			for n := range 16 {
				require.Contains(t, got, fmt.Sprintf("- line %02d: new\n", n))
				require.Equal(t, 1, strings.Count(got, fmt.Sprintf("- appended %d\n", n)))
			}
			require.NotContains(t, got, ": old")
			// Still current: a patch with no read goes through.
			r := sessionCall(t, c, "memory_patch", patchArgs("facts/user.md", "- line 00: new", "- line 00: newer", nil))
			require.False(t, r.IsError, r.Text)
		}},
		{"parallel appends to a month they create, then a patch without a re-read", func(t *testing.T, s *memory.Store, dir string) {
			c := s.NewSession()
			parallel(16, func(i int) {
				r, err := c.Call(context.Background(), "memory_append", json.RawMessage(fmt.Sprintf(`{"path": "episodes/2026-02.md", "entry": "## Task %02d\n- Summary: done", "summary": null}`, i)))
				assert.NoError(t, err)
				assert.False(t, r.IsError, r.Text)
				assert.Contains(t, r.Text, `"version":`, "the conversation knows the file whole")
			})
			r := sessionCall(t, c, "memory_patch", patchArgs("episodes/2026-02.md", "## Task 07", "## Task seven", nil))
			require.False(t, r.IsError, r.Text)
			got := readFile(t, dir, "episodes/2026-02.md")
			for i := range 16 {
				if i != 7 {
					require.Equal(t, 1, strings.Count(got, fmt.Sprintf("## Task %02d\n", i)))
				}
			}
			require.Contains(t, got, "## Task seven\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range runs {
				s, dir := open(t, nil)
				tt.run(t, s, dir)
			}
		})
	}
}

// TestParallelCallsStillRefuseOthersChanges: the controls. A change made
// by someone else between the conversation's read and its parallel
// changes makes every one of them refused, and the other change survives.
func TestParallelCallsStillRefuseOthersChanges(t *testing.T) {
	others := []struct {
		name   string
		change func(t *testing.T, s *memory.Store, dir string)
	}{
		{"another conversation's patch", func(t *testing.T, s *memory.Store, dir string) {
			other := s.NewSession()
			readVersion(t, other, "facts/user.md")
			r := sessionCall(t, other, "memory_patch", patchArgs("facts/user.md", "- line 31: old", "- line 31: theirs", nil))
			require.False(t, r.IsError, r.Text)
		}},
		{"a hand edit", func(t *testing.T, s *memory.Store, dir string) {
			writeFile(t, dir, "facts/user.md", strings.Replace(lines(32), "- line 31: old", "- line 31: theirs", 1))
		}},
	}
	for _, tt := range others {
		for _, token := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, version token %v", tt.name, token), func(t *testing.T) {
				for range runs {
					s, dir := open(t, nil)
					writeFile(t, dir, "facts/user.md", lines(32))
					c := s.NewSession()
					v, _ := readVersion(t, c, "facts/user.md")
					var version any
					if token {
						version = v
					}
					tt.change(t, s, dir)
					parallel(31, func(i int) {
						r, err := c.Call(context.Background(), "memory_patch", json.RawMessage(patchArgs("facts/user.md", fmt.Sprintf("- line %02d: old", i), fmt.Sprintf("- line %02d: mine", i), version)))
						assert.NoError(t, err)
						assert.True(t, r.IsError, "call %d must be refused", i)
						assert.Contains(t, r.Text, "changed since")
					})
					got := readFile(t, dir, "facts/user.md")
					require.Contains(t, got, "- line 31: theirs")
					require.NotContains(t, got, ": mine")
				}
			})
		}
	}

	// A token from before a change the conversation has since read is
	// refused: the conversation's own past begins at its last read.
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/user.md", lines(4))
	c := s.NewSession()
	v0, _ := readVersion(t, c, "facts/user.md")
	writeFile(t, dir, "facts/user.md", strings.Replace(lines(4), "line 03: old", "line 03: theirs", 1))
	readVersion(t, c, "facts/user.md")
	r := sessionCall(t, c, "memory_patch", patchArgs("facts/user.md", "- line 00: old", "- line 00: mine", v0))
	require.True(t, r.IsError, "v0 was based on what the person changed since")
}

// TestStatelessClient: every call through a fresh tool set, as the MCP
// Inspector's CLI makes them. Version tokens carry the guarantee.
func TestStatelessClient(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- City: Beijing\n"))
	fresh := func() *memory.Session { return s.NewSession() }

	// Without a version, a fresh conversation cannot overwrite what it has
	// not read.
	r := sessionCall(t, fresh(), "memory_write", `{"path": "facts/user.md", "content": "- x", "version": null}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "was not read in this conversation")

	v, content := readVersion(t, fresh(), "facts/user.md")
	r = sessionCall(t, fresh(), "memory_patch", patchArgs("facts/user.md", "- City: Beijing", "- City: Hangzhou", v))
	require.False(t, r.IsError, r.Text)
	var res struct {
		Path, Version string
		Size          int
	}
	require.NoError(t, json.Unmarshal([]byte(r.Text), &res))
	patched := strings.Replace(content, "Beijing", "Hangzhou", 1)
	require.Equal(t, patched, readFile(t, dir, "facts/user.md"))
	require.Equal(t, memory.Version(patched), res.Version, "the result gives the new version")

	// The version from the patch's result is good for the next change.
	r = sessionCall(t, fresh(), "memory_write", mustJSON(t, map[string]any{"path": "facts/user.md", "content": patched + "- Pet: cat\n", "version": res.Version}))
	require.False(t, r.IsError, r.Text)
	require.NoError(t, json.Unmarshal([]byte(r.Text), &res))

	// A stale version is refused, and nothing is changed.
	r = sessionCall(t, fresh(), "memory_patch", patchArgs("facts/user.md", "- Pet: cat", "- Pet: dog", v))
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "is not at the version given")
	require.NotContains(t, r.Text, res.Version, "the refusal does not give away the current version")

	// After a hand edit the client has not read, its version is refused.
	writeFile(t, dir, "facts/user.md", readFile(t, dir, "facts/user.md")+"- Added: by hand\n")
	for _, args := range []string{
		patchArgs("facts/user.md", "- Pet: cat", "- Pet: dog", res.Version),
		mustJSON(t, map[string]any{"path": "facts/user.md", "content": "- overwrite", "version": res.Version}),
	} {
		name := "memory_patch"
		if strings.Contains(args, "content") {
			name = "memory_write"
		}
		r = sessionCall(t, fresh(), name, args)
		require.True(t, r.IsError, name)
		require.Contains(t, r.Text, "changed since that version was read", name)
	}
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Added: by hand")
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Pet: cat")

	// Read again, and the change goes through.
	v, _ = readVersion(t, fresh(), "facts/user.md")
	r = sessionCall(t, fresh(), "memory_patch", patchArgs("facts/user.md", "- Pet: cat", "- Pet: dog", v))
	require.False(t, r.IsError, r.Text)
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Added: by hand\n")

	// A version for a file that does not exist: deleted since.
	r = sessionCall(t, fresh(), "memory_write", mustJSON(t, map[string]any{"path": "facts/memory.md", "content": "- x", "version": v}))
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "does not exist: it was deleted since that version was read")
	require.NoFileExists(t, dir+"/facts/memory.md")
	r = sessionCall(t, fresh(), "memory_patch", patchArgs("facts/memory.md", "x", "y", v))
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "create it with memory_write or memory_append", "a patch cannot bring it back")
	// Version "" is the version of a file that does not exist, as for
	// WriteIf: it creates one, and refuses to replace one.
	r = sessionCall(t, fresh(), "memory_write", `{"path": "facts/memory.md", "content": "- x", "version": ""}`)
	require.False(t, r.IsError, r.Text)
	r = sessionCall(t, fresh(), "memory_write", `{"path": "facts/memory.md", "content": "- z", "version": ""}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, `exists, and version "" is for a file that does not`)

	// The version is a function of the content alone: a client that kept
	// the text computes it.
	text, err := s.Read(ctx, "facts/memory.md")
	require.NoError(t, err)
	r = sessionCall(t, fresh(), "memory_write", mustJSON(t, map[string]any{"path": "facts/memory.md", "content": "- y", "version": memory.Version(text)}))
	require.False(t, r.IsError, r.Text)
}

// TestRegistryBuiltOnce: one set of tool definitions serves every
// conversation; each call runs in the conversation the host names.
func TestRegistryBuiltOnce(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n"))

	// The registry keeps the definitions; calls go through Session(id).
	defs := s.NewSession().Tools()
	registry := map[string]memory.Tool{}
	for _, d := range defs {
		registry[d.Name] = d
	}
	call := func(sessionID, name, args string) memory.ToolResult {
		t.Helper()
		_, ok := registry[name]
		require.True(t, ok)
		r, err := s.Session(sessionID).Call(ctx, name, json.RawMessage(args))
		require.NoError(t, err)
		return r
	}

	require.Same(t, s.Session("alice"), s.Session("alice"))
	require.NotSame(t, s.Session("alice"), s.Session("bob"))
	require.Equal(t, "alice", s.Session("alice").ID())

	require.False(t, call("alice", "memory_read", `{"path": "facts/user.md"}`).IsError)
	r := call("bob", "memory_patch", patchArgs("facts/user.md", "Zhang San", "Li Si", nil))
	require.True(t, r.IsError, "bob has not read the file: alice's read is not his")
	require.Contains(t, r.Text, "was not read in this conversation")

	r = call("alice", "memory_patch", patchArgs("facts/user.md", "- Name: Zhang San", "- Name: Li Si", nil))
	require.False(t, r.IsError, r.Text)
	require.False(t, call("bob", "memory_read", `{"path": "facts/user.md"}`).IsError)
	r = call("alice", "memory_patch", patchArgs("facts/user.md", "- Name: Li Si", "- Name: Wang Wu", nil))
	require.False(t, r.IsError, "alice's own change is not a conflict: %s", r.Text)
	r = call("bob", "memory_patch", patchArgs("facts/user.md", "- Name: Li Si", "- Name: Zhao Liu", nil))
	require.True(t, r.IsError, "alice changed it since bob read it")
	require.Contains(t, r.Text, "changed since you last read it")
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Name: Wang Wu")

	// The tools of a session are its own too.
	tools := s.Session("carol").Tools()
	_, err := tool(t, tools, "memory_read").Call(ctx, json.RawMessage(`{"path": "facts/user.md"}`))
	require.NoError(t, err)
	r = call("carol", "memory_patch", patchArgs("facts/user.md", "- Name: Wang Wu", "- Name: Carol", nil))
	require.False(t, r.IsError, "carol's read through her tools counts for her calls: %s", r.Text)

	// An unknown tool is the model's mistake.
	r, err = s.Session("alice").Call(ctx, "web_search", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Equal(t, `there is no tool named "web_search" here; the tools are memory_list, memory_search, memory_read, memory_write, memory_patch, memory_append`, r.Text)
}

// TestSessionBound: the store keeps the MaxSessions conversations used most
// recently; a forgotten one comes back empty.
func TestSessionBound(t *testing.T) {
	s, _ := open(t, &memory.Options{MaxSessions: 2})
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "- a\n"))

	a := s.Session("a")
	readVersion(t, a, "facts/user.md")
	b := s.Session("b")
	require.Same(t, a, s.Session("a"), "a is used again: b is now the oldest")
	s.Session("c") // forgets b
	require.Same(t, a, s.Session("a"))
	require.NotSame(t, b, s.Session("b"), "b was forgotten and comes back new")

	// Calls count as use: a, used by a call, outlives b.
	b = s.Session("b") // the newest now
	sessionCall(t, a, "memory_list", `{}`)
	s.Session("d") // forgets b, the least recently used
	require.Same(t, a, s.Session("a"))
	require.NotSame(t, b, s.Session("b"))

	// End forgets at once; the Session keeps working for its holder.
	a.End()
	require.NotSame(t, a, s.Session("a"))
	r := sessionCall(t, a, "memory_write", `{"path": "facts/user.md", "content": "- b", "version": null}`)
	require.False(t, r.IsError, r.Text)

	// An empty id names no conversation.
	require.NotSame(t, s.Session(""), s.Session(""))
	require.Equal(t, "", s.NewSession().ID())
	s.NewSession().End() // does nothing

	_, err := memory.Open(t.TempDir(), &memory.Options{MaxSessions: -1})
	require.Error(t, err)
}

// TestSessionHonoursItsContext: a call waiting for its conversation's turn
// gives up when its context is done.
func TestSessionHonoursItsContext(t *testing.T) {
	s, dir := open(t, &memory.Options{LockTimeout: time.Hour})
	c := s.NewSession()
	holdLock(t, dir) // the first call waits for the directory's lock…
	ctx, cancelFirst := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "memory_append", json.RawMessage(`{"path": "facts/user.md", "entry": "- a", "summary": null}`))
		first <- err
	}()
	for !memory.Busy(s) {
		runtime.Gosched() // until the first call holds the store's turn, and so its conversation's
	}
	// …so a second call of the conversation waits for its turn, as long as
	// its context allows.
	second, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Call(second, "memory_read", json.RawMessage(`{"path": "facts/user.md"}`))
	require.ErrorIs(t, err, context.Canceled)

	cancelFirst()
	require.ErrorIs(t, <-first, context.Canceled)
}

// TestDescriptionsStayTrue: a registry built in one month and used in the
// next names no stale month, and the append it describes still works.
func TestDescriptionsStayTrue(t *testing.T) {
	now := feb26()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, dir := open(t, &memory.Options{Now: clock})
	tools := s.NewSession().Tools()
	mu.Lock()
	now = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	mu.Unlock()
	march, _ := open(t, &memory.Options{Now: clock}) // a registry built in the next month
	later := march.NewSession().Tools()
	for i := range tools {
		require.Equal(t, tools[i].Description, later[i].Description, tools[i].Name)
		require.Equal(t, tools[i].InputSchema, later[i].InputSchema, tools[i].Name)
		require.NotRegexp(t, `\d{4}-\d{2}`, tools[i].Description, "no date in %s", tools[i].Name)
	}
	r, err := tool(t, tools, "memory_append").Call(context.Background(), json.RawMessage(`{"path": "episodes/2026-03.md", "entry": "## March task", "summary": null}`))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	require.Contains(t, readFile(t, dir, "episodes/2026-03.md"), "- Date: 2026-03-02")
	r, err = tool(t, tools, "memory_append").Call(context.Background(), json.RawMessage(`{"path": "episodes/2026-02.md", "entry": "## Late", "summary": null}`))
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "append it to episodes/2026-03.md")
}

func TestToolResultContent(t *testing.T) {
	require.Equal(t, "ok", memory.ToolResult{Text: "ok"}.Content())
	require.Equal(t, "Error: bad path", memory.ToolResult{Text: "bad path", IsError: true}.Content())
}

func TestToolSchemaMap(t *testing.T) {
	s, _ := open(t, nil)
	for _, tl := range s.NewSession().Tools() {
		m := tl.SchemaMap()
		require.Equal(t, "object", m["type"], tl.Name)
		var want map[string]any
		require.NoError(t, json.Unmarshal(tl.InputSchema, &want))
		require.Equal(t, want, m)
		m["type"] = "changed"
		require.Equal(t, "object", tl.SchemaMap()["type"], "each call returns a new map")
	}
	require.Nil(t, memory.Tool{}.SchemaMap())
}

// TestErrorType: one type tells a mistake in the request from a failure of
// the host, and keeps the model's instructions out of the Go error string.
func TestErrorType(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Name: Zhang San\n- Note: aa\n"))
	_, err := s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "Note", NewText: "b"}})
	var me *memory.Error
	require.ErrorAs(t, err, &me)
	require.Equal(t, "patch", me.Op)
	require.Equal(t, "facts/user.md", me.Path)
	require.Equal(t, memory.ErrPatchFailed, me.Err)
	require.ErrorIs(t, err, memory.ErrPatchFailed)
	require.Contains(t, me.Hint, "include more of the surrounding text")
	require.Equal(t, "memory: patch facts/user.md: patch failed: patch 1 of 1: oldText was found 2 times in facts/user.md", err.Error())

	r := sessionCall(t, s.NewSession(), "memory_patch", patchArgs("facts/user.md", "a", "b", nil))
	require.True(t, r.IsError)

	_, err = s.Read(ctx, "../x")
	require.ErrorAs(t, err, &me)
	require.Equal(t, memory.ErrInvalidPath, me.Err)

	// Host failures are not an *Error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Read(cctx, "facts/user.md")
	require.False(t, errorsAs(err), "a cancelled context is the host's")
	require.NoError(t, s.Close())
	_, err = s.Read(ctx, "facts/user.md")
	require.ErrorIs(t, err, memory.ErrClosed)
	require.False(t, errorsAs(err), "a closed store is the host's")
	_ = dir

	// The zero Error still says something.
	require.Equal(t, "memory: read: not found", (&memory.Error{Op: "read", Err: memory.ErrNotFound}).Error())
	require.Equal(t, "memory: read x: not found: x is gone", (&memory.Error{Op: "read", Path: "x", Err: memory.ErrNotFound, Hint: "x is gone"}).Error())
}

func errorsAs(err error) bool {
	var me *memory.Error
	return errors.As(err, &me)
}

// TestToolArgumentsAsTheSchemaSays: integers may be written as any JSON
// number with no fraction, as the schema's "integer" allows.
func TestToolArgumentsAsTheSchemaSays(t *testing.T) {
	s, _ := open(t, nil)
	for _, limit := range []string{"5", "5.0", "1e1", "50"} {
		r := call(t, s, "memory_search", `{"query": "x", "limit": `+limit+`}`)
		require.False(t, r.IsError, "%s: %s", limit, r.Text)
	}
	for limit, want := range map[string]string{
		"5.5":  "limit must be a whole number, not 5.5",
		`"5"`:  "limit must be a whole number, not a string",
		"0":    "limit must be from 1 to 50",
		"1e20": "limit must be a whole number, not 1e20",
	} {
		r := call(t, s, "memory_search", `{"query": "x", "limit": `+limit+`}`)
		require.True(t, r.IsError, limit)
		require.Contains(t, r.Text, want, limit)
	}
	long := strings.Repeat("k", 5000)
	r := call(t, s, "memory_list", `{"`+long+`": 1}`)
	require.True(t, r.IsError)
	require.Less(t, len(r.Text), 300, "an unknown argument's name is cut")
	r = call(t, s, "memory_patch", `{"path": "facts/user.md", "patches": [null], "version": null}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "patches[0]: the arguments must be a JSON object, not null")
}

// TestSessionEvictionKeepsTheNewOne: when every older conversation has a
// call under way, the one just made is kept all the same.
func TestSessionEvictionKeepsTheNewOne(t *testing.T) {
	s, dir := open(t, &memory.Options{MaxSessions: 1, LockTimeout: time.Hour})
	holdLock(t, dir)
	a := s.Session("a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Call(ctx, "memory_append", json.RawMessage(`{"path": "facts/user.md", "entry": "- x", "summary": null}`))
		done <- err
	}()
	for !memory.Busy(s) {
		runtime.Gosched() // until a's call is under way
	}
	b := s.Session("b")
	require.Same(t, b, s.Session("b"), "b is kept, over the bound while a is busy")
	require.Same(t, a, s.Session("a"), "a, busy, is not forgotten")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}
