package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// histSample makes a memory with a history: facts/user.md written by the
// host "host" and then appended to, and February's entry appended by the
// conversation "conv-7", on a clock that moves a minute at each reading. It
// returns the directory and facts/user.md's two versions, oldest first.
func histSample(t *testing.T) (dir string, v1, v2 string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "memory")
	var mu sync.Mutex
	now := time.Date(2026, 2, 26, 9, 0, 0, 0, time.UTC)
	tick := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Minute)
		return now
	}
	s, err := memory.Open(dir, &memory.Options{Now: tick})
	require.NoError(t, err)
	defer s.Close()
	ctx := memory.WithActor(context.Background(), "host")
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n- Name: Zhang San\n"))
	v1 = memory.Version(read(t, dir, "facts/user.md"))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- City: Hangzhou", ""))
	v2 = memory.Version(read(t, dir, "facts/user.md"))
	require.NoError(t, s.Append(memory.WithActor(ctx, "conv-7"), "episodes/2026-02.md", sampleFeb, ""))
	return dir, v1, v2
}

// logRows are the rows of log's table, without the header, each's
// columns.
func logRows(t *testing.T, out string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Regexp(t, `^TIME +OP +PATH +ACTOR +VERSIONS$`, lines[0], out)
	var rows [][]string
	for _, l := range lines[1:] {
		if l == "" {
			break
		}
		f := strings.Fields(l)
		if f[0] != "pending" { // the date and the time are one column
			f = append([]string{f[0] + " " + f[1]}, f[2:]...)
		}
		rows = append(rows, f)
	}
	return rows
}

// TestLog: the changes newest first, with who made them and the versions
// before and after; --json, --limit, --actor, --since and --until; a change
// made outside the library since the last record, or a file removed by
// hand, shown as pending.
func TestLog(t *testing.T) {
	dir, v1, v2 := histSample(t)
	env := map[string]string{dirEnv: dir}
	out := mdm(t, env, "log").ok(t)
	rows := logRows(t, out)
	require.Len(t, rows, 3, out)
	feb := rows[0][6]
	require.Equal(t, []string{"append", "episodes/2026-02.md", "conv-7", "(none)", "->"}, rows[0][1:6])
	require.Equal(t, []string{"append", "facts/user.md", "host", v1[:8], "->", v2[:8]}, rows[1][1:])
	require.Equal(t, []string{"write", "facts/user.md", "host", "(none)", "->", v1[:8]}, rows[2][1:])
	for _, r := range rows {
		require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, r[0])
	}
	require.Greater(t, rows[0][0], rows[2][0], "newest first")
	require.NotContains(t, out, "pending")

	one := logRows(t, mdm(t, env, "log", "facts/user.md").ok(t))
	require.Equal(t, rows[1:], one)
	require.Equal(t, rows[:1], logRows(t, mdm(t, env, "log", "--limit", "1").ok(t)))
	require.Equal(t, rows[:1], logRows(t, mdm(t, env, "log", "--actor", "conv-7").ok(t)))
	require.Equal(t, "No changes recorded.\n", mdm(t, env, "log", "--since", "2026-03-01").ok(t))
	require.Equal(t, "No changes recorded.\n", mdm(t, env, "log", "--until", "2026-02-26").ok(t))
	require.Len(t, logRows(t, mdm(t, env, "log", "--since", "2026-02-26").ok(t)), 3)
	require.Len(t, logRows(t, mdm(t, env, "log", "--since", "2026-02-26T09:02:30Z").ok(t)), 1)
	require.Equal(t, "No changes recorded.\n", mdm(t, env, "log", "--since", "7d").ok(t), "a span back from now")
	require.Equal(t, "No changes recorded.\n", mdm(t, env, "log", "facts/memory.md").ok(t))
	require.Contains(t, mdm(t, env, "log", "facts/notes.md").failed(t), "invalid path")

	// --json: one array, the versions whole, the names the other commands
	// use.
	var got []map[string]any
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "log", "--json", "facts/user.md").ok(t)), &got))
	require.Len(t, got, 2)
	require.Equal(t, "append", got[0]["op"])
	require.Equal(t, "facts/user.md", got[0]["path"])
	require.Equal(t, "host", got[0]["actor"])
	require.Equal(t, v1, got[0]["old"])
	require.Equal(t, v2, got[0]["new"])
	require.Equal(t, "", got[1]["old"])
	require.NotContains(t, got[0], "pending", "only when true")
	when, err := time.Parse(time.RFC3339Nano, got[0]["time"].(string))
	require.NoError(t, err)
	require.True(t, when.After(time.Date(2026, 2, 26, 9, 0, 0, 0, time.UTC)) && when.Before(time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC)), when)
	require.Equal(t, "[]\n", mdm(t, env, "log", "--json", "--since", "2026-03-01").ok(t), "a list, never null")

	// A person's edit since the last record, and a file removed by hand:
	// pending, newest, with no actor. (A file with one record, removed by
	// hand, cannot be told from a crash before its creation: its history
	// shows no change; hence the second entry.)
	put(t, dir, "facts/user.md", "# User\n\n- Name: Zhang San\n- City: Hangzhou\n- Pet: a cat\n")
	v3 := memory.Version(read(t, dir, "facts/user.md"))
	mdm(t, env, "add", "episodes/2026-02.md", sampleGift).ok(t)
	feb2 := memory.Version(read(t, dir, "episodes/2026-02.md"))
	require.NoError(t, os.Remove(filepath.Join(dir, "episodes", "2026-02.md")))
	out = mdm(t, env, "log").ok(t)
	rows = logRows(t, out)
	require.Len(t, rows, 6, out)
	require.ElementsMatch(t, [][]string{
		{"pending", "outside", "episodes/2026-02.md", "-", feb2[:8], "->", "(none)"},
		{"pending", "outside", "facts/user.md", "-", v2[:8], "->", v3[:8]},
	}, rows[:2])
	require.Equal(t, []string{"append", "episodes/2026-02.md", "cli", feb, "->", feb2[:8]}, rows[2][1:])
	require.Contains(t, out, "\npending: changed outside the library since its last recorded version;")
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "log", "--json", "episodes/2026-02.md").ok(t)), &got))
	require.Equal(t, map[string]any{"time": got[0]["time"], "path": "episodes/2026-02.md", "op": "outside", "actor": "", "old": got[1]["new"], "new": "", "pending": true}, got[0])
}

// TestDiff: a unified diff between two versions, or between one and the
// current content; versions by their first characters; --json; colour
// on a terminal; a version the history does not hold.
func TestDiff(t *testing.T) {
	dir, v1, v2 := histSample(t)
	env := map[string]string{dirEnv: dir}
	body := "@@ -1,5 +1,6 @@\n # User\n \n-> Summary: Name\n+> Summary: Name; City\n \n - Name: Zhang San\n+- City: Hangzhou\n"
	require.Equal(t, "--- facts/user.md\t"+v1[:8]+"\n+++ facts/user.md\t"+v2[:8]+"\n"+body, mdm(t, env, "diff", "facts/user.md", v1[:6], v2).ok(t))
	require.Equal(t, "--- facts/user.md\t"+v1[:8]+"\n+++ facts/user.md\tcurrent ("+v2[:8]+")\n"+body, mdm(t, env, "diff", "facts/user.md", v1).ok(t))
	require.Empty(t, mdm(t, env, "diff", "facts/user.md", v2[:4]).ok(t), "the same content")

	var got struct{ Path, From, To, Diff string }
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "diff", "--json", "facts/user.md", v2[:8], v1[:8]).ok(t)), &got))
	require.Equal(t, "facts/user.md", got.Path)
	require.Equal(t, v2, got.From)
	require.Equal(t, v1, got.To)
	require.Contains(t, got.Diff, "\n-- City: Hangzhou\n")

	// A person's edit: its version is the current one, before any record
	// holds it.
	put(t, dir, "facts/user.md", "# User\n\n- Name: Zhang San\n")
	v3 := memory.Version(read(t, dir, "facts/user.md"))
	require.Contains(t, mdm(t, env, "diff", "facts/user.md", v2[:8], v3[:8]).ok(t), "\n - Name: Zhang San\n-- City: Hangzhou\n")
	// A file removed by hand: every line goes.
	require.NoError(t, os.Remove(filepath.Join(dir, "facts", "user.md")))
	require.Contains(t, mdm(t, env, "diff", "facts/user.md", v1[:8]).ok(t), "+++ facts/user.md\tcurrent ((none))\n@@ -1,5 +0,0 @@\n-# User\n")

	var out ttyBuffer
	out.tty = true
	run(context.Background(), []string{"diff", "facts/user.md", v1[:8], v2[:8]}, strings.NewReader(""), &out, &ttyBuffer{}, func(k string) string { return env[k] })
	require.Contains(t, out.String(), "\x1b[1m--- facts/user.md\t"+v1[:8]+"\x1b[0m\n")
	require.Contains(t, out.String(), "\x1b[36m@@ -1,5 +1,6 @@\x1b[0m\n # User\n")
	require.Contains(t, out.String(), "\x1b[31m-> Summary: Name\x1b[0m\n\x1b[32m+> Summary: Name; City\x1b[0m\n")

	require.Equal(t, `mdmemory: facts/user.md: its history holds no version "0000": 'mdmemory log facts/user.md' lists the versions there are`+"\n", mdm(t, env, "diff", "facts/user.md", "0000").failed(t))
	require.Contains(t, mdm(t, env, "diff", "facts/user.md", v1[:8], strings.Repeat("f", 24)).failed(t), `its history holds no version "ffffffffffffffffffffffff"`)
	require.Contains(t, mdm(t, env, "diff", "facts/user.md", "abc").failed(t), `the version "abc" is too short: give at least 4 of its characters`)
	require.Contains(t, mdm(t, env, "diff", "facts/memory.md", v1).failed(t), "facts/memory.md: its history holds no version")
}

// TestRestore: restore brings a version back as a change of its own, says
// how to undo it, and restores nothing when the file changed between its
// read and the restore, or for a version the history does not hold.
func TestRestore(t *testing.T) {
	dir, v1, v2 := histSample(t)
	env := map[string]string{dirEnv: dir}
	first := read(t, dir, "facts/user.md")
	require.Equal(t, "Restored facts/user.md to version "+v1[:8]+" (it was at "+v2[:8]+": 'mdmemory restore facts/user.md "+v2[:8]+"' brings that back).\n",
		mdm(t, env, "restore", "facts/user.md", v1[:8]).ok(t))
	require.Equal(t, v1, memory.Version(read(t, dir, "facts/user.md")))
	rows := logRows(t, mdm(t, env, "log", "facts/user.md", "--limit", "1").ok(t))
	require.Equal(t, []string{"restore", "facts/user.md", "cli", v2[:8], "->", v1[:8]}, rows[0][1:])
	require.Equal(t, "facts/user.md is at version "+v1[:8]+" already; nothing restored.\n", mdm(t, env, "restore", "facts/user.md", v1).ok(t))

	// Back again, with the diff of what it changed.
	out := mdm(t, env, "restore", "facts/user.md", v2[:8], "--diff").ok(t)
	require.Contains(t, out, "--- facts/user.md\t"+v1[:8]+"\n+++ facts/user.md\t"+v2[:8]+"\n@@ -1,5 +1,6 @@\n")
	require.Contains(t, out, "\n+- City: Hangzhou\n")
	require.Equal(t, first, read(t, dir, "facts/user.md"))

	// A version the history does not hold changes nothing.
	before := read(t, dir, "facts/user.md")
	require.Contains(t, mdm(t, env, "restore", "facts/user.md", "0000").failed(t), `its history holds no version "0000"`)
	require.Equal(t, before, read(t, dir, "facts/user.md"))

	// A person's edit between restore's read and its restore is never
	// undone.
	edit := "# User\n\n- Name: Zhang San\n- Pet: a cat\n"
	testHookRestore = func() { put(t, dir, "facts/user.md", edit) }
	t.Cleanup(func() { testHookRestore = nil })
	msg := mdm(t, env, "restore", "facts/user.md", v1[:8]).failed(t)
	require.Equal(t, "mdmemory: facts/user.md changed since restore read it at version "+v2[:8]+" (it is now at "+memory.Version(edit)[:8]+"); nothing was restored: see 'mdmemory log facts/user.md', then run restore again\n", msg)
	require.Equal(t, edit, read(t, dir, "facts/user.md"))
	testHookRestore = nil

	// A file removed by hand comes back.
	require.NoError(t, os.Remove(filepath.Join(dir, "facts", "user.md")))
	require.Equal(t, "Restored facts/user.md to version "+v2[:8]+" (it did not exist before).\n", mdm(t, env, "restore", "facts/user.md", v2[:8]).ok(t))
	require.Equal(t, v2, memory.Version(read(t, dir, "facts/user.md")))

	// The rules of any change hold: a budget the restored text is over.
	mdm(t, env, "restore", "facts/user.md", v1[:8]).ok(t)
	msg = mdm(t, env, "restore", "facts/user.md", v2[:8], "--facts-budget", "10").failed(t)
	require.Contains(t, msg, "budget")
	require.Equal(t, v1, memory.Version(read(t, dir, "facts/user.md")))
}

// TestActor: the changes the command line makes are recorded as "cli", or
// as $MDMEMORY_ACTOR names; compaction marks its own.
func TestActor(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	env := map[string]string{dirEnv: dir}
	mdm(t, env, "add", "facts/user.md", "Name: Zhang San").ok(t)
	mdm(t, map[string]string{dirEnv: dir, actorEnv: "alice"}, "add", "facts/user.md", "City: Hangzhou").ok(t)
	mdm(t, env, "add", "episodes/2025-03.md", "## Old task\n- Date: 2025-03-04").ok(t)
	mdm(t, env, "compact", "--before", "2025-04").ok(t)
	var got []jsonChange
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "log", "--json").ok(t)), &got))
	actors := map[string][]string{}
	for _, c := range got {
		actors[c.Path] = append(actors[c.Path], c.Op+" "+c.Actor)
	}
	require.ElementsMatch(t, []string{"append cli", "append alice"}, actors["facts/user.md"])
	require.Contains(t, actors["episodes/2025-03.md"], "append cli")
	require.Contains(t, actors["episodes/2025-03.md"], "compact compaction (cli)")
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "log", "--json", "--actor", "alice").ok(t)), &got))
	require.Len(t, got, 1)
}
