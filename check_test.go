package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// want is a finding a case expects: its place exactly, and words of its
// problem and fix.
type want struct {
	path    string
	line    int
	warning bool
	problem string // a substring of Problem
	fix     string // a substring of Fix
}

// requireFindings checks got against wants, in order.
func requireFindings(t *testing.T, got []memory.Finding, wants ...want) {
	t.Helper()
	require.NotNil(t, got)
	var lines []string
	for _, f := range got {
		lines = append(lines, fmt.Sprintf("%s:%d warning=%v: %s | %s", f.Path, f.Line, f.Warning, f.Problem, f.Fix))
	}
	require.Len(t, got, len(wants), "findings:\n%s", strings.Join(lines, "\n"))
	for i, w := range wants {
		f := got[i]
		require.Equal(t, w.path, f.Path, "finding %d: %s", i, lines[i])
		require.Equal(t, w.line, f.Line, "finding %d: %s", i, lines[i])
		require.Equal(t, w.warning, f.Warning, "finding %d: %s", i, lines[i])
		require.Contains(t, f.Problem, w.problem, "finding %d", i)
		require.Contains(t, f.Fix, w.fix, "finding %d", i)
		require.True(t, strings.HasSuffix(f.Fix, "."), "a fix is a sentence: %q", f.Fix)
	}
}

const (
	cleanUser  = "# User\n\n> Summary: Name; Language\n\n- Name: Jianjun\n- Language: prefers Chinese\n"
	cleanMonth = "# 2026-02 Episodes\n\n> Summary: Tokyo flight research\n\n## Tokyo flight research\n- Summary: Spring Airlines cheapest\n- Date: 2026-02-26\n"
)

// TestCheck: each kind of problem a person's edit can leave is found, at
// its line, with what to do; clean files of every shape give nothing.
func TestCheck(t *testing.T) {
	big := "# 2026-01 Episodes\n\n> Summary: many\n\n" + strings.Repeat("## Big task\n- Date: 2026-01-05\n- Task: "+strings.Repeat("x", 990)+"\n\n", 1100)
	cases := []struct {
		name  string
		opts  *memory.Options
		files map[string]string
		want  []want
	}{
		{name: "clean files of every shape", files: map[string]string{
			"facts/user.md":   cleanUser,
			"facts/memory.md": "\ufeffLink\n====\n\n> Summary: Tavily\n\n## Search\n\n- Tavily returns stale prices\n",
			// CRLF line endings, a Setext entry, a fence closed inside an entry.
			"episodes/2026-02.md":         strings.ReplaceAll(cleanMonth, "\n", "\r\n") + "\r\nGift ideas\r\n----------\r\n- Date: 2026-02-27\r\n\r\n```\r\n## not an entry\r\n```\r\n",
			"episodes/2026-01.001.md":     "# 2026-01 Episodes\n\n> Summary: old\n\n## Old\n- Date: 2026-01-01\n",
			"episodes/2026-01.md":         "# 2026-01 Episodes\n\n> Summary: newer\n\n## Newer\n- Date: 2026-01-31\n",
			"episodes/archive/2025-06.md": "# 2025-06 Episodes\n\n> Summary: original\n\n## Original\n- Date: 2025-06-01\n",
			".git/config":                 "dot-folders are not memory's business",
			".notes.md":                   "nor dot-files",
		}},
		{name: "a fact file outside the set", files: map[string]string{"facts/notes.md": cleanUser}, want: []want{
			{path: "facts/notes.md", problem: "not one of the fact files (facts/user.md, facts/memory.md), so the library ignores it", fix: "Move its facts into facts/user.md or facts/memory.md"},
		}},
		{name: "a fact file named in capitals", files: map[string]string{"facts/User.md": cleanUser}, want: []want{
			{path: "facts/User.md", problem: "not one of the fact files", fix: "Rename it to facts/user.md"},
		}},
		{name: "a fact file with another extension", files: map[string]string{"facts/memory.txt": cleanUser}, want: []want{
			{path: "facts/memory.txt", problem: "not one of the fact files", fix: "Rename it to facts/memory.md"},
		}},
		{name: "a fact file in a folder", files: map[string]string{"facts/old/user.md": cleanUser}, want: []want{
			{path: "facts/old/user.md", problem: "in a folder inside facts/", fix: "Move its facts into facts/user.md or facts/memory.md"},
		}},
		{name: "a month 13", files: map[string]string{"episodes/2026-13.md": cleanMonth}, want: []want{
			{path: "episodes/2026-13.md", problem: "not a month file (episodes/YYYY-MM.md", fix: "into the month files of their dates"},
		}},
		{name: "a month without its zero", files: map[string]string{"episodes/2026-2.md": cleanMonth}, want: []want{
			{path: "episodes/2026-2.md", problem: "not a month file", fix: "Rename it to episodes/2026-02.md"},
		}},
		{name: "a month with another extension", files: map[string]string{"episodes/2026-02.markdown": cleanMonth}, want: []want{
			{path: "episodes/2026-02.markdown", problem: "not a month file", fix: "Rename it to episodes/2026-02.md"},
		}},
		{name: "notes among the episodes", files: map[string]string{"episodes/notes.md": cleanMonth}, want: []want{
			{path: "episodes/notes.md", problem: "so the library ignores it: no agent sees what it holds", fix: "into the month files of their dates"},
		}},
		{name: "a month in a folder", files: map[string]string{"episodes/2025/2025-01.md": cleanMonth}, want: []want{
			{path: "episodes/2025/2025-01.md", problem: "in a folder inside episodes/", fix: "Move it to episodes/2025-01.md"},
		}},
		{name: "notes in a folder of episodes", files: map[string]string{"episodes/old/notes.md": cleanMonth}, want: []want{
			{path: "episodes/old/notes.md", problem: "in a folder inside episodes/", fix: "Move its entries into the month files"},
		}},
		{name: "an archive that is no month", files: map[string]string{"episodes/archive/notes.md": cleanMonth}, want: []want{
			{path: "episodes/archive/notes.md", problem: "not an archived month file", fix: "Give it the name"},
		}},
		{name: "files elsewhere are warnings", files: map[string]string{"README.md": "mine", "drafts/todo.txt": "mine"}, want: []want{
			{path: "README.md", warning: true, problem: "outside facts/ and episodes/", fix: "Nothing to do if it is not memory"},
			{path: "drafts/todo.txt", warning: true, problem: "leaves other files alone by design", fix: "Nothing to do"},
		}},
		{name: "custom fact files", opts: &memory.Options{FactFiles: []memory.FactFile{{Name: "notes.md"}}}, files: map[string]string{
			"facts/notes.md": "# Notes\n\n> Summary: x\n\n- a: b\n", "facts/user.md": cleanUser,
		}, want: []want{
			{path: "facts/user.md", problem: "not one of the fact files (facts/notes.md)", fix: "Move its facts into facts/notes.md and"},
		}},
		{name: "no title", files: map[string]string{"facts/user.md": "> Summary: Name\n\n- Name: Jianjun\n"}, want: []want{
			{path: "facts/user.md", line: 1, problem: `no "# " title`, fix: `Add the line "# User" at the top.`},
		}},
		{name: "no title in a month", files: map[string]string{"episodes/2026-02.md": strings.TrimPrefix(cleanMonth, "# 2026-02 Episodes\n\n")}, want: []want{
			{path: "episodes/2026-02.md", line: 1, problem: `no "# " title`, fix: `"# 2026-02 Episodes"`},
		}},
		{name: "no summary", files: map[string]string{"facts/user.md": "# User\n\n- Name: Jianjun\n- Language: prefers Chinese\n"}, want: []want{
			{path: "facts/user.md", line: 1, problem: `no "> Summary:" line`, fix: `Add the line "> Summary: Name; Language" after the title`},
		}},
		{name: "no title and no summary", files: map[string]string{"episodes/2026-02.md": "## Tokyo\n- Date: 2026-02-01\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 1, problem: `no "# " title`, fix: "# 2026-02 Episodes"},
			{path: "episodes/2026-02.md", line: 1, problem: `no "> Summary:" line`, fix: `"> Summary: Tokyo"`},
		}},
		{name: "an empty summary", files: map[string]string{"facts/user.md": "# User\n\n> Summary:\n\n- Name: Jianjun\n"}, want: []want{
			{path: "facts/user.md", line: 3, problem: "is empty", fix: `"> Summary: Name"`},
		}},
		{name: "a summary after other text", files: map[string]string{"facts/user.md": "# User\n\nAbout me.\n\n> Summary: Name\n\n- Name: Jianjun\n"}, want: []want{
			{path: "facts/user.md", line: 1, problem: `no "> Summary:" line right after its title`, fix: "Add the line"},
			{path: "facts/user.md", line: 3, warning: true, problem: `not a "- " bullet`, fix: "bullet"},
		}},
		{name: "an entry without a date", files: map[string]string{"episodes/2026-02.md": cleanMonth + "\n## Gift ideas\n- Summary: tea set\n- date: 2026-02-27\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 9, problem: `no "- Date:" line: it never shows among the latest entries`, fix: `"- Date: 2026-02-DD"`},
		}},
		{name: "a date not written YYYY-MM-DD", files: map[string]string{"episodes/2026-02.md": cleanMonth + "\n## Gift ideas\n- Summary: tea set\n- Date: yesterday\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 11, problem: `date "yesterday" is not written YYYY-MM-DD`, fix: `Write it as "- Date: 2026-02-DD"`},
		}},
		{name: "a date outside the month", files: map[string]string{"episodes/2026-02.md": cleanMonth + "\n## March task\n- Date: 2026-03-01\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 10, problem: "dated 2026-03-01, outside 2026-02", fix: "Move the entry to episodes/2026-03.md"},
		}},
		{name: "dates in parts and archives count", files: map[string]string{
			"episodes/2026-01.003.md":     "# 2026-01 Episodes\n\n> Summary: x\n\n## A\n- Date: 2025-12-31\n",
			"episodes/archive/2025-06.md": "# 2025-06 Episodes\n\n> Summary: x\n\n## B\n- Summary: no date\n",
		}, want: []want{
			{path: "episodes/2026-01.003.md", line: 6, problem: "outside 2026-01", fix: "episodes/2025-12.md"},
			{path: "episodes/archive/2025-06.md", line: 5, problem: `no "- Date:" line`, fix: "2025-06-DD"},
		}},
		{name: "an empty entry heading", files: map[string]string{"episodes/2026-02.md": cleanMonth + "\n##\n- Date: 2026-02-27\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 9, problem: "heading is empty", fix: "Name the task"},
		}},
		{name: "text before the first entry", files: map[string]string{"episodes/2026-02.md": "# 2026-02 Episodes\n\n> Summary: x\n\nWent to Tokyo.\n\n- booked a hotel\n\n## Tokyo\n- Date: 2026-02-01\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 5, problem: `text before the first "## " entry is in no entry`, fix: `Put it under a "## " heading`},
		}},
		{name: "a level-3 heading as an entry", files: map[string]string{"episodes/2026-02.md": "# 2026-02 Episodes\n\n> Summary: x\n\n### Tokyo\n- Date: 2026-02-01\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 5, problem: "a level-3 heading outside any entry", fix: `Make it a "## " entry heading`},
		}},
		{name: "a second title", files: map[string]string{"episodes/2026-02.md": cleanMonth + "\n# More\n\nnotes\n\n## Gift\n- Date: 2026-02-27\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 9, problem: `a second "# " title`, fix: "or remove it"},
		}},
		{name: "fact text outside bullets", files: map[string]string{"facts/user.md": cleanUser + "\nJianjun likes tea.\n\n## Family\n\n- Wife: Mei\n\n> a quote\n"}, want: []want{
			{path: "facts/user.md", line: 8, warning: true, problem: "memory_search does not find it (and 1 more such blocks after it)", fix: `"- Language: prefers Chinese"`},
		}},
		{name: "an open fence in a fact file", files: map[string]string{"facts/user.md": cleanUser + "\n```\ncode\n"}, want: []want{
			{path: "facts/user.md", line: 8, problem: "ends inside an open block", fix: "Close the block"},
			{path: "facts/user.md", line: 8, warning: true, problem: `not a "- " bullet`, fix: "bullet"},
		}},
		{name: "an open comment in a month", files: map[string]string{"episodes/2026-02.md": cleanMonth + "\n<!-- to do\n"}, want: []want{
			{path: "episodes/2026-02.md", line: 9, problem: "every append to the file is refused", fix: "-->"},
		}},
		{name: "a NUL byte", files: map[string]string{"facts/user.md": cleanUser + "- Odd: a\x00b\n"}, want: []want{
			{path: "facts/user.md", line: 7, problem: "not text", fix: "UTF-8"},
		}},
		{name: "invalid UTF-8", files: map[string]string{"facts/user.md": "# User\n\n> Summary: x\xff\n\n- a: b\n"}, want: []want{
			{path: "facts/user.md", line: 3, problem: "not text", fix: "UTF-8"},
		}},
		{name: "a lone carriage return", files: map[string]string{"facts/user.md": cleanUser + "- Odd: a\rb\n"}, want: []want{
			{path: "facts/user.md", line: 7, problem: `carriage return (\r)`, fix: "line endings"},
		}},
		{name: "nesting too deep", files: map[string]string{"facts/user.md": cleanUser + "- " + strings.Repeat("> ", 33) + "deep\n"}, want: []want{
			{path: "facts/user.md", line: 7, problem: "34 levels deep", fix: "Flatten"},
		}},
		{name: "a file over the size limit", files: map[string]string{"episodes/2026-01.md": big}, want: []want{
			{path: "episodes/2026-01.md", problem: "over the 1,048,576-byte limit", fix: "Condense it"},
		}},
		{name: "facts over the budget", opts: &memory.Options{FactsBudget: 100}, files: map[string]string{
			"facts/user.md": cleanUser, "facts/memory.md": "# Memory\n\n> Summary: Tavily\n\n- Tavily: stale prices\n",
		}, want: []want{
			{path: "facts/", problem: "the fact files hold 131 bytes together, over the 100-byte budget (facts/user.md 79, facts/memory.md 52)", fix: "Condense them by 31 bytes or more"},
		}},
		{name: "a month that repeats its newest part", files: map[string]string{
			"episodes/2026-02.001.md": "# 2026-02 Episodes\n\n> Summary: A, B\n\n## A\n- Date: 2026-02-01\n\n## B\n- Date: 2026-02-02\n",
			"episodes/2026-02.002.md": "# 2026-02 Episodes\n\n> Summary: C\n\n## C\n- Date: 2026-02-03\n",
			"episodes/2026-02.md":     "# 2026-02 Episodes\n\n> Summary: C, D\n\n## C\n- Date: 2026-02-03\n\n## D\n- Date: 2026-02-04\n",
		}, want: []want{
			{path: "episodes/2026-02.md", line: 5, problem: "its first 1 entry repeat those of episodes/2026-02.002.md", fix: "Delete them from this file"},
		}},
		{name: "findings in order of path and line", files: map[string]string{
			"facts/user.md":       "# User\n\n- Name: Jianjun\n",
			"episodes/2026-02.md": cleanMonth + "\n## B\n\n## C\n- Date: 2026-03-01\n",
			"episodes/2026-00.md": "x",
		}, want: []want{
			{path: "episodes/2026-00.md", problem: "not a month file", fix: "Move its entries"},
			{path: "episodes/2026-02.md", line: 9, problem: `no "- Date:"`, fix: "Add the line"},
			{path: "episodes/2026-02.md", line: 12, problem: "outside 2026-02", fix: "Move the entry"},
			{path: "facts/user.md", line: 1, problem: "Summary", fix: "Add the line"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := open(t, tc.opts)
			leavesBroken(t, "each case lays out a person's files, most of them broken, for Check to find")
			for p, content := range tc.files {
				writeFile(t, dir, p, content)
			}
			before := treeSnapshot(t, dir)
			got, err := s.Check(context.Background())
			require.NoError(t, err)
			requireFindings(t, got, tc.want...)
			require.Equal(t, before, treeSnapshot(t, dir), "Check changes nothing")
		})
	}
}

// treeSnapshot maps every file under dir, dot-files included, to its content.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	}))
	return files
}

// TestCheckWhatTheLibraryWrites: files written by the store itself, a month
// sealed into parts and a compacted month with its archive, give no
// finding.
func TestCheckWhatTheLibraryWrites(t *testing.T) {
	s, _ := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "- Name: Jianjun\n- Language: prefers Chinese\n"))
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- Tavily returns stale prices", ""))
	for i := range 40 {
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", busyEntry(i), ""))
	}
	require.NoError(t, s.Append(ctx, "episodes/2025-03.md", "## Old task\n- Date: 2025-03-04\n- Lesson: keep it", ""))
	require.NoError(t, s.Append(ctx, "episodes/2025-03.md", "## Older task\n- Date: 2025-03-05", ""))
	res, err := s.Compact(ctx, nil, &memory.CompactOptions{Before: "2025-04"})
	require.NoError(t, err)
	require.Equal(t, []string{"2025-03"}, res.Months)
	list, err := s.List(ctx)
	require.NoError(t, err)
	require.Greater(t, list[len(list)-2].Parts, 0, "the busy month has parts")

	got, err := s.Check(ctx)
	require.NoError(t, err)
	requireFindings(t, got)
}

// TestCheckRootFileForFolder: a file named facts where the folder belongs
// is one finding, not one for each fact file it hides.
func TestCheckRootFileForFolder(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "a file named facts where the folder belongs is its point")
	require.NoError(t, os.Remove(filepath.Join(dir, "facts")))
	writeFile(t, dir, "facts", "- Name: Jianjun\n")
	got, err := s.Check(context.Background())
	require.NoError(t, err)
	requireFindings(t, got, want{path: "facts", problem: "a file where the folder facts/ belongs", fix: "Rename or remove it"})
}

// TestCheckLinkOut: a fact file that is a symbolic link out of the
// directory, which the library neither lists nor reads, is a finding.
func TestCheckLinkOut(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	s, dir := open(t, nil)
	leavesBroken(t, "a fact file that links out of the directory is its point")
	outside := filepath.Join(t.TempDir(), "user.md")
	require.NoError(t, os.WriteFile(outside, []byte(cleanUser), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "facts", "user.md")))
	got, err := s.Check(context.Background())
	require.NoError(t, err)
	requireFindings(t, got, want{path: "facts/user.md", problem: "a symbolic link the library does not follow", fix: "Replace the link with the file itself."})
}

// TestCheckUnreadable: a file or folder the agent's user cannot read is a
// finding, and the other files are checked as usual.
func TestCheckUnreadable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permissions work otherwise on Windows")
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their permissions; TestCheckErrors covers the findings with a backend that refuses")
	}
	s, dir := open(t, nil)
	writeFile(t, dir, "episodes/2026-02.md", cleanMonth)
	writeFile(t, dir, "episodes/2026-01.md", cleanMonth)
	require.NoError(t, os.Chmod(filepath.Join(dir, "episodes", "2026-02.md"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "episodes", "2026-02.md"), 0o644) })

	got, err := s.Check(context.Background())
	require.NoError(t, err)
	requireFindings(t, got,
		want{path: "episodes/2026-01.md", line: 7, problem: "outside 2026-01", fix: "Move the entry"},
		want{path: "episodes/2026-02.md", problem: "cannot be read (permission denied)", fix: "read and write access"},
	)

	require.NoError(t, os.Chmod(filepath.Join(dir, "episodes"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "episodes"), 0o755) })
	got, err = s.Check(context.Background())
	require.NoError(t, err)
	requireFindings(t, got, want{path: "episodes/", problem: "cannot be read (permission denied)", fix: "read, write and search access"})
}

// checkFaults is a Backend on a Dir whose List and Read a test makes fail.
type checkFaults struct {
	memory.Backend
	mu   sync.Mutex
	list func(dir string) error
	read func(name string, limit int64) error
}

func (f *checkFaults) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	f.mu.Lock()
	fail := f.list
	f.mu.Unlock()
	if fail != nil {
		if err := fail(dir); err != nil {
			return nil, err
		}
	}
	return f.Backend.List(ctx, dir)
}

func (f *checkFaults) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	f.mu.Lock()
	fail := f.read
	f.mu.Unlock()
	if fail != nil {
		if err := fail(name, limit); err != nil {
			return memory.Content{}, err
		}
	}
	return f.Backend.Read(ctx, name, limit)
}

// TestCheckErrors: a closed store, a done context and a backend that
// fails for other reasons than a person's mistake fail Check; a person's
// mistake the backend reports is a finding.
func TestCheckErrors(t *testing.T) {
	down := errors.New("the server is down")
	cases := []struct {
		name    string
		list    func(dir string) error
		read    func(name string, limit int64) error
		wantErr error
		want    []want
	}{
		{name: "the listing fails", list: func(string) error { return down }, wantErr: down},
		{name: "the facts listing fails", list: func(dir string) error {
			if dir == "facts" {
				return down
			}
			return nil
		}, wantErr: down},
		{name: "a read fails", read: func(string, int64) error { return down }, wantErr: down},
		{name: "a probe of a missing fact file fails", read: func(name string, limit int64) error {
			if limit == 0 {
				return down
			}
			return nil
		}, wantErr: down},
		{name: "a read is cancelled", read: func(string, int64) error { return context.Canceled }, wantErr: context.Canceled},
		{name: "a folder the backend cannot list", list: func(dir string) error {
			if dir == "episodes" {
				return &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
			}
			return nil
		}, want: []want{{path: "episodes/", problem: "cannot be read (permission denied)", fix: "search access"}}},
		{name: "a file where a folder belongs", list: func(dir string) error {
			if dir == "episodes" {
				return &fs.PathError{Op: "readdirent", Path: dir, Err: syscall.ENOTDIR}
			}
			return nil
		}, want: []want{{path: "episodes/", problem: "a file stands where a folder belongs", fix: "Rename or remove"}}},
		{name: "a read refused without a path", read: func(name string, limit int64) error {
			if name == "episodes/2026-02.md" {
				return fs.ErrPermission
			}
			return nil
		}, want: []want{{path: "episodes/2026-02.md", problem: "cannot be read (permission denied)", fix: "chmod u+rw"}}},
		{name: "a file gone since the listing", read: func(name string, limit int64) error {
			if name == "episodes/2026-02.md" {
				return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
			}
			return nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := memory.OpenDir(t.TempDir(), 0)
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			ctx := context.Background()
			_, err = put(ctx, d, "episodes/2026-02.md", []byte(cleanMonth), "")
			require.NoError(t, err)
			f := &checkFaults{Backend: d, list: tc.list, read: tc.read}
			s, err := memory.OpenBackend(f, nil)
			require.NoError(t, err)
			got, err := s.Check(ctx)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Nil(t, got)
				var me *memory.Error
				require.False(t, errors.As(err, &me), "a host error is no *memory.Error")
				return
			}
			require.NoError(t, err)
			requireFindings(t, got, tc.want...)
		})
	}

	t.Run("closed", func(t *testing.T) {
		s, _ := open(t, nil)
		require.NoError(t, s.Close())
		_, err := s.Check(context.Background())
		require.ErrorIs(t, err, memory.ErrClosed)
	})
	t.Run("cancelled", func(t *testing.T) {
		s, _ := open(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.Check(ctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// TestCheckHistory: a history that is inconsistent is reported, each
// problem at its log's line with what to do: a line that is not a record,
// a version that cannot be rebuilt, a log larger than the library reads,
// a log of no memory file. A file changed outside the library since its
// last record is no finding.
func TestCheckHistory(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	leavesBroken(t, "the logs are broken on purpose")
	require.NoError(t, s.Write(ctx, "facts/user.md", cleanUser))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- City: Hangzhou", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## one\n- Date: 2026-02-26", ""))
	writeFile(t, dir, "episodes/2026-02.md", readFile(t, dir, "episodes/2026-02.md")+"\n## by hand\n- Date: 2026-02-26\n")
	findings, err := s.Check(ctx)
	require.NoError(t, err)
	requireFindings(t, findings)

	// A line that is not a record, in the month's log.
	month := filepath.Join(dir, firstSegment("episodes/2026-02.md"))
	log, err := os.ReadFile(month)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(month, append([]byte("{\"t\":\"2026-02-26T09:30:00Z\",\"op\":\"write\",\"new\":\"x\"}\n"), log...), 0o644))
	// The user's log without its first record, whole content that the
	// second, a delta, is applied to.
	user := filepath.Join(dir, firstSegment("facts/user.md"))
	log, err = os.ReadFile(user)
	require.NoError(t, err)
	var lines []string // the records, without their marks
	for _, l := range strings.SplitAfter(string(log), "\n") {
		if l != "" && !strings.Contains(l, `"op":"landed"`) {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2)
	require.NotContains(t, lines[1], `"full":true`, "the append is recorded as a delta")
	require.NoError(t, os.WriteFile(user, []byte(lines[1]), 0o644))
	// A log of a file the store does not use, and a log too large.
	writeFile(t, dir, ".history/facts/notes.md.log", "")
	writeFile(t, dir, ".history/facts/memory.md.log", "")
	require.NoError(t, os.Truncate(filepath.Join(dir, ".history", "facts", "memory.md.log"), 256<<20+1))

	findings, err = s.Check(ctx)
	require.NoError(t, err)
	requireFindings(t, findings,
		want{path: firstSegment("episodes/2026-02.md"), line: 1, problem: "line 1 of the history of episodes/2026-02.md is not a record", fix: "Put the log back from a backup"},
		want{path: ".history/facts/memory.md.log", problem: "the history of facts/memory.md is 268,435,457 bytes, more than the 75,497,472 the library reads of a log", fix: "Move it out of .history/"},
		want{path: ".history/facts/notes.md.log", warning: true, problem: "not the history of a memory file of this store", fix: "Options.FactFiles"},
		want{path: firstSegment("facts/user.md"), line: 1, problem: "the version " + memory.Version(readFile(t, dir, "facts/user.md")) + " of facts/user.md, recorded 2026-02-26T09:30:00Z, cannot be rebuilt", fix: "from a backup"},
	)
}
