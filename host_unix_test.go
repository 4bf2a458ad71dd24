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
	leavesBroken(t, "a FIFO in a fact file's place is its point")
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
	if os.Geteuid() == 0 {
		base = nobodyTempDir(t)
	}
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
		got.Index, err = s.NewSession().IndexMessage(context.Background())
		require.NoError(t, err)
	} else {
		const nobody = 65534
		// nobody needs a way in: folders it may enter, a lock file it may
		// open, and a copy of this test binary it may run.
		for _, d := range []string{dir, filepath.Join(dir, "facts"), filepath.Join(dir, "episodes")} {
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

// nobodyTempDir returns a new folder, mode 0755 and removed when t ends,
// that another user (nobody, which owns none of the folders on the way)
// can reach: every folder from / down to it may be searched by others. It
// is made in $TMPDIR when that allows it; a private $TMPDIR (one inside a
// 0700 folder, as systemd's PrivateTmp or a CI runner gives) would shut
// nobody out before the modes a test sets count, so then it is made in the
// first of /tmp, /var/tmp and /dev/shm that allows it.
func nobodyTempDir(t *testing.T) string {
	t.Helper()
	for _, parent := range []string{os.TempDir(), "/tmp", "/var/tmp", "/dev/shm"} {
		if !othersReach(parent) {
			continue
		}
		dir, err := os.MkdirTemp(parent, "mdmemory-test-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		require.NoError(t, os.Chmod(dir, 0o755))
		return dir
	}
	t.Skipf("no temporary folder another user can reach: $TMPDIR (%s), /tmp, /var/tmp and /dev/shm each have a folder on the way others may not search", os.TempDir())
	return ""
}

// othersReach reports whether every folder from / down to dir exists and
// may be searched by users who neither own it nor are in its group.
func othersReach(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		up := filepath.Dir(dir)
		if up == dir {
			return true
		}
		dir = up
	}
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

// TestFileModes: memory is private by default, whatever the umask: new
// files (the lock file among them) 0600, new folders 0700; a mode a person
// set is kept when the file is replaced; Options.FileMode and OpenDir's mode
// widen the modes for a group, exactly as given; an existing .lock gets
// the mode given.
func TestFileModes(t *testing.T) {
	ctx := context.Background()
	perm := func(t *testing.T, p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}
	for _, umask := range []int{0o022, 0o077, 0o027, 0o002} {
		for _, tc := range []struct {
			mode         os.FileMode
			file, folder os.FileMode
		}{{0, 0o600, 0o700}, {0o660, 0o660, 0o770}, {0o640, 0o640, 0o750}} {
			old := syscall.Umask(umask)
			dir := filepath.Join(t.TempDir(), "new", "memory")
			s, err := memory.Open(dir, &memory.Options{FileMode: tc.mode, Now: feb26})
			syscall.Umask(old)
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			require.NoError(t, s.Write(ctx, "facts/user.md", "- a"))
			require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## A", ""))
			for _, p := range []string{"facts/user.md", "episodes/2026-02.md", ".lock"} {
				require.Equal(t, tc.file, perm(t, filepath.Join(dir, p)), "umask %o, mode %o: %s", umask, tc.mode, p)
			}
			for _, p := range []string{"", "facts", "episodes"} {
				require.Equal(t, tc.folder, perm(t, filepath.Join(dir, p)), "umask %o, mode %o: %s/", umask, tc.mode, p)
			}
			require.NoError(t, os.Chmod(filepath.Join(dir, "facts", "user.md"), 0o604))
			require.NoError(t, s.Write(ctx, "facts/user.md", "- b"))
			require.Equal(t, os.FileMode(0o604), perm(t, filepath.Join(dir, "facts", "user.md")), "a person's mode is kept")
		}
	}

	// A shared world opened for a group; what exists keeps its mode.
	shared := filepath.Join(t.TempDir(), "shared")
	require.NoError(t, os.MkdirAll(shared, 0o755))
	w, err := memory.OpenDir(shared, 0o660)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	_, err = put(ctx, w, "world/apollo.md", []byte("# Apollo\n"), "")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), perm(t, shared), "a folder that existed keeps its mode")
	require.Equal(t, os.FileMode(0o770), perm(t, filepath.Join(shared, "world")))
	require.Equal(t, os.FileMode(0o660), perm(t, filepath.Join(shared, "world", "apollo.md")))
	require.Equal(t, os.FileMode(0o660), perm(t, filepath.Join(shared, ".lock")))

	// A lock file an earlier version left 0644 gets the Dir's mode; a
	// memory file a person made 0644 keeps it.
	old := filepath.Join(t.TempDir(), "old")
	writeFile(t, old, ".lock", "")
	writeFile(t, old, "facts/user.md", "- a\n")
	for _, p := range []string{".lock", "facts/user.md"} {
		require.NoError(t, os.Chmod(filepath.Join(old, p), 0o644))
	}
	o, err := memory.Open(old, nil)
	require.NoError(t, err)
	require.NoError(t, o.Close())
	require.Equal(t, os.FileMode(0o600), perm(t, filepath.Join(old, ".lock")))
	require.Equal(t, os.FileMode(0o644), perm(t, filepath.Join(old, "facts", "user.md")))
	g, err := memory.OpenDir(old, 0o660)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.Equal(t, os.FileMode(0o660), perm(t, filepath.Join(old, ".lock")), "the Dir's mode, as given")

	for _, bad := range []os.FileMode{0o700, 0o400, 0o200, 0o4600, 0o1666, os.ModeDir | 0o600} {
		_, err := memory.OpenDir(filepath.Join(t.TempDir(), "x"), bad)
		require.ErrorContains(t, err, "read and write permissions only", "%v", bad)
		_, err = memory.Open(t.TempDir(), &memory.Options{FileMode: bad})
		require.ErrorContains(t, err, "Options.FileMode", "%v", bad)
	}
}

// TestOtherUserShutOut: another local user can neither read the memory
// nor hold its lock (a shared lock on a read-only descriptor of .lock used
// to block the owner). It needs root, to run a worker as nobody.
func TestOtherUserShutOut(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a worker as another user")
	}
	base := nobodyTempDir(t)
	dir := filepath.Join(base, "memory")
	s := openAt(t, dir, nil)
	require.NoError(t, s.Write(context.Background(), "facts/user.md", "- Secret: 42"))
	bin := filepath.Join(base, "memory.test")
	copyFile(t, os.Args[0], bin)
	try := func(role string) string {
		cmd := startWorker(t, role, dir, 0, 0)
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.Stderr = nil
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "GOCOVERDIR=") })
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s as nobody: %s", role, out)
		return string(out)
	}
	require.Contains(t, try("list"), "permission denied", "the memory folder is the owner's")
	// A memory folder made before files were private, 0755: the lock file
	// and the folders in it still keep another user out.
	require.NoError(t, os.Chmod(dir, 0o755))
	out := try("flock")
	require.Contains(t, out, "open .lock: permission denied")
	require.NotContains(t, out, "Secret")
	require.Contains(t, try("list"), "permission denied")
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
