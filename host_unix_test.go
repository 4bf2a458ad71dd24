//go:build unix

package memory_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

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
