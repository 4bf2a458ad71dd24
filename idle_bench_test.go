package memory_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
)

// memBackend is a trivial in-memory Backend, shared by many stores so that
// what BenchmarkIdleStore measures is the Store alone. Versions are
// Version of the content; Lock returns at once.
type memBackend struct {
	mu    sync.Mutex
	files map[string][]byte
}

var _ memory.Backend = (*memBackend)(nil)

func newMemBackend() *memBackend { return &memBackend{files: map[string][]byte{}} }

func (m *memBackend) Read(_ context.Context, name string, limit int64) (memory.Content, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.files[name]
	if !ok {
		return memory.Content{}, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	c := memory.Content{Data: slices.Clone(data), Size: int64(len(data))}
	if limit >= 0 && int64(len(data)) > limit {
		c.Data = c.Data[:limit]
	} else {
		c.Version = memory.Version(string(data))
	}
	return c, nil
}

func (m *memBackend) Write(_ context.Context, name string, data []byte, match string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.files[name]; ok && memory.Version(string(old)) != match || !ok && match != "" {
		return "", fmt.Errorf("%s: %w", name, memory.ErrChanged)
	}
	m.files[name] = slices.Clone(data)
	return memory.Version(string(data)), nil
}

func (m *memBackend) Remove(_ context.Context, name, match string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.files[name]; !ok || memory.Version(string(old)) != match {
		return fmt.Errorf("%s: %w", name, memory.ErrChanged)
	}
	delete(m.files, name)
	return nil
}

func (m *memBackend) List(_ context.Context, dir string) ([]memory.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memory.Entry
	for name, data := range m.files {
		if dir == "" || strings.HasPrefix(name, dir+"/") {
			out = append(out, memory.Entry{Name: name, Size: int64(len(data)), Tag: memory.Version(string(data))})
		}
	}
	slices.SortFunc(out, func(a, b memory.Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *memBackend) Lock(context.Context, string) (memory.Held, error) { return memHeld{m}, nil }

// memHeld is a memBackend's lock, which holds nothing: its Write and
// Remove compare versions.
type memHeld struct{ *memBackend }

func (memHeld) Unlock() {}

// fillSmallMemory gives a store the small memory of BenchmarkIdleStore:
// both fact files with a few facts, and 20 episode entries over two
// months.
func fillSmallMemory(b *testing.B, s *memory.Store) {
	ctx := context.Background()
	for _, w := range []struct{ path, text string }{
		{"facts/user.md", "- Name: Zhang San; prefers Chinese\n- Standup Wednesdays 10:00\n- Daughter's birthday 2026-05-14\n"},
		{"facts/memory.md", "- Airline sites beat aggregators on price\n- The CI cache breaks after a Go upgrade: clear it\n"},
	} {
		if err := s.Write(ctx, w.path, w.text); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		path := fmt.Sprintf("episodes/2026-%02d.md", 1+i/10)
		if err := s.Append(ctx, path, entry(i, path), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleStore is what one Store costs a server that holds many
// (one per user): the Go heap in use after a full collection (gc, which
// also empties the sync.Pools), before and after
// opening idleStores stores, divided by their number. Each iteration opens
// a batch; the figure is the mean over the batches. Three moments:
//
//   - open: right after opening;
//   - searched: after one search of a small memory (2 fact files, 20
//     entries), which builds the store's index;
//   - released: after that search and Store.ReleaseIndex.
//
// "backend" stores are OpenBackend on one shared in-memory Backend, so that
// the figure is the Store alone; "dir" stores are memory.Open on a
// directory each (a Dir: the os.Root, the lock file and the folder held
// open, three file descriptors a store).
func BenchmarkIdleStore(b *testing.B) {
	ctx := context.Background()
	shared := newMemBackend()
	s, err := memory.OpenBackend(shared, &memory.Options{Now: feb26})
	if err != nil {
		b.Fatal(err)
	}
	fillSmallMemory(b, s)
	s.Close()

	const idleStores = 1000
	dirs := make([]string, idleStores)
	root := b.TempDir()
	for i := range dirs {
		dirs[i] = filepath.Join(root, fmt.Sprint(i))
	}
	filled := false

	for _, kind := range []string{"backend", "dir"} {
		openStore := func(i int) *memory.Store {
			var s *memory.Store
			var err error
			if kind == "backend" {
				s, err = memory.OpenBackend(shared, &memory.Options{Now: feb26})
			} else {
				s, err = memory.Open(dirs[i], &memory.Options{Now: feb26})
			}
			if err != nil {
				b.Fatal(err)
			}
			return s
		}
		for _, phase := range []string{"open", "searched", "released"} {
			b.Run(kind+"/"+phase, func(b *testing.B) {
				if kind == "dir" && !filled {
					// The same files, written as a person would: quicker
					// than a thousand stores' durable writes.
					for _, dir := range dirs {
						for name, data := range shared.files {
							writeFile(b, dir, name, string(data))
						}
					}
					filled = true
				}
				stores := make([]*memory.Store, idleStores)
				var total float64
				for b.Loop() {
					var before, after runtime.MemStats
					gc()
					runtime.ReadMemStats(&before)
					for i := range stores {
						s := openStore(i)
						if phase != "open" {
							if _, err := s.Search(ctx, "flights Tokyo", nil); err != nil {
								b.Fatal(err)
							}
						}
						if phase == "released" {
							s.ReleaseIndex()
						}
						stores[i] = s
					}
					gc()
					runtime.ReadMemStats(&after)
					total += (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / idleStores
					for i, s := range stores {
						s.Close()
						stores[i] = nil
					}
				}
				b.ReportMetric(total/float64(b.N), "B/store")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// gc collects twice: what sync.Pools hold survives one collection, in
// their victim caches.
func gc() {
	runtime.GC()
	runtime.GC()
}
