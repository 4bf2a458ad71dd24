package memory_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// forgotten is the text the tests of Forget take out of memory.
const forgotten = "sister Beth's stay at the Leeds clinic"

// holding returns the files under dir, every one (hidden, temporary),
// that hold text.
func holding(t testing.TB, dir, text string) []string {
	t.Helper()
	var held []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(text)) {
			rel, _ := filepath.Rel(dir, p)
			held = append(held, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return held
}

// requireHistoryReads checks that every file's history answers, chains,
// and reads back every version it names.
func requireHistoryReads(t testing.TB, s *memory.Store, what string) {
	t.Helper()
	ctx := context.Background()
	all, err := s.History(ctx, "", nil)
	require.NoError(t, err, what)
	paths := map[string]bool{}
	for _, c := range all {
		paths[c.Path] = true
	}
	for p := range paths {
		changes, err := s.History(ctx, p, nil)
		require.NoError(t, err, what)
		for i, c := range changes {
			if i+1 < len(changes) {
				require.Equal(t, changes[i+1].New, c.Old, "%s: %s's history chains", what, p)
			}
			if c.New != "" && !c.Pending {
				_, err := s.ReadVersion(ctx, p, c.New)
				require.NoError(t, err, "%s: %s at %s", what, p, c.New)
			}
		}
	}
}

// TestForgetEverywhere forgets a text that every kind of file holds, and
// its history, and a crash's temporary file, and finds no byte of it left
// under the directory.
func TestForgetEverywhere(t *testing.T) {
	ctx := context.Background()
	world := filepath.Join(t.TempDir(), "world")
	wd, err := memory.OpenDir(world, 0)
	require.NoError(t, err)
	t.Cleanup(func() { wd.Close() })
	opts := &memory.Options{
		Embedder:  &conceptEmbedder{},
		World:     wd,
		FactFiles: []memory.FactFile{{Name: "user.md"}, {Name: "memory.md"}, {Name: "old.md"}},
	}
	s, dir := open(t, opts)
	leavesBroken(t, "facts/old.md and its log stay when the store no longer names the fact file")
	require.NoError(t, s.Write(ctx, "facts/old.md", "# Old\n\n> Summary: old\n\n- About "+forgotten+"\n"))
	require.NoError(t, s.Write(ctx, "facts/old.md", "# Old\n\n> Summary: old\n\n- Nothing\n- Else: "+forgotten+"\n"))
	require.NoError(t, s.Close())

	// facts/old.md is no fact file of this store: its log stays.
	opts.FactFiles = nil
	s = reopen(t, dir, opts)
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Family: "+forgotten+"\n"))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Likes: tea", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Call with mum\nAbout "+forgotten+".", ""))
	require.NoError(t, s.Append(ctx, "world/family.md", "- Beth: "+forgotten, ""))
	require.NoError(t, s.SetPersona(ctx, "# Persona\n\nKnows of "+forgotten+".\n", ""))
	writeFile(t, dir, "episodes/archive/2026-01.md", "# 2026-01 Episodes\n\n> Summary: January\n\n## Visit\n- Date: 2026-01-03\n- Details: "+forgotten+"\n")
	writeFile(t, dir, "facts/.user.md.tmp-1x2y3z", "left by a crash: "+forgotten)
	_, err = s.Search(ctx, "clinic visit", nil) // makes the cache of vectors
	require.NoError(t, err)
	require.NotEmpty(t, cacheFiles(t, dir))

	places, err := s.Locate(ctx, forgotten)
	require.NoError(t, err)
	now := map[string]bool{}
	for _, p := range places {
		if p.Version == "" {
			now[p.Path] = true
		}
	}
	require.Equal(t, map[string]bool{"facts/old.md": true, "facts/user.md": true, "episodes/2026-02.md": true, "world/family.md": true, "persona.md": true, "episodes/archive/2026-01.md": true}, now)

	n, err := s.Forget(ctx, forgotten)
	require.NoError(t, err)
	require.Equal(t, len(places), n)
	require.Empty(t, holding(t, dir, forgotten))
	require.Empty(t, holding(t, world, forgotten))
	require.Empty(t, holding(t, dir, "Leeds clinic"), "no part of it either")
	require.Empty(t, cacheFiles(t, dir), "the vectors were made of the text")

	persona, err := s.Persona(ctx)
	require.NoError(t, err)
	require.Equal(t, "# Persona\n\nKnows of .\n", persona)
	require.Equal(t, "# Old\n\n> Summary: old\n\n- Nothing\n- Else: \n", readFile(t, dir, "facts/old.md"), "a file of the folder no history keeps")
	user, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Contains(t, user, "\n- Family: \n- Likes: tea\n")
	requireHistoryReads(t, s, "after Forget")
	changes, err := s.History(ctx, "facts/user.md", nil)
	require.NoError(t, err)
	require.Equal(t, "forget", changes[0].Op)
	require.True(t, changes[1].Redacted)

	// Search works, and makes its cache again.
	_, err = s.Search(ctx, "tea", nil)
	require.NoError(t, err)
	require.NotEmpty(t, cacheFiles(t, dir))
}

func TestForgetRefuses(t *testing.T) {
	s, _ := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Name: Ada\n"))
	for _, c := range []struct{ name, text, says string }{
		{"empty", "", "fewer than 4"},
		{"short", "Ada", "fewer than 4"},
		{"white space around", " \n Ad \t", "fewer than 4"},
		{"not UTF-8", "Ada\xff", "UTF-8"},
		{"NUL", "Ada\x00x", "NUL"},
		{"too long", strings.Repeat("x", 1<<20+1), "more than a memory file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := s.Forget(ctx, c.text)
			require.ErrorIs(t, err, memory.ErrInvalidContent)
			require.Contains(t, err.Error(), c.says)
			require.Zero(t, n)
			_, err = s.Locate(ctx, c.text)
			require.ErrorIs(t, err, memory.ErrInvalidContent)
		})
	}
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Contains(t, got, "Ada")
}

// A forget is held to none of the rules of what a change adds: the fact
// guard would refuse the line it leaves, a duplicate of another.
func TestForgetKeepsNoRule(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: who\n\n- Likes: green tea\n- Likes: green tea "+forgotten+"\n")
	n, err := s.Forget(ctx, " "+forgotten)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	leavesBroken(t, "the forget leaves the fact twice, as the person's file had it")
}

// TestForgetKilled kills a process in the middle of Forget, at random
// moments, and checks what it leaves: every version the history names
// readable, and the text either gone or where Locate finds it, so that a
// second Forget takes it all out.
func TestForgetKilled(t *testing.T) {
	rounds := 10
	if *long {
		rounds = 60
	}
	ctx := context.Background()
	base := filepath.Join(t.TempDir(), "base")
	s, err := memory.Open(base, &memory.Options{Now: feb26})
	require.NoError(t, err)
	for i := range 80 {
		line := fmt.Sprintf("- Fact %d: plain", i)
		if i%7 == 0 {
			line = fmt.Sprintf("- Fact %d: %s", i, forgotten)
		}
		require.NoError(t, s.Append(ctx, []string{"facts/user.md", "facts/memory.md"}[i%2], line, ""))
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## Entry %d\n%s", i, line), ""))
	}
	require.NoError(t, s.Close())

	// started starts a worker forgetting in dir, and returns once it is
	// about to call Forget.
	started := func(dir string) *exec.Cmd {
		cmd := startWorker(t, "forget", dir, 0, 0)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		require.True(t, bufio.NewScanner(out).Scan(), "the worker starts")
		return cmd
	}
	// How long a whole Forget takes in a process of its own.
	cmd := started(copyDir(t, base))
	start := time.Now()
	require.NoError(t, cmd.Wait())
	whole := time.Since(start)
	t.Logf("a Forget in a process of its own: %v", whole)

	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	found, gone := 0, 0
	for k := range rounds {
		dir := copyDir(t, base)
		cmd := started(dir)
		for spin, d := time.Now(), time.Duration(rng.Int64N(int64(whole)*5/4)); time.Since(spin) < d; {
			runtime.Gosched()
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		s, err := memory.Open(dir, &memory.Options{Now: feb26})
		require.NoError(t, err, "kill %d", k)
		requireHistoryReads(t, s, fmt.Sprintf("kill %d", k))
		places, err := s.Locate(ctx, forgotten)
		require.NoError(t, err, "kill %d", k)
		if held := holding(t, dir, forgotten); len(held) > 0 {
			require.NotEmpty(t, places, "kill %d: %v hold the text, and Locate finds it nowhere", k, held)
			found++
		} else {
			require.Empty(t, places, "kill %d", k)
			gone++
		}
		_, err = s.Forget(ctx, forgotten)
		require.NoError(t, err, "kill %d", k)
		require.Empty(t, holding(t, dir, forgotten), "kill %d: after a second Forget", k)
		requireHistoryReads(t, s, fmt.Sprintf("kill %d, then Forget", k))
		require.NoError(t, s.Close())
	}
	t.Logf("%d rounds: the text found again after %d kills, gone after %d", rounds, found, gone)
}

// copyDir copies the directory src to a new one, and returns it.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "memory")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// BenchmarkForgetYear forgets a text from a year of history: 3,650
// changes (ten a day) of the fact files and the months, a few of them
// holding the text. Each round forgets from a fresh copy, made untimed.
func BenchmarkForgetYear(b *testing.B) {
	ctx := context.Background()
	base := filepath.Join(b.TempDir(), "base")
	day := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	now := day
	s, err := memory.Open(base, &memory.Options{Now: func() time.Time { return now }, History: memory.HistoryPolicy{MaxAge: 400 * 24 * time.Hour}})
	require.NoError(b, err)
	for i := range 3650 {
		now = day.Add(time.Duration(i) * 144 * time.Minute)
		text := fmt.Sprintf("note %d of the day", i)
		if i%500 == 0 {
			text += ": " + forgotten
		}
		switch i % 5 {
		case 0:
			require.NoError(b, s.Write(ctx, "facts/memory.md", fmt.Sprintf("# Memory\n\n> Summary: know-how\n\n- Last: %s\n- Count: %d\n", text, i)))
		case 1:
			require.NoError(b, s.Write(ctx, "facts/user.md", fmt.Sprintf("# User\n\n> Summary: who\n\n- Mood: %s\n", text)))
		default:
			require.NoError(b, s.Append(ctx, "episodes/"+now.Format("2006-01")+".md", fmt.Sprintf("## Entry %d\n- Date: %s\n- Details: %s", i, now.Format("2006-01-02"), text), ""))
		}
	}
	require.NoError(b, s.Close())
	changes := 0
	for b.Loop() {
		b.StopTimer()
		dir := copyDir(b, base)
		s, err := memory.Open(dir, &memory.Options{Now: func() time.Time { return now }})
		require.NoError(b, err)
		if changes == 0 {
			all, err := s.History(ctx, "", nil)
			require.NoError(b, err)
			changes = len(all)
		}
		b.StartTimer()
		n, err := s.Forget(ctx, forgotten)
		b.StopTimer()
		require.NoError(b, err)
		require.NotZero(b, n)
		require.NoError(b, s.Close())
		require.NoError(b, os.RemoveAll(dir))
		b.StartTimer()
	}
	b.ReportMetric(float64(changes), "changes")
}

// TestForgetFaults: a backend that fails makes Forget and Locate fail with
// its error, and a second Forget then finishes the work; a log write that
// loses a race is made again.
func TestForgetFaults(t *testing.T) {
	ctx := context.Background()
	f := newFaulty(t)
	s, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Family: "+forgotten+"\n"))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Likes: tea", ""))
	injected := errors.New("injected")
	for _, dir := range []string{"", ".history", ".cache"} {
		f.list = func(d string) error {
			if d == dir {
				return injected
			}
			return nil
		}
		_, err := s.Forget(ctx, forgotten)
		require.ErrorIs(t, err, injected, "listing %q", dir)
		if dir != ".cache" {
			_, err = s.Locate(ctx, forgotten)
			require.ErrorIs(t, err, injected, "listing %q", dir)
		}
	}
	f.list = nil
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: who\n\n- Family: "+forgotten+"\n"))

	// The file's write, then the log's, fail.
	for _, name := range []string{"facts/user.md", ".history/facts/user.md"} {
		f.write = func(n string, _ int) error {
			if n == name || strings.HasPrefix(n, name+"/") {
				return injected
			}
			return nil
		}
		_, err := s.Forget(ctx, forgotten)
		require.ErrorIs(t, err, injected, name)
		places, err := s.Locate(ctx, forgotten)
		require.NoError(t, err)
		require.NotEmpty(t, places, "after a failed write of %s the text is still found", name)
	}
	// The log's write loses a race, once.
	lost := 0
	f.write = func(n string, _ int) error {
		if strings.HasPrefix(n, ".history/facts/user.md/") && lost == 0 {
			lost++
			return fmt.Errorf("injected: %w", memory.ErrChanged)
		}
		return nil
	}
	n, err := s.Forget(ctx, forgotten)
	require.NoError(t, err)
	require.NotZero(t, n)
	require.Equal(t, 1, lost)
	places, err := s.Locate(ctx, forgotten)
	require.NoError(t, err)
	require.Empty(t, places)

	require.NoError(t, s.Close())
	_, err = s.Forget(ctx, forgotten)
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = s.Locate(ctx, forgotten)
	require.ErrorIs(t, err, memory.ErrClosed)
}

// TestForgetSegments forgets a text from a log of several segments, and
// fails the rewrite of one in the middle: the segments rewritten and the
// ones not yet read together, every version the history names, and a
// second Forget takes the rest out.
func TestForgetSegments(t *testing.T) {
	ctx := context.Background()
	f := newFaulty(t)
	s, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	filler := strings.Repeat("- Note: a line of know-how that fills the file\n", 180)
	for i := range 160 {
		require.NoError(t, s.Write(ctx, "facts/memory.md", fmt.Sprintf("# Memory\n\n> Summary: know-how\n\n- Family: %s\n- Count: %d\n%s", forgotten, i, filler)))
	}
	var segs []string
	entries, err := f.List(ctx, ".history")
	require.NoError(t, err)
	for _, e := range entries {
		segs = append(segs, e.Name)
	}
	require.Greater(t, len(segs), 1, "the log is in segments: %v", segs)

	injected := errors.New("injected")
	written := 0
	f.write = func(n string, _ int) error {
		if strings.HasPrefix(n, ".history/") {
			if written++; written == 2 {
				return injected
			}
		}
		return nil
	}
	_, err = s.Forget(ctx, forgotten)
	require.ErrorIs(t, err, injected)
	f.write = nil
	requireHistoryReads(t, s, "with the last segment redacted and the others not")
	places, err := s.Locate(ctx, forgotten)
	require.NoError(t, err)
	require.NotEmpty(t, places)

	_, err = s.Forget(ctx, forgotten)
	require.NoError(t, err)
	require.Empty(t, holdingOn(t, f, forgotten))
	requireHistoryReads(t, s, "after a second Forget")
	changes, err := s.History(ctx, "facts/memory.md", nil)
	require.NoError(t, err)
	require.Len(t, changes, 161)
	for _, c := range changes[1:] {
		require.True(t, c.Redacted, "%+v", c)
	}
}

// holdingOn returns the files of b, the history's included, that hold
// text.
func holdingOn(t testing.TB, b memory.Backend, text string) []string {
	t.Helper()
	var held []string
	for _, dir := range []string{"", ".history", ".cache"} {
		entries, err := b.List(context.Background(), dir)
		require.NoError(t, err)
		for _, e := range entries {
			c, err := b.Read(context.Background(), e.Name, -1)
			require.NoError(t, err)
			if bytes.Contains(c.Data, []byte(text)) {
				held = append(held, e.Name)
			}
		}
	}
	return held
}

// A file a person put in a memory folder that is not text a memory file
// could be is left as it is, and does not stop Forget.
func TestForgetLeavesOtherFiles(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "files a person put in facts/ that are no memory files")
	ctx := context.Background()
	binary := "\xff\xfe" + forgotten
	writeFile(t, dir, "facts/photo.jpg", binary)
	writeFile(t, dir, "facts/huge.md", forgotten+strings.Repeat("x", 1<<20+10))
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: who\n\n- Family: "+forgotten+"\n")
	places, err := s.Locate(ctx, forgotten)
	require.NoError(t, err)
	require.Len(t, places, 1)
	n, err := s.Forget(ctx, forgotten)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, binary, readFile(t, dir, "facts/photo.jpg"))
	require.ElementsMatch(t, []string{"facts/photo.jpg", "facts/huge.md"}, holding(t, dir, forgotten))
}

// TestForgetDamagedLine: the last line of a segment that a kill mid-append
// cut short is no record, and holds the text only as a record writes it
// (its quotes escaped); Forget takes it out all the same, the line with it
// (a record that never landed), and Locate names it first.
func TestForgetDamagedLine(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{Now: feb26})
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: v\n\n- Counter: 0\n"))
	seg := filepath.Join(dir, ".history", "facts", "user.md", "00000001.log")
	f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"t":"2026-02-26T09:31:00Z","op":"write","actor":"","old":"x","new":"y","full":true,"body":"d1;90+90:# User\n\n- Note: Bob said \"I quit\" on Monday\n- Pet: Re`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: v\n\n- Counter: 1\n"))
	const text = `Bob said "I quit" on Monday`
	places, err := s.Locate(ctx, text)
	require.NoError(t, err)
	require.Len(t, places, 1, "the damaged line is a place")
	require.Equal(t, "facts/user.md", places[0].Path)
	require.Equal(t, "y", places[0].Version, "the version the line names")
	n, err := s.Forget(ctx, text)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	b, err := os.ReadFile(seg)
	require.NoError(t, err)
	require.NotContains(t, string(b), `Bob said \"I quit\" on Monday`)
	require.NotContains(t, string(b), `"new":"y"`, "the damaged line goes")
	h, err := s.History(ctx, "facts/user.md", nil)
	require.NoError(t, err)
	require.Len(t, h, 2, "the records kept")

	// Escaped as a delta writes it too: a tab and a percent sign.
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: v\n\n- Counter: 2\n"))
	f, err = os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"t":"2026-02-26T09:32:00Z","op":"write","old":"x","new":"z","body":"d1;90+90:- PIN\t4471%25 off`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	places, err = s.Locate(ctx, "PIN\t4471% off")
	require.NoError(t, err)
	require.Len(t, places, 1)
	_, err = s.Forget(ctx, "PIN\t4471% off")
	require.NoError(t, err)
	b, err = os.ReadFile(seg)
	require.NoError(t, err)
	require.NotContains(t, string(b), `4471`)
}

// TestForgetPastTooLargeSegment: a log with a segment too large to read
// does not stop Forget or Locate at it: the logs after it, and its other
// segments, lose the text, and the error at the end names it.
func TestForgetPastTooLargeSegment(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{Now: feb26})
	const secret = "locker code 4471"
	for _, p := range []string{"facts/memory.md", "facts/user.md"} {
		title := map[string]string{"facts/memory.md": "Memory", "facts/user.md": "User"}[p]
		require.NoError(t, s.Write(ctx, p, "# "+title+"\n\n> Summary: v\n\n- "+title+" note: "+secret+"\n"))
		require.NoError(t, s.Write(ctx, p, "# "+title+"\n\n> Summary: v\n\n- "+title+" note: gone\n"))
	}
	leavesBroken(t, "a segment of a log too large to read")
	big := filepath.Join(dir, ".history", "facts", "memory.md.log")
	sparse(t, big, "", 256<<20+1)
	places, err := s.Locate(ctx, secret)
	require.Error(t, err)
	require.Contains(t, err.Error(), ".history/facts/memory.md.log")
	require.Len(t, places, 2, "the versions of both files that held it, the large segment aside")
	n, err := s.Forget(ctx, secret)
	require.Error(t, err)
	require.Contains(t, err.Error(), ".history/facts/memory.md.log")
	require.Equal(t, 2, n)
	for _, p := range []string{"facts/memory.md", "facts/user.md"} {
		b, err := os.ReadFile(filepath.Join(dir, firstSegment(p)))
		require.NoError(t, err)
		require.NotContains(t, string(b), "4471", p)
	}
}
