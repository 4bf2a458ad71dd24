package memory_test

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// faulty is a Backend on a Dir whose List and Write a test makes fail:
// when list or write returns an error for a call, the call fails with it
// and the Dir is not asked.
type faulty struct {
	memory.Backend
	mu     sync.Mutex
	list   func(dir string) error
	write  func(name string, n int) error // n counts the Writes asked for, this one included
	writes int
}

func newFaulty(t *testing.T) *faulty {
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return &faulty{Backend: d}
}

func (f *faulty) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	f.mu.Lock()
	fail := f.list
	f.mu.Unlock()
	if fail != nil {
		if err := fail(dir); err != nil {
			return nil, err
		}
	}
	return f.Backend.List(ctx, dir)
}

func (f *faulty) Lock(ctx context.Context, name string) (memory.Held, error) {
	h, err := f.Backend.Lock(ctx, name)
	return hook(h, err, f.write1)
}

func (f *faulty) write1(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
	f.mu.Lock()
	f.writes++
	fail, n := f.write, f.writes
	f.mu.Unlock()
	if fail != nil {
		if err := fail(name, n); err != nil {
			return "", err
		}
	}
	return h.Write(ctx, name, data, match)
}

// TestChangeLosesManyRaces: a change whose write loses the race again
// and again (another writer changes the file each time) goes round until
// it wins, backing off between rounds; the content is then written once.
func TestChangeLosesManyRaces(t *testing.T) {
	f := newFaulty(t)
	s, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	f.write = func(_ string, n int) error {
		if n <= 5 {
			return fmt.Errorf("injected: %w", memory.ErrChanged)
		}
		return nil
	}
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Likes: tea\n"))
	require.Equal(t, 6, f.writes, "five lost rounds, then the write")
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Equal(t, "# User\n\n> Summary: who\n\n- Likes: tea\n", got)
}

// TestChangeLosingRacesHonoursItsContext: a change that keeps losing
// stops, with the context's error, when its context ends while it backs
// off, and writes nothing.
func TestChangeLosingRacesHonoursItsContext(t *testing.T) {
	f := newFaulty(t)
	s, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.write = func(_ string, n int) error {
		if n == 3 {
			cancel()
		}
		return fmt.Errorf("injected: %w", memory.ErrChanged)
	}
	err = s.Append(ctx, "episodes/2026-02.md", "## Trip\n- Summary: a trip", "")
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 3, f.writes, "no round after the context ended")
	_, err = s.Read(context.Background(), "episodes/2026-02.md")
	require.ErrorIs(t, err, memory.ErrNotFound)
}

// TestSearchListsFoldersWhenTheWholeFails: when the backend cannot list
// everything at once (a folder a person made unreadable), search lists
// facts/ and episodes/ on their own and finds what they hold; a context
// that ends meanwhile ends the search.
func TestSearchListsFoldersWhenTheWholeFails(t *testing.T) {
	f := newFaulty(t)
	s, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Likes: jasmine tea\n"))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Lunch\n- Summary: dumplings", ""))
	f.list = func(dir string) error {
		if dir == "" {
			return &fs.PathError{Op: "list", Path: "notes", Err: fs.ErrPermission}
		}
		return nil
	}
	for query, want := range map[string]string{"jasmine": "facts/user.md", "dumplings": "episodes/2026-02.md"} {
		hits, err := s.Search(ctx, query, nil)
		require.NoError(t, err)
		require.Len(t, hits, 1, query)
		require.Equal(t, want, hits[0].Path)
	}
	f.list = func(dir string) error {
		switch dir {
		case "":
			return &fs.PathError{Op: "list", Path: "notes", Err: fs.ErrPermission}
		case "episodes":
			return context.Canceled
		}
		return nil
	}
	_, err = s.Search(ctx, "jasmine", nil)
	require.ErrorIs(t, err, context.Canceled)
}

// TestDiskFullIsTheHosts: a write the disk refuses (full, failing) is a
// host failure: the tools return it as a Go error, and tell the model
// nothing, as for a file a person must fix.
func TestDiskFullIsTheHosts(t *testing.T) {
	f := newFaulty(t)
	f.write = func(name string, n int) error {
		return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
	}
	s, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	ctx := context.Background()
	for _, call := range []struct{ tool, args string }{
		{"memory_write", `{"path":"facts/user.md","content":"- Likes: tea","version":null}`},
		{"memory_append", `{"path":"episodes/2026-02.md","entry":"## A\n- Summary: a","summary":null}`},
	} {
		res, err := tool(t, s.NewSession().Tools(), call.tool).Call(ctx, []byte(call.args))
		require.ErrorIs(t, err, syscall.ENOSPC, call.tool)
		require.False(t, res.IsError, call.tool)
	}
}
