package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// The tests of the history: every change recorded with who made it, every
// recorded version read back and restored, outside changes, shared world
// topics, the bounds, and a log a crash cut short.

// clock is a fake clock that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: feb26()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// history returns the history of path (every file for ""), requiring no
// error.
func history(t testing.TB, s *memory.Store, path string, o *memory.HistoryOptions) []memory.Change {
	t.Helper()
	h, err := s.History(context.Background(), path, o)
	require.NoError(t, err)
	return h
}

// requireVersions requires every version the changes name to be read back
// as contents holds it (by version), and the changes to be newest first.
func requireVersions(t testing.TB, s *memory.Store, changes []memory.Change, contents map[string]string) {
	t.Helper()
	for i, c := range changes {
		if i > 0 {
			require.False(t, c.Time.After(changes[i-1].Time), "newest first: %+v after %+v", c, changes[i-1])
		}
		for _, v := range []string{c.Old, c.New} {
			if v == "" {
				continue
			}
			want, ok := contents[v]
			if !ok {
				continue // a version made before the test kept track
			}
			got, err := s.ReadVersion(context.Background(), c.Path, v)
			require.NoError(t, err, "%s at %s", c.Path, v)
			require.Equal(t, want, got, "%s at %s, byte for byte", c.Path, v)
		}
	}
}

// summary is a change without its time, to compare.
type summary struct{ Path, Op, Actor, Old, New string }

func summarize(changes []memory.Change) []summary {
	out := make([]summary, len(changes))
	for i, c := range changes {
		out[i] = summary{c.Path, c.Op, c.Actor, c.Old, c.New}
	}
	return out
}

// TestHistoryRecordsEveryChange: writes, patches, appends, restores and a
// person's edit, each recorded with its time, operation, actor and the
// versions before and after; every version read back byte for byte.
func TestHistoryRecordsEveryChange(t *testing.T) {
	clk := newClock()
	s, dir := open(t, &memory.Options{Now: clk.Now})
	ctx := context.Background()
	contents := map[string]string{}
	keep := func(text string) string { v := memory.Version(text); contents[v] = text; return v }
	current := func() string { return readFile(t, dir, "facts/user.md") }

	// A host's name for a Store method.
	v1 := keep("# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n")
	require.NoError(t, s.Write(memory.WithActor(ctx, "cli"), "facts/user.md", contents[v1]))
	t1 := clk.Now()
	clk.add(time.Minute)

	// A conversation the host named: its id.
	conv := s.Session("conv-7")
	tools := conv.Tools()
	r, err := tool(t, tools, "memory_read").Call(ctx, []byte(`{"path":"facts/user.md"}`))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	r, err = tool(t, tools, "memory_patch").Call(ctx, []byte(`{"path":"facts/user.md","patches":[{"oldText":"- Name: Zhang San\n","newText":"- Name: Zhang San\n- City: Hangzhou\n"}]}`))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	v2 := keep(current())
	clk.add(time.Minute)

	// No actor at all.
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Pet: a cat", ""))
	v3 := keep(current())
	clk.add(time.Minute)

	want := []summary{
		{"facts/user.md", "append", "", v2, v3},
		{"facts/user.md", "patch", "conv-7", v1, v2},
		{"facts/user.md", "write", "cli", "", v1},
	}
	h := history(t, s, "facts/user.md", nil)
	require.Equal(t, want, summarize(h))
	require.Equal(t, t1, h[2].Time, "the time of the change, from the store's clock")
	requireVersions(t, s, h, contents)

	// A person's edit: pending until the library's next change of the
	// file, which records it with its content.
	edited := keep(current() + "- Birthday: March 15 (by hand)\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "facts", "user.md"), []byte(contents[edited]), 0o644))
	h = history(t, s, "facts/user.md", nil)
	require.Equal(t, summary{"facts/user.md", "outside", "", v3, edited}, summarize(h)[0])
	require.True(t, h[0].Pending)
	require.Equal(t, want, summarize(h[1:]))
	got, err := s.ReadVersion(ctx, "facts/user.md", edited)
	require.NoError(t, err, "the current content is readable before it is recorded")
	require.Equal(t, contents[edited], got)

	require.NoError(t, s.Append(memory.WithActor(ctx, "ui"), "facts/user.md", "- Tea: oolong", ""))
	v5 := keep(current())
	// The edit's content is in the log now: a second edit cannot lose it.
	writeFile(t, dir, "facts/user.md", contents[v1])
	require.NoError(t, s.Write(ctx, "facts/user.md", contents[v2]))
	h = history(t, s, "facts/user.md", nil)
	want = append([]summary{
		{"facts/user.md", "write", "", v1, v2},
		{"facts/user.md", "outside", "", v5, v1},
		{"facts/user.md", "append", "ui", edited, v5},
		{"facts/user.md", "outside", "", v3, edited},
	}, want...)
	require.Equal(t, want, summarize(h))
	for _, c := range h {
		require.False(t, c.Pending)
	}
	requireVersions(t, s, h, contents)
	for v, text := range contents {
		got, err := s.ReadVersion(ctx, "facts/user.md", v)
		require.NoError(t, err)
		require.Equal(t, text, got)
	}
	_, err = s.ReadVersion(ctx, "facts/user.md", memory.Version("never written"))
	require.ErrorIs(t, err, memory.ErrNotFound)
	_, err = s.ReadVersion(ctx, "facts/user.md", "")
	require.ErrorIs(t, err, memory.ErrNotFound)
}

// TestHistoryRestore: a restore brings back a version byte for byte, as a
// change of its own; RestoreIf refuses when the file moved on; the budget
// holds for a restore as for a write.
func TestHistoryRestore(t *testing.T) {
	clk := newClock()
	s, dir := open(t, &memory.Options{Now: clk.Now, FactsBudget: 1500})
	ctx := context.Background()
	big := "# User\n\n> Summary: a long file\n\n" + strings.Repeat("- a fact line of some length, about fifty bytes\n", 20)
	small := "# User\n\n> Summary: short\n\n- Name: Zhang San\n"
	require.NoError(t, s.Write(ctx, "facts/user.md", big))
	clk.add(time.Minute)
	require.NoError(t, s.Write(ctx, "facts/user.md", small))
	clk.add(time.Minute)

	require.NoError(t, s.Restore(memory.WithActor(ctx, "cli"), "facts/user.md", memory.Version(big)))
	require.Equal(t, big, readFile(t, dir, "facts/user.md"))
	h := history(t, s, "facts/user.md", nil)
	require.Equal(t, summary{"facts/user.md", "restore", "cli", memory.Version(small), memory.Version(big)}, summarize(h)[0])
	require.Len(t, h, 3)
	clk.add(time.Minute)

	// RestoreIf: only from the version the caller showed.
	require.NoError(t, s.RestoreIf(ctx, "facts/user.md", memory.Version(small), memory.Version(big)))
	require.Equal(t, small, readFile(t, dir, "facts/user.md"))
	writeFile(t, dir, "facts/user.md", small+"- by hand\n")
	err := s.RestoreIf(ctx, "facts/user.md", memory.Version(big), memory.Version(small))
	require.ErrorIs(t, err, memory.ErrConflict)
	require.Equal(t, small+"- by hand\n", readFile(t, dir, "facts/user.md"), "a change made meanwhile is never undone unseen")
	require.Len(t, history(t, s, "facts/user.md", nil), 5, "four changes and the pending edit")
	err = s.RestoreIf(ctx, "facts/memory.md", memory.Version(big), "")
	require.ErrorIs(t, err, memory.ErrNotFound, "no history of facts/memory.md")

	// The budget: with facts/memory.md grown, the big version no longer
	// fits, and its restore is refused like a write of it.
	require.NoError(t, s.Write(ctx, "facts/memory.md", "# Memory\n\n> Summary: lessons\n\n"+strings.Repeat("- a lesson of about forty bytes here\n", 15)))
	err = s.Restore(ctx, "facts/user.md", memory.Version(big))
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	require.Equal(t, small+"- by hand\n", readFile(t, dir, "facts/user.md"))
	err = s.Restore(ctx, "facts/user.md", memory.Version("never"))
	require.ErrorIs(t, err, memory.ErrNotFound)

	// A file that was removed and created again: restored from history.
	require.NoError(t, s.Restore(ctx, "facts/user.md", memory.Version(small)))
	require.Equal(t, small, readFile(t, dir, "facts/user.md"))
}

// TestHistoryActors: the reflector's changes and compaction's are marked
// as theirs, on behalf of the actor of the context; a month's seal is
// recorded as such; compaction's removal of a part has no version after.
func TestHistoryActors(t *testing.T) {
	clk := newClock()
	s, dir := open(t, &memory.Options{Now: clk.Now})
	ctx := context.Background()

	llm := script(t,
		reply("", toolCall("a", "memory_append", `{"path":"facts/memory.md","entry":"- check airline sites for prices","summary":"lessons"}`)),
		reply("Recorded one lesson."))
	_, err := memory.NewReflector(s, llm, nil).Reflect(memory.WithActor(ctx, "conv-9"), memory.Task{Input: "flights", Iterations: 2})
	require.NoError(t, err)
	clk.add(time.Minute)
	llm = script(t,
		reply("", toolCall("a", "memory_append", `{"path":"facts/memory.md","entry":"- ceramics make good gifts","summary":"lessons"}`)),
		reply("Recorded."))
	_, err = memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{Input: "gift", Iterations: 2})
	require.NoError(t, err)
	h := history(t, s, "facts/memory.md", nil)
	require.Len(t, h, 2)
	require.Equal(t, "reflector", h[0].Actor)
	require.Equal(t, "reflector (conv-9)", h[1].Actor)
	require.Equal(t, "append", h[1].Op)
	require.Empty(t, h[1].Old, "created")
	require.Len(t, history(t, s, "", &memory.HistoryOptions{Actor: "conv-9"}), 1, "the reflector's changes on conv-9's behalf")

	// A month that fills is sealed into a part.
	clk.add(time.Minute)
	for i := 0; ; i++ {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## entry %d\n- Date: 2026-02-26\n%s", i, strings.Repeat("- a line of notes\n", 200)), ""))
		if _, err := os.Stat(filepath.Join(dir, "episodes", "2026-02.001.md")); err == nil {
			break
		}
	}
	h = history(t, s, "episodes/2026-02.001.md", nil)
	require.Len(t, h, 1)
	require.Equal(t, "seal", h[0].Op)
	require.Empty(t, h[0].Old)
	part := readFile(t, dir, "episodes/2026-02.001.md")
	require.Equal(t, memory.Version(part), h[0].New)

	// Compaction (the local rule) of a month in parts a person wrote.
	clk.add(time.Minute)
	head := "# 2025-01 Episodes\n\n> Summary: January\n\n"
	writeFile(t, dir, "episodes/2025-01.001.md", head+"## First\n- Date: 2025-01-01\n- Summary: one\n- Task: long detail\n")
	writeFile(t, dir, "episodes/2025-01.md", head+"## Second\n- Date: 2025-01-02\n- Summary: two\n- Task: more detail\n")
	partText := readFile(t, dir, "episodes/2025-01.001.md")
	res, err := s.Compact(memory.WithActor(ctx, "nightly"), nil, &memory.CompactOptions{Before: "2025-02"})
	require.NoError(t, err)
	require.Equal(t, []string{"2025-01"}, res.Months)
	h = history(t, s, "episodes/2025-01.001.md", nil)
	require.Equal(t, []summary{
		{"episodes/2025-01.001.md", "compact", "compaction (nightly)", memory.Version(partText), ""},
		{"episodes/2025-01.001.md", "outside", "", "", memory.Version(partText)},
	}, summarize(h), "the part a person wrote, recorded before compaction removed it")
	got, err := s.ReadVersion(ctx, "episodes/2025-01.001.md", memory.Version(partText))
	require.NoError(t, err)
	require.Equal(t, partText, got)
	h = history(t, s, "episodes/2025-01.md", &memory.HistoryOptions{Limit: 1})
	require.Equal(t, "compact", h[0].Op)
	require.Equal(t, "compaction (nightly)", h[0].Actor)
	require.Equal(t, memory.Version(readFile(t, dir, "episodes/2025-01.md")), h[0].New)

	// A removed part is restored from its history.
	require.NoError(t, s.Restore(ctx, "episodes/2025-01.001.md", memory.Version(partText)))
	require.Equal(t, partText, readFile(t, dir, "episodes/2025-01.001.md"))
	leavesBroken(t, "the restored part beside the compacted month repeats its entries")
}

// TestHistoryAllFiles: History("") merges the files' changes newest
// first; HistoryOptions narrow them by actor, time and count.
func TestHistoryAllFiles(t *testing.T) {
	clk := newClock()
	s, _ := open(t, &memory.Options{Now: clk.Now})
	ctx := context.Background()
	start := clk.Now()
	type made struct {
		path, actor string
		at          time.Time
	}
	var all []made
	for i := range 12 {
		path := []string{"facts/user.md", "facts/memory.md", "episodes/2026-02.md"}[i%3]
		actor := []string{"alice", "bob"}[i%2]
		var err error
		if strings.HasPrefix(path, "episodes/") {
			err = s.Append(memory.WithActor(ctx, actor), path, fmt.Sprintf("## entry %d\n- Date: 2026-02-26", i), "")
		} else {
			err = s.Append(memory.WithActor(ctx, actor), path, fmt.Sprintf("- fact number %d about %s", i, strings.Repeat("x", i)), "")
		}
		require.NoError(t, err)
		all = append(all, made{path, actor, clk.Now()})
		clk.add(time.Hour)
	}
	h := history(t, s, "", nil)
	require.Len(t, h, 12)
	for i, c := range h {
		m := all[len(all)-1-i]
		require.Equal(t, m.path, c.Path)
		require.Equal(t, m.actor, c.Actor)
		require.Equal(t, m.at, c.Time)
	}
	require.Len(t, history(t, s, "", &memory.HistoryOptions{Limit: 5}), 5)
	require.Equal(t, h[:5], history(t, s, "", &memory.HistoryOptions{Limit: 5}), "the newest")
	bob := history(t, s, "", &memory.HistoryOptions{Actor: "bob"})
	require.Len(t, bob, 6)
	for _, c := range bob {
		require.Equal(t, "bob", c.Actor)
	}
	window := history(t, s, "", &memory.HistoryOptions{Since: start.Add(2 * time.Hour), Until: start.Add(5 * time.Hour)})
	require.Len(t, window, 3, "Since included, Until not")
	require.Equal(t, start.Add(4*time.Hour), window[0].Time)
	require.Equal(t, start.Add(2*time.Hour), window[2].Time)
	require.Len(t, history(t, s, "episodes/2026-02.md", &memory.HistoryOptions{Actor: "alice", Limit: 1}), 1)
	require.Empty(t, history(t, s, "", &memory.HistoryOptions{Actor: "carol"}))
}

// TestHistoryWorld: a world topic's history is on the shared backend, and
// every store that shares it sees it.
func TestHistoryWorld(t *testing.T) {
	wdir := t.TempDir()
	w, err := memory.OpenDir(wdir, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	a, adir := open(t, &memory.Options{World: w})
	b, bdir := open(t, &memory.Options{World: w})
	ctx := context.Background()
	first := "# Tools\n\n> Summary: the team's tools\n\n- Build: make ci\n"
	require.NoError(t, a.Write(memory.WithActor(ctx, "agent-a"), "world/tools.md", first))
	require.NoError(t, b.Append(memory.WithActor(ctx, "agent-b"), "world/tools.md", "- Deploy: on Fridays never", ""))
	require.NoError(t, a.Write(ctx, "facts/user.md", "- Name: Zhang San"))

	require.FileExists(t, filepath.Join(wdir, firstSegment("world/tools.md")))
	require.NoDirExists(t, filepath.Join(adir, ".history", "world"))
	require.NoDirExists(t, filepath.Join(bdir, ".history", "world"))
	for _, s := range []*memory.Store{a, b} {
		h := history(t, s, "world/tools.md", nil)
		require.Len(t, h, 2)
		require.Equal(t, "agent-b", h[0].Actor)
		require.Equal(t, "agent-a", h[1].Actor)
		got, err := s.ReadVersion(ctx, "world/tools.md", h[1].New)
		require.NoError(t, err)
		require.Equal(t, first, got)
	}
	paths := func(s *memory.Store) []string {
		var out []string
		for _, c := range history(t, s, "", nil) {
			out = append(out, c.Path)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	require.Equal(t, []string{"facts/user.md", "world/tools.md"}, paths(a))
	require.Equal(t, []string{"world/tools.md"}, paths(b), "b's own files are not a's")
	require.NoError(t, b.Restore(ctx, "world/tools.md", memory.Version(first)))
	text, err := a.Read(ctx, "world/tools.md")
	require.NoError(t, err)
	require.Equal(t, first, text)
}

// TestHistoryOff: with the history off nothing is recorded; what was
// recorded before is still given.
func TestHistoryOff(t *testing.T) {
	s, dir := open(t, &memory.Options{History: memory.HistoryPolicy{Off: true}})
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Name: Zhang San"))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## one\n- Date: 2026-02-26", ""))
	require.Empty(t, history(t, s, "", nil))
	require.Empty(t, history(t, s, "facts/user.md", nil))
	require.NoDirExists(t, filepath.Join(dir, ".history"))
	require.NoError(t, s.Close())

	on, err := memory.Open(dir, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer on.Close()
	require.NoError(t, on.Append(ctx, "facts/user.md", "- City: Hangzhou", ""))
	require.NoError(t, on.Close())
	off, err := memory.Open(dir, &memory.Options{Now: feb26, History: memory.HistoryPolicy{Off: true}})
	require.NoError(t, err)
	defer off.Close()
	require.NoError(t, off.Append(ctx, "facts/user.md", "- Pet: a cat", ""))
	h := history(t, off, "facts/user.md", nil)
	require.Len(t, h, 3, "the outside record and the append recorded while on, and the change since as pending")
	require.True(t, h[0].Pending)
	require.Equal(t, "append", h[1].Op)
	require.Equal(t, "outside", h[2].Op)
}

// factVersion is version i of a fact file for the pruning tests: every
// line differs from every other version's, so that each record holds
// about size bytes.
func factVersion(i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# User\n\n> Summary: version %d\n\n", i)
	for n := 0; b.Len() < size; n++ {
		fmt.Fprintf(&b, "- line %d of version %d\n", n, i)
	}
	return b.String()
}

// TestHistoryPruning: with a fake clock, versions older than MaxAge and
// beyond the last MinVersions are dropped, the current one and the last
// MinVersions always kept; MaxBytes bounds the logs.
func TestHistoryPruning(t *testing.T) {
	ctx := context.Background()
	const writes = 40 // past 32 changes more than the versions kept, a log is pruned
	run := func(t *testing.T, p memory.HistoryPolicy, size int, step time.Duration) (*memory.Store, string, []string) {
		clk := newClock()
		s, dir := open(t, &memory.Options{Now: clk.Now, History: p})
		var versions []string
		for i := range writes {
			text := factVersion(i, size)
			require.NoError(t, s.Write(ctx, "facts/user.md", text))
			versions = append(versions, memory.Version(text))
			clk.add(step)
		}
		return s, dir, versions
	}
	kept := func(t *testing.T, s *memory.Store, versions []string) map[int]bool {
		h := history(t, s, "facts/user.md", nil)
		require.Equal(t, versions[len(versions)-1], h[0].New, "the current version is kept")
		out := map[int]bool{}
		for _, c := range h {
			// The oldest version kept is named as the version before the
			// oldest change listed: the record that made it is the pruned
			// log's base.
			for _, v := range []string{c.Old, c.New} {
				if v == "" {
					continue // the change that created the file
				}
				i := slices.Index(versions, v)
				require.GreaterOrEqual(t, i, 0)
				out[i] = true
				got, err := s.ReadVersion(ctx, "facts/user.md", v)
				require.NoError(t, err, "version %d kept, and readable", i)
				require.Equal(t, factVersion(i, len(got)), got)
			}
		}
		for i, v := range versions {
			if !out[i] {
				_, err := s.ReadVersion(ctx, "facts/user.md", v)
				require.ErrorIs(t, err, memory.ErrNotFound, "version %d dropped", i)
			}
		}
		return out
	}

	t.Run("MaxAge", func(t *testing.T) {
		// A version a day, kept ten days, at least one: the prune at the
		// 34th write (33 changes more than the one kept, a quarter of the
		// log past ten days) keeps the ten days before it.
		s, _, versions := run(t, memory.HistoryPolicy{MaxAge: 10 * 24 * time.Hour, MinVersions: 1}, 9000, 24*time.Hour)
		k := kept(t, s, versions)
		require.False(t, k[0], "a version of 39 days ago")
		for i := writes - 10; i < writes; i++ {
			require.True(t, k[i], "version %d, of the last ten days", i)
		}
		require.Less(t, len(k), writes-20)
	})
	t.Run("MinVersions", func(t *testing.T) {
		// Kept an hour, a version a day: only the last MinVersions stay
		// from the prune on.
		s, _, versions := run(t, memory.HistoryPolicy{MaxAge: time.Hour, MinVersions: 5}, 9000, 24*time.Hour)
		k := kept(t, s, versions)
		for i := writes - 5; i < writes; i++ {
			require.True(t, k[i], "version %d, of the last five", i)
		}
		require.False(t, k[0])
		require.LessOrEqual(t, len(k), 5+writes-32, "five at the prune, and the writes since")
	})
	t.Run("defaults", func(t *testing.T) {
		// A version a minute: all younger than 90 days, all kept.
		s, _, versions := run(t, memory.HistoryPolicy{}, 300, time.Minute)
		require.Len(t, kept(t, s, versions), writes)
	})
	t.Run("MaxBytes", func(t *testing.T) {
		// Versions of 3 KB, each written whole (no line in common), under
		// a cap of 16 KB for all logs: the log's size is judged at each
		// record, so after 32 writes the log is within it, whatever
		// MinVersions says.
		const cap = 16 << 10
		clk := newClock()
		s, dir := open(t, &memory.Options{Now: clk.Now, History: memory.HistoryPolicy{MaxBytes: cap}})
		var versions []string
		for i := range 32 {
			text := factVersion(i, 3000)
			require.NoError(t, s.Write(ctx, "facts/user.md", text))
			versions = append(versions, memory.Version(text))
			clk.add(time.Minute)
		}
		require.LessOrEqual(t, historyBytes(t, dir), int64(cap))
		k := kept(t, s, versions)
		require.Less(t, len(k), 6)
		require.True(t, k[31])
	})
}

// TestHistoryTornLog: a log whose last line a crash cut is read without
// it; the next change appends cleanly after it, and records the change
// the cut line recorded as one made outside.
func TestHistoryTornLog(t *testing.T) {
	clk := newClock()
	s, dir := open(t, &memory.Options{Now: clk.Now})
	ctx := context.Background()
	var texts []string
	for i := range 3 {
		texts = append(texts, factVersion(i, 200))
		require.NoError(t, s.Write(ctx, "facts/user.md", texts[i]))
		clk.add(time.Minute)
	}
	log := filepath.Join(dir, firstSegment("facts/user.md"))
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	// The last change's mark is the last line: the cut falls in the
	// record before it.
	mark := bytes.LastIndex(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) + 1
	require.Contains(t, string(b[mark:]), `"op":"landed"`)
	require.NoError(t, os.Truncate(log, int64(mark-25)), "the last record cut mid-line")

	h := history(t, s, "facts/user.md", nil)
	require.Len(t, h, 3)
	require.True(t, h[0].Pending, "the file is at a version no whole record made")
	require.Equal(t, memory.Version(texts[2]), h[0].New)
	require.Equal(t, memory.Version(texts[1]), h[1].New)

	texts = append(texts, factVersion(3, 200))
	require.NoError(t, s.Write(ctx, "facts/user.md", texts[3]))
	h = history(t, s, "facts/user.md", nil)
	require.Equal(t, []string{"write", "outside", "write", "write"}, []string{h[0].Op, h[1].Op, h[2].Op, h[3].Op})
	for i, c := range h {
		text := texts[len(h)-1-i]
		require.False(t, c.Pending)
		require.Equal(t, memory.Version(text), c.New)
		got, err := s.ReadVersion(ctx, "facts/user.md", c.New)
		require.NoError(t, err)
		require.Equal(t, text, got)
	}
	b, err = os.ReadFile(log)
	require.NoError(t, err)
	var lines []string // the records, without the marks that follow them
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.Contains(l, `"op":"landed"`) {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 5, "three whole records, the cut one on a line of its own, and the two new")
	require.NotContains(t, lines[2], `"op":"outside"`)
	require.Contains(t, lines[3], `"op":"outside"`)
	findings, err := s.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, findings, "a record a kill cut short recorded a change never made: nothing to fix")
}

// logReads is a Dir that counts the reads of logs, whole.
type logReads struct {
	*memory.Dir
	mu sync.Mutex
	n  int
}

func (d *logReads) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	if strings.HasPrefix(name, ".history/") && limit != 0 {
		d.mu.Lock()
		d.n++
		d.mu.Unlock()
	}
	return d.Dir.Read(ctx, name, limit)
}

func (d *logReads) reads() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// TestHistoryPruneDueOnce: a log whose oldest records the age kept does
// not let go (made while the clock was ahead) is not read to be pruned at
// every change, though most of its records are past the age: pruning
// would keep them all.
func TestHistoryPruneDueOnce(t *testing.T) {
	ctx := context.Background()
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	lr := &logReads{Dir: d}
	clk := newClock()
	s, err := memory.OpenBackend(lr, &memory.Options{Now: clk.Now})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	n := 0
	write := func() {
		n++
		require.NoError(t, s.Write(ctx, "facts/user.md", fmt.Sprintf("# User\n\n> Summary: a counter\n\n- Counter: %d\n", n)))
	}
	clk.add(200 * 24 * time.Hour) // ahead
	for range 10 {
		write()
	}
	clk.add(-200 * 24 * time.Hour) // set right
	for range 50 {
		write()
	}
	clk.add(100 * 24 * time.Hour) // the 50 past the 90 days kept, the 10 not
	before := lr.reads()
	for range 8 {
		write()
	}
	require.LessOrEqual(t, lr.reads()-before, 1, "the log is read to be pruned at each change, and pruning keeps it as it is")
}
