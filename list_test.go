package memory_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// counting is a Backend on a Dir that counts the reads asked of it, and
// whose List of everything can add a file that is not there (a listing
// made just before the file went).
type counting struct {
	memory.Backend
	reads atomic.Int64
	ghost string
	hide  bool // List of everything leaves out facts/ and episodes/
}

func (c *counting) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	c.reads.Add(1)
	return c.Backend.Read(ctx, name, limit)
}

func (c *counting) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	entries, err := c.Backend.List(ctx, dir)
	if dir == "" && c.ghost != "" {
		entries = append(entries, memory.Entry{Name: c.ghost, Size: 10, Tag: "ghost"})
	}
	if dir == "" && c.hide {
		var kept []memory.Entry
		for _, e := range entries {
			if !strings.HasPrefix(e.Name, "facts/") && !strings.HasPrefix(e.Name, "episodes/") {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	return entries, err
}

// TestListRemembersHeads: a second List reads no file whose tag is the
// same; a month whose newest file went since the listing is shown from its
// other files; ReleaseIndex forgets what List read.
func TestListRemembersHeads(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: likes tea\n\n- Likes: tea\n")
	writeFile(t, dir, "episodes/2026-01.md", "# 2026-01 Episodes\n\n> Summary: January\n\n## A\n- Date: 2026-01-02\n")
	writeFile(t, dir, "episodes/2026-03.001.md", "# 2026-03 Episodes\n\n> Summary: March, part one\n\n## B\n- Date: 2026-03-02\n")
	age(t, dir)
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	b := &counting{Backend: d}
	s, err := memory.OpenBackend(b, nil)
	require.NoError(t, err)
	defer s.Close()

	first, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"facts/user.md", "episodes/2026-03.md", "episodes/2026-01.md"}, paths(first))
	require.Equal(t, "March, part one", first[1].Summary)
	require.Equal(t, 1, first[1].Parts)

	b.reads.Store(0)
	again, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Zero(t, b.reads.Load(), "nothing read again")

	s.ReleaseIndex()
	b.reads.Store(0)
	_, err = s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), b.reads.Load(), "every head again")

	// A month's newest file that the listing shows but that is gone.
	b.ghost = "episodes/2026-03.md"
	got, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, paths(first), paths(got))
	require.Equal(t, "March, part one", got[1].Summary, "from the part")
	require.Equal(t, first[1].Size+10, got[1].Size, "the sizes the listing gave")

	// Folders the listing of everything does not show are listed on their
	// own (on a directory, one it could not read).
	b.ghost, b.hide = "", true
	got, err = s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, first, got)
}

func paths(files []memory.FileInfo) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}
