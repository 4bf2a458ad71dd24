//go:build unix

package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// The tests of the folders a Dir keeps open (a folder is used again while
// it is still in its place, and walked to anew once a person moved,
// removed or linked it), of the version a Dir answers from a file's stamp,
// and of the logs a held lock keeps open until Unlock.

// keepOpts are the options of the stores of these tests: the fixed clock,
// so that two stores that make the same changes write the same files.
func keepOpts() *memory.Options { return &memory.Options{Now: feb26} }

// openKeep opens a store on dir, closed when the test ends.
func openKeep(t *testing.T, dir string) *memory.Store {
	t.Helper()
	s, err := memory.Open(dir, keepOpts())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// keptEntry is the i-th entry of a month for these tests.
func keptEntry(i int) string {
	return fmt.Sprintf("## entry %d\n- Date: 2026-02-01\n- detail %d of the month\n", i, i)
}

// tree returns the files under root (links not followed, a link as
// "-> target"), by their path from root.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == "." || d.IsDir() || rel == ".lock":
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			require.NoError(t, err)
			files[filepath.ToSlash(rel)] = "-> " + target
		default:
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			files[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// TestDirKeptFolderRenamedAway: a folder the Dir used, then renamed away
// by a person and made anew, is the new one for the next change and read:
// nothing more is written in the folder moved away, memory files or logs.
func TestDirKeptFolderRenamedAway(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "memory")
	s := openKeep(t, dir)
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(1), ""))
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Berlin\n"))
	_, err := s.Read(ctx, "episodes/2026-02.md")
	require.NoError(t, err)

	for _, folder := range []string{"episodes", ".history/episodes", "facts", ".history/facts"} {
		old := filepath.Join(base, strings.ReplaceAll(folder, "/", "-")+".old")
		require.NoError(t, os.Rename(filepath.Join(dir, folder), old))
		require.NoError(t, os.Mkdir(filepath.Join(dir, folder), 0o700))
		before := tree(t, old)

		switch {
		case strings.HasSuffix(folder, "episodes"):
			_, err := s.Read(ctx, "episodes/2026-02.md")
			if folder == "episodes" {
				require.ErrorIs(t, err, memory.ErrNotFound, "the month is read in the new folder")
			}
			require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(2), ""))
			got, err := s.Read(ctx, "episodes/2026-02.md")
			require.NoError(t, err)
			require.Contains(t, got, "## entry 2")
			if folder == "episodes" {
				require.NotContains(t, got, "## entry 1", "the month read is the new folder's")
			}
			require.Contains(t, readFile(t, dir, "episodes/2026-02.md"), "## entry 2")
			require.Contains(t, readFile(t, dir, firstSegment("episodes/2026-02.md")), memory.Version(readFile(t, dir, "episodes/2026-02.md")))
		default:
			if folder == "facts" {
				_, err := s.Read(ctx, "facts/user.md")
				require.ErrorIs(t, err, memory.ErrNotFound, "the facts are read in the new folder")
			}
			text := "- Lives in Paris, moved from " + folder + "\n"
			require.NoError(t, s.Write(ctx, "facts/user.md", text))
			got, err := s.Read(ctx, "facts/user.md")
			require.NoError(t, err)
			require.Contains(t, got, text)
			require.Contains(t, readFile(t, dir, "facts/user.md"), text)
			require.Contains(t, readFile(t, dir, firstSegment("facts/user.md")), memory.Version(got))
		}
		require.Equal(t, before, tree(t, old), "nothing was written in %s once it was moved away", folder)
	}
}

// TestDirKeptFolderRemoved: a folder the Dir used, then removed with all
// it held, is made anew by the next change, which succeeds; so is the
// folder of its log.
func TestDirKeptFolderRemoved(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "memory")
	s := openKeep(t, dir)
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(1), ""))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "episodes")))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(2), ""))
	got := readFile(t, dir, "episodes/2026-02.md")
	require.Contains(t, got, "## entry 2")
	require.NotContains(t, got, "## entry 1")

	require.NoError(t, os.RemoveAll(filepath.Join(dir, ".history", "episodes")))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(3), ""))
	require.Contains(t, readFile(t, dir, firstSegment("episodes/2026-02.md")), memory.Version(readFile(t, dir, "episodes/2026-02.md")))

	require.NoError(t, os.RemoveAll(filepath.Join(dir, ".history")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "episodes")))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(4), ""))
	require.Contains(t, readFile(t, dir, "episodes/2026-02.md"), "## entry 4")
	require.FileExists(t, filepath.Join(dir, firstSegment("episodes/2026-02.md")))
}

// TestDirKeptFolderLinked: a folder the Dir used, then swapped for a link
// by a person (to a folder inside the root, or out of it), or the folder
// of its log so swapped: the next change does what it does on a Dir that
// never used the folder, link rules and all. The folder swapped out is
// moved to where the link leads, or beside it, so that a change made in
// the folder kept would show.
func TestDirKeptFolderLinked(t *testing.T) {
	ctx := context.Background()
	type swap struct {
		name   string
		folder string // the folder a link takes the place of
		inside bool   // the link leads to a folder inside the root (a copy), else out of it (the folder itself)
		change func(s *memory.Store) error
	}
	appendMonth := func(s *memory.Store) error { return s.Append(ctx, "episodes/2026-02.md", keptEntry(2), "") }
	writeFacts := func(s *memory.Store) error { return s.Write(ctx, "facts/user.md", "- Lives in Paris\n") }
	swaps := []swap{
		{"episodes inside", "episodes", true, appendMonth},
		{"episodes outside", "episodes", false, appendMonth},
		{"facts inside", "facts", true, writeFacts},
		{"facts outside", "facts", false, writeFacts},
		{"month log folder inside", ".history/episodes", true, appendMonth},
		{"month log folder outside", ".history/episodes", false, appendMonth},
		{"facts log folder inside", ".history/facts", true, writeFacts},
		{"facts log folder outside", ".history/facts", false, writeFacts},
	}
	type outcome struct {
		err             error
		invalid         bool
		memory, outside map[string]string
		moved           map[string]string
	}
	run := func(t *testing.T, sw swap, kept bool) outcome {
		base := t.TempDir()
		dir, outside, moved := filepath.Join(base, "memory"), filepath.Join(base, "outside"), filepath.Join(base, "moved")
		require.NoError(t, os.Mkdir(outside, 0o700))
		s, err := memory.Open(dir, keepOpts())
		require.NoError(t, err)
		defer func() { s.Close() }()
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(1), ""))
		require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Berlin\n"))
		_, err = s.Read(ctx, "facts/user.md")
		require.NoError(t, err)
		if !kept {
			require.NoError(t, s.Close())
		}
		at := filepath.Join(dir, filepath.FromSlash(sw.folder))
		if sw.inside {
			// The link leads to a copy beside the folder; the folder
			// itself goes out of the root.
			copyDir := filepath.Join(filepath.Dir(at), "real")
			require.NoError(t, os.Mkdir(copyDir, 0o700))
			for name, data := range tree(t, at) {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(copyDir, name)), 0o700)) // a log's segments are in a folder of their own
				require.NoError(t, os.WriteFile(filepath.Join(copyDir, name), []byte(data), 0o600))
			}
			require.NoError(t, os.Rename(at, moved))
			require.NoError(t, os.Symlink("real", at))
		} else {
			require.NoError(t, os.Rename(at, filepath.Join(outside, "folder")))
			require.NoError(t, os.Symlink(filepath.Join(outside, "folder"), at))
		}
		if !kept {
			s, err = memory.Open(dir, keepOpts())
			require.NoError(t, err)
		}
		err = sw.change(s)
		// The links name base, which differs from one run to the other.
		rel := func(files map[string]string) map[string]string {
			for name, data := range files {
				files[name] = strings.ReplaceAll(data, base, "<base>")
			}
			return files
		}
		o := outcome{err: err, invalid: errors.Is(err, memory.ErrInvalidPath), memory: rel(tree(t, dir)), outside: rel(tree(t, outside))}
		if sw.inside {
			o.moved = tree(t, moved)
		}
		return o
	}
	for _, sw := range swaps {
		t.Run(sw.name, func(t *testing.T) {
			kept, fresh := run(t, sw, true), run(t, sw, false)
			t.Logf("the change: %v", kept.err)
			require.Equal(t, fresh.err == nil, kept.err == nil, "kept %v, fresh %v", kept.err, fresh.err)
			require.Equal(t, fresh.invalid, kept.invalid, "kept %v, fresh %v", kept.err, fresh.err)
			require.Equal(t, fresh.memory, kept.memory, "the memory directory as a fresh Dir leaves it")
			require.Equal(t, fresh.outside, kept.outside, "outside the root as a fresh Dir leaves it")
			require.Equal(t, fresh.moved, kept.moved, "the folder moved away as a fresh Dir leaves it")
		})
	}
}

// openFDs counts the files this process has open, on Linux; -1 elsewhere.
func openFDs(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	des, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(des)
}

// TestDirKeepsManyFolders: a Dir that uses many more folders than it keeps
// open reads and writes each as it should, folders moved and made anew
// among them, keeps a bounded number open, and leaves none open once
// closed.
func TestDirKeepsManyFolders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	before := openFDs(t)
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	const n = 150
	name := func(i int) string { return fmt.Sprintf("f%03d/sub/a.md", i) }
	for round := range 3 {
		for i := range n {
			want := fmt.Sprintf("file %d, round %d\n", i, round)
			c, err := d.Read(ctx, name(i), -1)
			match := ""
			if err == nil {
				match = c.Version
			} else {
				require.ErrorIs(t, err, fs.ErrNotExist)
			}
			_, err = put(ctx, d, name(i), []byte(want), match)
			require.NoError(t, err)
			c, err = d.Read(ctx, name(i), -1)
			require.NoError(t, err)
			require.Equal(t, want, string(c.Data))
		}
		// A person moves every third folder away and makes it anew.
		for i := 0; i < n; i += 3 {
			p := filepath.Join(dir, fmt.Sprintf("f%03d", i))
			require.NoError(t, os.Rename(p, p+".old"))
			require.NoError(t, os.MkdirAll(filepath.Join(p, "sub"), 0o700))
		}
		for i := range n {
			c, err := d.Read(ctx, name(i), -1)
			if i%3 == 0 {
				require.ErrorIs(t, err, fs.ErrNotExist, "%s is read in the new folder", name(i))
				require.NoError(t, os.RemoveAll(filepath.Join(dir, fmt.Sprintf("f%03d.old", i))))
				continue
			}
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("file %d, round %d\n", i, round), string(c.Data))
		}
		if before >= 0 {
			require.LessOrEqual(t, openFDs(t), before+64+8, "the folders kept open are bounded")
		}
	}
	require.NoError(t, d.Close())
	require.Equal(t, before, openFDs(t), "a closed Dir leaves no file open (counted on Linux)")
}

// TestDirSeenVersionSameSizeEdit: a file a person rewrote in place with as
// many bytes after the Dir read it, its modification time set back, has
// another change time: it is not at the version read, and a change at that
// version is refused, through the Dir and through the Store.
func TestDirSeenVersionSameSizeEdit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, dir, "facts/user.md", "- Name: Zhang San\n")
	p := filepath.Join(dir, "facts", "user.md")
	// editInPlace writes text over the file, as long as it, and sets its
	// modification time back: only its change time tells.
	editInPlace := func(text string) {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, fi.Size(), int64(len(text)))
		// The change time moves in the system's steps (a few
		// milliseconds): the edit comes a step after the read's stamp.
		time.Sleep(30 * time.Millisecond)
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte(text), 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		after, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, fi.ModTime(), after.ModTime())
		require.Equal(t, fi.Size(), after.Size())
	}

	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	c, err := d.Read(ctx, "facts/user.md", -1)
	require.NoError(t, err)
	editInPlace("- Name: Wang Wu!\n\n")
	_, err = put(ctx, d, "facts/user.md", []byte("- Name: Li Si\n"), c.Version)
	require.ErrorIs(t, err, memory.ErrChanged, "the Dir answered the version read before the edit")
	require.Equal(t, "- Name: Wang Wu!\n\n", readFile(t, dir, "facts/user.md"))

	// Through a Store: the edit comes between the Store's read under the
	// lock and its write, as a person's editor can.
	text := "# User\n\n> Summary: who\n\n- Name: Zhang San\n"
	_, err = put(ctx, d, "facts/user.md", []byte(text), memory.Version("- Name: Wang Wu!\n\n"))
	require.NoError(t, err)
	var edits atomic.Int32
	hb := &hookedDir{Dir: d, write: func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
		if name == "facts/user.md" && edits.Add(1) == 1 {
			editInPlace(strings.Replace(text, "Zhang San", "Zhang Sam", 1))
		}
		return h.Write(ctx, name, data, match)
	}}
	s, err := memory.OpenBackend(hb, keepOpts())
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Equal(t, text, got)
	err = s.WriteIf(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Name: Li Si\n", memory.Version(got))
	require.ErrorIs(t, err, memory.ErrConflict)
	require.Contains(t, readFile(t, dir, "facts/user.md"), "Zhang Sam", "the person's edit is kept")
}

// hookedDir is a Dir whose locks' writes of files go through write.
type hookedDir struct {
	*memory.Dir
	write backendtestWriteHook
}

type backendtestWriteHook = func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error)

func (d *hookedDir) Lock(ctx context.Context, name string) (memory.Held, error) {
	h, err := d.Dir.Lock(ctx, name)
	return hook(h, err, d.write)
}

// appender is a held lock that appends, as a Dir's does.
type appender interface {
	Size(ctx context.Context, name string) (int64, error)
	Append(ctx context.Context, name string, data []byte, sync bool) error
}

// TestDirHeldLogBeforeChange: the record of a change is in its log, as
// another program reads it, before the change's file is renamed in place.
func TestDirHeldLogBeforeChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	var checked atomic.Int32
	hb := &hookedDir{Dir: d, write: func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
		if name == "facts/user.md" {
			log, err := os.ReadFile(filepath.Join(dir, firstSegment("facts/user.md")))
			require.NoError(t, err)
			require.Contains(t, string(log), memory.Version(string(data)), "the record is in the log before the change")
			require.NotEqual(t, string(data), readFileOr(dir, "facts/user.md"))
			checked.Add(1)
		}
		return h.Write(ctx, name, data, match)
	}}
	s, err := memory.OpenBackend(hb, keepOpts())
	require.NoError(t, err)
	defer s.Close()
	for i := range 5 {
		require.NoError(t, s.Write(ctx, "facts/user.md", fmt.Sprintf("- Fact %d of the user\n", i)))
	}
	require.EqualValues(t, 5, checked.Load())

	// Through the lock: an append made durable with the next change, and
	// at Unlock when none comes.
	h, err := d.Lock(ctx, "")
	require.NoError(t, err)
	a := h.(appender)
	require.NoError(t, a.Append(ctx, "notes/a.log", []byte("one\n"), true))
	require.Equal(t, "one\n", readFile(t, dir, "notes/a.log"), "another program reads the append at once")
	size, err := a.Size(ctx, "notes/a.log")
	require.NoError(t, err)
	require.EqualValues(t, 4, size)
	_, err = h.Write(ctx, "notes/b.md", []byte("b\n"), "")
	require.NoError(t, err)
	require.NoError(t, a.Append(ctx, "notes/a.log", []byte("two"), true))
	require.NoError(t, a.Append(ctx, "notes/a.log", []byte("three\n"), false))
	h.Unlock()
	require.Equal(t, "one\ntwo\nthree\n", readFile(t, dir, "notes/a.log"), "a line cut short gets a newline after it")
	_, err = a.Size(ctx, "notes/none.log")
	require.ErrorContains(t, err, "lock was released")
}

// TestDirHeldAfterUnlock: a lock released appends nothing, nor opens a
// log, and the logs it appended to are closed.
func TestDirHeldAfterUnlock(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	before := openFDs(t)
	d, err := memory.OpenDir(dir, 0)
	require.NoError(t, err)
	defer d.Close()
	h, err := d.Lock(ctx, "")
	require.NoError(t, err)
	a := h.(appender)
	require.NoError(t, a.Append(ctx, "logs/a.log", []byte("one\n"), true))
	_, err = a.Size(ctx, "logs/a.log")
	require.NoError(t, err)
	require.NoError(t, a.Append(ctx, "logs/d.log", []byte("one\n"), false))
	h.Unlock()
	require.Error(t, a.Append(ctx, "logs/a.log", []byte("two\n"), true))
	require.Error(t, a.Append(ctx, "logs/b.log", []byte("two\n"), false))
	_, err = a.Size(ctx, "logs/a.log")
	require.Error(t, err)
	_, err = h.Write(ctx, "logs/c.md", []byte("c\n"), "")
	require.Error(t, err)
	require.Equal(t, "one\n", readFile(t, dir, "logs/a.log"))
	require.NoFileExists(t, filepath.Join(dir, "logs", "b.log"))
	h.Unlock() // a second Unlock does nothing
	require.NoError(t, d.Close())
	require.Equal(t, before, openFDs(t), "the logs a lock appended to are closed (counted on Linux)")
}

// TestDirHeldLogReplaced: a log a person replaced between two changes (an
// editor that saves a new file in its place) gets the next change's
// record; the file it replaced, kept by another name, gets nothing more.
func TestDirHeldLogReplaced(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "memory")
	s := openKeep(t, dir)
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Berlin\n"))
	log := filepath.Join(dir, firstSegment("facts/user.md"))
	orphan := filepath.Join(base, "orphan.log")
	require.NoError(t, os.Link(log, orphan))
	was, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(log+".new", was, 0o600))
	require.NoError(t, os.Rename(log+".new", log))

	require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Paris\n"))
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	now, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(now), memory.Version(got), "the log in place has the record")
	left, err := os.ReadFile(orphan)
	require.NoError(t, err)
	require.Equal(t, string(was), string(left), "the file replaced got nothing")
	require.Len(t, history(t, s, "facts/user.md", nil), 2)

	// Through one Dir's locks, one after the other.
	d, err := memory.OpenDir(filepath.Join(base, "plain"), 0)
	require.NoError(t, err)
	defer d.Close()
	h, err := d.Lock(ctx, "")
	require.NoError(t, err)
	require.NoError(t, h.(appender).Append(ctx, "logs/a.log", []byte("one\n"), true))
	h.Unlock()
	p := filepath.Join(base, "plain", "logs", "a.log")
	require.NoError(t, os.Rename(p, filepath.Join(base, "plain-old.log")))
	require.NoError(t, os.WriteFile(p, []byte("new\n"), 0o600))
	h, err = d.Lock(ctx, "")
	require.NoError(t, err)
	require.NoError(t, h.(appender).Append(ctx, "logs/a.log", []byte("two\n"), true))
	h.Unlock()
	require.Equal(t, "new\ntwo\n", readFile(t, filepath.Join(base, "plain"), "logs/a.log"))
	require.Equal(t, "one\n", readFile(t, base, "plain-old.log"))
}

// TestDirHeldLogNotRegular: a log that a person made a link (even one down
// its folder) or a FIFO, after the lock appended to it before, is refused:
// the change fails, without waiting, and the link's target is untouched.
func TestDirHeldLogNotRegular(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"link", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "memory")
			s := openKeep(t, dir)
			require.NoError(t, s.Write(ctx, "facts/user.md", "- Lives in Berlin\n"))
			log := filepath.Join(dir, firstSegment("facts/user.md"))
			target := filepath.Join(dir, ".history", "facts", "target")
			require.NoError(t, os.Rename(log, target))
			was := readFile(t, dir, ".history/facts/target")
			if kind == "link" {
				require.NoError(t, os.Symlink("target", log))
			} else {
				require.NoError(t, syscall.Mkfifo(log, 0o600))
			}
			done := make(chan error, 1)
			go func() { done <- s.Write(ctx, "facts/user.md", "- Lives in Paris\n") }()
			select {
			case err := <-done:
				require.ErrorContains(t, err, "not a regular file")
			case <-time.After(time.Minute):
				t.Fatal("the change waits on the log")
			}
			require.Equal(t, was, readFile(t, dir, ".history/facts/target"))
			require.Contains(t, readFile(t, dir, "facts/user.md"), "Berlin", "the change was not made")

			// Through the locks of a Dir: the log appended to under one
			// lock, then swapped, is refused under the next.
			plain := filepath.Join(t.TempDir(), "plain")
			d, err := memory.OpenDir(plain, 0)
			require.NoError(t, err)
			defer d.Close()
			h, err := d.Lock(ctx, "")
			require.NoError(t, err)
			require.NoError(t, h.(appender).Append(ctx, "logs/a.log", []byte("one\n"), true))
			h.Unlock()
			p := filepath.Join(plain, "logs", "a.log")
			require.NoError(t, os.Rename(p, filepath.Join(plain, "logs", "target")))
			if kind == "link" {
				require.NoError(t, os.Symlink("target", p))
			} else {
				require.NoError(t, syscall.Mkfifo(p, 0o600))
			}
			h, err = d.Lock(ctx, "")
			require.NoError(t, err)
			defer h.Unlock()
			_, err = h.(appender).Size(ctx, "logs/a.log")
			require.ErrorContains(t, err, "not a regular file")
			require.ErrorContains(t, h.(appender).Append(ctx, "logs/a.log", []byte("two\n"), true), "not a regular file")
			require.Equal(t, "one\n", readFile(t, plain, "logs/target"))
		})
	}
}

// TestDirKeptFolderConcurrent: reads and changes through one Store while a
// person renames a folder away and back, over and over: nothing fails
// but for the folder missing, and every read is a whole file written.
func TestDirKeptFolderConcurrent(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "memory")
	s := openKeep(t, dir)
	texts := make([]string, 6)
	for i := range texts {
		texts[i] = factVersion(i, 400+40*i)
	}
	require.NoError(t, s.Write(ctx, "facts/user.md", texts[0]))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", keptEntry(0), ""))

	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, writes atomic.Int64
	errs := make(chan error, 100)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	for _, folder := range []string{"facts", "episodes", ".history/facts"} {
		wg.Go(func() {
			p := filepath.Join(dir, filepath.FromSlash(folder))
			away := filepath.Join(base, strings.ReplaceAll(folder, "/", "-")+".away")
			for !stop.Load() {
				if os.Rename(p, away) == nil {
					runtime.Gosched()
					if os.Rename(away, p) != nil {
						os.RemoveAll(away) // made anew meanwhile
					}
				}
			}
		})
	}
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Go(func() {
			for i := range 60 {
				switch (w + i) % 4 {
				case 0:
					if s.Write(ctx, "facts/user.md", texts[(w+i)%len(texts)]) == nil {
						writes.Add(1)
					}
				case 1:
					if s.Append(ctx, "episodes/2026-02.md", keptEntry(100*w+i), "") == nil {
						writes.Add(1)
					}
				default:
					got, err := s.Read(ctx, "facts/user.md")
					if err == nil {
						reads.Add(1)
						if !slices.Contains(texts, got) {
							fail(fmt.Errorf("a read of %d bytes is no whole file written", len(got)))
						}
					}
					if got, err := s.Read(ctx, "episodes/2026-02.md"); err == nil && !strings.HasSuffix(got, "of the month\n") {
						fail(fmt.Errorf("a month read cut short: %q", got[max(0, len(got)-40):]))
					}
				}
			}
		})
	}
	workers.Wait()
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Positive(t, reads.Load())
	require.Positive(t, writes.Load())
	// Quiet again, every change lands where it should.
	for _, folder := range []string{"facts", "episodes", ".history/facts"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(folder)), 0o700))
	}
	require.NoError(t, s.Write(ctx, "facts/user.md", texts[5]))
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Equal(t, texts[5], got)
	require.Equal(t, texts[5], readFile(t, dir, "facts/user.md"))
}
