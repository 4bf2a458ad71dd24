//go:build unix

package memory

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeptFoldersSiblings: walking to a folder not kept yet goes through
// the folders kept above it without forgetting the folders kept beside
// it: a change's file and its log alternate between folders under one
// parent (".history/facts", ".history/episodes"), and each stays kept.
func TestKeptFoldersSiblings(t *testing.T) {
	d, err := openDir(t.TempDir(), 0)
	require.NoError(t, err)
	defer d.Close()
	if d.folders.top == nil {
		t.Skip("no folder is kept here: the system does not say the mount a folder is reached through")
	}
	for _, dir := range []string{".history/facts", ".history/episodes", "episodes", "episodes/archive", ".history/episodes/archive"} {
		_, done, err := d.walk(dir, true)
		require.NoError(t, err)
		done()
	}
	for _, dir := range []string{".history", ".history/facts", ".history/episodes", "episodes", "episodes/archive", ".history/episodes/archive"} {
		_, done, ok := d.folders.get(dir)
		require.True(t, ok, "%s is still kept", dir)
		done()
	}
	require.Len(t, d.folders.m, 6, "one folder kept for each path")
}

// TestHeldWriteFailedKeepsUnsynced: a Write that fails before its fsync
// (here the temporary file's name is too long) leaves the appends made
// with sync to be made durable with the next change, which makes them so.
func TestHeldWriteFailedKeepsUnsynced(t *testing.T) {
	ctx := context.Background()
	dh := heldDir(t, t.TempDir())
	require.NoError(t, dh.Append(ctx, "logs/a.log", []byte("record\n"), true))
	require.Len(t, dh.unsynced, 1)
	_, err := dh.Write(ctx, "logs/"+strings.Repeat("x", 250), []byte("x\n"), "")
	require.Error(t, err, "the temporary file's name is too long")
	require.Len(t, dh.unsynced, 1, "the append still waits to be made durable")
	_, err = dh.Write(ctx, "logs/b.md", []byte("b\n"), "")
	require.NoError(t, err)
	require.Empty(t, dh.unsynced)
	require.Contains(t, dh.logs, "logs/a.log", "the log kept open, not replaced")
}

// TestHeldAppendDuringUnlock: an Append that started before Unlock and
// runs after it appends nothing and leaves no file open.
func TestHeldAppendDuringUnlock(t *testing.T) {
	ctx := context.Background()
	d, err := openDir(t.TempDir(), 0)
	require.NoError(t, err)
	defer d.Close()
	for range 20 {
		h, err := d.Lock(ctx, "")
		require.NoError(t, err)
		dh := h.(*dirHeld)
		dh.mu.Lock()
		appended := make(chan error, 1)
		go func() { appended <- dh.Append(ctx, "logs/a.log", []byte("x\n"), true) }()
		runtime.Gosched() // the Append, likely, to wait for mu
		unlocked := make(chan struct{})
		go func() { h.Unlock(); close(unlocked) }()
		for !dh.gone.Load() {
			runtime.Gosched()
		}
		dh.mu.Unlock()
		<-unlocked
		<-appended
		dh.mu.Lock()
		require.Empty(t, dh.logs, "no log open after Unlock")
		dh.mu.Unlock()
	}
}

// TestHeldAppendFailedAfterSyncedAppend: an append that fails (here its
// file takes no writes any more, as a full disk would refuse them) closes
// the log it kept open; the appends made to it before with sync do not
// leave that closed file to be fsynced, which would fail every later
// change through the lock.
func TestHeldAppendFailedAfterSyncedAppend(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dh := heldDir(t, dir)
	require.NoError(t, dh.Append(ctx, "logs/a.log", []byte("record\n"), true))
	ro, err := os.Open(filepath.Join(dir, "logs", "a.log"))
	require.NoError(t, err)
	defer ro.Close()
	require.NoError(t, syscall.Dup2(int(ro.Fd()), int(dh.logs["logs/a.log"].f.Fd())), "the kept file now refuses writes")
	require.Error(t, dh.Append(ctx, "logs/a.log", []byte("mark\n"), false))
	require.NotContains(t, dh.logs, "logs/a.log", "the failed log is closed")
	require.NoError(t, dh.Append(ctx, "logs/a.log", []byte("record again\n"), true))
	_, err = dh.Write(ctx, "logs/b.md", []byte("b\n"), "")
	require.NoError(t, err, "the change through the lock")
	got, err := os.ReadFile(filepath.Join(dir, "logs", "a.log"))
	require.NoError(t, err)
	require.Equal(t, "record\nrecord again\n", string(got))
}

// heldDir opens a Dir on dir and takes its lock, both let go when the test
// ends.
func heldDir(t *testing.T, dir string) *dirHeld {
	t.Helper()
	d, err := openDir(dir, 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	h, err := d.Lock(context.Background(), "")
	require.NoError(t, err)
	t.Cleanup(h.Unlock)
	return h.(*dirHeld)
}

// BenchmarkKeptFolder is the look an operation takes at a kept folder two
// deep (".history/facts") before using it: one look at each folder on the
// way.
func BenchmarkKeptFolder(b *testing.B) {
	d, err := openDir(b.TempDir(), 0)
	require.NoError(b, err)
	defer d.Close()
	_, done, err := d.walk(".history/facts", true)
	require.NoError(b, err)
	done()
	for b.Loop() {
		_, done, ok := d.folders.get(".history/facts")
		if !ok {
			b.Fatal("not kept")
		}
		done()
	}
}

// BenchmarkRootIsCurrent is the look a Lock takes at the memory
// directory's path, to see that it still names the directory opened.
func BenchmarkRootIsCurrent(b *testing.B) {
	d, err := openDir(filepath.Join(b.TempDir(), "memory"), 0)
	require.NoError(b, err)
	defer d.Close()
	for b.Loop() {
		if err := d.rootIsCurrent(); err != nil {
			b.Fatal(err)
		}
	}
}
