package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/output.golden")

// TestRun pins the quickstart's output, so the demo in the README cannot
// silently rot.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out, filepath.Join(t.TempDir(), "data", "memory")))
	const golden = "testdata/output.golden"
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out.String())
}
