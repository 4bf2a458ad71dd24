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
		d, err := memory.OpenDir(t.TempDir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	})
}

// TestSplitBackend runs the conformance suite on the backend of a store
// that shares world topics: two directories, world/ in the second.
func TestSplitBackend(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) memory.Backend {
		var ds [2]*memory.Dir
		for i := range ds {
			d, err := memory.OpenDir(t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			ds[i] = d
		}
		return memory.Split(ds[0], ds[1])
	})
}
