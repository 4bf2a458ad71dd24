//go:build unix

package memory

import (
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
	for _, dir := range []string{".history/facts", ".history/episodes", "episodes", "episodes/archive", ".history/episodes/archive"} {
		_, done, err := d.walk(dir, true)
		require.NoError(t, err)
		done()
	}
	for _, dir := range []string{".history", ".history/facts", ".history/episodes", "episodes", "episodes/archive", ".history/episodes/archive"} {
		_, done, ok := d.folders.get(d.root, dir)
		require.True(t, ok, "%s is still kept", dir)
		done()
	}
	require.Len(t, d.folders.m, 6, "one folder kept for each path")
}
