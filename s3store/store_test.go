package s3store_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	memory "github.com/mdmemory/memory"
	"github.com/mdmemory/memory/s3store"
)

// Store-level tests: a memory.Store on the S3 backend, as an agent runs
// it, with other processes and other clients on the same prefix.

func init() { childModes["store"] = storeChild }

// feb26 is the Stores' clock in these tests: their month is storeMonth.
func feb26() time.Time { return time.Date(2026, 2, 26, 9, 30, 0, 0, time.UTC) }

const (
	storeMonth   = "episodes/2026-02.md"
	storeChanges = 50 // each helper's: appends to the month, increments of the counter, appends of facts
	counterFact  = "facts/memory.md"
	linesFact    = "facts/user.md"
)

// openStore opens a Store on b with the tests' clock. It waits for a
// folder's lease as long as a test waits for anything: eight processes
// queue for the facts' lease under the race detector.
func openStore(t testing.TB, b memory.Backend) *memory.Store {
	t.Helper()
	s, err := memory.OpenBackend(b, &memory.Options{Now: feb26, LockTimeout: patience})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The kinds of change a store helper makes.
const (
	kindAppend    = iota // an entry appended to storeMonth
	kindIncrement        // the counter in counterFact, patched up by one
	kindFact             // a line appended to linesFact
)

// storeKind is what helper id's change i is: the three kinds in turn,
// each helper starting at its own.
func storeKind(id, i int) int { return (id + i) % 3 }

// storeEntry is helper id's episode entry for its change i: a heading that
// names it, a word of its own for search, and lines that make the month
// seal into parts while the helpers append.
func storeEntry(id, i int) string {
	return fmt.Sprintf("## helper %d change %d\n- Summary: change %d of helper %d\n- Task: find %s\n%s",
		id, i, i, id, storeWord(id, i), strings.Repeat("- Note: a line that makes the entry long enough\n", 4))
}

// storeWord is a word only helper id's change i has.
func storeWord(id, i int) string { return fmt.Sprintf("zq%dh%dw", id, i) }

// storeFactLine is helper id's fact line for its change i.
func storeFactLine(id, i int) string { return fmt.Sprintf("- helper %d fact %d", id, i) }

var countFact = regexp.MustCompile(`(?m)^- count: (\d+)$`)

// increment adds one to the counter with Store.Patch: it reads the count
// and patches its line, and when the count changed meanwhile (the patch's
// text is gone, or the file changed) reads it again. It returns how many
// times it did.
func increment(ctx context.Context, s *memory.Store) (retries int, err error) {
	for {
		text, err := s.Read(ctx, counterFact)
		if err != nil {
			return retries, err
		}
		m := countFact.FindStringSubmatch(text)
		if m == nil {
			return retries, fmt.Errorf("no count line in %q", text)
		}
		n, _ := strconv.Atoi(m[1])
		_, err = s.Patch(ctx, counterFact, []memory.Patch{{
			OldText: fmt.Sprintf("- count: %d\n", n),
			NewText: fmt.Sprintf("- count: %d\n", n+1),
		}})
		if err == nil || !errors.Is(err, memory.ErrPatchFailed) && !errors.Is(err, memory.ErrConflict) {
			return retries, err
		}
		retries++
	}
}

// storeChild makes storeChanges changes through a Store of its own, of
// the three kinds in turn, and prints how many increments it made again.
func storeChild(t *testing.T, b *s3store.Backend, id int) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	s := openStore(t, b)
	retries := 0
	for i := range storeChanges {
		var err error
		switch storeKind(id, i) {
		case kindAppend:
			err = s.Append(ctx, storeMonth, storeEntry(id, i), "")
		case kindIncrement:
			var n int
			n, err = increment(ctx, s)
			retries += n
		case kindFact:
			err = s.Append(ctx, linesFact, storeFactLine(id, i), "")
		}
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	fmt.Printf("increments made again: %d\n", retries)
}

// monthFiles reads every file of the month of storeMonth through s, its
// parts first, as the backend lists them.
func monthFiles(t *testing.T, s *memory.Store, b memory.Backend) map[string]string {
	t.Helper()
	ctx := context.Background()
	entries, err := b.List(ctx, "episodes")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, en := range entries {
		if !strings.HasPrefix(en.Name, "episodes/2026-02.") || strings.Count(en.Name, "/") != 1 {
			continue
		}
		text, err := s.Read(ctx, en.Name)
		if err != nil {
			t.Fatal(err)
		}
		files[en.Name] = text
	}
	return files
}

// headings counts the "## " headings in the texts.
func headings(texts map[string]string) map[string]int {
	n := map[string]int{}
	for _, text := range texts {
		for line := range strings.Lines(text) {
			if h, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "## "); ok {
				n[h]++
			}
		}
	}
	return n
}

// TestStoreProcesses: 8 processes, each with its own client and Store,
// make 50 changes each to one prefix: appends to one month (which seals
// into parts meanwhile), increments of a count line with Store.Patch, and
// appends of lines to a fact file. Every entry and line is there once, no
// increment is lost, and no lease is left.
func TestStoreProcesses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := e.backend(nil)
	s := openStore(t, b)
	if err := s.Write(ctx, counterFact, "# Memory\n\n> Summary: a counter\n\n- count: 0\n"); err != nil {
		t.Fatal(err)
	}
	const n = 8
	start := time.Now()
	outs := runChildren(t, e, n, "store")
	t.Logf("%d processes × %d changes in %v", n, storeChanges, time.Since(start).Round(time.Millisecond))

	retries := 0
	for i, out := range outs {
		var r int
		if _, err := fmt.Sscanf(out, "increments made again: %d\n", &r); err != nil {
			t.Fatalf("helper %d printed %q", i, out)
		}
		retries += r
	}
	wantEntries, wantLines, increments := map[string]bool{}, map[string]bool{}, 0
	for id := range n {
		for i := range storeChanges {
			switch storeKind(id, i) {
			case kindAppend:
				wantEntries[fmt.Sprintf("helper %d change %d", id, i)] = true
			case kindIncrement:
				increments++
			case kindFact:
				wantLines[storeFactLine(id, i)] = true
			}
		}
	}
	t.Logf("%d entries, %d fact lines, %d increments (%d made again)", len(wantEntries), len(wantLines), increments, retries)

	// A Store that took no part reads it all.
	fresh := openStore(t, e.backend(nil))
	text, err := fresh.Read(ctx, counterFact)
	if err != nil {
		t.Fatal(err)
	}
	if m := countFact.FindStringSubmatch(text); m == nil || m[1] != strconv.Itoa(increments) {
		t.Errorf("the counter reads %q, want %d", text, increments)
	}
	text, err = fresh.Read(ctx, linesFact)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for line := range strings.Lines(text) {
		if line = strings.TrimSuffix(line, "\n"); strings.HasPrefix(line, "- helper ") {
			got[line]++
		}
	}
	for line := range wantLines {
		if got[line] != 1 {
			t.Errorf("%s holds %q %d times", linesFact, line, got[line])
		}
	}
	if len(got) != len(wantLines) {
		t.Errorf("%s holds %d helper lines, want %d", linesFact, len(got), len(wantLines))
	}

	files := monthFiles(t, fresh, b)
	counts := headings(files)
	for h := range wantEntries {
		if counts[h] != 1 {
			t.Errorf("%q is in the month %d times", h, counts[h])
		}
	}
	if len(counts) != len(wantEntries) {
		t.Errorf("the month holds %d entries, want %d", len(counts), len(wantEntries))
	}
	list, err := fresh.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(f memory.FileInfo) bool { return f.Path == storeMonth })
	if i < 0 || list[i].Parts < 1 || list[i].Parts+1 != len(files) {
		t.Fatalf("List: %+v; the month has %d files", list, len(files))
	}
	var size int64
	for _, text := range files {
		size += int64(len(text))
	}
	if list[i].Size != size {
		t.Errorf("List: the month is %d bytes, its files %d", list[i].Size, size)
	}
	// Search finds each entry once.
	for id := range n {
		for i := range storeChanges {
			if storeKind(id, i) != kindAppend {
				continue
			}
			hits, err := fresh.Search(ctx, storeWord(id, i), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 || hits[0].Title != fmt.Sprintf("helper %d change %d", id, i) {
				t.Errorf("Search(%s): %+v", storeWord(id, i), hits)
			}
		}
	}
	for _, lease := range []string{".lease/facts", ".lease/episodes"} {
		if _, exists := rawGet(e, lease); exists {
			t.Errorf("%s is left", lease)
		}
	}

	// The history: every change recorded once, in the order of each
	// file's versions: the counter's versions count up by one, the fact
	// lines' grow by a line, the month's file by an entry (a new file
	// after a seal).
	versions := requireHistory(t, fresh, "after the processes", true)
	for i, text := range versions[counterFact] {
		if m := countFact.FindStringSubmatch(text); m == nil || m[1] != strconv.Itoa(i) {
			t.Errorf("%s: version %d of the counter reads %q", counterFact, i, text)
		}
	}
	if got := len(versions[counterFact]); got != increments+1 {
		t.Errorf("%s: %d changes recorded, want the write and %d increments", counterFact, got, increments)
	}
	for i, text := range versions[linesFact] {
		if n := strings.Count(text, "\n- helper "); n != i+1 {
			t.Errorf("%s: version %d holds %d lines", linesFact, i, n)
		}
	}
	if got := len(versions[linesFact]); got != len(wantLines) {
		t.Errorf("%s: %d changes recorded, want %d", linesFact, got, len(wantLines))
	}
	prev := 0
	for i, text := range versions[storeMonth] {
		if n := strings.Count(text, "\n## "); n != prev+1 && n != 1 {
			t.Errorf("%s: version %d holds %d entries, after %d", storeMonth, i, n, prev)
		} else {
			prev = n
		}
	}
	sealed := 0
	for p, texts := range versions {
		if strings.HasPrefix(p, "episodes/2026-02.0") {
			sealed += len(texts)
		}
	}
	if got := len(versions[storeMonth]); got != len(wantEntries) {
		t.Errorf("%s: %d changes recorded, want %d appends", storeMonth, got, len(wantEntries))
	}
	if sealed != len(files)-1 {
		t.Errorf("%d seals recorded, for %d parts", sealed, len(files)-1)
	}
	t.Logf("history: %d changes of %s, %d of %s, %d of %s, %d seals", len(versions[counterFact]), counterFact, len(versions[linesFact]), linesFact, len(versions[storeMonth]), storeMonth, sealed)
}

// TestStoreSeesOtherClients: what another client does to the prefix (a
// person's `aws s3 cp` and `aws s3 rm`, a second Store with a client of
// its own) is seen by the very next Read, List and Search of a Store that
// had read and indexed the files before.
func TestStoreSeesOtherClients(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := openStore(t, e.backend(nil))
	search := func(query string) []string {
		t.Helper()
		hits, err := s.Search(ctx, query, nil)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, h := range hits {
			paths = append(paths, h.Path)
		}
		return paths
	}
	read := func(path string) string {
		t.Helper()
		text, err := s.Read(ctx, path)
		if err != nil {
			t.Fatalf("Read(%s): %v", path, err)
		}
		return text
	}
	summary := func(path string) string {
		t.Helper()
		files, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if f.Path == path {
				return f.Summary
			}
		}
		return "(not listed)"
	}

	if err := s.Write(ctx, linesFact, "# User\n\n> Summary: who the person is\n\n- Likes: jasmine tea\n"); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, storeMonth, "## Lunch\n- Summary: dumplings at Din Tai Fung", ""); err != nil {
		t.Fatal(err)
	}
	read(linesFact)
	if got := search("jasmine"); !slices.Equal(got, []string{linesFact}) {
		t.Fatalf("Search(jasmine): %q", got)
	}

	// aws s3 cp of a fact file.
	edited := "# User\n\n> Summary: edited in the bucket\n\n- Likes: oolong tea\n"
	rawPut(e, linesFact, edited)
	if got := read(linesFact); got != edited {
		t.Errorf("Read after aws s3 cp: %q", got)
	}
	if got := search("jasmine"); len(got) != 0 {
		t.Errorf("Search(jasmine) after aws s3 cp: %q", got)
	}
	if got := search("oolong"); !slices.Equal(got, []string{linesFact}) {
		t.Errorf("Search(oolong) after aws s3 cp: %q", got)
	}
	if got := summary(linesFact); got != "edited in the bucket" {
		t.Errorf("List after aws s3 cp: summary %q", got)
	}

	// aws s3 cp of the month, the same size: only the ETag tells.
	old := read(storeMonth)
	month := strings.Replace(old, "dumplings at Din Tai Fung", "hotpot near West Lake, ok", 1)
	if len(month) != len(old) {
		t.Fatal("the edit changes the size")
	}
	rawPut(e, storeMonth, month)
	if got := read(storeMonth); got != month {
		t.Errorf("Read of the month after aws s3 cp: %q", got)
	}
	if got := search("dumplings"); len(got) != 0 {
		t.Errorf("Search(dumplings) after aws s3 cp: %q", got)
	}
	if got := search("hotpot"); !slices.Equal(got, []string{storeMonth}) {
		t.Errorf("Search(hotpot) after aws s3 cp: %q", got)
	}

	// A second Store, with its own client, appends and patches.
	other := openStore(t, e.backend(newClient(e.gw.endpoint, nil)))
	if err := other.Append(ctx, storeMonth, "## Dinner\n- Summary: noodles in Suzhou", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Patch(ctx, linesFact, []memory.Patch{{OldText: "oolong", NewText: "longjing"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(storeMonth); !strings.Contains(got, "## Dinner\n") || !strings.Contains(got, "hotpot") {
		t.Errorf("Read after another Store's append: %q", got)
	}
	if got := search("noodles"); !slices.Equal(got, []string{storeMonth}) {
		t.Errorf("Search(noodles) after another Store's append: %q", got)
	}
	if got := search("oolong"); len(got) != 0 {
		t.Errorf("Search(oolong) after another Store's patch: %q", got)
	}
	if got := search("longjing"); !slices.Equal(got, []string{linesFact}) {
		t.Errorf("Search(longjing) after another Store's patch: %q", got)
	}

	// aws s3 cp of a new month, and aws s3 rm of the fact file.
	rawPut(e, "episodes/2026-01.md", "# 2026-01 Episodes\n\n> Summary: January\n\n## Ski trip\n- Date: 2026-01-10\n")
	rawDelete(e, linesFact)
	if got := search("ski"); !slices.Equal(got, []string{"episodes/2026-01.md"}) {
		t.Errorf("Search(ski) after aws s3 cp of a new month: %q", got)
	}
	if got := summary("episodes/2026-01.md"); got != "January" {
		t.Errorf("List after aws s3 cp of a new month: summary %q", got)
	}
	if got := search("longjing"); len(got) != 0 {
		t.Errorf("Search(longjing) after aws s3 rm: %q", got)
	}
	if _, err := s.Read(ctx, linesFact); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Read after aws s3 rm: %v, want ErrNotFound", err)
	}
	if got := summary(linesFact); got != "(not listed)" {
		t.Errorf("List after aws s3 rm lists %s: %q", linesFact, got)
	}
}
