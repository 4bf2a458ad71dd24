package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/stretchr/testify/require"
)

// busyEntry is episode entry i of a busy month: about 600 bytes.
func busyEntry(i int) string {
	return fmt.Sprintf("## Busy task %05d\n- Summary: handled request %d\n- Date: 2026-02-%02d\n- Task: %s\n- Lesson: %s\n",
		i, i, i%28+1, strings.Repeat("t", 250), strings.Repeat("l", 250))
}

// TestNoMonthWall: a month takes 5,000 entries of 600 bytes, none refused;
// its full files become parts, and every view treats them as one month.
func TestNoMonthWall(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	const n = 5000
	for i := range n {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", busyEntry(i), ""), "entry %d", i)
	}

	names, err := os.ReadDir(filepath.Join(dir, "episodes"))
	require.NoError(t, err)
	seen := map[string]int{}
	var files []string
	for _, e := range names {
		files = append(files, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "episodes", e.Name()))
		require.NoError(t, err)
		d := markdown.Parse(b)
		require.True(t, d.Title.OK && d.Summary.OK, "%s has its head", e.Name())
		require.Equal(t, "2026-02 Episodes", d.Title.Text)
		require.LessOrEqual(t, len(b), 40<<10, "%s stays small", e.Name())
		for _, en := range d.Entries {
			seen[en.Title]++
		}
	}
	require.Len(t, seen, n)
	for title, count := range seen {
		require.Equal(t, 1, count, title)
	}
	require.Greater(t, len(files), 50)
	require.Equal(t, "2026-02.001.md", files[0], "the folder's order is the timeline")
	require.Equal(t, "2026-02.md", files[len(files)-1])

	// One month in the list and the index.
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "episodes/2026-02.md", list[0].Path)
	require.Equal(t, len(files)-1, list[0].Parts)
	var total int64
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, "episodes", f))
		require.NoError(t, err)
		total += fi.Size()
	}
	require.Equal(t, total, list[0].Size)
	require.Contains(t, list[0].Summary, "Busy task 04999")
	msg, err := s.NewSession().IndexMessage(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(msg, "episodes/2026-02"))

	// Search reaches entries in the oldest part; memory_read of the month
	// says where its older entries are.
	hits, err := s.Search(ctx, "00007", nil)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.Equal(t, "episodes/2026-02.001.md", hits[0].Path)
	r := call(t, s, "memory_read", `{"path": "episodes/2026-02.md", "line": null}`)
	require.Contains(t, r.Text, fmt.Sprintf("\nparts: the month's older entries are in %d full parts, episodes/2026-02.001.md to episodes/2026-02.%03d.md;", len(files)-1, len(files)-1))
	r = call(t, s, "memory_read", `{"path": "episodes/2026-02.001.md", "line": null}`)
	require.False(t, r.IsError, r.Text)
	require.Contains(t, r.Text, "## Busy task 00000\n")

	// The reflector's episode index starts from the newest entries, whatever
	// part they are in.
	llm := script(t, reply("nothing"))
	_, err = memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{})
	require.NoError(t, err)
	sys := llm.reqs[0].System
	require.Contains(t, sys, "episodes/2026-02.md:\n- 2026-02-16 Busy task 04999")
	require.Regexp(t, `\(Not shown, to keep this short: \d+ older entr(y|ies) of episodes/2026-02.md and the entries of \d+ older parts of episodes/2026-02.md\.\)`, sys)
	require.Equal(t, 1, strings.Count(sys, "episodes/2026-02.md:\n"), "one group for the month")
}

// TestMonthParts: a part can be read and patched but not appended to; the
// month's file takes the appends.
func TestMonthParts(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	writeFile(t, dir, "episodes/2026-02.001.md", "# 2026-02 Episodes\n\n> Summary: Early\n\n## Early\n- Date: 2026-02-01\n")
	const late = "# 2026-02 Episodes\n\n> Summary: Late\n\n## Late\n- Date: 2026-02-20\n"
	writeFile(t, dir, "episodes/2026-02.md", late)

	err := s.Append(ctx, "episodes/2026-02.001.md", "## More", "")
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	require.Contains(t, hint(t, err), "is a full part of the month, kept as it is; append to episodes/2026-02.md")
	_, err = s.Patch(ctx, "episodes/2026-02.001.md", []memory.Patch{{OldText: "## Early", NewText: "## Earlier"}})
	require.NoError(t, err)
	text, err := s.Read(ctx, "episodes/2026-02.001.md")
	require.NoError(t, err)
	require.Contains(t, text, "## Earlier")

	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []memory.FileInfo{{Path: "episodes/2026-02.md", Summary: "Late", Size: int64(len(text) + len(late)), Parts: 1}}, files)

	// A month left with parts and no file of its own (a crash between
	// sealing and writing) is still listed, by its newest part.
	require.NoError(t, os.Remove(filepath.Join(dir, "episodes", "2026-02.md")))
	files, err = s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, "Early", files[0].Summary, "patch leaves the summary line as it was")
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Next", ""))

	for _, p := range []string{"episodes/2026-02.000.md", "episodes/2026-02.1.md", "episodes/2026-02.0001.md", "episodes/2026-02.+01.md", "episodes/archive/x.md", "episodes/archive/2026-13.md"} {
		_, err := memory.Resolve(s, p)
		require.ErrorIs(t, err, memory.ErrInvalidPath, p)
	}
	got, err := memory.Resolve(s, "episodes/2026-02.999.md")
	require.NoError(t, err)
	require.Equal(t, "episodes/2026-02.999.md", got)
}

func TestStats(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n"))
	writeFile(t, dir, "episodes/2026-01.001.md", "# 2026-01 Episodes\n\n> Summary: a\n\n## A\n- Date: 2026-01-01\n\n## B\n- Date: 2026-01-02\n")
	writeFile(t, dir, "episodes/2026-01.md", "# 2026-01 Episodes\n\n> Summary: c\n\n## C\n- Date: 2026-01-03\n")
	writeFile(t, dir, "episodes/2025-01.md", oldMonth)
	_, err := s.Compact(ctx, nil, nil)
	require.NoError(t, err)

	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(len(readFile(t, dir, "facts/user.md"))), st.FactsSize)
	require.Equal(t, memory.DefaultFactsBudget, st.FactsBudget)
	require.Equal(t, 4, st.Files, "a fact file, a month's file and its part, a compacted month")
	require.Equal(t, 1, st.ArchivedMonths)
	require.Len(t, st.Months, 2)
	require.Equal(t, memory.MonthStats{Month: "2026-01", Entries: 3, Size: int64(len(readFile(t, dir, "episodes/2026-01.001.md")) + len(readFile(t, dir, "episodes/2026-01.md"))), Parts: 1}, st.Months[0])
	require.Equal(t, "2025-01", st.Months[1].Month)
	require.Equal(t, 4, st.Months[1].Entries)
	require.True(t, st.Months[1].Compacted)

	msg, err := s.NewSession().IndexMessage(ctx)
	require.NoError(t, err)
	require.Equal(t, len(msg), st.IndexMessage.Size)
	require.Equal(t, (len([]rune(msg))+3)/4, st.IndexMessage.Tokens)
	require.Greater(t, st.ReflectorPrompt.Size, 3000)
	require.InDelta(t, st.ReflectorPrompt.Size/4, st.ReflectorPrompt.Tokens, 200)
}

// TestIndexOverTenYears: with ten years of months of 100 entries each the
// index stays within its budget, shows the newest months and says how to
// reach the rest.
func TestIndexOverTenYears(t *testing.T) {
	s, dir := open(t, nil)
	for m := range 120 {
		month := fmt.Sprintf("%04d-%02d", 2016+m/12, m%12+1)
		var b strings.Builder
		fmt.Fprintf(&b, "# %s Episodes\n\n> Summary: work of %s: flights, gifts, bugs and reviews\n", month, month)
		for i := range 100 {
			fmt.Fprintf(&b, "\n## Task %d of %s\n- Summary: done\n- Date: %s-%02d\n", i, month, month, i%28+1)
		}
		writeFile(t, dir, "episodes/"+month+".md", b.String())
	}
	msg, err := s.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	require.LessOrEqual(t, len([]rune(msg)), memory.DefaultIndexBudget)
	require.Contains(t, msg, "- episodes/2025-12.md (")
	require.Regexp(t, `- \(\d+ older episode files not shown; memory_list lists them all, and memory_search searches them\)`, msg)
}

// listCounting is a Backend that counts the listings of episodes/.
type listCounting struct {
	memory.Backend
	lists atomic.Int64
}

func (l *listCounting) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	if dir == "episodes" {
		l.lists.Add(1)
	}
	return l.Backend.List(ctx, dir)
}

// TestSealListsOnce: a Store's seals find the month's newest part as it
// last sealed it, not by listing episodes/ at each seal (whose parts grow
// with the month); a part that went since, or one another Store sealed,
// sends it to the listing, and no entry is lost or sealed twice.
func TestSealListsOnce(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	b := &listCounting{Backend: d}
	s, err := memory.OpenBackend(b, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer s.Close()
	parts := func() []string {
		names, err := filepath.Glob(filepath.Join(dir, "episodes", "2026-02.*.md"))
		require.NoError(t, err)
		return names
	}
	n := 0
	appendUntil := func(s *memory.Store, k int) {
		t.Helper()
		for ; len(parts()) < k; n++ {
			require.NoError(t, s.Append(ctx, "episodes/2026-02.md", busyEntry(n), ""))
		}
	}
	appendUntil(s, 5)
	require.EqualValues(t, 1, b.lists.Load(), "five seals, one listing")

	// Another Store seals the next part: this one's seal loses the race
	// to it, and lists.
	other, err := memory.Open(dir, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer other.Close()
	appendUntil(other, 6)
	appendUntil(s, 7)
	require.EqualValues(t, 2, b.lists.Load())

	// The newest part went (a person moved it away): listed again.
	last := filepath.Join(dir, "episodes", "2026-02.007.md")
	require.NoError(t, os.Rename(last, filepath.Join(t.TempDir(), "moved.md")))
	appendUntil(s, 7)
	require.EqualValues(t, 3, b.lists.Load())
	require.FileExists(t, last, "sealed again as the seventh")

	// Every entry in one file, once.
	var all strings.Builder
	for _, p := range append(parts(), filepath.Join(dir, "episodes", "2026-02.md")) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		all.Write(data)
	}
	moved := 0
	for i := range n {
		c := strings.Count(all.String(), fmt.Sprintf("## Busy task %05d\n", i))
		require.LessOrEqual(t, c, 1, "entry %d", i)
		moved += 1 - c
	}
	require.Positive(t, moved, "only the part moved away is missing")
}
