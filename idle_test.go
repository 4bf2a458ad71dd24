package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// searchFinds requires that a search of s finds the entry fillIdle wrote.
func searchFinds(t *testing.T, s *memory.Store) {
	t.Helper()
	hits, err := s.Search(context.Background(), "Tokyo flights", nil)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.Equal(t, "episodes/2026-02.md", hits[0].Path)
}

func fillIdle(t *testing.T, s *memory.Store) {
	t.Helper()
	require.NoError(t, s.Append(context.Background(), "episodes/2026-02.md", entry(1, "episodes/2026-02.md"), ""))
}

// TestIndexIdle: with Options.IndexIdle, the index is let go after that
// long without a search, and the next search builds it again.
func TestIndexIdle(t *testing.T) {
	s, _ := open(t, &memory.Options{IndexIdle: time.Nanosecond})
	fillIdle(t, s)
	released := make(chan struct{}, 1)
	memory.OnIndexIdle(s, func() {
		select {
		case released <- struct{}{}:
		default:
		}
	})
	searchFinds(t, s)
	<-released
	require.False(t, memory.IndexHeld(s), "released after IndexIdle")
	searchFinds(t, s)
	<-released
	require.False(t, memory.IndexHeld(s), "released again after the next search")
}

// TestReleaseIndex: ReleaseIndex and Close let go of the index; a search
// after ReleaseIndex builds it again.
func TestReleaseIndex(t *testing.T) {
	s, _ := open(t, nil)
	fillIdle(t, s)
	require.False(t, memory.IndexHeld(s), "no index before the first search")
	searchFinds(t, s)
	require.True(t, memory.IndexHeld(s), "kept without IndexIdle")
	s.ReleaseIndex()
	require.False(t, memory.IndexHeld(s))
	s.ReleaseIndex() // twice is harmless
	searchFinds(t, s)
	require.True(t, memory.IndexHeld(s))
	require.NoError(t, s.Close())
	require.False(t, memory.IndexHeld(s), "Close releases the index")
}

// TestIndexIdleNegative: a negative IndexIdle is refused.
func TestIndexIdleNegative(t *testing.T) {
	_, err := memory.Open(t.TempDir(), &memory.Options{IndexIdle: -time.Second})
	require.ErrorContains(t, err, "IndexIdle")
}
