//go:build unix

package memory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeldAppendFIFOSwappedIn races Appends that make a new log against a
// FIFO made in the log's place, and taken away, over and over: an Append
// that opened the FIFO (made between its look and its open) must fail, not
// write its record into a pipe where it is lost.
func TestHeldAppendFIFOSwappedIn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := openDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "logs"), 0o700))
	name := func(i int64) string { return fmt.Sprintf("logs/%d.log", i) }
	var target atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			p := filepath.Join(dir, filepath.FromSlash(name(target.Load())))
			if syscall.Mkfifo(p, 0o600) == nil {
				os.Remove(p)
			}
		}
	})
	defer func() { stop.Store(true); wg.Wait() }()
	appended := 0
	for i := range int64(300) {
		target.Store(i)
		h, err := d.Lock(ctx, "")
		require.NoError(t, err)
		err = h.(*dirHeld).Append(ctx, name(i), []byte("record\n"), false)
		h.Unlock()
		if err != nil {
			continue // the FIFO seen, and refused
		}
		appended++
		p := filepath.Join(dir, filepath.FromSlash(name(i)))
		fi, err := os.Lstat(p)
		require.NoError(t, err, "append %d succeeded: its log is there", i)
		require.True(t, fi.Mode().IsRegular(), "append %d succeeded into a %v", i, fi.Mode().Type())
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "record\n", string(got))
	}
	require.Positive(t, appended)
}
