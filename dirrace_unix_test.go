//go:build unix

package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// swapper renames a and b through a third name, over and over, until
// stop is called: for a moment each name holds what the other held.
func swapper(t *testing.T, a, b string) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	tmp := a + ".swap"
	wg.Go(func() {
		for !done.Load() {
			os.Rename(a, tmp)
			os.Rename(b, a)
			os.Rename(a, b)
			os.Rename(tmp, a)
		}
	})
	return func() {
		done.Store(true)
		wg.Wait()
		if _, err := os.Lstat(tmp); err == nil {
			t.Fatalf("%s left behind", tmp)
		}
	}
}

// sharedRoot is a shared root as the review had it: world/user.md, public,
// and agent B's memory directory beside it, with a link wl to B's facts,
// which a Dir opened on the root refuses to follow (it leads into another
// memory directory).
func sharedRoot(t *testing.T) (dir string, d *memory.Dir) {
	dir = t.TempDir()
	writeFile(t, dir, "world/user.md", "PUBLIC\n")
	writeFile(t, dir, "agentB/.lock", "")
	writeFile(t, dir, "agentB/facts/user.md", "SECRET\n")
	require.NoError(t, os.Symlink("agentB/facts", filepath.Join(dir, "wl")))
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	_, err = d.Read(context.Background(), "wl/user.md", -1)
	require.ErrorIs(t, err, memory.ErrInvalidPath, "the link itself is refused")
	return dir, d
}

// TestFolderSwapRead races reads of world/user.md against a folder swap
// that puts the link to agent B's facts in world's place for a moment:
// the check of the links on the way and the open are one, so B's secret is
// never read.
func TestFolderSwapRead(t *testing.T) {
	ctx := context.Background()
	dir, d := sharedRoot(t)
	stop := swapper(t, filepath.Join(dir, "world"), filepath.Join(dir, "wl"))
	defer stop()
	public := 0
	for range 20000 {
		c, err := d.Read(ctx, "world/user.md", -1)
		if err != nil {
			continue // the folder gone for a moment, or the link refused
		}
		require.Equal(t, "PUBLIC\n", string(c.Data), "a read followed the link swapped in")
		public++
	}
	stop()
	require.Positive(t, public)
	require.Equal(t, "SECRET\n", readFile(t, dir, "agentB/facts/user.md"))
}

// TestFIFOSwapRead races reads against a FIFO put in the file's place for
// a moment, between the look at the file and its opening: no read waits
// for a writer of the FIFO.
func TestFIFOSwapRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	writeFile(t, dir, "facts/user.md", "- Lives in Berlin\n")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "facts", "pipe"), 0o600))
	stop := swapper(t, filepath.Join(dir, "facts", "user.md"), filepath.Join(dir, "facts", "pipe"))
	defer stop()
	done := make(chan [2]int)
	go func() {
		var n [2]int // read, and read wrong
		for range 20000 {
			if c, err := d.Read(ctx, "facts/user.md", -1); err == nil {
				n[0]++
				if string(c.Data) != "- Lives in Berlin\n" {
					n[1]++
				}
			}
		}
		done <- n
	}()
	select {
	case n := <-done:
		require.Positive(t, n[0])
		require.Zero(t, n[1])
	case <-time.After(2 * time.Minute):
		t.Fatal("a read waits on the FIFO")
	}
}
