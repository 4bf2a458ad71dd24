package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// TestLockFileDeletedWhileOpening makes and deletes .lock over and over while new
// Stores are opened and append, side by side and beside an old one that
// appends too: every Open finds or makes a lock file, and every append
// lands, once.
func TestLockFileDeletedWhileOpening(t *testing.T) {
	ctx := context.Background()
	old, dir := open(t, nil)
	lock := filepath.Join(dir, ".lock")
	var stop atomic.Bool
	var deleter sync.WaitGroup
	deleter.Go(func() {
		for !stop.Load() {
			// As a Store that makes it anew would, then a person's
			// clean-up.
			if f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
				f.Close()
			}
			os.Remove(lock)
		}
	})
	const workers, rounds = 4, 20
	errs := make(chan error, workers+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				s, err := memory.Open(dir, &memory.Options{Now: feb26})
				if err != nil {
					errs <- err
					return
				}
				err = s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## new %d.%d", w, i), "")
				s.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Go(func() {
		for i := range rounds {
			if err := old.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## old %d", i), ""); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	stop.Store(true)
	deleter.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got := 0
	des, err := os.ReadDir(filepath.Join(dir, "episodes"))
	require.NoError(t, err)
	for _, de := range des {
		got += strings.Count(readFile(t, dir, "episodes/"+de.Name()), "\n## ")
	}
	require.Equal(t, (workers+1)*rounds, got, "every append landed once, in the month or its parts")
}
