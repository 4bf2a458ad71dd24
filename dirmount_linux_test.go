package memory_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// inMountNamespace runs the test t in a child process of its own mount
// namespace, where what it mounts goes when the child ends, and reports
// true in the child. In the parent it runs the child, fails t when the
// child failed, skips it when the child skipped, and reports false. It
// needs root; without it, or where no namespace can be made (a container
// without CAP_SYS_ADMIN), t is skipped.
func inMountNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv("MDMEMORY_MOUNT_NS") == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to mount in a mount namespace of its own")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "MDMEMORY_MOUNT_NS="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Skipf("no mount namespace of its own: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP: "+t.Name()) {
		t.Skipf("skipped in its mount namespace:\n%s", out)
	}
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name())
	return false
}

// bindReadOnly mounts the folder p over itself, read-only, as
// "mount --bind -o ro p p" does, until the function returned unmounts it
// (or the test ends). t is skipped when the system refuses.
func bindReadOnly(t *testing.T, p string) (unmount func()) {
	t.Helper()
	if err := syscall.Mount(p, p, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("mount --bind %s: %v", p, err)
	}
	done := false
	unmount = func() {
		if !done {
			done = true
			require.NoError(t, syscall.Unmount(p, syscall.MNT_DETACH))
		}
	}
	t.Cleanup(unmount)
	if err := syscall.Mount("", p, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("mount -o remount,ro,bind %s: %v", p, err)
	}
	require.ErrorIs(t, os.WriteFile(filepath.Join(p, ".probe"), nil, 0o600), syscall.EROFS, "%s is read-only through its path", p)
	return unmount
}

// TestDirKeptFolderMounted: a folder a Store used, then made read-only by
// a bind mount of it over itself (which keeps the folder's device and
// number), takes no change through the folder kept open from before: the
// change fails, as it would in a Store opened now, and the memory is as a
// person sees it. The same for the folder of a file's log, and for a
// folder above a kept one; a mount over the memory directory itself fails
// every change; once unmounted, changes land again.
func TestDirKeptFolderMounted(t *testing.T) {
	if !inMountNamespace(t) {
		return
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	s, err := memory.Open(dir, keepOpts())
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Berlin\n"))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(1), ""))
	_, err = s.Read(ctx, "facts/user.md")
	require.NoError(t, err)

	// The memory files, and the logs too when they are what is read-only:
	// a change that fails in its own folder leaves its record, unmarked as
	// landed, as any change that fails after its record does.
	files := func(folder string) map[string]string {
		m := tree(t, dir)
		for name := range m {
			if strings.HasPrefix(name, ".history/") && !strings.HasPrefix(folder, ".history") {
				delete(m, name)
			}
		}
		return m
	}
	for _, folder := range []string{"facts", ".history/facts", ".history", "episodes"} {
		before := files(folder)
		unmount := bindReadOnly(t, filepath.Join(dir, filepath.FromSlash(folder)))
		var err error
		if folder == "episodes" {
			err = s.Append(ctx, "episodes/2026-02.md", keptEntry(2), "")
		} else {
			err = s.Write(ctx, "facts/user.md", "- Lives in Paris, "+folder+" read-only\n")
		}
		require.ErrorIs(t, err, syscall.EROFS, "a change in read-only %s fails", folder)
		unmount()
		require.Equal(t, before, files(folder), "nothing was written under read-only %s", folder)
	}
	// The memory directory itself: the Store's changes fail while the
	// mount stands.
	{
		before := files(".history")
		unmount := bindReadOnly(t, dir)
		err := s.Write(ctx, "facts/user.md", "- Lives in Paris, all read-only\n")
		require.ErrorContains(t, err, "mounted over since it was opened")
		require.Error(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(2), ""))
		unmount()
		require.Equal(t, before, files(".history"), "nothing was written under the read-only memory directory")
	}

	// Another folder mounted over facts: the change lands in it, where the
	// path leads now.
	other := t.TempDir()
	p := filepath.Join(dir, "facts")
	require.NoError(t, syscall.Mount(other, p, "", syscall.MS_BIND, ""))
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Rome\n"))
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Lives in Rome\n")
	require.NoError(t, syscall.Unmount(p, syscall.MNT_DETACH))
	require.Contains(t, readFile(t, other, "user.md"), "- Lives in Rome\n")
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Lives in Berlin\n")

	require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Paris\n"))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(3), ""))
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- Lives in Paris\n")
	require.Contains(t, readFile(t, dir, "episodes/2026-02.md"), "## entry 3")
}
