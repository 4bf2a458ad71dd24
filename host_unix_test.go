//go:build unix

package memory_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/flock"
	"github.com/stretchr/testify/require"
)

func TestFIFO(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "facts", "user.md"), 0o644))
	_, err := s.Read(ctx, "facts/user.md")
	require.ErrorContains(t, err, "not a regular file")
	require.False(t, isModelError(err), err)
	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Empty(t, files)
	hits, err := s.Search(ctx, "x", nil)
	require.NoError(t, err)
	require.Empty(t, hits)
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- a FIFO takes no room in the budget", ""))
}

// TestHandEditUnreadable: a file that cannot be read (its permissions) is
// listed as such, and every task can still start. Root reads any file, so
// under root the store is opened by a worker process running as nobody.
func TestHandEditUnreadable(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "memory")
	s := openAt(t, dir, nil)
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: secret\n")
	writeFile(t, dir, "facts/memory.md", "# Memory\n\n> Summary: lessons\n")
	require.NoError(t, os.Chmod(filepath.Join(dir, "facts", "user.md"), 0))

	var got struct {
		Files []memory.FileInfo
		Index string
	}
	if os.Geteuid() != 0 {
		var err error
		got.Files, err = s.List(context.Background())
		require.NoError(t, err)
		got.Index, err = s.IndexMessage(context.Background())
		require.NoError(t, err)
	} else {
		const nobody = 65534
		// nobody needs a way in: folders it may enter, a lock file it may
		// open, and a copy of this test binary it may run.
		for _, d := range []string{filepath.Dir(base), base, dir} {
			require.NoError(t, os.Chmod(d, 0o755))
		}
		require.NoError(t, os.Chmod(filepath.Join(dir, ".lock"), 0o666))
		bin := filepath.Join(base, "memory.test")
		copyFile(t, os.Args[0], bin)
		cmd := startWorker(t, "list", dir, 0, 0)
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		// Under make coverage the worker writes its coverage data to
		// $GOCOVERDIR, which nobody may not enter: it writes it to a
		// folder of its own instead, which the coverage report ignores.
		cover := filepath.Join(base, "cover")
		require.NoError(t, os.Mkdir(cover, 0o777))
		require.NoError(t, os.Chmod(cover, 0o777))
		cmd.Env = append(slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "GOCOVERDIR=") }), "GOCOVERDIR="+cover)
		out, err := cmd.Output()
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(out, &got))
	}
	require.Equal(t, []memory.FileInfo{
		{Path: "facts/user.md", Error: "cannot be read (permission denied); a person must fix it"},
		{Path: "facts/memory.md", Summary: "lessons", Size: 29},
	}, got.Files)
	require.Contains(t, got.Index, "- facts/user.md: cannot be read (permission denied); a person must fix it\n- facts/memory.md (29B): lessons\n")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}

// TestFileModes: a new memory file is created as os.WriteFile would create
// it under the process's umask, and a file a person chmod'ed keeps its mode.
func TestFileModes(t *testing.T) {
	for _, umask := range []int{0o022, 0o077, 0o027} {
		old := syscall.Umask(umask)
		s, dir := open(t, nil)
		ctx := context.Background()
		require.NoError(t, s.Write(ctx, "facts/user.md", "- a"))
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## A", ""))
		ref := filepath.Join(t.TempDir(), "ref")
		require.NoError(t, os.WriteFile(ref, nil, 0o644))
		syscall.Umask(old)

		want, err := os.Stat(ref)
		require.NoError(t, err)
		for _, p := range []string{"facts/user.md", "episodes/2026-02.md"} {
			fi, err := os.Stat(filepath.Join(dir, p))
			require.NoError(t, err)
			require.Equal(t, want.Mode().Perm(), fi.Mode().Perm(), "umask %o: %s", umask, p)
		}
		require.NoError(t, os.Chmod(filepath.Join(dir, "facts", "user.md"), 0o640))
		require.NoError(t, s.Write(ctx, "facts/user.md", "- b"))
		fi, err := os.Stat(filepath.Join(dir, "facts", "user.md"))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "a person's mode is kept")
	}
}

// TestLockSurvivesDeletion: a Store inside its critical section keeps
// others out even when someone deletes .lock meanwhile, since the root
// folder itself is locked too.
func TestLockSurvivesDeletion(t *testing.T) {
	_, dir := open(t, nil)
	// What a Store holds inside its critical section: .lock and the folder.
	holdLock(t, dir)
	folder, err := os.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { folder.Close() })
	ok, err := flock.TryLock(folder)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, os.Remove(filepath.Join(dir, ".lock"))) // a clean-up script
	other, err := memory.Open(dir, &memory.Options{Now: feb26, LockTimeout: 20 * time.Millisecond})
	if err == nil {
		defer other.Close()
		err = other.Append(context.Background(), "episodes/2026-02.md", "## Sneaked in", "")
	}
	require.ErrorIs(t, err, memory.ErrLocked, "the second Store waits for the first")
	require.NoFileExists(t, filepath.Join(dir, "episodes", "2026-02.md"))
}
