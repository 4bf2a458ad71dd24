package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

var update = flag.Bool("update", false, "rewrite testdata/output.golden")

// TestRun pins the quickstart's output, so the demo in the README cannot
// silently rot.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, filepath.Join(t.TempDir(), "data", "memory")))
	const golden = "testdata/output.golden"
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())
}

// TestAcceptance checks the design's acceptance scenario on what the demo
// did, not on its wording: the answers and the files.
func TestAcceptance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "memory")
	var out bytes.Buffer
	require.NoError(t, run(&out, dir))

	names := answers(out.String(), "What's my name?")
	require.Len(t, names, 2)
	require.Contains(t, names[0], "Zhang San", "remembers the name across a restart")
	require.NotContains(t, names[0], "Xiao Zhang")
	bugs := answers(out.String(), "What bug did we fix last time?")
	require.Len(t, bugs, 1)
	require.Contains(t, bugs[0], "Login fails after an hour", "recalls the bug fixed")
	require.Contains(t, bugs[0], "tokens expired an hour early")
	require.Contains(t, names[1], "Xiao Zhang", "uses the hand edit")

	user, err := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
	require.NoError(t, err)
	require.Equal(t, "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- Preferred name: Xiao Zhang (at work: Zhang)\n"+
		"- Timezone: Asia/Shanghai\n- Birthday: 03-14\n", string(user), "patched, the hand edit kept, then rewritten")
	_, err = os.Stat(filepath.Join(dir, "facts", "memory.md"))
	require.ErrorIs(t, err, os.ErrNotExist, "the fact over budget was refused")
	transcript := out.String()
	require.Contains(t, transcript, `"title":"Login fails after an hour"`, "the search finds the episode")
	require.Contains(t, transcript, `"appliedCount":1`)
	require.Contains(t, transcript, "over the 15,360-byte budget")
	require.Contains(t, transcript, "facts/user.md changed since you last read it")
	month, err := os.ReadFile(filepath.Join(dir, "episodes", "2026-02.md"))
	require.NoError(t, err)
	require.Contains(t, string(month), "\n## Login fails after an hour\n- Summary: tokens expired an hour early")
	require.Contains(t, string(month), "\n- Date: 2026-02-26\n")
}

// TestStart checks where the demo leaves its files: in -dir DIR, kept,
// which must be new or empty; without it, in a temporary folder it names
// and removes.
func TestStart(t *testing.T) {
	keep := filepath.Join(t.TempDir(), "mem")
	var out bytes.Buffer
	require.NoError(t, start(&out, keep))
	require.True(t, strings.HasSuffix(out.String(), "\nThe files are in "+keep+": open them, edit them, run git init there.\n"))
	_, err := os.Stat(filepath.Join(keep, "facts", "user.md"))
	require.NoError(t, err, "kept")

	err = start(io.Discard, keep)
	require.ErrorContains(t, err, "the folder is not empty")

	out.Reset()
	require.NoError(t, start(&out, ""))
	_, rest, ok := strings.Cut(out.String(), "\nThe files were in ")
	require.True(t, ok, out.String()[max(0, out.Len()-200):])
	tmp, _, _ := strings.Cut(rest, ", now removed")
	_, err = os.Stat(tmp)
	require.ErrorIs(t, err, os.ErrNotExist, "removed")
}

// answers returns the agent's answers to question in a transcript, in order.
func answers(transcript, question string) []string {
	var got []string
	for _, after := range strings.Split(transcript, "user: "+question+"\n")[1:] {
		_, answer, _ := strings.Cut("\n"+after, "\nagent: ")
		answer, _, _ = strings.Cut(answer, "\n")
		got = append(got, answer)
	}
	return got
}

// TestAgentAnswersFromMemory shows that the scripted agent's answers come
// from the files it reads, not from its script.
func TestAgentAnswersFromMemory(t *testing.T) {
	ctx := context.Background()
	store, err := memory.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer store.Close()
	agent := memory.LLMFunc(agentModel)

	got, err := ask(ctx, io.Discard, store, agent, "What's my name?")
	require.NoError(t, err)
	require.Equal(t, "I don't remember that.", got)

	require.NoError(t, store.Write(ctx, "facts/user.md", "# User\n\n- Name: Li Si\n"))
	require.NoError(t, store.Append(ctx, "episodes/2025-12.md", "## Old crash\n- Summary: nil map\n- Date: 2025-12-01", ""))
	require.NoError(t, store.Append(ctx, "episodes/2026-01.md", "## Slow page\n- Summary: missing index\n- Date: 2026-01-05", ""))
	got, err = ask(ctx, io.Discard, store, agent, "What's my name?")
	require.NoError(t, err)
	require.Equal(t, "Your name is Li Si.", got)
	got, err = ask(ctx, io.Discard, store, agent, "What bug did we fix last time?")
	require.NoError(t, err)
	require.Equal(t, `On 2026-01-05 we fixed "Slow page": missing index.`, got)
}
