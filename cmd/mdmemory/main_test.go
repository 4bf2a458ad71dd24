package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// asMainEnv makes the test binary run main instead of the tests: the
// tests that need a process of their own (exit statuses, the MCP server
// over stdio) start this binary with it set.
const asMainEnv = "MDMEMORY_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	code := m.Run()
	stopGateway()
	os.Exit(code)
}

// feb26 is the clock of the sample memory.
func feb26() time.Time { return time.Date(2026, 2, 26, 9, 30, 0, 0, time.UTC) }

const (
	sampleUser = "# User\n\n> Summary: Jianjun, prefers Chinese\n\n- Name: Jianjun\n- Language: prefers Chinese conversation\n- Wife: Mei, birthday March 15, likes ceramics\n"
	sampleFeb  = "## Tokyo flight research\n- Summary: Spring Airlines cheapest for April Tokyo trip\n- Date: 2026-02-26\n- Lesson: search results had stale prices; cross-check airline sites"
	sampleGift = "## Birthday gift brainstorm\n- Summary: chose a Jingdezhen tea set\n- Date: 2026-02-27"
	sampleJan  = "## Visa renewal checklist\n- Date: 2026-01-12\n- Lesson: the consulate lists documents by residence city"
)

// sample makes a memory directory as the library writes it: two fact
// files, two months.
func sample(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	s, err := memory.Open(dir, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", sampleUser))
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- Tavily: flight prices are often days old", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", sampleFeb, ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", sampleGift, ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-01.md", sampleJan, ""))
	return dir
}

// busySample makes a memory whose February is in parts and whose March
// of 2025 is compacted.
func busySample(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	s, err := memory.Open(dir, &memory.Options{Now: feb26})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	for i := range 40 {
		entry := fmt.Sprintf("## Busy task %05d\n- Date: 2026-02-%02d\n- Task: %s", i, i%28+1, strings.Repeat("t", 1500))
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", entry, ""))
	}
	require.NoError(t, s.Append(ctx, "episodes/2025-03.md", "## Old task\n- Date: 2025-03-04", ""))
	_, err = s.Compact(ctx, nil, &memory.CompactOptions{Before: "2025-04"})
	require.NoError(t, err)
	return dir
}

// put writes a file into dir as a person would.
func put(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

// result is what one run of mdmemory gave.
type result struct {
	stdout, stderr string
	code           int
}

// mdm runs mdmemory in this process with args, and env as its environment.
func mdm(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return mdmCtx(t, context.Background(), env, args...)
}

func mdmCtx(t *testing.T, ctx context.Context, env map[string]string, args ...string) result {
	t.Helper()
	return mdmIn(t, ctx, strings.NewReader(""), env, args...)
}

// mdmIn runs mdmemory with stdin as its standard input.
func mdmIn(t *testing.T, ctx context.Context, stdin io.Reader, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, stdin, &out, &errb, func(k string) string { return env[k] })
	return result{out.String(), errb.String(), code}
}

// ok requires a successful run with nothing on stderr.
func (r result) ok(t *testing.T) string {
	t.Helper()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Empty(t, r.stderr)
	return r.stdout
}

// failed requires exit status 1 with one line on stderr, and returns it.
func (r result) failed(t *testing.T) string {
	t.Helper()
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.True(t, strings.HasPrefix(r.stderr, "mdmemory: "), r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	return r.stderr
}

// TestHelp: help, -h, --help and COMMAND --help print the usage on stdout
// and exit 0.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"--dir", "x", "-help"}} {
		out := mdm(t, nil, args...).ok(t)
		require.Contains(t, out, "Usage:\n  mdmemory [--dir DIR] [--world DIR] COMMAND [flags] [arguments]", args)
		for _, c := range commands() {
			require.Contains(t, out, "\n  "+c.name, "the command list names %s", c.name)
		}
		require.Contains(t, out, "  --dir string")
	}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {"help", c.name}, {c.name, "-h"}} {
			out := mdm(t, nil, args...).ok(t)
			require.True(t, strings.HasPrefix(out, "Usage:\n  mdmemory "+c.name+" [flags]"), out)
			require.Contains(t, out, c.about)
			require.Contains(t, out, "  --dir string")
			require.Equal(t, c.takesJSON(), strings.Contains(out, "  --json"), "--json on the commands that read, compact and import: %s", c.name)
		}
	}
	require.Contains(t, mdm(t, nil, "search", "--help").stdout, "  --limit int\n")
	require.Contains(t, mdm(t, nil, "context", "--help").stdout, "  --budget int\n")
}

// TestUsageErrors: a mistake in the command line prints one line on
// stderr, what was wrong and the help to read, nothing on stdout, and
// exits 2; flags are named as the help names them, --limit.
func TestUsageErrors(t *testing.T) {
	dir := sample(t)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "mdmemory: no command given; see 'mdmemory help'"},
		{[]string{"frob"}, `mdmemory: unknown command "frob"; see 'mdmemory help'`},
		{[]string{"serch"}, `mdmemory: unknown command "serch" (did you mean "search"?); see 'mdmemory help'`},
		{[]string{"Stats"}, `mdmemory: unknown command "Stats" (did you mean "stats"?); see 'mdmemory help'`},
		{[]string{"--frob", "ls"}, "mdmemory: flag provided but not defined: --frob; see 'mdmemory help'"},
		{[]string{"ls", "--frob"}, "mdmemory ls: flag provided but not defined: --frob; see 'mdmemory ls --help'"},
		{[]string{"ls", "-frob"}, "mdmemory ls: flag provided but not defined: --frob; see 'mdmemory ls --help'"},
		{[]string{"ls", "-x"}, "mdmemory ls: flag provided but not defined: -x; see 'mdmemory ls --help'"},
		{[]string{"ls", "extra"}, `mdmemory ls: too many arguments: "extra"; see 'mdmemory ls --help'`},
		{[]string{"show"}, "mdmemory show: missing PATH; see 'mdmemory show --help'"},
		{[]string{"show", "a", "b"}, `mdmemory show: too many arguments: "b"`},
		{[]string{"context"}, "mdmemory context: missing QUERY"},
		{[]string{"search", "--limit", "many"}, `mdmemory search: invalid value "many" for flag --limit: parse error; see 'mdmemory search --help'`},
		{[]string{"search", "--limit"}, `mdmemory search: flag needs an argument: --limit`},
		{[]string{"check", "--json=maybe"}, `mdmemory check: invalid boolean value "maybe" for --json`},
		{[]string{"--json", "add", "facts/user.md", "x"}, "mdmemory add: --json: add has no JSON output"},
		// Values the flags parse but the library refuses.
		{[]string{"search", "--limit", "-3", "x"}, "mdmemory search: limit may not be negative"},
		{[]string{"search", "--since", "garbage", "x"}, `mdmemory search: the date "garbage" is not YYYY, YYYY-MM or YYYY-MM-DD`},
		{[]string{"context", "x", "--budget", "5"}, "mdmemory context: budget is 5 characters; give at least 200"},
		{[]string{"--facts-budget", "-1", "ls"}, "mdmemory ls: --facts-budget may not be negative"},
		{[]string{"compact", "--before", "2026-13"}, "mdmemory compact: --before must be a month, YYYY-MM, and --keep not negative; see 'mdmemory compact --help'"},
		{[]string{"compact", "--keep", "-1"}, "mdmemory compact: --before must be a month"},
		{[]string{"import", "hermes", "."}, `mdmemory import: unknown format "hermes": give openclaw, claude-code, agnx, toebeans`},
		{[]string{"completion", "tcsh"}, `mdmemory completion: unknown shell "tcsh"`},
		{[]string{"log", "--limit", "-1"}, "mdmemory log: --limit may not be negative; see 'mdmemory log --help'"},
		{[]string{"log", "--since", "last week"}, `mdmemory log: --since "last week" is not YYYY-MM-DD, an RFC 3339 time, or a span back from now`},
		{[]string{"log", "--until", "3y"}, `mdmemory log: --until "3y" is not YYYY-MM-DD`},
		{[]string{"log", "facts/user.md", "x"}, `mdmemory log: too many arguments: "x"`},
		{[]string{"diff", "facts/user.md"}, "mdmemory diff: missing PATH VERSION [VERSION]; see 'mdmemory diff --help'"},
		{[]string{"restore", "facts/user.md"}, "mdmemory restore: missing PATH VERSION"},
		{[]string{"--json", "restore", "facts/user.md", "abcd"}, "mdmemory restore: --json: restore has no JSON output"},
		{[]string{"help", "frob"}, `mdmemory help: unknown command "frob"`},
		{[]string{"help", "ls", "show"}, "mdmemory help: give at most one command"},
		{[]string{"version", "x"}, `mdmemory version: too many arguments: "x"`},
	}
	for _, tc := range cases {
		r := mdm(t, map[string]string{dirEnv: dir}, tc.args...)
		require.Equal(t, 2, r.code, "%q: %s", tc.args, r.stderr)
		require.Empty(t, r.stdout, "%q", tc.args)
		require.True(t, strings.HasPrefix(r.stderr, tc.want), "%q:\n%s", tc.args, r.stderr)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		require.True(t, strings.HasSuffix(r.stderr, "help'\n"), "names the help to read: %q", r.stderr)
	}
}

// TestGlobalFlags: the flags of every command, --json included, go
// before the command as well as after it.
func TestGlobalFlags(t *testing.T) {
	dir := sample(t)
	before := mdm(t, nil, "--dir", dir, "--json", "ls").ok(t)
	after := mdm(t, nil, "ls", "--dir", dir, "--json").ok(t)
	require.Equal(t, after, before)
	require.True(t, json.Valid([]byte(before)), before)
	require.True(t, json.Valid([]byte(mdm(t, nil, "--json", "--dir="+dir, "stats").ok(t))))
	require.True(t, json.Valid([]byte(mdm(t, nil, "--json", "--dir", dir, "compact", "--dry-run").ok(t))))
}

// TestWhere: --dir wins over $MDMEMORY_DIR, which wins over data/memory;
// --dir works before the command and after it.
func TestWhere(t *testing.T) {
	a, b := sample(t), t.TempDir()
	put(t, b, "facts/user.md", "# User\n\n> Summary: the other one\n")
	require.Contains(t, mdm(t, map[string]string{dirEnv: a}, "ls").ok(t), "Jianjun")
	require.Contains(t, mdm(t, map[string]string{dirEnv: a}, "ls", "--dir", b).ok(t), "the other one")
	require.Contains(t, mdm(t, map[string]string{dirEnv: a}, "--dir", b, "ls").ok(t), "the other one")
	require.Contains(t, mdm(t, nil, "--dir", a, "ls", "--dir", b).ok(t), "the other one", "the command's flag wins")

	work := t.TempDir()
	t.Chdir(work)
	msg := mdm(t, nil, "ls").failed(t)
	require.Equal(t, "mdmemory: data/memory does not exist: give the memory directory with --dir or $MDMEMORY_DIR\n", msg)
	put(t, work, "data/memory/facts/user.md", sampleUser)
	require.Contains(t, mdm(t, nil, "ls").ok(t), "facts/user.md")
}

// TestReadersCreateNothing: a reading command on a directory that does not
// exist, or is a file, fails and creates nothing.
func TestReadersCreateNothing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for _, c := range commands() {
		if !c.reads {
			continue
		}
		args := append([]string{c.name, "--dir", missing}, []string{"facts/user.md", "0123abcd"}[:c.minArgs]...)
		require.Contains(t, mdm(t, nil, args...).failed(t), "nope does not exist")
		_, err := os.Stat(missing)
		require.ErrorIs(t, err, fs.ErrNotExist, "%s created the directory", c.name)
		args[2] = file
		require.Contains(t, mdm(t, nil, args...).failed(t), "file is not a directory")
	}
}

// TestReadersChangeNothing: every reading command leaves every byte of a
// memory directory as it was, dot-files included; in a directory no Store
// has opened yet, they add only the empty lock file. (As every Store does
// when it opens a directory, they would remove the temporary files a crash
// left, .NAME.md.tmp-*: the library's, never a person's.)
func TestReadersChangeNothing(t *testing.T) {
	dir := sample(t)
	put(t, dir, "facts/notes.md", "# Notes\n")
	put(t, dir, "episodes/2026-13.md", "# 2026-13 Episodes\n")
	put(t, dir, "drafts/todo.txt", "mine\n")
	runAll := func(dir string) {
		env := map[string]string{dirEnv: dir}
		v := memory.Version(read(t, dir, "facts/user.md"))
		for _, args := range [][]string{{"ls"}, {"ls", "--json"}, {"show", "facts/user.md"}, {"search", "tokyo"}, {"search"}, {"context", "tokyo"}, {"check"}, {"check", "--json"}, {"stats"}, {"stats", "--json"},
			{"log"}, {"log", "--json", "facts/user.md"}, {"diff", "facts/user.md", v}, {"diff", "--json", "facts/user.md", v[:8], v}} {
			r := mdm(t, env, args...)
			require.Contains(t, []int{0, 1}, r.code, "%q: %s", args, r.stderr)
		}
	}
	before := tree(t, dir)
	require.Contains(t, before, ".lock")
	runAll(dir)
	require.Equal(t, before, tree(t, dir))

	hand := t.TempDir()
	put(t, hand, "facts/user.md", sampleUser)
	put(t, hand, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: x\n\n"+sampleFeb+"\n")
	before = tree(t, hand)
	runAll(hand)
	after := tree(t, hand)
	require.Equal(t, "", after[".lock"], "the empty lock file")
	delete(after, ".lock")
	require.Equal(t, before, after)
}

// tree maps every file and folder under dir to its content ("/" for a
// folder).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files[filepath.ToSlash(rel)] = "/"
			return nil
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return files
}

// TestLs: aligned columns of path, size and summary, months newest first,
// and the facts budget as a bar; --json gives the same.
func TestLs(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	out := mdm(t, env, "ls").ok(t)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 7, out)
	require.Regexp(t, `^PATH +SIZE  SUMMARY$`, lines[0])
	require.Regexp(t, `^facts/user\.md +\d+  Jianjun, prefers Chinese$`, lines[1])
	require.Regexp(t, `^facts/memory\.md +\d+  Tavily$`, lines[2])
	require.Regexp(t, `^episodes/2026-02\.md +\d+  Tokyo flight research, Birthday gift brainstorm$`, lines[3])
	require.Regexp(t, `^episodes/2026-01\.md +\d+  Visa renewal checklist$`, lines[4])
	col := strings.Index(lines[0], "SUMMARY")
	for _, l := range lines[1:5] {
		require.True(t, l[col-2:col] == "  " && l[col] != ' ', "summaries start in one column:\n%s", out)
		require.NotEqual(t, byte(32), l[col-3], "sizes end in one column:\n%s", out)
	}
	require.Empty(t, lines[5])

	var got struct {
		Files       []memory.FileInfo `json:"files"`
		FactsSize   int64             `json:"factsSize"`
		FactsBudget int               `json:"factsBudget"`
	}
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "ls", "--json").ok(t)), &got))
	require.Len(t, got.Files, 4)
	require.Equal(t, "facts/user.md", got.Files[0].Path)
	require.Equal(t, 15360, got.FactsBudget)
	require.Equal(t, got.Files[0].Size+got.Files[1].Size, got.FactsSize)
	pct := got.FactsSize * 100 / 15360
	require.Equal(t, "facts  [#...................] "+thousands(got.FactsSize)+" / 15,360 bytes ("+itoa(pct)+"%)", lines[6])

	// A small budget fills the bar; an over-budget one says so.
	out = mdm(t, env, "ls", "--facts-budget", itoa(got.FactsSize)).ok(t)
	require.Contains(t, out, "facts  [####################] "+thousands(got.FactsSize)+" / "+thousands(got.FactsSize)+" bytes (100%)\n")
	out = mdm(t, env, "ls", "--facts-budget", "100").ok(t)
	require.Regexp(t, `facts  \[#{20}\] [\d,]+ / 100 bytes \(\d+%\), over the budget\n$`, out)

	// A month in parts, a compacted month.
	busy := busySample(t)
	out = mdm(t, map[string]string{dirEnv: busy}, "ls").ok(t)
	require.Regexp(t, `\nepisodes/2026-02\.md +[\d,]+  Busy task 00034, .*, Busy task 00039 \(3 full parts\)\n`, out)
	require.Regexp(t, `\nepisodes/2025-03\.md +[\d,]+  Old task \(compacted\)\n`, out)
	out = mdm(t, map[string]string{dirEnv: busy}, "stats").ok(t)
	require.Regexp(t, `months  2, 41 entries, 1 compacted \(originals in episodes/archive/\)\n`, out)
	require.Regexp(t, `\n2026-02       40 +[\d,]+  3 full parts\n2025-03        1 +[\d,]+  compacted\n`, out)

	// An empty store.
	empty := t.TempDir()
	require.Equal(t, "No memory files yet.\n\nfacts  [....................] 0 / 15,360 bytes (0%)\n", mdm(t, map[string]string{dirEnv: empty}, "ls").ok(t))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestShow: the file as it is, or with --json its version and content; a
// file that does not exist, or a path outside the grammar, fail.
func TestShow(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	want, err := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
	require.NoError(t, err)
	require.Equal(t, string(want), mdm(t, env, "show", "facts/user.md").ok(t))

	var got struct{ Path, Version, Content string }
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "show", "--json", "facts/user.md").ok(t)), &got))
	require.Equal(t, "facts/user.md", got.Path)
	require.Equal(t, string(want), got.Content)
	require.Equal(t, memory.Version(string(want)), got.Version)

	require.Equal(t, "mdmemory: read episodes/2025-01.md: not found: episodes/2025-01.md does not exist yet\n", mdm(t, env, "show", "episodes/2025-01.md").failed(t))
	require.Contains(t, mdm(t, env, "show", "facts/notes.md").failed(t), "mdmemory: read facts/notes.md: invalid path")
	require.Contains(t, mdm(t, env, "show", "--", "--json").failed(t), "read --json: invalid path", `"--" ends the flags`)
}

// TestSearch: hits as PATH:LINE, date, title and the best line; flags
// among the words of the query; --json; no query gives the newest entries.
func TestSearch(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	out := mdm(t, env, "search", "tokyo", "--limit", "1", "flight").ok(t)
	require.Equal(t, "episodes/2026-02.md:5  2026-02-26  Tokyo flight research\n    Summary: Spring Airlines cheapest for April Tokyo trip\n", out)

	out = mdm(t, env, "search").ok(t)
	require.Equal(t, []string{"episodes/2026-02.md:10", "episodes/2026-02.md:5", "episodes/2026-01.md:5"}, firstFields(out), "the newest entries, newest first")
	out = mdm(t, env, "search", "--since", "2026-02-27").ok(t)
	require.Equal(t, []string{"episodes/2026-02.md:10"}, firstFields(out))
	out = mdm(t, env, "search", "--until", "2026-01").ok(t)
	require.Equal(t, []string{"episodes/2026-01.md:5"}, firstFields(out))
	out = mdm(t, env, "search", "--path", "facts/", "ceramics").ok(t)
	require.Equal(t, "facts/user.md:7  Wife: Mei, birthday March 15, likes ceramics\n", out, "a fact's snippet is its line: shown once")
	require.Equal(t, "Nothing found.\n", mdm(t, env, "search", "zeppelin").ok(t))

	var hits []memory.SearchHit
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "search", "--json", "visa").ok(t)), &hits))
	require.Len(t, hits, 1)
	require.Equal(t, memory.SearchHit{Path: "episodes/2026-01.md", Line: 5, Title: "Visa renewal checklist", Date: "2026-01-12", Snippet: hits[0].Snippet, Score: hits[0].Score}, hits[0])
	require.Greater(t, hits[0].Score, 0.0)
	require.Equal(t, "[]\n", mdm(t, env, "search", "--json", "zeppelin").ok(t))

}

func firstFields(out string) []string {
	var f []string
	for l := range strings.Lines(out) {
		if !strings.HasPrefix(l, " ") {
			f = append(f, strings.Fields(l)[0])
		}
	}
	return f
}

// TestContext: what a prompt about the query gets, within the budget.
func TestContext(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	out := mdm(t, env, "context", "gift", "ideas", "--budget", "1000").ok(t)
	require.True(t, strings.HasPrefix(out, "Remembered (background"), out)
	require.Contains(t, out, "<file path=\"facts/user.md\"")
	require.Contains(t, out, "## Birthday gift brainstorm")
	require.LessOrEqual(t, len([]rune(out)), 1000)

	var got struct {
		Query  string
		Budget int
		Text   string
	}
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "context", "--json", "gift").ok(t)), &got))
	require.Equal(t, "gift", got.Query)
	require.Equal(t, 4000, got.Budget)
	require.Contains(t, got.Text, "## Birthday gift brainstorm")

	r := mdm(t, map[string]string{dirEnv: t.TempDir()}, "context", "gift")
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stdout)
	require.Equal(t, "mdmemory: memory is empty, or nothing in it fits the budget\n", r.stderr)
}

// TestCheck: the findings as PATH:LINE, problem and fix, and exit status
// 1, for exactly the mistakes the issue names; warnings alone exit 0.
func TestCheck(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	require.Equal(t, "No problems found.\n", mdm(t, env, "check").ok(t))

	put(t, dir, "README.md", "my memory folder\n")
	r := mdm(t, env, "check")
	require.Equal(t, 0, r.code, "a warning alone needs nothing fixed")
	require.True(t, strings.HasPrefix(r.stdout, "README.md: warning: outside facts/ and episodes/"), r.stdout)
	require.True(t, strings.HasSuffix(r.stdout, "\n0 problems, 1 warning.\n"), r.stdout)

	put(t, dir, "facts/notes.md", "# Notes\n\n> Summary: x\n\n- a: b\n")
	put(t, dir, "episodes/2026-13.md", "# 2026-13 Episodes\n")
	feb, err := os.ReadFile(filepath.Join(dir, "episodes", "2026-02.md"))
	require.NoError(t, err)
	put(t, dir, "episodes/2026-02.md", string(feb)+"\n## Hotel booking\n- Summary: no date\n")
	r = mdm(t, env, "check")
	require.Equal(t, 1, r.code, r.stdout)
	require.Empty(t, r.stderr)
	require.Equal(t, []string{"README.md:", "episodes/2026-02.md:14:", "episodes/2026-13.md:", "facts/notes.md:"}, firstFields(r.stdout[:strings.LastIndex(r.stdout, "\n\n")+1]))
	require.Contains(t, r.stdout, "episodes/2026-02.md:14: the entry has no \"- Date:\" line: it never shows among the latest entries, and searches by date leave it out\n    Add the line \"- Date: 2026-02-DD\" under its heading, with the day the task happened.\n")
	require.Contains(t, r.stdout, "episodes/2026-13.md: not a month file")
	require.Contains(t, r.stdout, "facts/notes.md: not one of the fact files (facts/user.md, facts/memory.md), so the library ignores it")
	require.True(t, strings.HasSuffix(r.stdout, "\n3 problems, 1 warning.\n"), r.stdout)

	r = mdm(t, env, "check", "--json")
	require.Equal(t, 1, r.code)
	var got struct {
		Findings []memory.Finding `json:"findings"`
		Problems int              `json:"problems"`
		Warnings int              `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, 3, got.Problems)
	require.Equal(t, 1, got.Warnings)
	require.Equal(t, memory.Finding{Path: "episodes/2026-02.md", Line: 14, Problem: got.Findings[1].Problem, Fix: got.Findings[1].Fix}, got.Findings[1])

	// The program's own fact files and budget.
	r = mdm(t, env, "check", "--facts", "user.md,memory.md,notes.md", "--facts-budget", "100")
	require.Equal(t, 1, r.code)
	require.NotContains(t, r.stdout, "facts/notes.md:")
	require.Contains(t, r.stdout, "facts/: the fact files hold")
	require.Contains(t, mdm(t, env, "check", "--facts", "Notes.txt").failed(t), `fact file "Notes.txt": invalid path`)
}

// TestStats: the facts bar, the months with their entries, and the prompt
// sizes in bytes and estimated tokens; --json gives the library's Stats.
func TestStats(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	var st memory.Stats
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "stats", "--json").ok(t)), &st))
	require.Equal(t, 4, st.Files)
	require.Len(t, st.Months, 2)
	require.Equal(t, memory.MonthStats{Month: "2026-02", Entries: 2, Size: st.Months[0].Size}, st.Months[0])
	require.Greater(t, st.IndexMessage.Tokens, 0)
	empty := map[string]string{dirEnv: t.TempDir()}
	require.Contains(t, mdm(t, empty, "stats", "--json").ok(t), `"months": []`, "a list, never null, for JSON consumers")

	out := mdm(t, env, "stats").ok(t)
	require.Contains(t, out, "facts   "+budgetLine(st.FactsSize, 15360, false)+"\n")
	require.Contains(t, out, "files   4\nmonths  2, 3 entries\n")
	require.Regexp(t, `MONTH    ENTRIES  BYTES\n2026-02        2 +[\d,]+\n2026-01        1 +[\d,]+\n`, out)
	require.Contains(t, out, "Into prompts (tokens estimated at 4 characters a token):\n")
	require.Regexp(t, `index message \(a task's first user message\) +`+thousands(int64(st.IndexMessage.Size))+` bytes +~`+thousands(int64(st.IndexMessage.Tokens))+` tokens\n`, out)
	require.Regexp(t, `reflector system prompt \(facts in full\) +`+thousands(int64(st.ReflectorPrompt.Size))+` bytes +~`+thousands(int64(st.ReflectorPrompt.Tokens))+` tokens\n$`, out)
}

// TestLibraryDefaults: the defaults the command line shows and measures
// against are the library's, which a store opened with zero options uses.
func TestLibraryDefaults(t *testing.T) {
	ctx := context.Background()
	w, err := memory.OpenDir(filepath.Join(t.TempDir(), "shared"), 0)
	require.NoError(t, err)
	defer w.Close()
	s, err := memory.Open(busySample(t), &memory.Options{World: w})
	require.NoError(t, err)
	defer s.Close()
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, defaultFactsBudget, st.FactsBudget)
	require.Equal(t, defaultWorldBudget, st.WorldBudget)
	hits, err := s.Search(ctx, "", nil)
	require.NoError(t, err)
	require.Greater(t, st.Months[0].Entries, defaultSearchLimit, "more entries than the hits shown")
	require.Len(t, hits, defaultSearchLimit)
}

// TestCancelled: a command whose context is done fails with exit 1.
func TestCancelled(t *testing.T) {
	dir := sample(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := mdmCtx(t, ctx, map[string]string{dirEnv: dir}, "check")
	require.Contains(t, r.failed(t), "context canceled")
}

// TestExitStatus runs mdmemory as a process of its own: the statuses a
// shell sees.
func TestExitStatus(t *testing.T) {
	dir := sample(t)
	status := func(args ...string) int {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), asMainEnv+"=1", dirEnv+"="+dir)
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	}
	require.Equal(t, 0, status("ls"))
	require.Equal(t, 0, status("check"))
	require.Equal(t, 0, status("help"))
	require.Equal(t, 2, status("frob"))
	require.Equal(t, 2, status("show"))
	require.Equal(t, 1, status("show", "facts/none.md"))
	require.Equal(t, 1, status("ls", "--dir", filepath.Join(dir, "nope")))
	put(t, dir, "episodes/2026-13.md", "x")
	require.Equal(t, 1, status("check"))
}

// TestWorld: --world (or $MDMEMORY_WORLD) adds the world topics an agent
// shares with others: ls lists them with their budget, show and search
// reach them, stats counts them; a --world that does not exist fails a
// command that reads, and creates nothing.
func TestWorld(t *testing.T) {
	dir := sample(t)
	shared := filepath.Join(t.TempDir(), "shared")
	w, err := memory.OpenDir(shared, 0)
	require.NoError(t, err)
	s, err := memory.Open(dir, &memory.Options{Now: feb26, World: w})
	require.NoError(t, err)
	require.NoError(t, s.Append(context.Background(), "world/project-apollo.md", "- Launch: March 1 from the north pad\n- Lead: Li Wei", ""))
	require.NoError(t, s.Close())
	require.NoError(t, w.Close())

	for _, env := range []map[string]string{{dirEnv: dir, worldEnv: shared}, {dirEnv: dir}} {
		args := []string{"ls"}
		if env[worldEnv] == "" {
			args = append(args, "--world", shared)
		}
		out := mdm(t, env, args...).ok(t)
		require.Regexp(t, `\nfacts/memory\.md +\d+  Tavily\nworld/project-apollo\.md +\d+  Launch; Lead\nepisodes/2026-02\.md`, out)
		require.Regexp(t, `\nworld  \[#\.{19}\] \d+ / 15,360 bytes \(0%\)\n$`, out)
	}
	env := map[string]string{dirEnv: dir, worldEnv: shared}
	var got struct {
		WorldSize   int64 `json:"worldSize"`
		WorldBudget int   `json:"worldBudget"`
	}
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "ls", "--json", "--world-budget", "500").ok(t)), &got))
	require.Equal(t, 500, got.WorldBudget)
	require.Positive(t, got.WorldSize)

	require.Contains(t, mdm(t, env, "show", "world/project-apollo.md").ok(t), "- Lead: Li Wei\n")
	require.Contains(t, mdm(t, env, "search", "north pad").ok(t), "world/project-apollo.md")
	require.Regexp(t, `world   \[#\.+\] \d+ / 15,360 bytes \(0%\) in 1 topic\n`, mdm(t, env, "stats").ok(t))

	// Without --world the topics are not there.
	out := mdm(t, map[string]string{dirEnv: dir}, "ls").ok(t)
	require.NotContains(t, out, "world")
	require.Contains(t, mdm(t, map[string]string{dirEnv: dir}, "show", "world/project-apollo.md").failed(t), "shares no world facts")

	missing := filepath.Join(t.TempDir(), "nowhere")
	require.Contains(t, mdm(t, map[string]string{dirEnv: dir}, "ls", "--world", missing).failed(t), "--world: "+missing+" does not exist: give the shared world's directory with --world or $MDMEMORY_WORLD")
	require.NoDirExists(t, missing)
	r := mdm(t, env, "ls", "--world-budget", "-1")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--world-budget may not be negative")
}
