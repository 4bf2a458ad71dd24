//go:build unix

package memory_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// TestOpenFIFO: a FIFO where the memory directory, or its lock file,
// should be is refused, at once: Open waits for no writer of it.
func TestOpenFIFO(t *testing.T) {
	base := t.TempDir()
	fifo := filepath.Join(base, "memory")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	dir := filepath.Join(base, "locked")
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, ".lock"), 0o600))
	for _, c := range []struct{ dir, want string }{
		{fifo, "not a directory"},
		{dir, "not a regular file"},
	} {
		done := make(chan error)
		go func() {
			s, err := memory.Open(c.dir, nil)
			if err == nil {
				s.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorContains(t, err, c.want, c.dir)
		case <-time.After(time.Minute):
			// Let the Open stuck on the FIFO go, as a writer would.
			if f, err := os.OpenFile(c.dir, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Fatalf("Open(%s) waits on a FIFO", c.dir)
		}
	}
}
