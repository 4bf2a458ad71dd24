package memory_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// lockless is a Backend that, as S3 does, takes no lock for a file (its
// Write is the compare-and-swap), on a Dir. before[name], when set, runs
// once before the next Write of name: another writer acting in the window
// between a Store's read and its write.
type lockless struct {
	memory.Backend
	mu     sync.Mutex
	before map[string]func()
}

func (l *lockless) Lock(ctx context.Context, name string) (memory.Held, error) {
	if strings.HasSuffix(name, "/") {
		h, err := l.Backend.Lock(ctx, name)
		return hook(h, err, func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
			l.before1(name)
			return h.Write(ctx, name, data, match)
		})
	}
	return casHeld{l}, nil
}

// casHeld is a lockless lock of a file, which holds nothing: each Write
// takes the Dir's lock for itself, a compare-and-swap as on S3.
type casHeld struct{ l *lockless }

func (h casHeld) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	h.l.before1(name)
	return put(ctx, h.l.Backend, name, data, match)
}

func (h casHeld) Remove(ctx context.Context, name, match string) error {
	return del(ctx, h.l.Backend, name, match)
}

func (casHeld) Unlock() {}

// before1 runs the hook set for name, once.
func (l *lockless) before1(name string) {
	l.mu.Lock()
	f := l.before[name]
	delete(l.before, name)
	l.mu.Unlock()
	if f != nil {
		f()
	}
}

// TestAppendSealRace: two Stores on a backend without file locks append
// to a full month at once. Both seal it; the second's create-only write
// of the part loses, and its append goes round again (the month is sealed
// already) instead of failing: each entry is in the month once.
func TestAppendSealRace(t *testing.T) {
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	lb := &lockless{Backend: d, before: map[string]func(){}}
	opts := &memory.Options{Now: feb26}
	a, err := memory.OpenBackend(lb, opts)
	require.NoError(t, err)
	b, err := memory.OpenBackend(lb, opts)
	require.NoError(t, err)
	ctx := context.Background()

	// A month one entry short of full.
	filler := strings.Repeat("- Note: a line to fill the month with\n", 25)
	for i := 0; ; i++ {
		require.NoError(t, a.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## Old %d\n%s", i, filler), ""))
		files, err := a.List(ctx)
		require.NoError(t, err)
		if files[0].Size > 15<<10 {
			require.Zero(t, files[0].Parts)
			break
		}
	}
	full, err := a.Read(ctx, "episodes/2026-02.md")
	require.NoError(t, err)

	// a reads the full month and seals it; just before its write of the
	// part, b appends, sealing the month first.
	lb.before["episodes/2026-02.001.md"] = func() {
		require.NoError(t, b.Append(ctx, "episodes/2026-02.md", "## From b\n"+filler, ""))
	}
	require.NoError(t, a.Append(ctx, "episodes/2026-02.md", "## From a\n"+filler, ""), "the append that lost the seal to another Store's")

	part, err := a.Read(ctx, "episodes/2026-02.001.md")
	require.NoError(t, err)
	require.Equal(t, full, part, "the part is the month as it was full")
	month, err := a.Read(ctx, "episodes/2026-02.md")
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(month, "## From b\n"), month)
	require.Equal(t, 1, strings.Count(month, "## From a\n"), month)
	require.NotContains(t, month, "## Old ")
	files, err := a.List(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, files[0].Parts)
}
