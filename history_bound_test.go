package memory_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// percentMonth is a month's file of about size bytes whose every line is
// new in version i and full of '%', which a delta writes as three bytes.
func percentMonth(i, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# 2026-02 Episodes\n\n> Summary: version %d\n\n## Entry %d\n- Date: 2026-02-01\n", i, i)
	for n := 0; b.Len() < size; n++ {
		fmt.Fprintf(&b, "- %d.%d %s\n", i, n, strings.Repeat("%", 70))
	}
	return b.String()
}

// historyBytes is the size of every log under dir's .history/.
func historyBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(filepath.Join(dir, ".history"), func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	require.NoError(t, err)
	return n
}

// TestHistoryBoundedAsMade: writes of a month full of '%' (each record
// about three times the file's size), each through a fresh Store as a
// command makes them, keep the logs within the bound at every write, and
// every write is recorded and can be read back and restored; so do many
// writes through one Store.
func TestHistoryBoundedAsMade(t *testing.T) {
	ctx := context.Background()
	const bound = 2 << 20 // MaxBytes; each record is about 400 KB
	const size = 128 << 10
	opts := &memory.Options{Now: feb26, History: memory.HistoryPolicy{MaxBytes: bound}}
	check := func(t *testing.T, s *memory.Store, dir string, versions []string) {
		t.Helper()
		require.LessOrEqual(t, historyBytes(t, dir), int64(bound), "the logs within their bound after write %d", len(versions))
		h, err := s.History(ctx, "episodes/2026-02.md", nil)
		require.NoError(t, err)
		require.NotEmpty(t, h)
		require.Equal(t, versions[len(versions)-1], h[0].New, "write %d recorded", len(versions))
		got, err := s.ReadVersion(ctx, "episodes/2026-02.md", h[0].New)
		require.NoError(t, err)
		require.Equal(t, percentMonth(len(versions)-1, size), got)
	}
	t.Run("a fresh Store each write", func(t *testing.T) {
		_, dir := open(t, opts)
		var versions []string
		for i := range 10 {
			s, err := memory.Open(dir, opts)
			require.NoError(t, err)
			text := percentMonth(i, size)
			require.NoError(t, s.Write(ctx, "episodes/2026-02.md", text))
			versions = append(versions, memory.Version(text))
			check(t, s, dir, versions)
			require.NoError(t, s.Close())
		}
		s, err := memory.Open(dir, opts)
		require.NoError(t, err)
		defer s.Close()
		require.NoError(t, s.Restore(ctx, "episodes/2026-02.md", versions[len(versions)-2]))
		require.Equal(t, percentMonth(len(versions)-2, size), readFile(t, dir, "episodes/2026-02.md"))
	})
	t.Run("one Store", func(t *testing.T) {
		s, dir := open(t, opts)
		var versions []string
		for i := range 10 {
			text := percentMonth(i, size)
			require.NoError(t, s.Write(ctx, "episodes/2026-02.md", text))
			versions = append(versions, memory.Version(text))
			check(t, s, dir, versions)
		}
	})
	t.Run("a log of the earlier layout over the bound", func(t *testing.T) {
		// One log file beside the segments' folder, as the library wrote
		// it before the segments, that a bug made larger than the library
		// reads: the next change is recorded, in a segment, and prunes it.
		s, dir := open(t, opts)
		var versions []string
		for i := range 3 {
			text := percentMonth(i, size)
			require.NoError(t, s.Write(ctx, "episodes/2026-02.md", text))
			versions = append(versions, memory.Version(text))
		}
		require.NoError(t, s.Close())
		one, err := os.ReadFile(filepath.Join(dir, firstSegment("episodes/2026-02.md")))
		require.NoError(t, err)
		require.NoError(t, os.RemoveAll(filepath.Join(dir, ".history", "episodes", "2026-02.md")))
		f, err := os.Create(filepath.Join(dir, ".history", "episodes", "2026-02.md.log"))
		require.NoError(t, err)
		for written := 0; written < 65<<20; written += len(one) {
			_, err := f.Write(one)
			require.NoError(t, err)
		}
		require.NoError(t, f.Close())
		s, err = memory.Open(dir, opts)
		require.NoError(t, err)
		defer s.Close()
		// Its versions went with it: the first change after it is the
		// base of the log, and the next one is listed from it.
		for i := 3; i < 5; i++ {
			text := percentMonth(i, size)
			require.NoError(t, s.Write(ctx, "episodes/2026-02.md", text))
			versions = append(versions, memory.Version(text))
		}
		check(t, s, dir, versions)
		h, err := s.History(ctx, "episodes/2026-02.md", nil)
		require.NoError(t, err)
		require.Equal(t, versions[3], h[0].Old)
		got, err := s.ReadVersion(ctx, "episodes/2026-02.md", versions[3])
		require.NoError(t, err)
		require.Equal(t, percentMonth(3, size), got)
	})
	t.Run("a log of the earlier layout", func(t *testing.T) {
		// A memory folder's history from before the segments is kept:
		// read, and the changes after it recorded after it.
		s, dir := open(t, &memory.Options{Now: feb26})
		texts := []string{"# User\n\n> Summary: one\n\n- Name: Zhang San\n", "# User\n\n> Summary: two\n\n- Name: Zhang San\n- City: Hangzhou\n"}
		for _, text := range texts {
			require.NoError(t, s.Write(ctx, "facts/user.md", text))
		}
		require.NoError(t, s.Close())
		require.NoError(t, os.Rename(filepath.Join(dir, firstSegment("facts/user.md")), filepath.Join(dir, ".history", "facts", "user.md.log")))
		require.NoError(t, os.Remove(filepath.Join(dir, ".history", "facts", "user.md")))
		s, err := memory.Open(dir, &memory.Options{Now: feb26})
		require.NoError(t, err)
		defer s.Close()
		texts = append(texts, "# User\n\n> Summary: three\n\n- Name: Zhang San\n- City: Beijing\n")
		require.NoError(t, s.Write(ctx, "facts/user.md", texts[2]))
		h, err := s.History(ctx, "facts/user.md", nil)
		require.NoError(t, err)
		require.Len(t, h, 3)
		for i, c := range h {
			require.Equal(t, memory.Version(texts[2-i]), c.New)
			got, err := s.ReadVersion(ctx, "facts/user.md", c.New)
			require.NoError(t, err)
			require.Equal(t, texts[2-i], got)
		}
		require.Empty(t, h[2].Old, "the first change created it")
		require.FileExists(t, filepath.Join(dir, firstSegment("facts/user.md")), "the new change in a segment")
	})
}

// TestHistorySegmentsRewritten: on a backend that cannot append (each
// change rewrites the last segment, as on S3), a log of many segments is
// found by its summary through a fresh Store, which falls back to the
// listing when the summary is behind, malformed or missing, and pruned
// whole segments at a time within a small bound; every change is listed
// once, from the version the one before made, and reads back.
func TestHistorySegmentsRewritten(t *testing.T) {
	ctx := context.Background()
	m := newMemBackend()
	opts := &memory.Options{Now: feb26, History: memory.HistoryPolicy{MaxBytes: 64 << 10}}
	fresh := func() *memory.Store {
		s, err := memory.OpenBackend(m, opts)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	const path = "facts/user.md"
	text := func(i int) string {
		return fmt.Sprintf("# User\n\n> Summary: version %d\n\n%s- Counter: %d\n", i, strings.Repeat(fmt.Sprintf("- a fact line of version %d, some fifty bytes\n", i), 20), i)
	}
	const last = ".history/" + path + "/.last"
	s := fresh()
	n := 0
	write := func(s *memory.Store) {
		t.Helper()
		require.NoError(t, s.Write(ctx, path, text(n)))
		n++
	}
	for range 60 {
		write(s)
	}
	summary, err := m.Read(ctx, last, -1)
	require.NoError(t, err, "a log of several segments has its summary")
	require.NotEqual(t, "1", strings.Fields(string(summary.Data))[0])
	for _, bad := range []string{"1 1 0 - 1\n", "not a summary\n", ""} {
		h, err := m.Lock(ctx, last)
		require.NoError(t, err)
		if bad == "" {
			require.NoError(t, h.Remove(ctx, last, memory.Version(string(m.files[last]))))
		} else {
			_, err = h.Write(ctx, last, []byte(bad), memory.Version(string(m.files[last])))
			require.NoError(t, err)
		}
		for range 3 {
			write(fresh())
		}
	}
	for range 40 {
		write(fresh())
	}
	var logBytes int64
	entries, err := m.List(ctx, ".history")
	require.NoError(t, err)
	for _, e := range entries {
		logBytes += e.Size
	}
	require.LessOrEqual(t, logBytes, int64(64<<10+8<<10), "the log within its bound, but for the summary and the last segment's records")
	h, err := fresh().History(ctx, path, nil)
	require.NoError(t, err)
	require.Greater(t, len(h), 5)
	require.Equal(t, memory.Version(text(n-1)), h[0].New)
	for i, c := range h {
		if i > 0 {
			require.Equal(t, h[i-1].Old, c.New, "each change from the version the one before made")
		}
		require.False(t, c.Pending)
		for _, v := range []string{c.Old, c.New} {
			got, err := s.ReadVersion(ctx, path, v)
			require.NoError(t, err)
			require.Equal(t, v, memory.Version(got))
		}
	}
}

// TestReadVersionNewestSegments: ReadVersion reads a log from its newest
// segment back and stops at the first that rebuilds the version: a recent
// version reads back though an old segment cannot be read at all.
func TestReadVersionNewestSegments(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{Now: feb26})
	leavesBroken(t, "an old segment of the log is a link to itself")
	var versions []string
	for i := range 60 {
		text := factVersion(i, 3000)
		require.NoError(t, s.Write(ctx, "facts/user.md", text))
		versions = append(versions, memory.Version(text))
	}
	first := filepath.Join(dir, firstSegment("facts/user.md"))
	_, err := os.Stat(filepath.Join(filepath.Dir(first), "00000003.log"))
	require.NoError(t, err, "the log has several segments")
	require.NoError(t, os.Remove(first))
	require.NoError(t, os.Symlink("00000001.log", first))
	got, err := s.ReadVersion(ctx, "facts/user.md", versions[58])
	require.NoError(t, err)
	require.Equal(t, factVersion(58, 3000), got)
	_, err = s.ReadVersion(ctx, "facts/user.md", versions[0])
	require.Error(t, err, "the oldest version was in the segment that cannot be read")
}

// TestHistoryPartsTakeNoShare: a month of many sealed parts has a log for
// each, the one record of its seal; they take no share of the bound, so
// that the month's own log keeps its versions (before, each part's log
// took a share as large as the month's, which 20 parts made a twenty-first
// of the bound: about 50 versions of the month kept, and the log pruned
// every few dozen appends).
func TestHistoryPartsTakeNoShare(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{Now: feb26, History: memory.HistoryPolicy{MaxBytes: 1 << 20}})
	n := 0
	for ; ; n++ {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", busyEntry(n), ""))
		if _, err := os.Stat(filepath.Join(dir, "episodes", "2026-02.020.md")); err == nil {
			break
		}
	}
	h, err := s.History(ctx, "episodes/2026-02.md", nil)
	require.NoError(t, err)
	require.Greater(t, len(h), n*3/4, "the month's log keeps its versions: %d appends, %d kept", n+1, len(h))
	require.LessOrEqual(t, historyBytes(t, dir), int64(1<<20+21*20<<10), "the logs within the bound, but for the parts' logs")
}

// TestHistorySummaryCountIsAHint: a log's summary (.last) that says a
// billion logs share the bound does not make a fresh Store's share of it
// nothing: its next change keeps the history (before, the share was 0 and
// the change removed every segment but its own).
func TestHistorySummaryCountIsAHint(t *testing.T) {
	ctx := context.Background()
	m := newMemBackend()
	opts := &memory.Options{Now: feb26}
	fresh := func() *memory.Store {
		s, err := memory.OpenBackend(m, opts)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	const path, last = "facts/user.md", ".history/facts/user.md/.last"
	text := func(i int) string {
		return fmt.Sprintf("# User\n\n> Summary: version %d\n\n%s- Counter: %d\n", i, strings.Repeat(fmt.Sprintf("- a fact line of version %d, some fifty bytes\n", i), 20), i)
	}
	s := fresh()
	for i := range 200 {
		require.NoError(t, s.Write(ctx, path, text(i)))
	}
	before, err := fresh().History(ctx, path, nil)
	require.NoError(t, err)
	count := func(logs string) {
		t.Helper()
		sum, err := m.Read(ctx, last, -1)
		require.NoError(t, err, "a log of several segments has its summary")
		f := strings.Fields(string(sum.Data))
		require.Len(t, f, 5)
		f[4] = logs
		h, err := m.Lock(ctx, last)
		require.NoError(t, err)
		_, err = h.Write(ctx, last, []byte(strings.Join(f, " ")+"\n"), sum.Version)
		require.NoError(t, err)
		h.Unlock()
	}
	count("1000000000")
	require.NoError(t, fresh().Write(ctx, path, text(200)))
	after, err := fresh().History(ctx, path, nil)
	require.NoError(t, err)
	require.Greater(t, len(after), len(before)/2, "the history kept: %d changes before, %d after", len(before), len(after))
	// A count a store may hold, 4,096 logs, makes the share about 16 KB,
	// some ten versions of this file: the log is pruned to its share, the
	// bound of all logs coming first, and keeps the current version.
	count("4096")
	require.NoError(t, fresh().Write(ctx, path, text(201)))
	after, err = fresh().History(ctx, path, nil)
	require.NoError(t, err)
	require.NotEmpty(t, after, "the current version's segment is kept")
	require.Less(t, len(after), 100, "the log pruned to its share")
	got, err := fresh().ReadVersion(ctx, path, after[0].New)
	require.NoError(t, err)
	require.Equal(t, text(201), string(got))
}

// TestHistorySegmentNumberCeiling: a segment numbered 99,999,999 placed in
// a log's folder is no segment of it: the log goes on from its own last
// segment, and every change is recorded and listed (before, the next
// segment was 100000000.log, nine digits, which no listing saw: the
// changes were shown as made outside, and the log grew without bound). A
// log whose last segment is the last number a segment may have takes no
// change, with an error saying why, rather than one unrecorded.
func TestHistorySegmentNumberCeiling(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := memory.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: v\n\n- Counter: 0\n"))
	logDir := filepath.Join(dir, ".history", "facts", "user.md")
	b, err := os.ReadFile(filepath.Join(logDir, "00000001.log"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(logDir, "99999999.log"), b, 0o600))
	s2, err := memory.Open(dir, nil)
	require.NoError(t, err)
	defer s2.Close()
	for i := 1; i < 60; i++ {
		require.NoError(t, s2.Write(ctx, "facts/user.md", fmt.Sprintf("# User\n\n> Summary: v\n\n- Counter: %d %s\n", i, strings.Repeat(fmt.Sprint(i%10), 12000))))
	}
	h, err := s2.History(ctx, "facts/user.md", nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(h), 50)
	require.False(t, h[0].Pending)
	_, err = os.Stat(filepath.Join(logDir, "100000000.log"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	all, err := s2.History(ctx, "", nil)
	require.NoError(t, err)
	for _, c := range all {
		require.Equal(t, "facts/user.md", c.Path, "no log of a made-up file")
	}

	// One just below: the next segment would be past the last number.
	entries, err := os.ReadDir(logDir)
	require.NoError(t, err)
	var last string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") && e.Name() != "99999999.log" {
			last = e.Name()
		}
	}
	b, err = os.ReadFile(filepath.Join(logDir, last))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(logDir, "99999998.log"), b, 0o600))
	s3, err := memory.Open(dir, nil)
	require.NoError(t, err)
	defer s3.Close()
	before, err := s3.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	for i := range 20 {
		err = s3.Write(ctx, "facts/user.md", fmt.Sprintf("# User\n\n> Summary: v\n\n- Counter: %d %s\n", 100+i, strings.Repeat(string(rune('a'+i)), 12000)))
		if err != nil {
			break
		}
		before, err = s3.Read(ctx, "facts/user.md")
		require.NoError(t, err)
	}
	require.Error(t, err, "the log cannot start its next segment")
	require.Contains(t, err.Error(), "99999998")
	got, err := s3.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Equal(t, before, got, "the change refused is not made")
	h, err = s3.History(ctx, "facts/user.md", nil)
	require.NoError(t, err)
	require.False(t, h[0].Pending, "every change made is recorded")
	findings, err := s3.Check(ctx)
	require.NoError(t, err)
	var said []string
	for _, f := range findings {
		if strings.HasSuffix(f.Path, "99999998.log") || strings.HasSuffix(f.Path, "99999999.log") {
			said = append(said, f.Path+": "+f.Problem)
		}
	}
	require.Len(t, said, 2, "Check names both files: %q", said)
}
