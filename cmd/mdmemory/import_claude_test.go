package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Claude Code auto memory as Claude Code writes it: MEMORY.md, an index
// of one line a note, and a note a file, with front matter naming it and
// its type.
const (
	claudeIndex = "- [User role](user_role.md) — data scientist, new to React\n" +
		"- [No DB mocks](feedback_db.md) — integration tests hit a real database\n" +
		"- [Merge freeze](project_freeze.md) — from 2026-03-05\n" +
		"- [Latency dashboard](reference_grafana.md) — the oncall dashboard\n" +
		"\n" +
		"Notes kept across sessions for the apollo repository.\n"
	claudeUser = "---\nname: User role\ndescription: data scientist, observability\ntype: user\n---\n\n" +
		"The user is a data scientist who works on observability and logging.\n" +
		"They read Go well.\n\n" +
		"New to React: explain the frontend with backend analogies.\n"
	claudeFeedback = "---\nname: No DB mocks\ndescription: \"integration tests hit a real database\"\ntype: feedback\n---\n\n" +
		"Integration tests must hit a real database, not mocks.\n\n" +
		"**Why:** mocks hid a broken migration last quarter.\n\n" +
		"**How to apply:** every test that touches the database.\n"
	claudeProject = "---\nname: Merge freeze\ndescription: non-critical merges frozen\ntype: project\n---\n\n" +
		"2026-03-05: the merge freeze for the mobile release begins; flag any non-critical PR after it.\n"
	claudeReference = "---\nname: Latency dashboard\ndescription: oncall dashboard\ntype: reference\n---\n\n" +
		"# Latency dashboard\n\n" +
		"grafana.internal/d/api-latency is the dashboard oncall watches:\n\n" +
		"- check it when changing request handling\n- p99 over 300 ms pages someone\n"
)

// TestImportClaudeCodeNotes: each note arrives where its type says (user
// to facts/user.md, the others to facts/memory.md, a dated project note as
// an entry of its month), keyed by its name, its prose whole; a note too
// long for one line comes a line a paragraph; what is left out is said in
// full.
func TestImportClaudeCodeNotes(t *testing.T) {
	src := t.TempDir()
	put(t, src, "MEMORY.md", claudeIndex)
	put(t, src, "user_role.md", claudeUser)
	put(t, src, "feedback_db.md", claudeFeedback)
	put(t, src, "project_freeze.md", claudeProject)
	put(t, src, "reference_grafana.md", claudeReference)
	long := strings.Repeat("The deploy pipeline has many stages to know. ", 20)
	put(t, src, "project_deploys.md", "---\nname: Deploys\ntype: project\n---\n\n"+long+"\n\n"+long+"\n\n"+strings.Repeat("x", maxItemText)+"\n")
	dir := filepath.Join(t.TempDir(), "memory")
	env := map[string]string{dirEnv: dir, worldEnv: t.TempDir()} // with a world too: a note is no world topic

	res := importJSON(t, env, "claude-code", src, "--apply")
	longLine := strings.TrimSpace(long)
	require.Equal(t, []string{
		"facts/user.md <- user_role.md:7 - User role: The user is a data scientist who works on observability and logging. They read Go well. New to React: explain the frontend with backend analogies.",
		"facts/memory.md <- MEMORY.md:6 - Notes kept across sessions for the apollo repository.",
		"facts/memory.md <- feedback_db.md:7 - No DB mocks: Integration tests must hit a real database, not mocks. **Why:** mocks hid a broken migration last quarter. **How to apply:** every test that touches the database.",
		"facts/memory.md <- project_deploys.md:6 - Deploys (1/3): " + longLine,
		"facts/memory.md <- project_deploys.md:8 - Deploys (2/3): " + longLine,
		"facts/memory.md <- reference_grafana.md:9 - Latency dashboard: grafana.internal/d/api-latency is the dashboard oncall watches: check it when changing request handling; p99 over 300 ms pages someone",
		"episodes/2026-03.md <- project_freeze.md:7 ## Merge freeze",
	}, moved(res.Imported))

	left := leftOut(res.Left)
	for _, l := range []string{"MEMORY.md:1", "MEMORY.md:2", "MEMORY.md:3", "MEMORY.md:4"} {
		require.Contains(t, left[l], "an index line of a topic file", l)
	}
	require.Contains(t, left["project_deploys.md:10"], "a paragraph of 2,000 bytes is no fact line")
	// A description, a summary of the note's text, is said to be left out.
	require.Contains(t, left["user_role.md:3"], "the note's description, a summary of its text, which is imported: left out")
	require.Len(t, res.Left, 9)
	// The text report shows what is left out in full.
	out := mdm(t, map[string]string{dirEnv: filepath.Join(t.TempDir(), "memory")}, "import", "claude-code", src).ok(t)
	require.Contains(t, out, "- Deploys (3/3): "+strings.Repeat("x", maxItemText)+"\n")

	require.Contains(t, read(t, dir, "facts/user.md"), "\n- User role: The user is a data scientist")
	require.NotContains(t, read(t, dir, "facts/memory.md"), "User role")
	require.Contains(t, read(t, dir, "episodes/2026-03.md"), "## Merge freeze\n- Date: 2026-03-05\n\n2026-03-05: the merge freeze for the mobile release begins; flag any non-critical PR after it.\n")
	require.Equal(t, "No problems found.\n", mdm(t, env, "check").ok(t))
}

func TestFrontMatter(t *testing.T) {
	for _, tc := range []struct {
		src    string
		fm     map[string]string
		offset int
	}{
		{"---\nname: a\ntype: 'user'\n---\nbody\n", map[string]string{"name": "a", "type": "user"}, 29},
		{"---\r\nname: a\r\n---\r\nbody\n", map[string]string{"name": "a"}, 19},
		{"---\nname: a\nno end\n", map[string]string{}, 0},
		{"# Title\n", map[string]string{}, 0},
		{"---\n---\n", map[string]string{}, 8},
	} {
		fm, body, offset := frontMatter([]byte(tc.src))
		require.Equal(t, tc.fm, fm, tc.src)
		require.Equal(t, tc.offset, offset, tc.src)
		require.Equal(t, tc.src[offset:], string(body), tc.src)
	}
}
