package memory_test

import (
	"testing"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/backendtest"
)

// TestDirBackend runs the Backend conformance suite on the local
// directory backend, each case in a fresh temporary directory.
func TestDirBackend(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) memory.Backend {
		d, err := memory.OpenDir(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	})
}
