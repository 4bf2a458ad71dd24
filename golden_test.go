package memory_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// golden compares got with testdata/name, or rewrites the file under -update.
// Review every change to a golden file like an API change: the tool
// descriptions and prompts in them are what the model reads.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test -run %s -update", t.Name())
	require.Equal(t, string(want), string(got), "output differs from %s; if the change is intended, review it and run go test -update", path)
}
