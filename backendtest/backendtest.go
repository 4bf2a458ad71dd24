// Package backendtest is the conformance suite of [memory.Backend]: the
// behaviour a [memory.Store] must show on any backend, checked through the
// Store's public API and its tools.
//
// A Backend passes when [Run] passes on it. The library runs the suite for
// its local directory backend ([memory.Dir], in the root package's
// TestDirBackend), and the s3store module runs it for its S3 backend
// against a real S3 server (TestStoreSuite). A third-party Backend runs it
// from a test of its own:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) memory.Backend {
//			b := mybackend.New(...) // fresh and empty
//			t.Cleanup(func() { b.Close() })
//			return b
//		})
//	}
//
// The suite imports only the standard library and the memory package. Its
// cases wait for nothing by time and assume nothing of timing: they only
// need the Backend to keep its contract.
package backendtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// Run runs the conformance suite on the backends open makes: each case, a
// subtest of t, calls open for a fresh, empty Backend (which open arranges
// to clean up, with t.Cleanup; the cases of shared world topics call it
// three times), opens one or more Stores on it with [memory.OpenBackend]
// and a fixed clock (2026-02-26), and checks what they do: writes, patches
// and appends, months sealed into parts, List's summaries and sizes, Search
// seeing every change at once (the Store's and one made through the Backend
// directly, as `aws s3 cp` or a person's editor would), the facts budget,
// the conversations' version tokens, WriteIf, two Stores appending at once,
// Compact, the secret guard and Check's report of a credential, world
// topics that two agents on Backends of their own share through a third
// (Options.World), Forget (no byte of the text left on the Backend, the
// history still read), and Close. When a case ends, each of
// its Stores runs [memory.Store.Check] on the memory left, which must find
// nothing (text outside a fact file's bullets aside).
//
// The Stores never close the Backend: it belongs to open's cleanup.
func Run(t *testing.T, open func(t *testing.T) memory.Backend) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := open(t)
			if b == nil {
				t.Fatal("open returned a nil Backend")
			}
			e := newEnv(t, b)
			e.open = func() memory.Backend {
				b := open(t)
				if b == nil {
					t.Fatal("open returned a nil Backend")
				}
				return b
			}
			c.run(t, e)
		})
	}
}

// A testCase is one named behaviour.
type testCase struct {
	name string
	run  func(t *testing.T, e *env)
}

// cases is the suite, in the order it runs.
var cases = []testCase{
	{"WriteReadBack", testWriteReadBack},
	{"WriteAddsTitle", testWriteAddsTitle},
	{"Patch", testPatch},
	{"PatchMissing", testPatchMissing},
	{"Append", testAppend},
	{"AppendSealsParts", testAppendSealsParts},
	{"List", testList},
	{"SearchSeesAppend", testSearchSeesAppend},
	{"BackendChangeSeen", testBackendChangeSeen},
	{"ListSeesChange", testListSeesChange},
	{"FactsBudget", testFactsBudget},
	{"VersionTokens", testVersionTokens},
	{"HandChangeBetweenReadAndPatch", testHandChangeBetweenReadAndPatch},
	{"WriteIf", testWriteIf},
	{"ConcurrentStores", testConcurrentStores},
	{"Compact", testCompact},
	{"Secrets", testSecrets},
	{"SharedWorld", testSharedWorld},
	{"SharedWorldBudget", testSharedWorldBudget},
	{"Forget", testForget},
	{"ForgetWorld", testForgetWorld},
	{"Close", testClose},
}

// Today is the Stores' clock: the month file of today is month.
var today = time.Date(2026, 2, 26, 9, 30, 0, 0, time.UTC)

const (
	month     = "2026-02"
	monthFile = "episodes/2026-02.md"
	userFile  = "facts/user.md"
	memFile   = "facts/memory.md"

	// partMax is the size past which an append seals a month's file as a
	// part (the library's months.go): the suite writes more than that.
	partMax = 16 << 10
)

// env is a case's Backend and the Store it opened first.
type env struct {
	t   *testing.T
	ctx context.Context
	b   memory.Backend
	s   *memory.Store

	open func() memory.Backend // another fresh Backend, for the cases that need more than one
}

func newEnv(t *testing.T, b memory.Backend) *env {
	e := &env{t: t, ctx: t.Context(), b: b}
	e.s = e.store(nil)
	return e
}

// store opens another Store on the case's Backend, with the fixed clock,
// closed when the case ends.
func (e *env) store(opts *memory.Options) *memory.Store {
	e.t.Helper()
	var o memory.Options
	if opts != nil {
		o = *opts
	}
	o.Now = func() time.Time { return today }
	s, err := memory.OpenBackend(e.b, &o)
	if err != nil {
		e.t.Fatalf("OpenBackend: %v", err)
	}
	e.t.Cleanup(func() { s.Close() })
	b := e.b
	e.t.Cleanup(func() { e.check(s, b, o) })
	return s
}

// check runs when the case ends, before s is closed, as bbolt's test DB
// runs tx.Check: no case leaves broken memory on purpose (its hand edits
// keep every rule). A Store the case closed is checked through another
// one on b, opened with opts.
func (e *env) check(s *memory.Store, b memory.Backend, opts memory.Options) {
	CheckLeft(e.t, s, func() (*memory.Store, error) { return memory.OpenBackend(b, &opts) }, "the case", "")
}

// CheckLeft fails t for every finding [memory.Store.Check] makes on the
// memory s holds, as a test's cleanup does: what the library writes gives
// none, but warnings of text outside the bullets of a fact file or topic,
// which it writes when it is given it. A Store already closed is checked
// through one reopen opens, closed after. Each report reads "memory left
// by <who>: …" and ends with note.
func CheckLeft(t testing.TB, s *memory.Store, reopen func() (*memory.Store, error), who, note string) {
	t.Helper()
	ctx := context.Background() // the test's context ends before its cleanups
	findings, err := s.Check(ctx)
	if errors.Is(err, memory.ErrClosed) {
		var again *memory.Store
		if again, err = reopen(); err == nil {
			defer again.Close()
			findings, err = again.Check(ctx)
		}
	}
	if err != nil {
		t.Errorf("memory left by %s: Check: %v%s", who, err, note)
		return
	}
	for _, f := range findings {
		if f.Warning && f.Line > 0 && (strings.HasPrefix(f.Path, "facts/") || strings.HasPrefix(f.Path, "world/")) {
			continue // prose in a fact file: the library writes it
		}
		kind := "finding"
		if f.Warning {
			kind = "warning"
		}
		t.Errorf("memory left by %s: %s:%d: Check's %s: %s%s", who, f.Path, f.Line, kind, f.Problem, note)
	}
}

// read reads path through s, failing the case on an error.
func (e *env) read(s *memory.Store, path string) string {
	e.t.Helper()
	text, err := s.Read(e.ctx, path)
	if err != nil {
		e.t.Fatalf("Read(%s): %v", path, err)
	}
	return text
}

// write writes path through s, failing the case on an error.
func (e *env) write(s *memory.Store, path, content string) {
	e.t.Helper()
	if err := s.Write(e.ctx, path, content); err != nil {
		e.t.Fatalf("Write(%s): %v", path, err)
	}
}

// appendTo appends entry to path through s, failing the case on an error.
func (e *env) appendTo(s *memory.Store, path, entry string) {
	e.t.Helper()
	if err := s.Append(e.ctx, path, entry, ""); err != nil {
		e.t.Fatalf("Append(%s): %v", path, err)
	}
}

// raw reads name through the Backend, as another client would.
func (e *env) raw(name string) memory.Content {
	e.t.Helper()
	c, err := e.b.Read(e.ctx, name, -1)
	if err != nil {
		e.t.Fatalf("Backend.Read(%s): %v", name, err)
	}
	return c
}

// rawExists tells whether name exists on the Backend.
func (e *env) rawExists(name string) bool {
	e.t.Helper()
	_, err := e.b.Read(e.ctx, name, -1)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.t.Fatalf("Backend.Read(%s): %v", name, err)
	}
	return err == nil
}

// handEdit replaces name through the Backend with data, at the version it
// reads first: another client's change, a person's `aws s3 cp`.
func (e *env) handEdit(name, data string) {
	e.t.Helper()
	c := e.raw(name)
	if _, err := Put(e.ctx, e.b, name, []byte(data), c.Version); err != nil {
		e.t.Fatalf("Backend.Write(%s): %v", name, err)
	}
}

// search searches through s, failing the case on an error.
func (e *env) search(s *memory.Store, query string) []memory.SearchHit {
	e.t.Helper()
	hits, err := s.Search(e.ctx, query, &memory.SearchOptions{Limit: 50})
	if err != nil {
		e.t.Fatalf("Search(%q): %v", query, err)
	}
	return hits
}

// hitPaths are the paths of hits, in order.
func hitPaths(hits []memory.SearchHit) []string {
	var ps []string
	for _, h := range hits {
		ps = append(ps, h.Path)
	}
	return ps
}

// list lists s, failing the case on an error.
func (e *env) list(s *memory.Store) []memory.FileInfo {
	e.t.Helper()
	files, err := s.List(e.ctx)
	if err != nil {
		e.t.Fatalf("List: %v", err)
	}
	for _, f := range files {
		if f.Error != "" {
			e.t.Errorf("List: %s: %s", f.Path, f.Error)
		}
	}
	return files
}

// info is the FileInfo of path in files.
func info(t *testing.T, files []memory.FileInfo, path string) memory.FileInfo {
	t.Helper()
	i := slices.IndexFunc(files, func(f memory.FileInfo) bool { return f.Path == path })
	if i < 0 {
		t.Fatalf("List has no %s: %+v", path, files)
	}
	return files[i]
}

// monthFiles returns the paths of all of a month's files, its parts then
// its file, as List counts them.
func (e *env) monthFiles(s *memory.Store, m string) []string {
	e.t.Helper()
	fi := info(e.t, e.list(s), "episodes/"+m+".md")
	var ps []string
	for n := 1; n <= fi.Parts; n++ {
		ps = append(ps, fmt.Sprintf("episodes/%s.%03d.md", m, n))
	}
	return append(ps, "episodes/"+m+".md")
}

// wantErr fails the case unless err wraps target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: %v, want an error wrapping %q", what, err, target)
	}
}

// call runs a tool of a conversation with args as JSON, failing the case
// on a host error.
func (e *env) call(c *memory.Session, name string, args map[string]any) memory.ToolResult {
	e.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := c.Call(e.ctx, name, raw)
	if err != nil {
		e.t.Fatalf("%s %s: %v", name, raw, err)
	}
	return r
}

// readTool is memory_read of path in the conversation c: the version it
// gives, and the text.
func (e *env) readTool(c *memory.Session, path string) (version, text string) {
	e.t.Helper()
	r := e.call(c, "memory_read", map[string]any{"path": path, "line": nil})
	if r.IsError {
		e.t.Fatalf("memory_read %s: %s", path, r.Text)
	}
	head, text, ok := strings.Cut(r.Text, "\n\n")
	first, _, _ := strings.Cut(head, "\n")
	version, found := strings.CutPrefix(first, "version: ")
	if !ok || !found || version == "" {
		e.t.Fatalf("memory_read %s does not start with a version line: %q", path, r.Text)
	}
	return version, text
}

// wantConflict fails the case unless r is a tool's refusal of a change
// that would overwrite what the conversation has not seen: an error
// result that says why (phrase) and that nothing was changed.
func wantConflict(t *testing.T, what string, r memory.ToolResult, phrase string) {
	t.Helper()
	if !r.IsError || !strings.Contains(r.Text, phrase) || !strings.Contains(r.Text, "nothing was changed") {
		t.Fatalf("%s: %+v, want an error result saying %q and that nothing was changed", what, r, phrase)
	}
}

// entry is an episode entry of about size bytes: a heading that names it
// and a line holding token, a word found nowhere else, then filler.
func entry(title, token string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n- Summary: %s\n- Task: find %s\n", title, title, token)
	for b.Len() < size {
		b.WriteString("- Note: routine detail kept for its length, nothing more\n")
	}
	return b.String()
}

// token is a word of its own for entry n of writer w, one search finds.
func token(w, n int) string { return fmt.Sprintf("qz%dx%dk", w, n) }

// countHeadings counts the lines "## title" in text.
func countHeadings(text string) map[string]int {
	n := map[string]int{}
	for line := range strings.Lines(text) {
		if title, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "## "); ok {
			n[title]++
		}
	}
	return n
}

func testWriteReadBack(t *testing.T, e *env) {
	first := "# User\n\n> Summary: who the person is\n\n- Name: Zhang San\n- Likes: green tea\n"
	e.write(e.s, userFile, first)
	if got := e.read(e.s, userFile); got != first {
		t.Fatalf("read back %q, want %q", got, first)
	}
	if c := e.raw(userFile); string(c.Data) != first || c.Size != int64(len(first)) {
		t.Fatalf("the Backend holds %q (size %d), want %q", c.Data, c.Size, first)
	}

	second := "# User\n\n> Summary: who the person is now\n\n- Name: Zhang San\n- Likes: black coffee\n- City: Hangzhou"
	e.write(e.s, userFile, second)
	if got := e.read(e.s, userFile); got != second+"\n" {
		t.Fatalf("after a second write: %q, want %q with a final newline", got, second)
	}
	// Another Store on the same Backend reads what the first wrote.
	if got := e.read(e.store(nil), userFile); got != second+"\n" {
		t.Fatalf("another Store reads %q", got)
	}

	// A month's file is written as a fact file is.
	month := "# 2026-02 Episodes\n\n> Summary: one trip\n\n## Trip\n- Date: 2026-02-03\n- Summary: a trip\n"
	e.write(e.s, monthFile, month)
	if got := e.read(e.s, monthFile); got != month {
		t.Fatalf("month read back %q, want %q", got, month)
	}

	_, err := e.s.Read(e.ctx, memFile)
	wantErr(t, "Read of a file never written", err, memory.ErrNotFound)
	_, err = e.s.Read(e.ctx, "episodes/2026-01.md")
	wantErr(t, "Read of a month never written", err, memory.ErrNotFound)
	wantErr(t, "Write outside the grammar", e.s.Write(e.ctx, "notes/x.md", "x"), memory.ErrInvalidPath)
	wantErr(t, "Write of a fact file not configured", e.s.Write(e.ctx, "facts/other.md", "x"), memory.ErrInvalidPath)
}

func testWriteAddsTitle(t *testing.T, e *env) {
	e.write(e.s, userFile, "- Name: Zhang San\n- Likes: green tea\n")
	got := e.read(e.s, userFile)
	if !strings.HasPrefix(got, "# User\n") || !strings.Contains(got, "\n> Summary: ") || !strings.HasSuffix(got, "- Name: Zhang San\n- Likes: green tea\n") {
		t.Fatalf("a fact file written without a title reads %q, want the title \"# User\", a summary line and the facts", got)
	}
	e.write(e.s, monthFile, "## Trip\n- Date: 2026-02-03\n- Summary: a trip\n")
	got = e.read(e.s, monthFile)
	if !strings.HasPrefix(got, "# 2026-02 Episodes\n") || !strings.Contains(got, "\n> Summary: Trip\n") || !strings.HasSuffix(got, "## Trip\n- Date: 2026-02-03\n- Summary: a trip\n") {
		t.Fatalf("a month written without a title reads %q", got)
	}
	// The summary List shows is the one written.
	files := e.list(e.s)
	if s := info(t, files, monthFile).Summary; s != "Trip" {
		t.Errorf("List: the month's summary is %q, want %q", s, "Trip")
	}
	if s := info(t, files, userFile).Summary; s == "" {
		t.Errorf("List: the fact file has no summary")
	}
}

func testPatch(t *testing.T, e *env) {
	orig := "# User\n\n> Summary: who the person is\n\n- Name: Zhang San\n- Likes: green tea\n"
	e.write(e.s, userFile, orig)
	n, err := e.s.Patch(e.ctx, userFile, []memory.Patch{{OldText: "green tea", NewText: "oolong tea"}, {OldText: "Zhang San", NewText: "Zhang Wei"}})
	if err != nil || n != 2 {
		t.Fatalf("Patch: %d, %v", n, err)
	}
	want := strings.NewReplacer("green tea", "oolong tea", "Zhang San", "Zhang Wei").Replace(orig)
	if got := e.read(e.s, userFile); got != want {
		t.Fatalf("patched: %q, want %q", got, want)
	}
	before := e.raw(userFile)

	for _, tc := range []struct {
		what    string
		patches []memory.Patch
	}{
		{"text not found", []memory.Patch{{OldText: "coffee", NewText: "tea"}}},
		{"text found twice", []memory.Patch{{OldText: "- ", NewText: "* "}}},
		{"empty old text", []memory.Patch{{OldText: "", NewText: "x"}}},
		{"second of two fails", []memory.Patch{{OldText: "oolong", NewText: "jasmine"}, {OldText: "oolong", NewText: "x"}}},
	} {
		n, err := e.s.Patch(e.ctx, userFile, tc.patches)
		wantErr(t, "Patch, "+tc.what, err, memory.ErrPatchFailed)
		if n != 0 {
			t.Errorf("Patch, %s: applied %d", tc.what, n)
		}
		if after := e.raw(userFile); !bytes.Equal(after.Data, before.Data) || after.Version != before.Version {
			t.Fatalf("Patch, %s, changed the file: %q", tc.what, after.Data)
		}
	}
}

func testPatchMissing(t *testing.T, e *env) {
	_, err := e.s.Patch(e.ctx, userFile, []memory.Patch{{OldText: "a", NewText: "b"}})
	wantErr(t, "Patch of a missing fact file", err, memory.ErrNotFound)
	_, err = e.s.Patch(e.ctx, monthFile, []memory.Patch{{OldText: "a", NewText: "b"}})
	wantErr(t, "Patch of a missing month", err, memory.ErrNotFound)
	if e.rawExists(userFile) || e.rawExists(monthFile) {
		t.Fatal("a Patch of a missing file created it")
	}
}

func testAppend(t *testing.T, e *env) {
	e.appendTo(e.s, memFile, "- Lesson: cross-check prices on the airline's site")
	e.appendTo(e.s, memFile, "- Lesson: check time arithmetic first\n- Lesson: keep notes short")
	got := e.read(e.s, memFile)
	if !strings.HasPrefix(got, "# Memory\n") || !strings.Contains(got, "\n> Summary: ") ||
		!strings.HasSuffix(got, "- Lesson: cross-check prices on the airline's site\n- Lesson: check time arithmetic first\n- Lesson: keep notes short\n") {
		t.Fatalf("facts after two appends: %q", got)
	}

	e.appendTo(e.s, monthFile, "## Tokyo flights\n- Summary: Spring Airlines cheapest\n- Outcome: booked")
	e.appendTo(e.s, monthFile, "## Login bug\n- Date: 2026-02-20\n- Summary: tokens expired early")
	got = e.read(e.s, monthFile)
	want := "## Tokyo flights\n- Summary: Spring Airlines cheapest\n- Date: 2026-02-26\n- Outcome: booked\n\n## Login bug\n- Date: 2026-02-20\n- Summary: tokens expired early\n"
	if !strings.HasPrefix(got, "# 2026-02 Episodes\n\n> Summary: Tokyo flights, Login bug\n") || !strings.HasSuffix(got, want) {
		t.Fatalf("month after two appends: %q", got)
	}
	if s := info(t, e.list(e.s), monthFile).Summary; s != "Tokyo flights, Login bug" {
		t.Errorf("List: the month's summary is %q", s)
	}

	err := e.s.Append(e.ctx, monthFile, "## Old news\n- Date: 2026-01-05", "")
	wantErr(t, "Append of an entry dated outside its month", err, memory.ErrInvalidContent)
	err = e.s.Append(e.ctx, monthFile, "no heading", "")
	wantErr(t, "Append of an entry without a heading", err, memory.ErrInvalidContent)
	if again := e.read(e.s, monthFile); again != got {
		t.Fatalf("a refused append changed the month: %q", again)
	}
}

func testAppendSealsParts(t *testing.T, e *env) {
	const n, size = 60, 500 // about 30 KiB: at least one part
	for i := range n {
		e.appendTo(e.s, monthFile, entry(fmt.Sprintf("Entry %d", i), token(0, i), size))
	}
	files := e.list(e.s)
	fi := info(t, files, monthFile)
	if fi.Parts < 1 {
		t.Fatalf("%d entries of %d bytes left no part: %+v", n, size, fi)
	}
	var all strings.Builder
	var total int64
	for _, p := range e.monthFiles(e.s, month) {
		text := e.read(e.s, p)
		if len(text) > partMax+size+200 {
			t.Errorf("%s is %d bytes, more than a part should hold", p, len(text))
		}
		total += int64(len(text))
		all.WriteString(text)
	}
	if fi.Size != total {
		t.Errorf("List: the month is %d bytes, its files read back %d", fi.Size, total)
	}
	counts := countHeadings(all.String())
	for i := range n {
		if c := counts[fmt.Sprintf("Entry %d", i)]; c != 1 {
			t.Errorf("Entry %d is in the month's files %d times", i, c)
		}
	}
	if len(counts) != n {
		t.Errorf("the month's files hold %d entries, want %d", len(counts), n)
	}
	// Search finds each entry once, in one of the month's files.
	for i := range n {
		hits := e.search(e.s, token(0, i))
		if len(hits) != 1 || hits[0].Title != fmt.Sprintf("Entry %d", i) || !strings.HasPrefix(hits[0].Path, "episodes/2026-02.") {
			t.Errorf("Search(%s): %+v, want Entry %d once", token(0, i), hits, i)
		}
	}
	// A part reads as a month's file; Append to it is refused.
	part := "episodes/2026-02.001.md"
	if got := e.read(e.s, part); !strings.HasPrefix(got, "# 2026-02 Episodes\n") || !strings.Contains(got, "## Entry 0\n") {
		t.Errorf("the first part starts %q", got[:min(len(got), 80)])
	}
	wantErr(t, "Append to a part", e.s.Append(e.ctx, part, entry("X", "x", 10), ""), memory.ErrInvalidPath)
}

func testList(t *testing.T, e *env) {
	if files := e.list(e.s); len(files) != 0 {
		t.Fatalf("an empty store lists %+v", files)
	}
	e.write(e.s, memFile, "# Memory\n\n> Summary: lessons learned\n\n- Lesson: cross-check prices\n")
	e.write(e.s, userFile, "# User\n\n> Summary: who the person is\n\n- Name: Zhang San\n")
	e.write(e.s, "episodes/2025-12.md", "# 2025-12 Episodes\n\n> Summary: December\n\n## Gift\n- Date: 2025-12-20\n")
	e.appendTo(e.s, monthFile, "## Trip\n- Summary: a trip")
	files := e.list(e.s)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if want := []string{userFile, memFile, monthFile, "episodes/2025-12.md"}; !slices.Equal(paths, want) {
		t.Fatalf("List: %q, want %q (facts in configured order, then months newest first)", paths, want)
	}
	for _, tc := range []struct{ path, summary string }{
		{userFile, "who the person is"},
		{memFile, "lessons learned"},
		{monthFile, "Trip"},
		{"episodes/2025-12.md", "December"},
	} {
		fi := info(t, files, tc.path)
		if fi.Summary != tc.summary {
			t.Errorf("List: %s has the summary %q, want %q", tc.path, fi.Summary, tc.summary)
		}
		if text := e.read(e.s, tc.path); fi.Size != int64(len(text)) {
			t.Errorf("List: %s is %d bytes, reads back %d", tc.path, fi.Size, len(text))
		}
		if fi.Parts != 0 || fi.Compacted {
			t.Errorf("List: %+v", fi)
		}
	}

	// A change through the Backend shows in the next List.
	e.handEdit(userFile, "# User\n\n> Summary: the person, edited by hand\n\n- Name: Zhang San\n- City: Hangzhou\n")
	fi := info(t, e.list(e.s), userFile)
	if fi.Summary != "the person, edited by hand" || fi.Size != int64(len(e.read(e.s, userFile))) {
		t.Errorf("List after a change through the Backend: %+v", fi)
	}
}

func testSearchSeesAppend(t *testing.T, e *env) {
	if hits := e.search(e.s, "kyoto"); len(hits) != 0 {
		t.Fatalf("an empty store finds %+v", hits)
	}
	// The index is built; each change is found by the very next search.
	for i := range 5 {
		word := token(1, i)
		e.appendTo(e.s, monthFile, entry(fmt.Sprintf("Kyoto trip %d", i), word, 0))
		hits := e.search(e.s, word)
		if len(hits) != 1 || hits[0].Path != monthFile || hits[0].Title != fmt.Sprintf("Kyoto trip %d", i) || hits[0].Date != "2026-02-26" {
			t.Fatalf("Search(%s) right after its append: %+v", word, hits)
		}
		if hits := e.search(e.s, "kyoto"); len(hits) != i+1 {
			t.Fatalf("Search(kyoto) after %d appends: %d hits", i+1, len(hits))
		}
	}
	e.appendTo(e.s, memFile, "- Lesson: the ryokan wants cash")
	if hits := e.search(e.s, "ryokan"); len(hits) != 1 || hits[0].Path != memFile {
		t.Fatalf("Search(ryokan) right after a fact's append: %+v", hits)
	}
	// Another Store's change too.
	other := e.store(nil)
	e.appendTo(other, monthFile, entry("Osaka day", "takoyaki", 0))
	if hits := e.search(e.s, "takoyaki"); len(hits) != 1 || hits[0].Title != "Osaka day" {
		t.Fatalf("Search(takoyaki) after another Store's append: %+v", hits)
	}
	// A patch that removes a word: gone at once.
	if _, err := e.s.Patch(e.ctx, memFile, []memory.Patch{{OldText: "ryokan", NewText: "hostel"}}); err != nil {
		t.Fatal(err)
	}
	if hits := e.search(e.s, "ryokan"); len(hits) != 0 {
		t.Fatalf("Search(ryokan) after it was patched away: %+v", hits)
	}
	if hits := e.search(e.s, "hostel"); len(hits) != 1 {
		t.Fatalf("Search(hostel) after the patch: %+v", hits)
	}
}

// testListSeesChange: List remembers the summaries it read, by the files'
// tags; a change another client makes through the Backend, of the same
// size, is seen by the next List.
func testListSeesChange(t *testing.T, e *env) {
	e.write(e.s, userFile, "# User\n\n> Summary: likes green tea\n\n- Likes: jasmine tea\n")
	e.appendTo(e.s, monthFile, "## Lunch\n- Summary: dumplings at Din Tai Fung")
	for range 2 {
		files := e.list(e.s)
		if s := info(t, files, userFile).Summary; s != "likes green tea" {
			t.Fatalf("List: the fact file's summary is %q", s)
		}
	}
	e.handEdit(userFile, "# User\n\n> Summary: likes black tea\n\n- Likes: jasmine tea\n")
	old := e.read(e.s, monthFile)
	edited := strings.Replace(old, "Summary: Lunch", "Summary: Lnch!", 1)
	if edited == old || len(edited) != len(old) {
		t.Fatalf("the month's summary line is not as expected: %q", old)
	}
	e.handEdit(monthFile, edited)
	files := e.list(e.s)
	if s := info(t, files, userFile).Summary; s != "likes black tea" {
		t.Errorf("List after another client's change: the fact file's summary is %q", s)
	}
	if s := info(t, files, monthFile).Summary; s != "Lnch!" {
		t.Errorf("List after another client's change: the month's summary is %q", s)
	}
	o := e.store(nil) // another Store, as another process would have
	if err := o.Write(e.ctx, userFile, "# User\n\n> Summary: likes oolong\n\n- Likes: oolong\n"); err != nil {
		t.Fatalf("Write through another Store: %v", err)
	}
	if s := info(t, e.list(e.s), userFile).Summary; s != "likes oolong" {
		t.Errorf("List after another Store's write: the fact file's summary is %q", s)
	}
}

func testBackendChangeSeen(t *testing.T, e *env) {
	e.write(e.s, userFile, "# User\n\n> Summary: who the person is\n\n- Likes: jasmine tea\n")
	e.appendTo(e.s, monthFile, "## Lunch\n- Summary: dumplings at Din Tai Fung")
	// Read and search once, so that the Store has read the files and
	// indexed them.
	e.read(e.s, userFile)
	if hits := e.search(e.s, "jasmine"); len(hits) != 1 {
		t.Fatalf("Search(jasmine): %+v", hits)
	}
	if hits := e.search(e.s, "dumplings"); len(hits) != 1 {
		t.Fatalf("Search(dumplings): %+v", hits)
	}

	// Another client changes both files directly, keeping their sizes, so
	// that a size cannot tell the change.
	fact := "# User\n\n> Summary: who the person is\n\n- Likes: oolong! tea\n"
	e.handEdit(userFile, fact)
	old := e.read(e.s, monthFile)
	edited := strings.Replace(old, "dumplings at Din Tai Fung", "hotpot near West Lake, ok", 1)
	if len(edited) != len(old) {
		t.Fatalf("the edit changes the size: %d, %d", len(old), len(edited))
	}
	e.handEdit(monthFile, edited)

	if got := e.read(e.s, userFile); got != fact {
		t.Fatalf("Read right after the change through the Backend: %q, want %q", got, fact)
	}
	if got := e.read(e.s, monthFile); got != edited {
		t.Fatalf("Read of the month right after the change through the Backend: %q", got)
	}
	if hits := e.search(e.s, "jasmine"); len(hits) != 0 {
		t.Errorf("Search(jasmine) after it was edited away: %+v", hits)
	}
	if hits := e.search(e.s, "oolong"); len(hits) != 1 || hits[0].Path != userFile {
		t.Errorf("Search(oolong) after the edit: %+v", hits)
	}
	if hits := e.search(e.s, "dumplings"); len(hits) != 0 {
		t.Errorf("Search(dumplings) after it was edited away: %+v", hits)
	}
	if hits := e.search(e.s, "hotpot"); len(hits) != 1 || hits[0].Path != monthFile || !strings.Contains(hits[0].Snippet, "hotpot") {
		t.Errorf("Search(hotpot) after the edit: %+v", hits)
	}

	// A file that another client creates and removes.
	if _, err := Put(e.ctx, e.b, memFile, []byte("# Memory\n\n> Summary: lessons\n\n- Lesson: book the ryokan early\n"), ""); err != nil {
		t.Fatal(err)
	}
	if hits := e.search(e.s, "ryokan"); len(hits) != 1 || hits[0].Path != memFile {
		t.Errorf("Search(ryokan) after another client created %s: %+v", memFile, hits)
	}
	if err := Remove(e.ctx, e.b, memFile, e.raw(memFile).Version); err != nil {
		t.Fatal(err)
	}
	if hits := e.search(e.s, "ryokan"); len(hits) != 0 {
		t.Errorf("Search(ryokan) after another client removed %s: %+v", memFile, hits)
	}
	_, err := e.s.Read(e.ctx, memFile)
	wantErr(t, "Read of a file another client removed", err, memory.ErrNotFound)
}

func testFactsBudget(t *testing.T, e *env) {
	const budget = 600
	s := e.store(&memory.Options{FactsBudget: budget})
	// Facts of about 50 bytes, each its own: the fact guard refuses a line
	// that repeats another.
	n := 0
	lines := func(k int) string {
		var b strings.Builder
		for range k {
			n++
			fmt.Fprintf(&b, "- Fact %d: %s\n", n, strings.Repeat("x", 40))
		}
		return b.String()
	}
	user := "# User\n\n> Summary: who the person is\n\n" + lines(8) // about 440 bytes
	e.write(s, userFile, user)
	before := e.raw(userFile)

	big := "# Memory\n\n> Summary: lessons\n\n" + lines(5) // about 290 bytes
	wantErr(t, "Write over the budget", s.Write(e.ctx, memFile, big), memory.ErrBudgetExceeded)
	if e.rawExists(memFile) {
		t.Fatal("a Write over the budget created the file")
	}
	wantErr(t, "Append over the budget", s.Append(e.ctx, userFile, lines(4), ""), memory.ErrBudgetExceeded)
	_, err := s.Patch(e.ctx, userFile, []memory.Patch{{OldText: "who the person is", NewText: strings.Repeat("y", 200)}})
	wantErr(t, "Patch over the budget", err, memory.ErrBudgetExceeded)
	r := e.call(s.NewSession(), "memory_append", map[string]any{"path": memFile, "entry": lines(5), "summary": nil})
	if !r.IsError || !strings.Contains(r.Text, "budget") {
		t.Fatalf("memory_append over the budget: %+v", r)
	}
	if after := e.raw(userFile); !bytes.Equal(after.Data, before.Data) || after.Version != before.Version || e.rawExists(memFile) {
		t.Fatalf("a change over the budget changed the facts: %q", after.Data)
	}

	// What fits is written; a change that shrinks the facts always is.
	small := "# Memory\n\n> Summary: lessons\n\n- Lesson: short\n"
	e.write(s, memFile, small)
	e.write(s, userFile, "# User\n\n> Summary: who\n\n- Name: Zhang San\n")
	e.write(s, memFile, big)
	var total int64
	for _, f := range e.list(s) {
		if strings.HasPrefix(f.Path, "facts/") {
			total += f.Size
		}
	}
	if total > budget {
		t.Fatalf("the facts hold %d bytes, over the budget of %d", total, budget)
	}
	// Months are not facts: no budget.
	e.appendTo(s, monthFile, entry("Long day", "long", 2*budget))
}

func testVersionTokens(t *testing.T, e *env) {
	const first = "# User\n\n> Summary: who the person is\n\n- Likes: green tea\n"
	e.write(e.s, userFile, first)
	conv := e.s.NewSession()
	v1, text := e.readTool(conv, userFile)
	if text != first || v1 != memory.Version(first) {
		t.Fatalf("memory_read: version %q and %q, want %q and %q", v1, text, memory.Version(first), first)
	}

	// Another agent changes the file: the stale version is refused.
	const theirs = "# User\n\n> Summary: who the person is\n\n- Likes: black coffee\n"
	e.write(e.store(nil), userFile, theirs)
	r := e.call(conv, "memory_write", map[string]any{"path": userFile, "content": "# User\n\n> Summary: mine\n\n- Likes: water\n", "version": v1})
	wantConflict(t, "memory_write with a stale version", r, "changed since")
	if got := e.read(e.s, userFile); got != theirs {
		t.Fatalf("a refused memory_write left %q", got)
	}
	// So is a write that carries no version, from a conversation that read
	// the file before the change.
	r = e.call(conv, "memory_write", map[string]any{"path": userFile, "content": "# User\n\n> Summary: mine\n\n- Likes: water\n", "version": nil})
	wantConflict(t, "memory_write without a version after a change", r, "changed since")
	// And a patch with the stale version, even one whose text matches.
	r = e.call(conv, "memory_patch", map[string]any{"path": userFile, "version": v1, "patches": []map[string]any{{"oldText": "who the person is", "newText": "the person"}}})
	wantConflict(t, "memory_patch with a stale version", r, "changed since")
	if got := e.read(e.s, userFile); got != theirs {
		t.Fatalf("a refused memory_patch left %q", got)
	}

	// Read again: the right version is taken.
	v2, text := e.readTool(conv, userFile)
	if text != theirs || v2 != memory.Version(theirs) || v2 == v1 {
		t.Fatalf("memory_read after the change: %q, %q", v2, text)
	}
	const mine = "# User\n\n> Summary: who the person is\n\n- Likes: black coffee\n- City: Hangzhou\n"
	r = e.call(conv, "memory_write", map[string]any{"path": userFile, "content": mine, "version": v2})
	if r.IsError {
		t.Fatalf("memory_write with the right version: %s", r.Text)
	}
	var res struct {
		Path    string `json:"path"`
		Size    int    `json:"size"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal([]byte(r.Text), &res); err != nil {
		t.Fatalf("memory_write result %q: %v", r.Text, err)
	}
	if got := e.read(e.s, userFile); got != mine || res.Version != memory.Version(mine) || res.Size != len(mine) || res.Path != userFile {
		t.Fatalf("after memory_write: %q; result %+v", got, res)
	}
	// The version the write gave patches the file.
	r = e.call(conv, "memory_patch", map[string]any{"path": userFile, "version": res.Version, "patches": []map[string]any{{"oldText": "Hangzhou", "newText": "Suzhou"}}})
	if r.IsError {
		t.Fatalf("memory_patch with the version memory_write gave: %s", r.Text)
	}
	if got := e.read(e.s, userFile); got != strings.Replace(mine, "Hangzhou", "Suzhou", 1) {
		t.Fatalf("after memory_patch: %q", got)
	}

	// A new file: version "" creates it, and refuses once it exists.
	r = e.call(conv, "memory_write", map[string]any{"path": memFile, "content": "# Memory\n\n> Summary: lessons\n\n- Lesson: one\n", "version": ""})
	if r.IsError {
		t.Fatalf("memory_write of a new file with version \"\": %s", r.Text)
	}
	r = e.call(e.s.NewSession(), "memory_write", map[string]any{"path": memFile, "content": "# Memory\n\n> Summary: other\n\n- Lesson: two\n", "version": ""})
	wantConflict(t, "memory_write with version \"\" of a file that exists", r, "exists")
	// A conversation that never read a file does not replace it blindly.
	r = e.call(e.s.NewSession(), "memory_write", map[string]any{"path": memFile, "content": "# Memory\n\n> Summary: other\n\n- Lesson: two\n", "version": nil})
	wantConflict(t, "memory_write without a version of a file never read", r, "not read")
	if got := e.read(e.s, memFile); !strings.Contains(got, "- Lesson: one\n") {
		t.Fatalf("refused writes changed %s: %q", memFile, got)
	}
}

func testHandChangeBetweenReadAndPatch(t *testing.T, e *env) {
	const first = "# User\n\n> Summary: who the person is\n\n- Likes: green tea\n- City: Hangzhou\n"
	e.write(e.s, userFile, first)
	conv := e.s.NewSession()
	v, _ := e.readTool(conv, userFile)

	// A person edits the file through the Backend, leaving the text the
	// patch looks for.
	const hand = "# User\n\n> Summary: who the person is\n\n- Likes: green tea\n- City: Suzhou\n"
	e.handEdit(userFile, hand)
	for _, version := range []any{v, nil} {
		r := e.call(conv, "memory_patch", map[string]any{"path": userFile, "version": version, "patches": []map[string]any{{"oldText": "green tea", "newText": "white tea"}}})
		wantConflict(t, fmt.Sprintf("memory_patch (version %v) after a change through the Backend", version), r, "changed since")
		if got := e.read(e.s, userFile); got != hand {
			t.Fatalf("a refused memory_patch left %q, want the hand's %q", got, hand)
		}
	}
	// The same for a month, edited by hand between read and write.
	e.appendTo(e.s, monthFile, "## Trip\n- Summary: a trip")
	v, text := e.readTool(conv, monthFile)
	e.handEdit(monthFile, text+"\n## Added by hand\n- Date: 2026-02-25\n")
	r := e.call(conv, "memory_write", map[string]any{"path": monthFile, "content": text + "\n## Mine\n- Date: 2026-02-26\n", "version": v})
	wantConflict(t, "memory_write after a change through the Backend", r, "changed since")
	if got := e.read(e.s, monthFile); !strings.Contains(got, "## Added by hand\n") || strings.Contains(got, "## Mine\n") {
		t.Fatalf("a refused memory_write left %q", got)
	}
	// Read again, and the change goes through on the hand's text.
	v, _ = e.readTool(conv, userFile)
	r = e.call(conv, "memory_patch", map[string]any{"path": userFile, "version": v, "patches": []map[string]any{{"oldText": "green tea", "newText": "white tea"}}})
	if r.IsError {
		t.Fatalf("memory_patch after reading again: %s", r.Text)
	}
	if got := e.read(e.s, userFile); got != strings.Replace(hand, "green tea", "white tea", 1) {
		t.Fatalf("after the patch: %q", got)
	}
}

func testWriteIf(t *testing.T, e *env) {
	const first = "# User\n\n> Summary: who\n\n- Likes: tea\n"
	wantErr(t, "WriteIf of a missing file at a version", e.s.WriteIf(e.ctx, userFile, first, memory.Version("x")), memory.ErrConflict)
	if e.rawExists(userFile) {
		t.Fatal("a refused WriteIf created the file")
	}
	if err := e.s.WriteIf(e.ctx, userFile, first, ""); err != nil {
		t.Fatalf("WriteIf of a new file with version \"\": %v", err)
	}
	for _, wrong := range []string{"", "wrong", memory.Version("something else"), e.raw(userFile).Version + "x"} {
		err := e.s.WriteIf(e.ctx, userFile, "# User\n\n> Summary: who\n\n- Likes: coffee\n", wrong)
		wantErr(t, fmt.Sprintf("WriteIf at version %q", wrong), err, memory.ErrConflict)
		var me *memory.Error
		if !errors.As(err, &me) {
			t.Errorf("WriteIf at version %q: %T is not a *memory.Error", wrong, err)
		}
		if got := e.read(e.s, userFile); got != first {
			t.Fatalf("a refused WriteIf left %q", got)
		}
	}
	const second = "# User\n\n> Summary: who\n\n- Likes: coffee\n"
	if err := e.s.WriteIf(e.ctx, userFile, second, memory.Version(first)); err != nil {
		t.Fatalf("WriteIf at the right version: %v", err)
	}
	// A change through the Backend makes the version read before stale.
	e.handEdit(userFile, "# User\n\n> Summary: who\n\n- Likes: cocoa\n")
	wantErr(t, "WriteIf after a change through the Backend", e.s.WriteIf(e.ctx, userFile, first, memory.Version(second)), memory.ErrConflict)
	if got := e.read(e.s, userFile); !strings.Contains(got, "cocoa") {
		t.Fatalf("a refused WriteIf left %q", got)
	}
}

func testConcurrentStores(t *testing.T, e *env) {
	const stores, workers, each, size = 2, 4, 10, 300 // about 24 KiB: the month seals meanwhile
	ss := []*memory.Store{e.s, e.store(nil)}
	var wg sync.WaitGroup
	errs := make(chan error, stores*workers)
	for si := range stores {
		for w := range workers {
			wg.Go(func() {
				id := si*workers + w
				for i := range each {
					err := ss[si].Append(e.ctx, monthFile, entry(fmt.Sprintf("Writer %d entry %d", id, i), token(id, i), size), "")
					if err != nil {
						errs <- fmt.Errorf("store %d, writer %d, append %d: %w", si, w, i, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	// Every entry once, in one of the month's files, read by a Store that
	// took no part.
	s := e.store(nil)
	var all strings.Builder
	for _, p := range e.monthFiles(s, month) {
		all.WriteString(e.read(s, p))
	}
	counts := countHeadings(all.String())
	for id := range stores * workers {
		for i := range each {
			if c := counts[fmt.Sprintf("Writer %d entry %d", id, i)]; c != 1 {
				t.Errorf("writer %d entry %d is in the month %d times", id, i, c)
			}
		}
	}
	if len(counts) != stores*workers*each {
		t.Errorf("the month holds %d entries, want %d", len(counts), stores*workers*each)
	}
	for id := range stores * workers {
		for i := range each {
			if hits := e.search(s, token(id, i)); len(hits) != 1 {
				t.Errorf("Search(%s): %d hits, want 1", token(id, i), len(hits))
			}
		}
	}
}

func testCompact(t *testing.T, e *env) {
	const old = "2025-01"
	oldFile := "episodes/" + old + ".md"
	const n = 40 // about 20 KiB: the old month has a part
	for i := range n {
		ent := fmt.Sprintf("## Old task %d\n- Date: 2025-01-%02d\n- Summary: task %d\n- Task: look up %s\n- Lesson: lesson %d\n", i, 1+i%28, i, token(9, i), i)
		ent += strings.Repeat("- Note: a routine step, not worth keeping\n", 10)
		e.appendTo(e.s, oldFile, ent)
	}
	e.appendTo(e.s, monthFile, "## Recent\n- Summary: kept as it is")
	recent := e.read(e.s, monthFile)
	paths := e.monthFiles(e.s, old)
	if len(paths) < 2 {
		t.Fatalf("the old month has no part: %q", paths)
	}
	originals := map[string]string{}
	for _, p := range paths {
		originals[p] = e.read(e.s, p)
	}

	res, err := e.s.Compact(e.ctx, nil, nil)
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if !slices.Equal(res.Months, []string{old}) || res.Entries != n || len(res.Skipped) != 0 {
		t.Fatalf("Compact: %+v, want %s compacted with its %d entries", res, old, n)
	}
	fi := info(t, e.list(e.s), oldFile)
	if !fi.Compacted || fi.Parts != 0 {
		t.Errorf("List: the compacted month is %+v", fi)
	}
	condensed := e.read(e.s, oldFile)
	if fi.Size != int64(len(condensed)) || res.BytesAfter != fi.Size {
		t.Errorf("List: the compacted month is %d bytes; it reads %d, Compact said %d", fi.Size, len(condensed), res.BytesAfter)
	}
	if strings.Contains(condensed, "routine step") || !strings.Contains(condensed, "episodes/archive/") {
		t.Errorf("the compacted month is not condensed or does not say where the originals are: %q", condensed)
	}
	counts := countHeadings(condensed)
	for i := range n {
		if counts[fmt.Sprintf("Old task %d", i)] != 1 {
			t.Errorf("the compacted month holds Old task %d %d times", i, counts[fmt.Sprintf("Old task %d", i)])
		}
	}
	// The originals are archived, as they were; the parts are gone.
	for p, text := range originals {
		a := "episodes/archive/" + strings.TrimPrefix(p, "episodes/")
		if got := e.read(e.s, a); got != text {
			t.Errorf("%s is not the original of %s", a, p)
		}
		if p != oldFile && e.rawExists(p) {
			t.Errorf("the part %s is left after the compaction", p)
		}
	}
	// Search reaches the archive for what was condensed away.
	if hits := e.search(e.s, token(9, 3)); len(hits) != 1 || !strings.HasPrefix(hits[0].Path, "episodes/archive/"+old) {
		t.Errorf("Search(%s) after the compaction: %+v, want the archived original", token(9, 3), hits)
	}
	if got := e.read(e.s, monthFile); got != recent {
		t.Errorf("Compact changed a recent month: %q", got)
	}
	wantErr(t, "Write to the archive", e.s.Write(e.ctx, "episodes/archive/"+old+".md", "x"), memory.ErrInvalidPath)

	// Again: nothing to do.
	res, err = e.s.Compact(e.ctx, nil, nil)
	if err != nil || len(res.Months) != 0 || len(res.Skipped) != 1 || res.Skipped[0].Month != old {
		t.Fatalf("Compact again: %+v, %v", res, err)
	}
	if got := e.read(e.s, oldFile); got != condensed {
		t.Errorf("Compact again changed the month")
	}
}

func testClose(t *testing.T, e *env) {
	e.write(e.s, userFile, "# User\n\n> Summary: who\n\n- Likes: tea\n")
	conv := e.s.NewSession()
	tools := e.s.NewSession().Tools()
	if err := e.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.s.Close(); err != nil {
		t.Fatalf("Close again: %v", err)
	}
	ctx := e.ctx
	_, readErr := e.s.Read(ctx, userFile)
	_, patchErr := e.s.Patch(ctx, userFile, []memory.Patch{{OldText: "tea", NewText: "coffee"}})
	_, listErr := e.s.List(ctx)
	_, searchErr := e.s.Search(ctx, "tea", nil)
	_, compactErr := e.s.Compact(ctx, nil, nil)
	_, statsErr := e.s.Stats(ctx)
	_, indexErr := e.s.NewSession().IndexMessage(ctx)
	_, callErr := conv.Call(ctx, "memory_read", json.RawMessage(`{"path": "facts/user.md", "line": null}`))
	_, toolErr := tools[0].Call(ctx, json.RawMessage(`{}`))
	for what, err := range map[string]error{
		"Read":         readErr,
		"Write":        e.s.Write(ctx, userFile, "x"),
		"WriteIf":      e.s.WriteIf(ctx, userFile, "x", ""),
		"Patch":        patchErr,
		"Append":       e.s.Append(ctx, monthFile, "## X", ""),
		"List":         listErr,
		"Search":       searchErr,
		"Compact":      compactErr,
		"Stats":        statsErr,
		"IndexMessage": indexErr,
		"Session.Call": callErr,
		"Tool.Call":    toolErr,
	} {
		wantErr(t, what+" after Close", err, memory.ErrClosed)
	}
	// The Backend is the caller's: still open, the file as it was.
	if got := string(e.raw(userFile).Data); got != "# User\n\n> Summary: who\n\n- Likes: tea\n" {
		t.Fatalf("after Close the Backend holds %q", got)
	}
	if got := e.read(e.store(nil), userFile); !strings.Contains(got, "- Likes: tea") {
		t.Fatalf("a new Store on the Backend reads %q", got)
	}
}

// Put writes data as the file at name through b's lock on it, as another
// client of the backend does: only if the file is at version match. On a
// backend whose lock of a file makes no request (S3), it is Write's one
// request.
func Put(ctx context.Context, b memory.Backend, name string, data []byte, match string) (string, error) {
	h, err := b.Lock(ctx, name)
	if err != nil {
		return "", err
	}
	defer h.Unlock()
	return h.Write(ctx, name, data, match)
}

// Remove removes the file at name through b's lock on it, only if it is at
// version match.
func Remove(ctx context.Context, b memory.Backend, name, match string) error {
	h, err := b.Lock(ctx, name)
	if err != nil {
		return err
	}
	defer h.Unlock()
	return h.Remove(ctx, name, match)
}

// A WriteHook makes a held lock's Write with h, or fails it: a test's
// backend that injects a fault, or acts between a read and a write.
type WriteHook func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error)

// Hook returns the lock h, got with err, its writes passed to write. A
// lock that appends (a Dir's, for the history's logs) still appends, past
// the hook: the hook sees the writes of files.
func Hook(h memory.Held, err error, write WriteHook) (memory.Held, error) {
	if err != nil {
		return nil, err
	}
	if _, ok := h.(appender); ok {
		return hookedAppender{hooked{Held: h, write: write}}, nil
	}
	return hooked{Held: h, write: write}, nil
}

type hooked struct {
	memory.Held
	write WriteHook
}

func (h hooked) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	return h.write(ctx, h.Held, name, data, match)
}

// appender is a lock that appends, as the Store asks of a Dir's.
type appender interface {
	Size(ctx context.Context, name string) (int64, error)
	Append(ctx context.Context, name string, data []byte, sync bool) error
}

type hookedAppender struct{ hooked }

func (h hookedAppender) Size(ctx context.Context, name string) (int64, error) {
	return h.Held.(appender).Size(ctx, name)
}

func (h hookedAppender) Append(ctx context.Context, name string, data []byte, sync bool) error {
	return h.Held.(appender).Append(ctx, name, data, sync)
}

// testSecrets: a change that adds a credential's value is refused on the
// Backend as on any other, by the Store's methods and the tools: nothing
// lands, not even in the history, and the refusal names the kind, never
// the value. A mention of a credential passes. A person's credential put
// through the Backend is not judged again by an unrelated append, and
// Check finds it by its line and kind.
func testSecrets(t *testing.T, e *env) {
	key := FakeKey(33)
	err := e.s.Append(e.ctx, userFile, "- OpenAI key for the side project: "+key, "")
	wantErr(t, "Append of a fact holding a key", err, memory.ErrSecret)
	if strings.Contains(err.Error(), key) {
		t.Errorf("the refusal shows the key: %v", err)
	}
	if e.rawExists(userFile) {
		t.Fatal("a refused Append created the file")
	}
	if h, err := e.s.History(e.ctx, userFile, nil); err != nil || len(h) != 0 {
		t.Fatalf("History after a refused Append: %v, %v; want nothing recorded", h, err)
	}
	r := e.call(e.s.NewSession(), "memory_append", map[string]any{"path": monthFile, "entry": "## Set up the key\n- Summary: done\n- Key: " + key})
	if !r.IsError || !strings.Contains(r.Text, "an OpenAI API key") || strings.Contains(r.Text, key) {
		t.Fatalf("memory_append of a key: %+v, want an error result naming the kind, without the value", r)
	}
	if e.rawExists(monthFile) {
		t.Fatal("a refused memory_append created the month's file")
	}
	e.appendTo(e.s, userFile, "- The Tavily API key has a 1,000/day limit")

	// A person's credential, through the Backend; the Store that appends
	// records no history, so that no version keeps it.
	s := e.store(&memory.Options{History: memory.HistoryPolicy{Off: true}})
	text := e.read(s, userFile)
	e.handEdit(userFile, text+"- Side project key: "+key+"\n")
	if err := s.Append(e.ctx, userFile, "- City: Hangzhou", ""); err != nil {
		t.Fatalf("an unrelated Append beside a person's credential: %v", err)
	}
	findings, err := s.Check(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Count(text, "\n") + 1
	found := false
	for _, f := range findings {
		if strings.Contains(f.Problem+f.Fix, key) {
			t.Errorf("Check shows the key: %+v", f)
		}
		found = found || f.Path == userFile && f.Line == line && strings.Contains(f.Problem, "an OpenAI API key")
	}
	if !found {
		t.Errorf("Check: %+v, want the key found in %s at line %d", findings, userFile, line)
	}
	e.handEdit(userFile, strings.Replace(e.read(s, userFile), "- Side project key: "+key+"\n", "", 1))
}

// FakeKey returns an OpenAI project key of the real format, random from
// seed, made when a test runs: the tests that need a credential's value
// (this suite's, the library's, the command's and the page's) hold none a
// secret scanner would flag, and none that works anywhere.
func FakeKey(seed uint64) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(seed, 33))
	b := make([]byte, 64)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return "s" + "k-" + "proj-" + string(b)
}
