package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestImportOpensNoPipe: import looks at a named pipe where a file or a
// folder belongs without opening it: an open, even one that does not
// block, releases a writer waiting on the pipe, and opening a device can
// act on it. inotify says whether a file was opened (IN_OPEN), and a
// regular file beside the pipe shows that it would tell.
func TestImportOpensNoPipe(t *testing.T) {
	src := t.TempDir()
	put(t, src, "USER.md", "- Name: Zhang San\n")
	require.NoError(t, syscall.Mkfifo(filepath.Join(src, "MEMORY.md"), 0o600))
	require.NoError(t, syscall.Mkfifo(filepath.Join(src, "memory"), 0o600))

	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(in)
	watch := func(name string) int {
		wd, err := unix.InotifyAddWatch(in, filepath.Join(src, name), unix.IN_OPEN)
		require.NoError(t, err)
		return wd
	}
	user, mem, folder := watch("USER.md"), watch("MEMORY.md"), watch("memory")

	items, err := importPlan(context.Background(), "openclaw", src, "", false)
	require.NoError(t, err)
	left := leftOut(items)
	require.Equal(t, "MEMORY.md is a named pipe (FIFO), not a regular file: not read", left["MEMORY.md"])
	require.Equal(t, "memory/ is a named pipe (FIFO), not a folder: not read", left["memory/"])

	opened := map[int]int{}
	buf := make([]byte, 64*unix.SizeofInotifyEvent)
	for {
		n, err := unix.Read(in, buf)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		require.NoError(t, err)
		for at := 0; at < n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[at]))
			opened[int(ev.Wd)]++
			at += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	require.Positive(t, opened[user], "USER.md was read, and inotify tells")
	require.Zero(t, opened[mem], "MEMORY.md, a named pipe, was opened")
	require.Zero(t, opened[folder], "memory, a named pipe, was opened")
}

// TestTreeStaysOnItsFileSystem: a folder on another file system than the
// tree's root (a mount, which may be a network or FUSE one that does not
// answer) is not entered. /proc is one beneath /.
func TestTreeStaysOnItsFileSystem(t *testing.T) {
	var root, proc unix.Stat_t
	require.NoError(t, unix.Stat("/", &root))
	if unix.Stat("/proc", &proc) != nil || proc.Dev == root.Dev {
		t.Skip("no /proc mounted apart from /")
	}
	tree, err := openTree("/")
	require.NoError(t, err)
	defer tree.Close()
	_, err = tree.openDir("proc")
	var te *treeError
	require.ErrorAs(t, err, &te)
	require.Equal(t, "proc/ is on another file system than the folder imported (a mount): not read, so that import stays on the tree's own and waits on none that does not answer", err.Error())
	_, err = tree.openFile("proc/self/status")
	require.ErrorAs(t, err, &te)
	require.True(t, te.Mount)
}

// TestTreeKeepsItsRoot: what import reads is opened beneath the folder
// it opened first: a tree's root renamed and replaced meanwhile is not
// read in its place, and the two trees are not mixed.
func TestTreeKeepsItsRoot(t *testing.T) {
	parent := t.TempDir()
	src := filepath.Join(parent, "src")
	put(t, src, "memory/notes.md", "- the first tree\n")
	tree, err := openTree(src)
	require.NoError(t, err)
	defer tree.Close()
	require.NoError(t, os.Rename(src, filepath.Join(parent, "old")))
	put(t, src, "memory/notes.md", "- the second tree\n")

	d, err := tree.openDir("memory")
	require.NoError(t, err)
	defer d.Close()
	f, err := d.openFile("notes.md")
	require.NoError(t, err)
	defer f.Close()
	b := make([]byte, 64)
	n, _ := f.Read(b)
	require.Equal(t, "- the first tree\n", string(b[:n]))
}

// TestImportEntersNoMount: a folder of the layout that is a mount (here a
// tmpfs; a network or FUSE one may not answer) is left out, and said so,
// without being opened. It needs the right to mount, and is skipped
// without it.
func TestImportEntersNoMount(t *testing.T) {
	src := t.TempDir()
	put(t, src, "USER.md", "- Name: Zhang San\n")
	mnt := filepath.Join(src, "memory")
	require.NoError(t, os.Mkdir(mnt, 0o700))
	if err := unix.Mount("none", mnt, "tmpfs", 0, ""); err != nil {
		t.Skipf("mounting a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	put(t, mnt, "secrets.md", "- on the mount\n")

	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(in)
	_, err = unix.InotifyAddWatch(in, mnt, unix.IN_OPEN)
	require.NoError(t, err)

	items, err := importPlan(context.Background(), "openclaw", src, "", false)
	require.NoError(t, err)
	require.Equal(t, "memory/ is on another file system than the folder imported (a mount): not read, so that import stays on the tree's own and waits on none that does not answer", leftOut(items)["memory/"])
	require.Len(t, items, 2, "USER.md, and the mount left out")
	_, err = unix.Read(in, make([]byte, 4096))
	require.ErrorIs(t, err, unix.EAGAIN, "the mount was opened")
}
