package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// sparse makes the file p hold head, then zeros up to size bytes, without
// writing them: a file a person made huge.
func sparse(t testing.TB, p, head string, size int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
	require.NoError(t, os.WriteFile(p, []byte(head), 0o600))
	require.NoError(t, os.Truncate(p, size))
}

// TestOversizedFile: a 1 GiB file a person made is read as its head with a
// note, listed with its real size, searched by its head, reported by Check
// and refused to every change; nothing reads it whole.
func TestOversizedFile(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	leavesBroken(t, "a person's 1 GiB month file is its point")
	head := "# 2026-02 Episodes\n\n> Summary: huge\n\n## Tokyo flights\n- Date: 2026-02-01\n- Summary: Spring Airlines cheapest\n"
	sparse(t, filepath.Join(dir, "episodes", "2026-02.md"), head, 1<<30)

	text, err := s.Read(ctx, "episodes/2026-02.md")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(text, head))
	require.Less(t, len(text), 1<<20+1000)
	require.Contains(t, text, "\n(episodes/2026-02.md is 1,073,741,824 bytes, more than the library reads of one memory file (1,048,576 bytes): only its first ")
	require.True(t, strings.HasSuffix(text, "no tool can change it until a person splits or condenses it)\n"))

	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []memory.FileInfo{{Path: "episodes/2026-02.md", Summary: "huge", Size: 1 << 30}}, files)

	hits, err := s.Search(ctx, "Spring Airlines", nil)
	require.NoError(t, err)
	require.NotEmpty(t, hits)

	findings, err := s.Check(ctx)
	require.NoError(t, err)
	require.Len(t, findings, 1)
	require.Contains(t, findings[0].Problem, "1,073,741,824 bytes, over the 1,048,576-byte limit")
	require.Contains(t, findings[0].Fix, "Condense it")

	err = s.Append(ctx, "episodes/2026-02.md", "## More\n- Date: 2026-02-02", "")
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, err.Error(), "no tool may change it")
	r := call(t, s, "memory_read", `{"path": "episodes/2026-02.md", "line": null}`)
	require.False(t, r.IsError, r.Text)
	_, err = s.Context(ctx, "Tokyo", 4000)
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(dir, "episodes", "2026-02.md"))
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), fi.Size(), "unchanged")
}

// TestWorldLinkToAgentFacts: agents' memories inside the shared world's
// root; a link a person put in world/ to agent B's facts, or a world/ that
// is a link into B's memory, reads nothing of B's from agent A.
func TestWorldLinkToAgentFacts(t *testing.T) {
	ctx := context.Background()
	shared := t.TempDir()
	w, err := memory.OpenDir(shared, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	a := openAt(t, filepath.Join(shared, "a"), &memory.Options{World: w})
	leavesBroken(t, "a link in world/ that reaches an agent's facts is its point")
	b := openAt(t, filepath.Join(shared, "b"), &memory.Options{World: w})
	require.NoError(t, b.Write(ctx, "facts/user.md", "- Secret: B's PIN is 4321"))
	require.NoError(t, a.Write(ctx, "world/apollo.md", "- Launch: 1969"))

	require.NoError(t, os.Symlink("../b/facts/user.md", filepath.Join(shared, "world", "leak.md")))
	require.NoError(t, os.Symlink("apollo.md", filepath.Join(shared, "world", "moon.md")), "a link down its folder is followed")
	_, err = a.Read(ctx, "world/leak.md")
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	require.Contains(t, err.Error(), "leads out of its folder")
	moon, err := a.Read(ctx, "world/moon.md")
	require.NoError(t, err)
	require.Contains(t, moon, "1969")
	files, err := a.List(ctx)
	require.NoError(t, err)
	var listed bool
	for _, f := range files {
		require.NotContains(t, f.Summary, "PIN")
		if f.Path == "world/leak.md" {
			listed = true
			require.Contains(t, f.Error, "symbolic link")
		}
	}
	require.True(t, listed, "the link is listed with the reason it cannot be read")
	hits, err := a.Search(ctx, "PIN 4321", nil)
	require.NoError(t, err)
	require.Empty(t, hits)
	findings, err := a.Check(ctx)
	require.NoError(t, err)
	require.Contains(t, fmt.Sprint(findings), "world/leak.md")
	require.ErrorIs(t, a.Write(ctx, "world/leak.md", "- x"), memory.ErrInvalidPath)

	// world/ itself a link into B's memory, which holds a .lock.
	require.NoError(t, os.RemoveAll(filepath.Join(shared, "world")))
	require.NoError(t, os.Symlink("b/facts", filepath.Join(shared, "world")))
	_, err = a.Read(ctx, "world/user.md")
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	hits, err = a.Search(ctx, "PIN 4321", nil)
	require.NoError(t, err)
	require.Empty(t, hits)
	got, err := a.Context(ctx, "PIN", 4000)
	require.NoError(t, err)
	require.NotContains(t, got, "4321")
}

// TestSweepOnlyLibraryFolders: Open's sweep of crash leftovers removes
// them from the folders the library writes, and walks no other.
func TestSweepOnlyLibraryFolders(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"facts/.user.md.tmp-1", "episodes/archive/.2025-01.md.tmp-2", ".procedures.md.tmp-3", "projects/x/.notes.md.tmp-4", "projects/.a.md.tmp-5"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o600))
	}
	openAt(t, dir, nil)
	leavesBroken(t, "a crash's temporary files in folders the library does not sweep are its point")
	for _, p := range []string{"facts/.user.md.tmp-1", "episodes/archive/.2025-01.md.tmp-2", ".procedures.md.tmp-3"} {
		require.NoFileExists(t, filepath.Join(dir, p))
	}
	for _, p := range []string{"projects/x/.notes.md.tmp-4", "projects/.a.md.tmp-5"} {
		require.FileExists(t, filepath.Join(dir, p), "a person's file outside the memory folders")
	}
}

// BenchmarkOversizedRead: Read and Search of a memory whose month a person
// made 1 GiB (a sparse file with a valid head) stay bounded in time and
// memory: they read 1 MiB of it, never the whole.
func BenchmarkOversizedRead(b *testing.B) {
	ctx := context.Background()
	s, dir := open(b, nil)
	sparse(b, filepath.Join(dir, "episodes", "2026-02.md"), "# 2026-02 Episodes\n\n> Summary: huge\n\n## Tokyo flights\n- Date: 2026-02-01\n- Summary: Spring Airlines\n", 1<<30)
	b.Run("Read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Read(ctx, "episodes/2026-02.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Search", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.ReleaseIndex() // index it again each time, as after a change
			if _, err := s.Search(ctx, "Spring Airlines", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
