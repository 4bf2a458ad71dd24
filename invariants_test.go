package memory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// recorder is a testing.TB that keeps what checkMemory reports and the
// cleanups registered on it, so that a test can see the check fail.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// end runs the cleanups registered on r, last first, as a test's end does.
func (r *recorder) end() {
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
}

// TestCheckAtEnd: the check the helpers run when a test ends passes on
// what the library writes and fails, naming the file and the rule, on
// each kind of broken memory, on an open store and on one the test
// closed; leavesBroken turns it off for the test that says why.
func TestCheckAtEnd(t *testing.T) {
	ctx := context.Background()
	sound := func(t *testing.T, opts *memory.Options) (*memory.Store, string) {
		dir := filepath.Join(t.TempDir(), "memory")
		if opts == nil {
			opts = &memory.Options{}
		}
		opts.Now = feb26
		s, err := memory.Open(dir, opts)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		require.NoError(t, s.Write(ctx, "facts/user.md", "- Name: Zhang San\n"))
		require.NoError(t, s.Append(ctx, "facts/memory.md", "Prose is a fact too.", ""))
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Tokyo flights\n- Summary: compared fares", ""))
		require.NoError(t, s.Append(ctx, "procedures.md", "- When fares look stale: check the airline's site", ""))
		return s, dir
	}
	check := func(s *memory.Store, dir string, opts *memory.Options) []string {
		r := &recorder{TB: t}
		checkMemory(r, s, dir, opts)
		return r.errs
	}

	t.Run("what the library writes passes", func(t *testing.T) {
		s, dir := sound(t, nil)
		require.Empty(t, check(s, dir, &memory.Options{}))
	})

	for _, tc := range []struct {
		name   string
		opts   *memory.Options
		breaks func(t *testing.T, dir string)
		want   []string // each in one report
	}{
		{name: "no summary", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "facts/user.md", "# User\n\n- Name: Zhang San\n")
		}, want: []string{`facts/user.md:1: Check's finding: has no "> Summary:" line`}},
		{name: "no title", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "episodes/2026-02.md", "> Summary: x\n\n## A\n- Date: 2026-02-01\n")
		}, want: []string{`episodes/2026-02.md:1: Check's finding: has no "# " title`}},
		{name: "an undated entry", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "episodes/2026-01.md", "# 2026-01 Episodes\n\n> Summary: A\n\n## A\n- Note: x\n")
		}, want: []string{`episodes/2026-01.md:5: Check's finding: the entry has no "- Date:" line`}},
		{name: "not text", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: x\n\n- Name: \xff\n")
		}, want: []string{"facts/user.md:5: Check's finding: holds bytes that are not text"}},
		{name: "a file over 1 MiB", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "episodes/2026-01.md", "# 2026-01 Episodes\n\n> Summary: A\n\n## A\n- Date: 2026-01-01\n"+strings.Repeat("x", 1<<20)+"\n")
		}, want: []string{"episodes/2026-01.md:0: Check's finding: 1,048,6"}},
		{name: "facts over the budget", opts: &memory.Options{FactsBudget: 100}, breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: x\n\n"+strings.Repeat("- Fact: a fact\n", 10))
		}, want: []string{"facts/:0: Check's finding: the fact files hold"}},
		{name: "procedures over the budget", opts: &memory.Options{ProceduresBudget: 100}, breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "procedures.md", "# Procedures\n\n> Summary: x\n\n"+strings.Repeat("- When a: b\n", 10))
		}, want: []string{"procedures.md:0: Check's finding: 148 bytes, over the 100-byte procedures budget"}},
		{name: "a procedure in another shape", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "procedures.md", "# Procedures\n\n> Summary: x\n\n- Check the site\n")
		}, want: []string{`procedures.md:5: Check's warning: not a rule in the form "- When <situation>: <action>"`}},
		{name: "a file outside the grammar", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "episodes/2026-13.md", "# x\n")
		}, want: []string{"episodes/2026-13.md:0: Check's finding: not a month file"}},
		{name: "a temporary file left behind", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, "facts/.user.md.tmp-1x2y3z", "- half a write\n")
		}, want: []string{"facts/.user.md.tmp-1x2y3z is a temporary file left behind"}},
		{name: "a hidden file the library does not write", breaks: func(t *testing.T, dir string) {
			writeFile(t, dir, ".cache/notes", "x")
		}, want: []string{".cache/notes is a hidden file the library does not write"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts == nil {
				opts = &memory.Options{}
			}
			s, dir := sound(t, opts)
			tc.breaks(t, dir)
			errs := check(s, dir, opts)
			require.Len(t, errs, len(tc.want), "%q", errs)
			for i, want := range tc.want {
				require.Contains(t, errs[i], "memory left by the test: "+want)
				require.Contains(t, errs[i], "leavesBroken(t, reason)", "the report says how a test that means it opts out")
			}

			// A store the test closed is checked through another one.
			require.NoError(t, s.Close())
			require.Equal(t, errs, check(s, dir, opts))
		})
	}

	t.Run("at the end of a test, unless it leaves broken memory on purpose", func(t *testing.T) {
		s, dir := sound(t, nil)
		writeFile(t, dir, "facts/user.md", "- no head\n")

		r := &recorder{TB: t}
		checkAtEnd(r, s, dir, &memory.Options{})
		r.end()
		require.Len(t, r.errs, 2, "%q", r.errs) // no title, no summary

		r = &recorder{TB: t}
		checkAtEnd(r, s, dir, &memory.Options{})
		leavesBroken(r, "a fact file without a head is its point")
		r.end()
		require.Empty(t, r.errs)
	})
}
