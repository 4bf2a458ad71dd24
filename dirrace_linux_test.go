//go:build linux

package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// renameat2 is the number of the renameat2 system call, which package
// syscall does not name, on the architectures the tests run on.
var renameat2 = map[string]uintptr{"amd64": 316, "arm64": 276, "riscv64": 276, "loong64": 276, "386": 353, "arm": 382, "ppc64le": 357, "s390x": 347}

// exchanger swaps a and b atomically, over and over, until stop is called.
func exchanger(t *testing.T, a, b string) (stop func()) {
	nr, ok := renameat2[runtime.GOARCH]
	if !ok {
		t.Skip("renameat2's number on " + runtime.GOARCH + " is not known")
	}
	pa, err := syscall.BytePtrFromString(a)
	require.NoError(t, err)
	pb, err := syscall.BytePtrFromString(b)
	require.NoError(t, err)
	const atFDCWD, renameExchange = ^uintptr(99), 2 // AT_FDCWD is -100
	exchange := func() syscall.Errno {
		_, _, e := syscall.Syscall6(nr, atFDCWD, uintptr(unsafe.Pointer(pa)), atFDCWD, uintptr(unsafe.Pointer(pb)), renameExchange, 0)
		return e
	}
	if e := exchange(); e != 0 {
		t.Skipf("renameat2: %v", e)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	var failed atomic.Value
	wg.Go(func() {
		for !done.Load() {
			if e := exchange(); e != 0 {
				failed.Store(e)
				return
			}
		}
	})
	return func() {
		if done.Swap(true) {
			return
		}
		wg.Wait()
		require.Nil(t, failed.Load())
		// An even number of swaps leaves world in its place.
		if fi, err := os.Lstat(a); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			require.Zero(t, exchange())
		}
	}
}

// TestFolderSwapWrite races writes and removals of world/user.md against
// a swap of world and the link, made atomic (renameat2's RENAME_EXCHANGE),
// so that world is never missing and no write makes it anew: none lands
// in agent B's facts.
func TestFolderSwapWrite(t *testing.T) {
	ctx := context.Background()
	dir, d := sharedRoot(t)
	stop := exchanger(t, filepath.Join(dir, "world"), filepath.Join(dir, "wl"))
	defer stop()
	v := memory.Version("PUBLIC\n")
	written := 0
	for i := range 1000 {
		var err error
		switch {
		case i%2 == 0:
			_, err = put(ctx, d, "world/user.md", []byte("PUBLIC\n"), v)
		case del(ctx, d, "world/user.md", v) == nil:
			_, err = put(ctx, d, "world/user.md", []byte("PUBLIC\n"), "")
		default:
			// Created again, should the write after a removal have failed.
			_, err = put(ctx, d, "world/user.md", []byte("PUBLIC\n"), "")
		}
		if err == nil {
			written++
		}
	}
	stop()
	des, err := os.ReadDir(filepath.Join(dir, "agentB", "facts"))
	require.NoError(t, err)
	require.Len(t, des, 1, "nothing was written in B's facts")
	require.Equal(t, "SECRET\n", readFile(t, dir, "agentB/facts/user.md"), "B's facts unchanged")
	require.Positive(t, written)
}

// TestRemoveTempsSwappedFolder races the clean-up a Store's Open makes
// against a FIFO, then a link, swapped atomically with the folder: the
// clean-up never waits on the FIFO, and never removes a file through the
// link (to another memory's folder, whose temporary-looking file stays).
func TestRemoveTempsSwappedFolder(t *testing.T) {
	dir := t.TempDir()
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	writeFile(t, dir, "facts/.user.md.tmp-1a", "a crash's")
	writeFile(t, dir, "other/.lock", "")
	writeFile(t, dir, "other/facts/.user.md.tmp-1x2y3z", "theirs")
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600))
	require.NoError(t, os.Symlink("other/facts", filepath.Join(dir, "link")))
	for _, swapped := range []string{"pipe", "link"} {
		stop := exchanger(t, filepath.Join(dir, "facts"), filepath.Join(dir, swapped))
		done := make(chan error)
		go func() {
			for range 20000 {
				if err := memory.RemoveTemps(d, "facts"); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(2 * time.Minute):
			t.Fatal("the clean-up waits on a FIFO put in a folder's place")
		}
		stop()
	}
	require.NoError(t, memory.RemoveTemps(d, "facts"))
	require.NoFileExists(t, filepath.Join(dir, "facts", ".user.md.tmp-1a"), "the crash's file removed")
	require.FileExists(t, filepath.Join(dir, "other", "facts", ".user.md.tmp-1x2y3z"), "nothing removed through the link")
}
