package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory/s3store"
)

// childModes are what a helper process can do, by the mode runChildren
// names. A mode gets a Backend on the parent's gateway and prefix, and its
// number among its siblings; what it prints on stdout goes back to the
// parent, and a failure (t.Fatal) fails the parent's test. A store-level
// mode registers itself here, from an init func of its own file.
var childModes = map[string]func(t *testing.T, b *s3store.Backend, id int){
	"mixed": mixedChild,
}

// TestHelperProcess is the body of the helper processes: it does nothing
// in an ordinary run.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	run, ok := childModes[mode]
	if !ok {
		t.Fatalf("no helper mode %q", mode)
	}
	id, err := strconv.Atoi(os.Getenv(idEnv))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3store.New(newClient(os.Getenv(endpointEnv), nil), testBucket, os.Getenv(prefixEnv))
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, id)
}

// child is a helper process of the test binary, doing mode on e's prefix.
func child(e *env, mode string, id int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		childEnv+"="+mode,
		endpointEnv+"="+e.gw.endpoint,
		prefixEnv+"="+e.prefix,
		idEnv+"="+strconv.Itoa(id),
	)
	return cmd
}

// runChildren runs n helper processes at once, each doing mode on e's
// prefix, and returns what each printed (the test framework's closing
// "PASS" left out). It fails t if any fails.
func runChildren(t *testing.T, e *env, n int, mode string) []string {
	t.Helper()
	outs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cmd := child(e, mode, i)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			errs[i] = cmd.Run()
			outs[i] = strings.TrimSuffix(stdout.String(), "PASS\n")
			if errs[i] != nil {
				errs[i] = fmt.Errorf("helper %d (%s): %w\n%s%s", i, mode, errs[i], stdout.String(), stderr.String())
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return outs
}

const (
	mixedChanges = 50 // each helper's, half appends, half increments
	logName      = "episodes/2026-11.md"
	counterName  = "facts/counter.md"
)

// mixedChild makes mixedChanges changes, half of them appends of its own
// line to logName, under the lock of "episodes/", and half increments of
// the count line in counterName, with no lock but its write's version:
// helpers of an even number append first, the others increment first.
// It prints how many of its appends' writes were refused (none should be:
// they are made under the lock) and how many increments were.
func mixedChild(t *testing.T, b *s3store.Backend, id int) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var underLock, unlocked int
	for i := range mixedChanges {
		if (i < mixedChanges/2) == (id%2 == 0) {
			h, err := b.Lock(ctx, "episodes/")
			if err != nil {
				t.Fatal(err)
			}
			n, err := update(ctx, b, h, logName, func(old []byte) []byte {
				if len(old) == 0 {
					old = []byte("# November\n\n")
				}
				return fmt.Appendf(old, "- helper %d change %d\n", id, i)
			})
			h.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			underLock += n
			continue
		}
		n, err := update(ctx, b, nil, counterName, func(old []byte) []byte {
			return setCount(old, countOf(old)+1)
		})
		if err != nil {
			t.Fatal(err)
		}
		unlocked += n
	}
	fmt.Printf("refused under the lock: %d\nrefused without: %d\n", underLock, unlocked)
}

var countLine = regexp.MustCompile(`(?m)^count: (\d+)$`)

// countOf reads the "count: N" line of a counter file.
func countOf(data []byte) int {
	m := countLine.FindSubmatch(data)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// setCount patches the count line, keeping the rest of the file.
func setCount(data []byte, n int) []byte {
	line := fmt.Appendf(nil, "count: %d", n)
	if countLine.Match(data) {
		return countLine.ReplaceAll(data, line)
	}
	return fmt.Appendf(nil, "# Counter\n\n%s\n", line)
}

// TestProcesses: 8 processes make 50 changes each to one prefix; every
// appended line is there once, no increment is lost, and no append under
// the folder's lease was refused.
func TestProcesses(t *testing.T) {
	e := newEnv(t)
	const n = 8
	outs := runChildren(t, e, n, "mixed")
	ctx := context.Background()
	b := e.backend(nil)

	c, err := b.Read(ctx, counterName, -1)
	if err != nil {
		t.Fatal(err)
	}
	if got := countOf(c.Data); got != n*mixedChanges/2 {
		t.Errorf("count %d, want %d:\n%s", got, n*mixedChanges/2, c.Data)
	}
	c, err = b.Read(ctx, logName, -1)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(c.Data), "\n"), "\n")
	if lines[0] != "# November" || lines[1] != "" {
		t.Errorf("log starts %q", lines[:2])
	}
	lines = lines[2:]
	var want []string
	for id := range n {
		for i := range mixedChanges {
			if (i < mixedChanges/2) == (id%2 == 0) {
				want = append(want, fmt.Sprintf("- helper %d change %d", id, i))
			}
		}
	}
	slices.Sort(want)
	got := slices.Clone(lines)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%d lines, want %d, each once", len(got), len(want))
	}
	// Each helper's lines are in its order.
	last := map[int]int{}
	for _, l := range lines {
		var id, i int
		if _, err := fmt.Sscanf(l, "- helper %d change %d", &id, &i); err != nil {
			t.Fatalf("line %q", l)
		}
		if prev, ok := last[id]; ok && i <= prev {
			t.Errorf("helper %d: change %d after %d", id, i, prev)
		}
		last[id] = i
	}
	refused := 0
	for i, out := range outs {
		var under, without int
		if _, err := fmt.Sscanf(out, "refused under the lock: %d\nrefused without: %d\n", &under, &without); err != nil {
			t.Fatalf("helper %d printed %q", i, out)
		}
		if under != 0 {
			t.Errorf("helper %d: %d writes refused under the lock of episodes/", i, under)
		}
		refused += without
	}
	t.Logf("%d increments refused and made again", refused)
	if _, exists := rawGet(e, ".lease/episodes"); exists {
		t.Error("a lease is left")
	}
}
