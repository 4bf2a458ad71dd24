package memory_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

func TestFactsBudget(t *testing.T) {
	ctx := context.Background()
	// A budget of 200 bytes over both fact files.
	s, dir := open(t, &memory.Options{FactsBudget: 200})
	leavesBroken(t, "a person's facts/notes.md, not a fact file, is one of its cases")
	head := "# User\n\n> Summary: s\n\n"                                                   // 22 bytes
	require.NoError(t, s.Write(ctx, "facts/memory.md", head+strings.Repeat("m", 77)+"\n")) // 100 bytes

	// Exactly at the limit is allowed.
	require.NoError(t, s.Write(ctx, "facts/user.md", head+strings.Repeat("u", 77)+"\n"))
	require.Len(t, readFile(t, dir, "facts/user.md"), 100)

	// One byte over is refused, by every kind of change, and nothing is written.
	before := readFile(t, dir, "facts/user.md")
	err := s.Write(ctx, "facts/user.md", head+strings.Repeat("u", 78)+"\n")
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	require.Equal(t, "memory: write facts/user.md: facts budget exceeded: facts/ would be 201 bytes, over the 200-byte budget (it is 200 bytes now: facts/user.md has 100, facts/memory.md has 100)", err.Error())
	require.Contains(t, hint(t, err), "facts/ would be 201 bytes, over the 200-byte budget (it is 200 bytes now: facts/user.md has 100, facts/memory.md has 100); nothing was written. Condense the fact files first")
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "uuu", NewText: "uuuu"}})
	require.ErrorIs(t, err, memory.ErrPatchFailed, "ambiguous first")
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "> Summary: s", NewText: "> Summary: st"}})
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	err = s.Append(ctx, "facts/user.md", "- x", "s")
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	require.Equal(t, before, readFile(t, dir, "facts/user.md"))

	// Episodes do not count.
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## "+strings.Repeat("e", 500), ""))

	// A change that does not grow facts/ is allowed even when over budget,
	// so a person's oversized file can be condensed in steps.
	writeFile(t, dir, "facts/user.md", head+strings.Repeat("u", 300)+"\n")
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: strings.Repeat("u", 300), NewText: strings.Repeat("u", 250)}})
	require.NoError(t, err, "shrinking is allowed while still over budget")
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: strings.Repeat("u", 250), NewText: strings.Repeat("v", 250)}})
	require.NoError(t, err, "same size is allowed")
	require.NoError(t, s.Write(ctx, "facts/user.md", head+"- short\n"))

	// Files in facts/ that are not configured fact files do not count.
	writeFile(t, dir, "facts/notes.md", strings.Repeat("n", 5000))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- another", "s"))
}

func TestBudgetToolText(t *testing.T) {
	s, _ := open(t, &memory.Options{FactsBudget: 20000})
	big := strings.Repeat("- a fact that takes room\n", 700) // 17,500 bytes
	r := call(t, s, "memory_write", mustJSON(t, map[string]string{"path": "facts/user.md", "content": big}))
	require.False(t, r.IsError, r.Text)
	r = call(t, s, "memory_append", mustJSON(t, map[string]any{"path": "facts/memory.md", "entry": strings.Repeat("- another fact\n", 200), "summary": nil}))
	require.True(t, r.IsError)
	require.Regexp(t, `^facts/ would be 20,\d{3} bytes, over the 20,000-byte budget \(it is 17,\d{3} bytes now: facts/user\.md has 17,\d{3}\); nothing was written\. Condense the fact files first: memory_read one`, r.Text)
}

// TestBudgetEmptyFacts: a change too big on its own says so, rather than
// advising to condense facts that do not exist.
func TestBudgetEmptyFacts(t *testing.T) {
	s, dir := open(t, &memory.Options{FactsBudget: 100})
	leavesBroken(t, "a person's edit takes the fact files over the budget")
	ctx := context.Background()
	err := s.Write(ctx, "facts/user.md", strings.Repeat("- fact\n", 30))
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	h := hint(t, err)
	require.NotContains(t, h, "now: )")
	require.NotContains(t, h, "Condense the fact files first")
	require.Contains(t, h, "over the 100-byte budget; nothing was written. Make this change shorter")

	// Some facts exist, but this file alone is over the budget.
	require.NoError(t, s.Write(ctx, "facts/memory.md", "# Memory\n\n> Summary: m\n\n- m\n"))
	err = s.Append(ctx, "facts/user.md", strings.Repeat("- fact\n", 30), "")
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	require.NoFileExists(t, filepath.Join(dir, "facts", "user.md"))
	require.Contains(t, hint(t, err), "(the change alone is 237 bytes)")
	require.Contains(t, hint(t, err), "Make this change shorter")

	// A small append to a file that is itself over the budget (a person's
	// edit): condensing is the remedy, not a shorter append.
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: u\n\n"+strings.Repeat("- long fact\n", 20))
	err = s.Append(ctx, "facts/user.md", "- one more", "")
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	require.Contains(t, hint(t, err), "Condense the fact files first")
}

func TestFactTitles(t *testing.T) {
	s, dir := open(t, &memory.Options{FactFiles: []memory.FactFile{{Name: "lessons_learned.md"}, {Name: "my-team.md"}, {Name: "9lives.md"}}})
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, "facts/lessons_learned.md", "- a", ""))
	require.NoError(t, s.Append(ctx, "facts/my-team.md", "- b", ""))
	require.NoError(t, s.Append(ctx, "facts/9lives.md", "- c", ""))
	require.True(t, strings.HasPrefix(readFile(t, dir, "facts/lessons_learned.md"), "# Lessons learned\n"))
	require.True(t, strings.HasPrefix(readFile(t, dir, "facts/my-team.md"), "# My team\n"))
	require.True(t, strings.HasPrefix(readFile(t, dir, "facts/9lives.md"), "# 9lives\n"))
}
