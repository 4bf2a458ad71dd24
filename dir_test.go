package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/markdown"
)

// TestDirContract checks the directory backend's compare-and-replace and
// its reads, the contract the Store's loop relies on.
func TestDirContract(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()

	v1, err := put(ctx, d, "facts/user.md", []byte("one\n"), "")
	require.NoError(t, err, "a file that does not exist is created with no version")
	require.Equal(t, memory.Version("one\n"), v1)
	_, err = put(ctx, d, "facts/user.md", []byte("two\n"), "")
	require.ErrorIs(t, err, memory.ErrChanged, "create-only refuses a file that exists")
	_, err = put(ctx, d, "facts/user.md", []byte("two\n"), "stale")
	require.ErrorIs(t, err, memory.ErrChanged)
	v2, err := put(ctx, d, "facts/user.md", []byte("two\n"), v1)
	require.NoError(t, err)

	c, err := d.Read(ctx, "facts/user.md", -1)
	require.NoError(t, err)
	require.Equal(t, memory.Content{Data: []byte("two\n"), Size: 4, Version: v2}, c)
	c, err = d.Read(ctx, "facts/user.md", 2)
	require.NoError(t, err)
	require.Equal(t, memory.Content{Data: []byte("tw"), Size: 4}, c, "a start has no version")
	c, err = d.Read(ctx, "facts/user.md", 10)
	require.NoError(t, err)
	require.Equal(t, v2, c.Version, "a limit past the end reads the whole file")
	_, err = d.Read(ctx, "facts/none.md", -1)
	require.ErrorIs(t, err, fs.ErrNotExist)

	// A folder made as needed, as S3 has none to make.
	_, err = put(ctx, d, "episodes/archive/2025-01.md", []byte("x\n"), "")
	require.NoError(t, err)
	entries, err := d.List(ctx, "episodes")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, "episodes/archive/2025-01.md", entries[0].Name)
	require.Empty(t, entries[0].Tag, "a file changed in the last two seconds has no tag")

	require.ErrorIs(t, del(ctx, d, "facts/user.md", ""), memory.ErrChanged, "a removal needs a version")
	require.ErrorIs(t, del(ctx, d, "facts/user.md", v1), memory.ErrChanged)
	require.ErrorIs(t, del(ctx, d, "facts/none.md", v1), memory.ErrChanged)
	require.NoError(t, del(ctx, d, "facts/user.md", v2))
	require.NoFileExists(t, filepath.Join(dir, "facts", "user.md"))
	_, err = put(ctx, d, "facts/user.md", []byte("three\n"), v2)
	require.ErrorIs(t, err, memory.ErrChanged, "a file removed since is not at any version")

	// What a person's editor makes is compared too.
	writeFile(t, dir, "facts/memory.md", "by hand\n")
	_, err = put(ctx, d, "facts/memory.md", []byte("mine\n"), memory.Version("before\n"))
	require.ErrorIs(t, err, memory.ErrChanged)
	require.Equal(t, "by hand\n", readFile(t, dir, "facts/memory.md"))

	// A done context, a device, a closed backend.
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = d.Read(done, "facts/memory.md", -1)
	require.ErrorIs(t, err, context.Canceled)
	_, err = d.List(done, "")
	require.ErrorIs(t, err, context.Canceled)
	_, err = d.Lock(done, "facts/")
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "facts", "folder.md"), 0o755))
	_, err = d.Read(ctx, "facts/folder.md", -1)
	require.ErrorContains(t, err, "not a regular file")
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "a second Close does nothing")
}

// TestDirRemovesTemps checks that a Store opened on a Dir removes the
// temporary files a crash left, in every folder it writes, and nothing
// else.
func TestDirRemovesTemps(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "facts/.user.md.tmp-abc", "half")
	writeFile(t, dir, "episodes/archive/.2025-01.md.tmp-xyz", "half")
	writeFile(t, dir, "facts/user.md", "kept\n")
	writeFile(t, dir, "notes/.hidden", "kept\n")
	writeFile(t, dir, ".cache/.vectors-0123456789abcdef.bin.tmp-q1", "half")
	writeFile(t, dir, ".cache/vectors-0123456789abcdef.bin", "kept")
	writeFile(t, dir, ".git/.x.tmp-1", "kept")
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	require.FileExists(t, filepath.Join(dir, "facts", ".user.md.tmp-abc"), "a Dir alone knows no folder of the Store's")
	_, err = memory.OpenBackend(d, nil)
	require.NoError(t, err)
	require.NoFileExists(t, filepath.Join(dir, "facts", ".user.md.tmp-abc"))
	require.NoFileExists(t, filepath.Join(dir, "episodes", "archive", ".2025-01.md.tmp-xyz"))
	require.FileExists(t, filepath.Join(dir, "facts", "user.md"))
	require.FileExists(t, filepath.Join(dir, "notes", ".hidden"))
	require.NoFileExists(t, filepath.Join(dir, ".cache", ".vectors-0123456789abcdef.bin.tmp-q1"), "the vector cache's temporary file")
	require.FileExists(t, filepath.Join(dir, ".cache", "vectors-0123456789abcdef.bin"))
	require.FileExists(t, filepath.Join(dir, ".git", ".x.tmp-1"), "other dot-folders are not entered")
}

// TestOpenBackendOptions checks OpenBackend's refusals.
func TestOpenBackendOptions(t *testing.T) {
	_, err := memory.OpenBackend(nil, nil)
	require.ErrorContains(t, err, "Backend is nil")
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	defer d.Close()
	_, err = memory.OpenBackend(d, &memory.Options{IndexIdle: -1})
	require.ErrorContains(t, err, "may not be negative")
	s, err := memory.OpenBackend(d, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = d.List(context.Background(), "")
	require.NoError(t, err, "the store does not close a backend it was given")
}

// TestSealResumed checks a month whose sealing a crash cut short: its
// newest part holds the month's entries, and the month's file was not yet
// rewritten. The month's next seal drops them from the month's file, so
// that each entry is kept once.
func TestSealResumed(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	big := strings.Repeat("- detail of a long entry\n", 20)
	i := 0
	for ; len(readFileOr(dir, "episodes/2026-02.md")) < 15000; i++ {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## entry %d\n- Date: 2026-02-01\n%s", i, big), ""))
	}
	writeFile(t, dir, "episodes/2026-02.001.md", readFile(t, dir, "episodes/2026-02.md")) // as the crash left it
	for ; len(monthFiles(t, dir, "2026-02")) < 3; i++ {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## entry %d\n- Date: 2026-02-01\n%s", i, big), ""))
	}
	count := map[string]int{}
	for _, p := range monthFiles(t, dir, "2026-02") {
		d := markdown.Parse([]byte(readFile(t, dir, p)))
		require.True(t, d.Title.OK && d.Summary.OK, p)
		for _, e := range d.Entries {
			count[e.Title]++
		}
	}
	require.Len(t, count, i)
	for title, n := range count {
		require.Equal(t, 1, n, title)
	}
}

func readFileOr(dir, rel string) string {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	return string(b)
}

// TestDirConcurrentWrites checks that a Dir's Write is a compare-and-swap
// for callers that do not hold its lock: increments by goroutines that read,
// then write against the version read, lose none.
func TestDirConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	defer d.Close()
	_, err = put(ctx, d, "facts/n.md", []byte("0"), "")
	require.NoError(t, err)
	const workers, each = 8, 25
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for range each {
				for {
					c, err := d.Read(ctx, "facts/n.md", -1)
					if err != nil {
						errs <- err
						return
					}
					var n int
					fmt.Sscan(string(c.Data), &n)
					if _, err = put(ctx, d, "facts/n.md", []byte(fmt.Sprint(n+1)), c.Version); err == nil {
						break
					} else if !errors.Is(err, memory.ErrChanged) {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	c, err := d.Read(ctx, "facts/n.md", -1)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(workers*each), string(c.Data))
}

// TestLinkedEpisodesInsideRoot checks a top-level folder that is a link to
// a folder inside the root: listed, read and written through, so that a
// month fills and seals into parts as usual.
func TestLinkedEpisodesInsideRoot(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	leavesBroken(t, "episodes/ links to a person's folder real/ beside it")
	require.NoError(t, os.Remove(filepath.Join(dir, "episodes")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
	require.NoError(t, os.Symlink("real", filepath.Join(dir, "episodes")))
	big := strings.Repeat("- detail of a long entry\n", 40)
	for i := range 30 {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## entry %d\n- Date: 2026-02-01\n%s", i, big), ""))
	}
	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Positive(t, files[0].Parts)
	hits, err := s.Search(ctx, "entry", &memory.SearchOptions{Limit: 100})
	require.NoError(t, err)
	require.Len(t, hits, 30)
}

// failingList is a backend whose listings fail as a server's can.
type failingList struct{ memory.Backend }

func (failingList) List(context.Context, string) ([]memory.Entry, error) {
	return nil, errors.New("503 SlowDown")
}

// TestListFailureIsAnError checks that a listing the backend could not
// make fails Search and List, instead of answering from nothing.
func TestListFailureIsAnError(t *testing.T) {
	ctx := context.Background()
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	defer d.Close()
	s, err := memory.OpenBackend(d, nil)
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Lives in Berlin", ""))
	s2, err := memory.OpenBackend(failingList{d}, nil)
	require.NoError(t, err)
	_, err = s2.Search(ctx, "berlin", nil)
	require.ErrorContains(t, err, "503 SlowDown")
	_, err = s2.List(ctx)
	require.ErrorContains(t, err, "503 SlowDown")
}

// TestDirVersionAfterEditInPlace: a file changed in place after the Dir
// read it (an editor that writes into the file, not over it) is not at the
// version read: a write through the lock at that version is refused.
func TestDirVersionAfterEditInPlace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, dir, "facts/user.md", "- Name: Zhang San\n")
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	c, err := d.Read(ctx, "facts/user.md", -1)
	require.NoError(t, err)
	f, err := os.OpenFile(filepath.Join(dir, "facts", "user.md"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("- Pet: cat\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = put(ctx, d, "facts/user.md", []byte("- Name: Li Si\n"), c.Version)
	require.ErrorIs(t, err, memory.ErrChanged)
	got, err := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
	require.NoError(t, err)
	require.Equal(t, "- Name: Zhang San\n- Pet: cat\n", string(got))

	// Read again, the version is the file's, and the write goes through.
	c, err = d.Read(ctx, "facts/user.md", -1)
	require.NoError(t, err)
	_, err = put(ctx, d, "facts/user.md", []byte("- Name: Li Si\n"), c.Version)
	require.NoError(t, err)
}
