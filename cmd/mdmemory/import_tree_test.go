//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestImportFollowsNoLink: a folder of the layout that is a link (to
// another user's folder, say) is not read, and the report says so; nor is
// a file that is one, nor a link to a folder among the topics.
func TestImportFollowsNoLink(t *testing.T) {
	other := t.TempDir() // another user's folder
	put(t, other, "secrets.md", "- Bank PIN of the neighbour: 4921\n")
	put(t, other, "2026-02-26.md", "## The neighbour's day\n- went out\n")
	put(t, other, "USER.md", "- Name: the neighbour\n")
	src := t.TempDir()
	put(t, src, "USER.md", "- Name: Zhang San\n")
	require.NoError(t, os.Symlink(other, filepath.Join(src, "memory")))
	require.NoError(t, os.Symlink(filepath.Join(other, "USER.md"), filepath.Join(src, "MEMORY.md")))
	dir := filepath.Join(t.TempDir(), "memory")
	env := map[string]string{dirEnv: dir, worldEnv: filepath.Join(t.TempDir(), "world")}

	res := importJSON(t, env, "openclaw", src, "--apply")
	require.Equal(t, []string{"facts/user.md <- USER.md:1 - Name: Zhang San"}, moved(res.Imported))
	left := leftOut(res.Left)
	require.Equal(t, "memory/ is a symbolic link: not followed, so that nothing outside the tree is read", left["memory/"])
	require.Contains(t, left["MEMORY.md"], "is a symbolic link: not followed")
	require.NoDirExists(t, filepath.Join(env[worldEnv], "world"))
	require.NoFileExists(t, filepath.Join(dir, "episodes", "2026-02.md"))

	// agnx: an agent's folder, or its shared world, that is a link.
	agnx := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(agnx, "agents"), 0o700))
	require.NoError(t, os.Symlink(other, filepath.Join(agnx, "agents", "a1")))
	require.Contains(t, mdm(t, env, "import", "agnx", "--agent", "a1", agnx).failed(t), "agents/a1/ is a symbolic link: not followed")
	put(t, agnx, "MEMORY.md", "- Editor: helix\n")
	require.NoError(t, os.Symlink(other, filepath.Join(agnx, "world")))
	res = importJSON(t, env, "agnx", agnx)
	require.Equal(t, []string{"facts/memory.md <- MEMORY.md:1 - Editor: helix"}, moved(res.Imported))
	require.Contains(t, leftOut(res.Left)["world/"], "world/ is a symbolic link: not followed")
}

// TestImportNeverBlocks: a named pipe where a layout's folder or file
// belongs is left out at once, and said so, where opening it waited for a
// writer for good; an import whose context has ended stops.
func TestImportNeverBlocks(t *testing.T) {
	src := t.TempDir()
	put(t, src, "USER.md", "- Name: Zhang San\n")
	require.NoError(t, syscall.Mkfifo(filepath.Join(src, "memory"), 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(src, "MEMORY.md"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(src, "k"), 0o700))
	toebeans := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(toebeans, "knowledge"), 0o600))

	done := make(chan []importItem, 2)
	go func() {
		items, err := importPlan(context.Background(), "openclaw", src, "", false)
		require.NoError(t, err)
		done <- items
		items, err = importPlan(context.Background(), "toebeans", toebeans, "", false)
		require.NoError(t, err)
		done <- items
	}()
	var items []importItem
	for range 2 {
		select {
		case got := <-done:
			items = append(items, got...)
		case <-time.After(time.Minute): // a guard against the hang, not a wait
			t.Fatal("import waits on a named pipe")
		}
	}
	left := leftOut(items)
	require.Equal(t, "memory/ is a named pipe (FIFO), not a folder: not read", left["memory/"])
	require.Equal(t, "MEMORY.md is a named pipe (FIFO), not a regular file: not read", left["MEMORY.md"])
	require.Equal(t, "knowledge/ is a named pipe (FIFO), not a folder: not read", left["knowledge/"])

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := importPlan(ctx, "openclaw", src, "", false)
	require.ErrorIs(t, err, context.Canceled)
}
