package memory_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// countingBackend counts what a Store asks of its backend.
type countingBackend struct {
	memory.Backend
	lists, reads atomic.Int64
}

func (c *countingBackend) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	c.lists.Add(1)
	return c.Backend.List(ctx, dir)
}

func (c *countingBackend) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	c.reads.Add(1)
	return c.Backend.Read(ctx, name, limit)
}

// TestSearchListsOnce checks the freshness check's cost on any backend: one
// listing per search, and no file read again whose tag did not change,
// while a change made behind the store's back is found by the next search.
func TestSearchListsOnce(t *testing.T) {
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	c := &countingBackend{Backend: d}
	s, err := memory.OpenBackend(c, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Tokyo flight research\n- Summary: compared fares", ""))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Lives in Berlin", ""))

	hits, err := s.Search(ctx, "tokyo", nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	c.lists.Store(0)
	hits, err = s.Search(ctx, "berlin", nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, int64(1), c.lists.Load(), "one listing per search")

	// Another writer, through the backend: the next search sees it.
	old, err := d.Read(ctx, "facts/user.md", -1)
	require.NoError(t, err)
	_, err = put(ctx, d, "facts/user.md", []byte("# User\n\n> Summary: moved\n\n- Lives in Lisbon\n"), old.Version)
	require.NoError(t, err)
	hits, err = s.Search(ctx, "berlin", nil)
	require.NoError(t, err)
	require.Empty(t, hits)
	hits, err = s.Search(ctx, "lisbon", nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, "- Lives in Lisbon", "- "+hits[0].Snippet)
}
