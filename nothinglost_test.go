package memory_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/flock"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of "nothing lost": hand edits, several goroutines, several
// processes, and processes killed at random moments.

var long = flag.Bool("long", false, "run the multi-process and crash tests at full length")

// TestMain lets the test binary act as a worker process for the
// multi-process tests: MDMEMORY_WORKER names the role.
func TestMain(m *testing.M) {
	if role := os.Getenv("MDMEMORY_WORKER"); role != "" {
		if err := worker(role, os.Getenv("MDMEMORY_DIR"), os.Getenv("MDMEMORY_ID"), os.Getenv("MDMEMORY_N")); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func worker(role, dir, id string, nStr string) error {
	n, _ := strconv.Atoi(nStr)
	if role == "flock" {
		// As another user: reads the facts, and takes the lock on a
		// read-only descriptor of .lock, as a shared flock could.
		if b, err := os.ReadFile(filepath.Join(dir, "facts", "user.md")); err == nil {
			fmt.Print(string(b))
		}
		f, err := os.Open(filepath.Join(dir, ".lock"))
		if err != nil {
			return fmt.Errorf("open .lock: %w", errors.Unwrap(err))
		}
		defer f.Close()
		if ok, err := flock.TryLock(f); err != nil || !ok {
			return fmt.Errorf("lock .lock: %v", err)
		}
		return errors.New("held the lock of another user's memory")
	}
	if role == "fair" {
		// Waits for the lock beside many others: the default LockTimeout.
		return fairWorker(dir, id, n)
	}
	opts := &memory.Options{Now: feb26}
	if role == "sealkill" {
		opts.History.MaxBytes = sealKillBytes
	}
	s, err := memory.Open(dir, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	switch role {
	case "append":
		// Each worker appends n entries to one month and moves its own
		// counter line in facts/memory.md from 0 to n with patches.
		for i := range n {
			if err := s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## worker %s entry %d\n- Date: 2026-02-01", id, i), ""); err != nil {
				return err
			}
			p := memory.Patch{OldText: fmt.Sprintf("- worker %s: %d\n", id, i), NewText: fmt.Sprintf("- worker %s: %d\n", id, i+1)}
			if _, err := s.Patch(ctx, "facts/memory.md", []memory.Patch{p}); err != nil {
				return err
			}
		}
	case "loop":
		// Appends to one month as fast as it can until the file named by
		// MDMEMORY_N exists, saying "started" after its first append.
		for i := 0; ; i++ {
			if err := s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## loop %s entry %d\n- Date: 2026-02-01", id, i), ""); err != nil {
				return err
			}
			if i == 0 {
				fmt.Println("started")
			}
			if _, err := os.Stat(nStr); err == nil {
				return nil
			}
		}
	case "forget":
		// Forgets the text of the tests of Forget (forget_test.go),
		// saying first that it starts.
		fmt.Println("forgetting")
		if _, err := s.Forget(ctx, forgotten); err != nil {
			return err
		}
	case "compact":
		// Compacts every month before 2025-01 with the local rule, then
		// says so.
		if _, err := s.Compact(ctx, nil, &memory.CompactOptions{Before: "2025-01"}); err != nil {
			return err
		}
		fmt.Println("done")
	case "list":
		// Prints what List and IndexMessage give, as JSON, for a parent
		// that runs this worker as another user.
		files, err := s.List(ctx)
		if err != nil {
			return err
		}
		msg, err := s.NewSession().IndexMessage(ctx)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"files": files, "index": msg})
	case "sealkill":
		return sealKillWorker(ctx, s)
	case "crash":
		// Writes versions of facts/user.md and appends entries, forever,
		// each sequence going on from what is on disk; a line on stdout
		// after each step tells the parent it may kill now.
		next := func(path, prefix string) int {
			text, _ := s.Read(ctx, path)
			d := markdown.Parse([]byte(text))
			n := 0
			for _, it := range d.Items {
				if v, ok := strings.CutPrefix(it.Text, prefix); ok {
					n, _ = strconv.Atoi(v)
				}
			}
			for _, e := range d.Entries {
				if v, ok := strings.CutPrefix(e.Title, prefix); ok {
					n, _ = strconv.Atoi(v)
				}
			}
			return n + 1
		}
		w, a := next("facts/user.md", "Version: "), next("episodes/2026-02.md", "entry ")
		for {
			if err := s.Write(ctx, "facts/user.md", crashVersion(w)); err != nil {
				return err
			}
			fmt.Println("w", w)
			w++
			if err := s.Append(ctx, "episodes/2026-02.md", crashEntry(a), ""); err != nil {
				return err
			}
			fmt.Println("a", a)
			a++
		}
	}
	return nil
}

// crashVersion is version n of facts/user.md in the crash test: a few KB so
// that a write takes several system calls.
func crashVersion(n int) string {
	return fmt.Sprintf("# User\n\n> Summary: version %d\n\n- Version: %d\n%s", n, n, strings.Repeat(fmt.Sprintf("- filler line of version %d\n", n), 100))
}

func crashEntry(n int) string {
	return fmt.Sprintf("## entry %d\n- Date: 2026-02-01\n- Summary: entry number %d\n%s", n, n, strings.Repeat("- detail\n", n%7))
}

func startWorker(t *testing.T, role, dir string, id, n int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MDMEMORY_WORKER="+role, "MDMEMORY_DIR="+dir, "MDMEMORY_ID="+strconv.Itoa(id), "MDMEMORY_N="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

// TestMultiProcess runs worker processes that append and patch on one root
// at the same time; every entry and every patch must be there exactly once.
func TestMultiProcess(t *testing.T) {
	workers, each := 4, 25
	if *long {
		workers, each = 8, 200
	}
	s, dir := open(t, nil)
	var counters strings.Builder
	for w := range workers {
		fmt.Fprintf(&counters, "- worker %d: 0\n", w)
	}
	require.NoError(t, s.Write(context.Background(), "facts/memory.md", "# Memory\n\n> Summary: counters\n\n"+counters.String()))

	cmds := make([]*exec.Cmd, workers)
	for w := range workers {
		cmds[w] = startWorker(t, "append", dir, w, each)
		require.NoError(t, cmds[w].Start())
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}

	m := readMonth(t, dir, "2026-02")
	require.Zero(t, m.repeated, "no crash, so no entry shown twice")
	require.Len(t, m.entries, workers*each)
	count := map[string]int{}
	for _, e := range m.entries {
		count[e.title]++
	}
	for w := range workers {
		for i := range each {
			require.Equal(t, 1, count[fmt.Sprintf("worker %d entry %d", w, i)], "worker %d entry %d", w, i)
		}
	}
	facts := readFile(t, dir, "facts/memory.md")
	for w := range workers {
		require.Contains(t, facts, fmt.Sprintf("- worker %d: %d\n", w, each), "no patch lost")
	}
	t.Logf("%d processes × %d appends and %d patches each: all present once", workers, each, each)

	// The history: every change recorded once, in the order of the
	// file's versions.
	requireChain(t, s, "episodes/2026-02.md", workers*each, func(i int, text string) {
		require.Len(t, markdown.Parse([]byte(text)).Entries, i+1, "version %d of the month", i)
	})
	requireChain(t, s, "facts/memory.md", workers*each+1, func(i int, text string) {
		sum := 0
		for w := range workers {
			var id, n int
			at := strings.Index(text, fmt.Sprintf("- worker %d: ", w))
			require.GreaterOrEqual(t, at, 0)
			fmt.Sscanf(text[at:], "- worker %d: %d", &id, &n)
			sum += n
		}
		require.Equal(t, i, sum, "version %d of the counters moved one patch from the one before", i)
	})
}

// requireChain requires the history of path to be n changes, the first
// creating it, each from the version the one before made, the last making
// its current content, with nothing pending, and each version read back:
// check gets the content of the i-th, from 0.
func requireChain(t *testing.T, s *memory.Store, path string, n int, check func(i int, text string)) {
	t.Helper()
	ctx := context.Background()
	h, err := s.History(ctx, path, nil)
	require.NoError(t, err)
	require.Len(t, h, n, "%s: every change recorded once", path)
	text, err := s.Read(ctx, path)
	require.NoError(t, err)
	require.Equal(t, memory.Version(text), h[0].New, "%s: the last record makes the current content", path)
	require.Empty(t, h[n-1].Old, "%s: the first record creates it", path)
	for i, c := range h {
		require.False(t, c.Pending, "%s: nothing pending", path)
		if i > 0 {
			require.Equal(t, c.New, h[i-1].Old, "%s: change %d follows from the one before", path, n-1-i)
		}
		text, err := s.ReadVersion(ctx, path, c.New)
		require.NoError(t, err, "%s: version %d", path, n-1-i)
		require.Equal(t, c.New, memory.Version(text))
		check(n-1-i, text)
	}
}

// TestCrash kills a worker process at random moments while it writes and
// appends; after every kill the store opens, no temporary file is left, and
// every file is a version that was actually written, whole.
func TestCrash(t *testing.T) {
	kills := 300
	if testing.Short() {
		kills = 30
	}
	if *long {
		kills = 2000
	}
	_, dir := open(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	midWrite := 0                // kills that left a temporary file: the worker died mid-write
	windows := 0                 // kills between a seal's two steps: the newest part's entries shown twice
	entries, parts := 0, 0       // the month's entries and sealed parts after the last kill
	done := map[string]int{}     // the last write ("w") and append ("a") reported done
	versions := map[string]int{} // of facts/user.md: Version(crashVersion(n)) → n
	unlanded := 0                // records of changes a kill stopped after their record
	for n := range 20000 {
		versions[memory.Version(crashVersion(n))] = n
	}
	for k := range kills {
		cmd := startWorker(t, "crash", dir, 0, 0)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		// Let the worker finish a random number of steps, then kill it at
		// a random moment of the next one (a step takes about a
		// millisecond, most of it with a temporary file on disk).
		lines := bufio.NewScanner(out)
		for range rng.IntN(4) {
			if !lines.Scan() {
				break
			}
			// What the worker reports done must be on disk after the kill.
			kind, n, _ := strings.Cut(lines.Text(), " ")
			done[kind], _ = strconv.Atoi(n)
		}
		for spin, d := time.Now(), time.Duration(rng.IntN(1500))*time.Microsecond; time.Since(spin) < d; {
			runtime.Gosched()
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		for _, sub := range []string{"facts", "episodes"} {
			names, _ := os.ReadDir(filepath.Join(dir, sub))
			for _, n := range names {
				if strings.Contains(n.Name(), ".tmp-") {
					midWrite++
				}
			}
		}

		s, err := memory.Open(dir, nil)
		require.NoError(t, err, "kill %d", k)
		for _, sub := range []string{"facts", "episodes"} {
			names, err := os.ReadDir(filepath.Join(dir, sub))
			require.NoError(t, err)
			for _, n := range names {
				require.False(t, strings.Contains(n.Name(), ".tmp-"), "kill %d: temporary file %s left after Open", k, n.Name())
			}
		}
		if user, err := os.ReadFile(filepath.Join(dir, "facts", "user.md")); err == nil {
			d := markdown.Parse(user)
			v, _ := strings.CutPrefix(d.Summary.Text, "version ")
			n, _ := strconv.Atoi(v)
			require.Equal(t, crashVersion(n), string(user), "kill %d: facts/user.md is not a version that was written", k)
			require.GreaterOrEqual(t, n, done["w"], "kill %d: a write reported done was lost", k)
		}
		// The month as the library defines it: its sealed parts, then its
		// file. A kill between a seal's two steps leaves the newest part's
		// entries at the start of the month's file too; readMonth counts
		// those apart, and every entry must be in the rest exactly once.
		m := readMonth(t, dir, "2026-02")
		if m.repeated > 0 {
			windows++
		}
		for i, e := range m.entries {
			require.Equal(t, fmt.Sprintf("entry %d", i+1), e.title, "kill %d: entries are consecutive across %v", k, m.files)
			require.Equal(t, strings.TrimSuffix(crashEntry(i+1), "\n"), e.text, "kill %d: entry %d is whole", k, i+1)
		}
		require.GreaterOrEqual(t, len(m.entries), done["a"], "kill %d: an append reported done was lost", k)
		entries, parts = len(m.entries), len(m.files)-1
		unlanded = crashHistory(t, s, dir, k, k == kills-1, versions)
		require.NoError(t, s.Close())
	}
	t.Logf("%d kills survived (%d of them mid-write, leaving a temporary file; %d between a seal's two steps; %d records of changes that did not land in the logs); %d entries appended in %d sealed parts and the month's file, %s versions written in all",
		kills, midWrite, windows, unlanded, entries, parts, strings.TrimPrefix(markdown.Parse([]byte(readFile(t, dir, "facts/user.md"))).Summary.Text, "version "))
}

// crashHistory checks the history after a kill of TestCrash: the writes
// of facts/user.md (n a version's number in versions) recorded each once,
// in order, from its first version to its current one; the month's file
// and its parts each a chain of changes ending at its current content;
// nothing pending, since only the library changed the files (a kill
// between a change's record and its write leaves a record that did not
// land, which the history leaves out); the newest versions read back, and
// every one when all; and Check finding nothing in the logs. It returns
// how many records in the logs of dir did not land.
func crashHistory(t *testing.T, s *memory.Store, dir string, k int, all bool, versions map[string]int) (unlanded int) {
	t.Helper()
	ctx := context.Background()
	files, err := s.History(ctx, "", nil)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, c := range files {
		if seen[c.Path] {
			continue
		}
		seen[c.Path] = true
		h, err := s.History(ctx, c.Path, nil)
		require.NoError(t, err)
		unlanded += strings.Count(logText(t, dir, c.Path), "\n") - len(h)
		text, err := s.Read(ctx, c.Path)
		require.NoError(t, err)
		require.Equal(t, memory.Version(text), h[0].New, "kill %d: %s: the last record makes the current content", k, c.Path)
		require.Empty(t, h[len(h)-1].Old, "kill %d: %s: the first record creates it", k, c.Path)
		for i, c := range h {
			require.False(t, c.Pending, "kill %d: %s: no change without its record", k, c.Path)
			if i > 0 {
				require.Equal(t, c.New, h[i-1].Old, "kill %d: %s: each change follows from the one before", k, c.Path)
			}
			if c.Path == "facts/user.md" {
				n, ok := versions[c.New]
				require.True(t, ok, "kill %d: a version of facts/user.md that was written", k)
				require.Equal(t, len(h)-i, n, "kill %d: the writes of facts/user.md recorded once each, in order", k)
			}
			if i < 2 || all {
				got, err := s.ReadVersion(ctx, c.Path, c.New)
				require.NoError(t, err, "kill %d: %s at %s", k, c.Path, c.New)
				require.Equal(t, c.New, memory.Version(got))
				if n, ok := versions[c.New]; ok {
					require.Equal(t, crashVersion(n), got)
				}
			}
		}
	}
	listed, err := s.List(ctx)
	require.NoError(t, err)
	for _, f := range listed {
		require.True(t, seen[f.Path], "kill %d: %s has its history", k, f.Path)
	}
	findings, err := s.Check(ctx)
	require.NoError(t, err)
	for _, f := range findings {
		require.False(t, strings.HasPrefix(f.Path, ".history/"), "kill %d: %s:%d: %s", k, f.Path, f.Line, f.Problem)
	}
	return unlanded
}

func TestHandEditsAreNotOverwritten(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n"))
	run := conversation(t, s)
	write := `{"path": "facts/user.md", "content": "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- City: Hangzhou\n"}`
	patch := `{"path": "facts/user.md", "patches": [{"oldText": "- Name: Zhang San\n", "newText": "- Name: Zhang San\n- City: Hangzhou\n"}]}`

	// Never read in this conversation: refused.
	r := run("memory_write", write)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "facts/user.md already exists and was not read in this conversation; nothing was changed. Call memory_read first")
	r = run("memory_patch", patch)
	require.True(t, r.IsError)

	// Read, then a person edits the file: refused, and the edit is intact.
	require.False(t, run("memory_read", `{"path": "facts/user.md"}`).IsError)
	edited := "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- Birthday: March 15 (added by hand)\n"
	writeFile(t, dir, "facts/user.md", edited)
	for _, args := range []string{write, patch} {
		r = run(map[bool]string{true: "memory_write", false: "memory_patch"}[args == write], args)
		require.True(t, r.IsError)
		require.Contains(t, r.Text, "facts/user.md changed since you last read it (edited by a person or another agent); nothing was changed. Call memory_read")
		require.Equal(t, edited, readFile(t, dir, "facts/user.md"))
	}

	// After a fresh read the change goes through, and the tool set's own
	// changes count as seen.
	require.Contains(t, run("memory_read", `{"path": "facts/user.md"}`).Text, "added by hand")
	require.False(t, run("memory_patch", patch).IsError)
	require.False(t, run("memory_append", `{"path": "facts/user.md", "entry": "- Pet: a cat", "summary": "Zhang San"}`).IsError)
	require.False(t, run("memory_write", `{"path": "facts/user.md", "content": "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- Birthday: March 15 (added by hand)\n- City: Hangzhou\n- Pet: a cat\n"}`).IsError)

	// Append needs no read, and a new file needs none either.
	require.False(t, run("memory_append", `{"path": "facts/memory.md", "entry": "- a lesson", "summary": null}`).IsError)
	require.False(t, run("memory_write", `{"path": "episodes/2026-01.md", "content": "## a\n- Date: 2026-01-05"}`).IsError)

	// An append by someone else makes this conversation's view stale.
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- another agent's lesson", ""))
	r = run("memory_append", `{"path": "facts/memory.md", "entry": "- my second lesson", "summary": null}`)
	require.False(t, r.IsError, "appending is always allowed")
	r = run("memory_write", `{"path": "facts/memory.md", "content": "- condensed"}`)
	require.True(t, r.IsError, "the other agent's line was never seen")
	require.Contains(t, readFile(t, dir, "facts/memory.md"), "another agent's lesson")

	// Two conversations: each has its own record.
	require.True(t, conversation(t, s)("memory_write", write).IsError)
}

func TestWriteIf(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.WriteIf(ctx, "facts/user.md", "- a", ""), `"" means the file must not exist`)
	err := s.WriteIf(ctx, "facts/user.md", "- b", "")
	require.ErrorIs(t, err, memory.ErrConflict)

	text, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	v := memory.Version(text)
	require.Len(t, v, 24)
	writeFile(t, dir, "facts/user.md", text+"- by hand\n")
	err = s.WriteIf(ctx, "facts/user.md", "- b", v)
	require.ErrorIs(t, err, memory.ErrConflict)
	require.Contains(t, err.Error(), "changed since it was read")
	require.Contains(t, hint(t, err), "changed since it was read; nothing was written")
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- by hand")

	text, _ = s.Read(ctx, "facts/user.md")
	require.NoError(t, s.WriteIf(ctx, "facts/user.md", "- b", memory.Version(text)))
	require.NotEqual(t, memory.Version("a"), memory.Version("b"))
}

func TestReflectorFactsCountAsRead(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n"))
	patch := memory.ToolCall{ID: "1", Name: "memory_patch", Arguments: json.RawMessage(`{"path": "facts/user.md", "patches": [{"oldText": "- Name: Zhang San\n", "newText": "- Name: Zhang San\n- City: Hangzhou\n"}]}`)}
	var results []string
	llm := func(edit bool) memory.LLM {
		return memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
			if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
				results = append(results, last.Content)
				return memory.Response{Content: "done"}, nil
			}
			if edit { // a person edits the file while the model thinks
				writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San (edited)\n")
			}
			return memory.Response{ToolCalls: []memory.ToolCall{patch}}, nil
		})
	}
	task := memory.Task{Input: "I moved to Hangzhou", Iterations: 2, Actions: 2}
	ref, err := memory.NewReflector(s, llm(false), nil).Reflect(ctx, task)
	require.NoError(t, err)
	require.Equal(t, []string{"facts/user.md"}, ref.Changed, results)
	require.Contains(t, readFile(t, dir, "facts/user.md"), "- City: Hangzhou")

	ref, err = memory.NewReflector(s, llm(true), nil).Reflect(ctx, task)
	require.NoError(t, err)
	require.Empty(t, ref.Changed)
	require.Contains(t, results[1], "changed since you last read it")
	require.Contains(t, readFile(t, dir, "facts/user.md"), "(edited)")
}

// holdLock takes the lock file of the memory directory dir as another
// process would, until the test ends or the caller unlocks it.
func holdLock(t *testing.T, dir string) *os.File {
	t.Helper()
	held, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { held.Close() })
	ok, err := flock.TryLock(held)
	require.NoError(t, err)
	require.True(t, ok)
	return held
}

func TestLockTimeout(t *testing.T) {
	s, dir := open(t, &memory.Options{LockTimeout: 20 * time.Millisecond})
	held := holdLock(t, dir)

	ctx := context.Background()
	err := s.Append(ctx, "episodes/2026-02.md", "## x", "")
	require.ErrorIs(t, err, memory.ErrLocked)
	require.Contains(t, err.Error(), "memory: append episodes/2026-02.md: memory directory is locked by another store (waited 20ms)")
	_, err = tool(t, s.NewSession().Tools(), "memory_append").Call(ctx, json.RawMessage(`{"path": "episodes/2026-02.md", "entry": "## x", "summary": null}`))
	require.ErrorIs(t, err, memory.ErrLocked, "a host error, not the model's")
	_, err = memory.Open(dir, &memory.Options{LockTimeout: time.Millisecond})
	require.ErrorIs(t, err, memory.ErrLocked)

	// Reading needs no lock.
	_, err = s.List(ctx)
	require.NoError(t, err)

	// A context that ends while waiting ends the wait.
	dir2 := filepath.Join(t.TempDir(), "m")
	s2, err := memory.Open(dir2, nil)
	require.NoError(t, err)
	defer s2.Close()
	holdLock(t, dir2)
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	err = s2.Write(ctx2, "facts/user.md", "- x")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, flock.Unlock(held))
	memory.AwaitWaiters(s) // the waits that timed out end: not a race with the 20 ms below
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## x", ""))
	require.FileExists(t, filepath.Join(dir, ".lock"))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
}

// TestLockFileReplaced checks that a Store whose lock file was deleted
// while it was open locks the new one, which other Stores lock too.
func TestLockFileReplaced(t *testing.T) {
	a, dir := open(t, &memory.Options{LockTimeout: 20 * time.Millisecond})
	ctx := context.Background()
	require.NoError(t, a.Append(ctx, "episodes/2026-02.md", "## one", ""))
	require.NoError(t, os.Remove(filepath.Join(dir, ".lock")))
	b, err := memory.Open(dir, nil) // creates a new .lock
	require.NoError(t, err)
	defer b.Close()

	held := holdLock(t, dir)
	err = a.Append(ctx, "episodes/2026-02.md", "## two", "")
	require.ErrorIs(t, err, memory.ErrLocked, "a follows the new lock file")
	require.NoError(t, flock.Unlock(held))
	memory.AwaitWaiters(a) // the wait that timed out ends: not a race with the 20 ms below
	require.NoError(t, a.Append(ctx, "episodes/2026-02.md", "## two", ""))
}

func TestWriteAfterDelete(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Name: Zhang San"))
	run := conversation(t, s)
	require.False(t, run("memory_read", `{"path": "facts/user.md"}`).IsError)
	require.NoError(t, os.Remove(filepath.Join(dir, "facts", "user.md")))
	write := `{"path": "facts/user.md", "content": "- Name: Zhang San\n- City: Hangzhou"}`
	r := run("memory_write", write)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "facts/user.md was deleted since you last read it; nothing was changed")
	require.NoFileExists(t, filepath.Join(dir, "facts", "user.md"))
	require.False(t, run("memory_write", write).IsError, "a second call creates it anew")
	require.FileExists(t, filepath.Join(dir, "facts", "user.md"))
}

// TestQueuedChangeHonoursItsContext checks that a change waiting for its
// turn behind another (here one stuck on another process's lock) gives up
// when its context ends, not when the other is done.
func TestQueuedChangeHonoursItsContext(t *testing.T) {
	s, dir := open(t, &memory.Options{LockTimeout: time.Hour})
	holdLock(t, dir)

	first, cancelFirst := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Append(first, "episodes/2026-02.md", "## first", "") }()

	for !memory.Busy(s) {
		runtime.Gosched() // until the first change holds the turn
	}
	second, cancelSecond := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelSecond()
	err := s.Append(second, "episodes/2026-02.md", "## second", "")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	cancelFirst()
	require.ErrorIs(t, <-done, context.Canceled)
}

// TestGoroutines runs mixed operations from many goroutines on two Stores
// over one directory; every count is preserved.
func TestGoroutines(t *testing.T) {
	a, dir := open(t, nil)
	b, err := memory.Open(dir, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer b.Close()
	ctx := context.Background()
	const workers, each = 6, 15
	var counters strings.Builder
	for w := range workers {
		fmt.Fprintf(&counters, "- counter %d: 0\n", w)
	}
	require.NoError(t, a.Write(ctx, "facts/memory.md", counters.String()))

	var wg sync.WaitGroup
	for w := range workers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := range each {
				assert.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## g%d-%d", w, i), ""))
				_, err := s.Patch(ctx, "facts/memory.md", []memory.Patch{{OldText: fmt.Sprintf("- counter %d: %d\n", w, i), NewText: fmt.Sprintf("- counter %d: %d\n", w, i+1)}})
				assert.NoError(t, err)
				assert.NoError(t, s.Write(ctx, fmt.Sprintf("episodes/2025-%02d.md", w+1), fmt.Sprintf("## own file %d\n- Date: 2025-%02d-01", i, w+1)))
				_, err = s.List(ctx)
				assert.NoError(t, err)
				_, err = s.Read(ctx, "facts/memory.md")
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	m := readMonth(t, dir, "2026-02")
	require.Zero(t, m.repeated)
	require.Len(t, m.entries, workers*each)
	facts := readFile(t, dir, "facts/memory.md")
	for w := range workers {
		require.Contains(t, facts, fmt.Sprintf("- counter %d: %d\n", w, each))
		require.Contains(t, readFile(t, dir, fmt.Sprintf("episodes/2025-%02d.md", w+1)), fmt.Sprintf("## own file %d", each-1))
	}
}

// TestLockNoStarvation runs a process that appends in a loop beside a Store
// making occasional appends: waiters are queued (flock(2) without polling),
// so each occasional append gets its turn, well within its LockTimeout.
func TestLockNoStarvation(t *testing.T) {
	s, dir := open(t, &memory.Options{LockTimeout: 5 * time.Second})
	stop := filepath.Join(t.TempDir(), "stop")
	loop := startWorker(t, "loop", dir, 0, 0)
	loop.Env = append(loop.Env, "MDMEMORY_N="+stop) // the last MDMEMORY_N wins
	out, err := loop.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, loop.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "started\n", line)

	ctx := context.Background()
	most := 0
	for i := range 6 {
		before := strings.Count(readFile(t, dir, "episodes/2026-02.md"), "## loop")
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", fmt.Sprintf("## occasional %d\n- Date: 2026-02-01", i), ""))
		most = max(most, strings.Count(readFile(t, dir, "episodes/2026-02.md"), "## loop")-before)
	}
	require.NoError(t, os.WriteFile(stop, nil, 0o644))
	require.NoError(t, loop.Wait())
	var text string
	for _, p := range monthFiles(t, dir, "2026-02") {
		text += readFile(t, dir, p)
	}
	for i := range 6 {
		require.Equal(t, 1, strings.Count(text, fmt.Sprintf("## occasional %d\n", i)))
	}
	t.Logf("the looping process made at most %d appends while one occasional append waited", most)
}

// TestLockManyProcesses has 32 processes (64 with -long) append 25 entries
// each to one month at once, each waiting for the lock with the default
// LockTimeout: none may time out, and every entry is there once.
func TestLockManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("many processes")
	}
	procs, each := 32, 25
	if *long {
		procs = 64
	}
	_, dir := open(t, nil)
	cmds := make([]*exec.Cmd, procs)
	for w := range procs {
		cmds[w] = startWorker(t, "fair", dir, w, each)
		require.NoError(t, cmds[w].Start())
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}
	count := map[string]int{}
	for _, p := range monthFiles(t, dir, "2026-02") {
		for _, e := range markdown.Parse([]byte(readFile(t, dir, p))).Entries {
			count[e.Title]++
		}
	}
	require.Len(t, count, procs*each)
	for title, n := range count {
		require.Equal(t, 1, n, title)
	}
}

// fairWorker appends n entries to one month.
func fairWorker(dir, id string, n int) error {
	s, err := memory.Open(dir, &memory.Options{Now: feb26})
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range n {
		if err := s.Append(context.Background(), "episodes/2026-02.md", fmt.Sprintf("## process %s entry %d\n- Date: 2026-02-01\n- Summary: %s", id, i, strings.Repeat("x", 200)), ""); err != nil {
			return err
		}
	}
	return nil
}

// monthFiles returns a month's files, parts first, as paths under the root.
func monthFiles(t *testing.T, dir, month string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "episodes", month+".*md"))
	require.NoError(t, err)
	var paths []string
	for _, n := range names {
		paths = append(paths, "episodes/"+filepath.Base(n))
	}
	slices.Sort(paths)
	return paths
}

// month is a month's episodes as the library defines them: the entries of
// its sealed parts in order, then those of its file.
type month struct {
	files   []string // the parts in order, then the month's file
	entries []monthEntry
	// repeated counts the entries at the start of the month's file that
	// repeat its newest part, all of them and in order: what a crash
	// between a seal's two steps leaves (the part written, the month's
	// file not yet replaced) until the month's next append drops them.
	// They are not in entries.
	repeated int
}

type monthEntry struct {
	title string
	text  string // the entry's bytes, without the blank lines after it
}

// readMonth reads the month's parts and file from dir, in the order the
// library gives them (monthFiles), and checks that each file has its title
// and summary.
func readMonth(t *testing.T, dir, name string) month {
	t.Helper()
	var m month
	var newest []monthEntry // the entries of the newest part read so far
	for _, p := range monthFiles(t, dir, name) {
		src := []byte(readFile(t, dir, p))
		d := markdown.Parse(src)
		require.True(t, d.Title.OK && d.Summary.OK, "%s has its title and summary", p)
		var es []monthEntry
		for _, e := range d.Entries {
			es = append(es, monthEntry{e.Title, string(markdown.TrimTrailingBlankLines(src[e.Start:e.End]))})
		}
		m.files = append(m.files, p)
		if !strings.Contains(strings.TrimPrefix(p, "episodes/"+name), ".0") {
			// The month's file: a prefix that repeats the newest part whole
			// is the seal's crash window.
			if len(newest) > 0 && len(es) >= len(newest) && slices.Equal(es[:len(newest)], newest) {
				m.repeated, es = len(newest), es[len(newest):]
			}
		} else {
			newest = es
		}
		m.entries = append(m.entries, es...)
	}
	return m
}
