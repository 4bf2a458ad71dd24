//go:build unix

package s3store_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	memory "github.com/mdmemory/memory"
	"github.com/mdmemory/memory/s3store"
)

func init() {
	childModes["storekill"] = func(t *testing.T, b *s3store.Backend, round int) { storeKillChild(t, b, round) }
	childModes["storeseal"] = func(t *testing.T, b *s3store.Backend, round int) { storeKillChild(t, stopAfterSeal{b}, round) }
}

// The fact files a killed writer replaces, each with one of two contents
// of the sizes below: with the default budget of 15,360 bytes, the two
// smaller or a smaller and a larger fit together, the two larger do not,
// so that some of its writes are refused.
const (
	killSmall = 7000
	killLarge = 8000

	factsBudget = 15360 // the library's default Options.FactsBudget, which openStore keeps
)

// killFact is the content of fact file name ("user", "memory") in its
// version v ("A" or "B", of killSmall and killLarge bytes): every line of
// one differs from every line of the other.
func killFact(name, v string) string {
	size := killSmall
	if v == "B" {
		size = killLarge
	}
	title := strings.ToUpper(name[:1]) + name[1:]
	head := fmt.Sprintf("# %s\n\n> Summary: %s version %s\n\n", title, name, v)
	// The two files' lines share few words, and their last lines none: the
	// fact guard refuses a line that nearly repeats one of the other file.
	line := fmt.Sprintf("- %s fact of version %s\n", name, v)
	body := strings.Repeat(line, (size-len(head))/len(line)+1)
	text := head + body
	// Cut at a line's end short of size, then pad with a last line.
	text = text[:strings.LastIndexByte(text[:size-len(line)], '\n')+1]
	return text + "- " + name + strings.Repeat(v, size-len(text)-len(name)-3) + "\n"
}

// killEntry is round r's entry for change i: over 8 KiB, so that every
// append but a month's first seals the month's file into a part, and a
// kill in an append is a kill in a seal.
func killEntry(r, i int) string {
	return fmt.Sprintf("## round %d change %d\n- Summary: round %d, change %d\n%s", r, i, r, i, killNotes(160))
}

// killNotes is n lines of an entry.
func killNotes(n int) string {
	return strings.Repeat("- Note: one line of an entry that is long on purpose\n", n)
}

// storeKillChild changes the prefix through a Store until it is killed
// (or has made 10,000 changes): in turn, it replaces facts/user.md with
// its other version, facts/memory.md with its other version, and appends
// an entry to storeMonth. It says "change N" as change N begins and
// "done N" once it is made or, for a fact write, refused by the budget
// (both larger versions do not fit), to be tried again at its next turn.
func storeKillChild(t *testing.T, b memory.Backend, round int) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	s := openStore(t, b)
	next := map[string]string{"user": "B", "memory": "B"}
	for i := range 10000 {
		fmt.Printf("change %d\n", i)
		var err error
		switch i % 3 {
		case 0, 1:
			name := []string{"user", "memory"}[i%3]
			err = s.Write(ctx, "facts/"+name+".md", killFact(name, next[name]))
			switch {
			case err == nil:
				next[name] = map[string]string{"A": "B", "B": "A"}[next[name]]
			case errors.Is(err, memory.ErrBudgetExceeded):
				err = nil // tried again at its next turn
			}
		case 2:
			err = s.Append(ctx, storeMonth, killEntry(round, i), "")
		}
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		fmt.Printf("done %d\n", i)
	}
}

// stopAfterSeal is the Backend of a writer to be killed between the two
// steps of a seal: once it has written a month's new part, it says
// "sealed <part>" and waits to be killed, before the Store rewrites the
// month's file.
type stopAfterSeal struct{ *s3store.Backend }

// Lock returns the lock of name, whose writes stop after a part's.
func (b stopAfterSeal) Lock(ctx context.Context, name string) (memory.Held, error) {
	h, err := b.Backend.Lock(ctx, name)
	return hook(h, err, func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
		v, err := h.Write(ctx, name, data, match)
		if err == nil && strings.HasPrefix(name, "episodes/2026-02.") && name != storeMonth {
			fmt.Printf("sealed %s\n", name)
			<-ctx.Done()
			return "", ctx.Err()
		}
		return v, err
	})
}

// TestStoreKillDuringChange: a Store's writer killed with SIGKILL in the
// middle of its changes (fact files of 7 and 8 KB replaced, entries
// appended to a month that seals into parts) leaves every object old or
// new: a fresh Store reads each file whole, with its title and summary,
// the facts within their budget, and every entry the writer finished once
// (after the next append, which finishes a seal the kill cut short). Six
// writers are killed once they began a change, in each kind of change
// twice; two more between the two steps of a seal, which leaves the
// month's entries twice until that next append.
func TestStoreKillDuringChange(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, v := range []string{"A", "B"} {
		if n := len(killFact("user", v)); n != map[string]int{"A": killSmall, "B": killLarge}[v] || n != len(killFact("memory", v)) {
			t.Fatalf("version %s is %d bytes", v, n)
		}
	}
	if 2*killLarge <= factsBudget || killSmall+killLarge > factsBudget {
		t.Fatal("the versions' sizes do not make the budget refuse some writes and not others")
	}
	s := openStore(t, e.backend(nil))
	for _, name := range []string{"user", "memory"} {
		if err := s.Write(ctx, "facts/"+name+".md", killFact(name, "A")); err != nil {
			t.Fatal(err)
		}
	}
	done := map[string]bool{}    // entries a writer said it appended
	maybe := map[string]bool{}   // entries a writer began to append when it was killed
	outcomes := map[string]int{} // what the kills left, for the log
	for round := range 8 {
		mode, killAt := "storekill", 5+4*round // kill once it said "change killAt": in each kind of change twice
		if round >= 6 {
			mode = "storeseal" // kill once it said "sealed …"
		}
		cmd := child(e, mode, round)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		begun, killed := -1, false
		kill := func() {
			if !killed {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		for sc.Scan() {
			what, n, _ := strings.Cut(sc.Text(), " ")
			i, err := strconv.Atoi(n)
			switch {
			case what == "sealed":
				kill()
			case err != nil || what != "change" && what != "done":
				// the test framework's lines
			case what == "change":
				begun = i
				if i == killAt && mode == "storekill" {
					kill()
				}
			case i%3 == 2:
				done[fmt.Sprintf("round %d change %d", round, i)] = true
			}
		}
		cmd.Wait()
		if !killed {
			t.Fatalf("round %d: the writer ended before it was killed: %s", round, stderr.String())
		}
		if begun%3 == 2 && !done[fmt.Sprintf("round %d change %d", round, begun)] {
			maybe[fmt.Sprintf("round %d change %d", round, begun)] = true
		}
		if mode == "storeseal" && begun%3 != 2 {
			t.Fatalf("round %d: killed after a seal, in change %d, not an append", round, begun)
		}
		outcomes[fmt.Sprintf("killed in %s", []string{"a write of facts/user.md", "a write of facts/memory.md", "an append"}[begun%3])]++
		// The writer may have held a folder's lease: a person deletes it
		// (the writer is dead), so that the next writer need not wait for
		// it to expire.
		rawDelete(e, ".lease/facts")
		rawDelete(e, ".lease/episodes")

		twice := checkKilled(t, e, round, done, maybe)
		if twice > 0 {
			outcomes["a seal cut short (entries twice until the next append)"]++
		}
		if mode == "storeseal" && twice == 0 {
			t.Errorf("round %d: a writer killed between a seal's two steps left no entry twice", round)
		}
	}
	t.Logf("after the kills: %v; %d entries appended", outcomes, len(done))
}

// checkKilled checks the prefix after a kill, with a fresh Store: every
// file whole, the facts old or new and within budget, the entries done
// there, each once after one more append. It returns how many entries
// were there twice before that append.
func checkKilled(t *testing.T, e *env, round int, done, maybe map[string]bool) (twice int) {
	t.Helper()
	ctx := context.Background()
	b := e.backend(nil)
	s := openStore(t, b)
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var facts int64
	for _, f := range list {
		if f.Error != "" || f.Summary == "" {
			t.Errorf("round %d: List: %+v", round, f)
		}
		if strings.HasPrefix(f.Path, "facts/") {
			facts += f.Size
			name := strings.TrimSuffix(strings.TrimPrefix(f.Path, "facts/"), ".md")
			text, err := s.Read(ctx, f.Path)
			if err != nil {
				t.Fatal(err)
			}
			if text != killFact(name, "A") && text != killFact(name, "B") {
				t.Errorf("round %d: %s is neither of its versions: %d bytes, %q…", round, f.Path, len(text), text[:min(len(text), 60)])
			}
			if want := name + " version "; !strings.HasPrefix(f.Summary, want) {
				t.Errorf("round %d: %s has the summary %q", round, f.Path, f.Summary)
			}
		}
	}
	if facts > factsBudget {
		t.Errorf("round %d: the facts hold %d bytes, over the budget", round, facts)
	}

	// Each file of the month whole: its title, its summary, entries as
	// they were written.
	check := func(when string) map[string]int {
		t.Helper()
		files := monthFiles(t, s, b)
		for name, text := range files {
			if !strings.HasPrefix(text, "# 2026-02 Episodes\n\n> Summary: ") {
				t.Errorf("round %d, %s: %s starts %q", round, when, name, text[:min(len(text), 60)])
			}
			for _, ent := range strings.Split(text, "\n## ")[1:] {
				var r, i int
				if _, err := fmt.Sscanf(ent, "round %d change %d\n", &r, &i); err != nil {
					if !strings.HasPrefix(ent, "after round ") {
						t.Errorf("round %d, %s: an entry in %s: %q", round, when, name, ent[:min(len(ent), 60)])
					}
					continue
				}
				want := strings.TrimPrefix(killEntry(r, i), "## ")
				want = strings.Replace(want, "\n- Note", "\n- Date: 2026-02-26\n- Note", 1)
				if strings.TrimRight(ent, "\n") != strings.TrimRight(want, "\n") {
					t.Errorf("round %d, %s: the entry round %d change %d in %s is not as written: %q…", round, when, r, i, name, ent[:min(len(ent), 120)])
				}
			}
		}
		return headings(files)
	}
	counts := check("after the kill")
	killHistory(t, s, fmt.Sprintf("round %d, after the kill", round))
	for h := range done {
		if counts[h] < 1 {
			t.Errorf("round %d: %q was appended, and is not in the month", round, h)
		}
	}
	for _, c := range counts {
		if c > 1 {
			twice++
		}
	}

	// One more append, bigger than the writer's, seals what a kill cut
	// short.
	after := fmt.Sprintf("## after round %d\n%s", round, killNotes(170))
	if err := s.Append(ctx, storeMonth, after, ""); err != nil {
		t.Fatal(err)
	}
	counts = check("after one more append")
	for h, c := range counts {
		switch {
		case strings.HasPrefix(h, "after round "):
			if c != 1 {
				t.Errorf("round %d: %q is in the month %d times", round, h, c)
			}
		case done[h] && c != 1, maybe[h] && c > 1:
			t.Errorf("round %d: %q is in the month %d times", round, h, c)
		case !done[h] && !maybe[h]:
			t.Errorf("round %d: %q is in the month, and was never appended", round, h)
		}
	}
	for h := range done {
		if counts[h] != 1 {
			t.Errorf("round %d: %q is in the month %d times after one more append", round, h, counts[h])
		}
	}
	killHistory(t, s, fmt.Sprintf("round %d, after one more append", round))
	return twice
}

// killHistory checks the history after a kill (requireHistory): every
// version of a fact file one of its two.
func killHistory(t *testing.T, s *memory.Store, what string) {
	t.Helper()
	for p, texts := range requireHistory(t, s, what, true) {
		name, ok := strings.CutPrefix(p, "facts/")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, ".md")
		for i, text := range texts {
			if text != killFact(name, "A") && text != killFact(name, "B") {
				t.Errorf("%s: %s: version %d is neither of its versions", what, p, i)
			}
		}
	}
}
