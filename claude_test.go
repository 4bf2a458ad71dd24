package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// claude runs one command of Claude's memory tool in conversation c and
// requires no host error.
func claude(t testing.TB, c *memory.Session, input string) memory.ToolResult {
	t.Helper()
	r, err := c.ClaudeMemory(context.Background(), json.RawMessage(input))
	require.NoError(t, err, input)
	return r
}

// claudeOK runs a command that must succeed and returns its text.
func claudeOK(t testing.TB, c *memory.Session, input string) string {
	t.Helper()
	r := claude(t, c, input)
	require.False(t, r.IsError, "%s: %s", input, r.Text)
	return r.Text
}

// cmd renders a memory tool command as the model sends it.
func cmd(fields ...any) string {
	m := map[string]any{}
	for i := 0; i < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

const userFacts = "# User\n\n> Summary: Jianjun, likes tea\n\n- Name: 建军 (Jianjun)\n- Likes: tea\n- Language: prefers Chinese\n"

// claudeStore opens a store holding a fact file and a month, as a person
// left them, and returns it with its directory.
func claudeStore(t *testing.T, opts *memory.Options) (*memory.Store, string) {
	s, dir := open(t, opts)
	writeFile(t, dir, "facts/user.md", userFacts)
	writeFile(t, dir, "episodes/2026-01.md", "# 2026-01 Episodes\n\n> Summary: Tokyo flights\n\n## Tokyo flights\n- Date: 2026-01-20\n")
	return s, dir
}

// TestClaudeMemorySession is the memory tool as a model meets it, command
// by command, with every result (the prompt contract) in a golden file:
// the directory view, a file's numbered lines, a view_range, an edit, an
// insert, a create that gets its title and summary, and the refusals.
func TestClaudeMemorySession(t *testing.T) {
	s, dir := claudeStore(t, nil)
	leavesBroken(t, "its fixture holds a person's notes.txt and an archived month without a summary")
	writeFile(t, dir, "episodes/2026-02.001.md", "# 2026-02 Episodes\n\n> Summary: part\n\n## Old\n- Date: 2026-02-01\n")
	writeFile(t, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: gifts\n\n## Gift ideas\n- Date: 2026-02-20\n")
	writeFile(t, dir, "notes.txt", "a person's own file, not memory")
	writeFile(t, dir, "episodes/archive/2025-12.md", "# archived\n")
	c := s.NewSession()
	var b strings.Builder
	for _, in := range []string{
		cmd("command", "view", "path", "/memories"),
		cmd("command", "view", "path", "/memories/episodes/"),
		cmd("command", "view", "path", "/memories/facts/user.md"),
		cmd("command", "view", "path", "/memories/facts/user.md", "view_range", []int{5, -1}),
		cmd("command", "view", "path", "/memories/episodes/2026-02.md"),
		cmd("command", "str_replace", "path", "/memories/facts/user.md", "old_str", "- Likes: tea", "new_str", "- Likes: green tea\n- Drinks: no coffee"),
		cmd("command", "insert", "path", "/memories/facts/user.md", "insert_line", 7, "insert_text", "- City: Shanghai\n"),
		cmd("command", "view", "path", "/memories/facts/user.md"),
		cmd("command", "create", "path", "/memories/facts/memory.md", "file_text", "- Check airline sites: search prices go stale\n"),
		cmd("command", "view", "path", "/memories/facts/memory.md"),
		cmd("command", "create", "path", "/memories/notes.txt", "file_text", "x"),
		cmd("command", "delete", "path", "/memories/episodes/2026-01.md"),
		cmd("command", "rename", "old_path", "/memories/facts/memory.md", "new_path", "/memories/facts/lessons.md"),
		cmd("command", "view", "path", "/memories"),
	} {
		r := claude(t, c, in)
		fmt.Fprintf(&b, "> %s\n", in)
		if r.IsError {
			b.WriteString("[error] ")
		}
		b.WriteString(r.Text + "\n\n")
	}
	golden(t, "claude/session.golden", []byte(b.String()))
	require.Equal(t, "# User\n\n> Summary: Jianjun, likes tea\n\n- Name: 建军 (Jianjun)\n- Likes: green tea\n- Drinks: no coffee\n- City: Shanghai\n- Language: prefers Chinese\n",
		readFile(t, dir, "facts/user.md"))
	require.Equal(t, "a person's own file, not memory", readFile(t, dir, "notes.txt"))
}

// TestClaudeMemoryView: view of a folder lists the memory files with their
// sizes, as the reference formats them; view of a file numbers its lines
// and honours view_range, refusing a range outside the file with the text
// editor reference's words.
func TestClaudeMemoryView(t *testing.T) {
	s, dir := claudeStore(t, nil)
	leavesBroken(t, "its fixture holds what a person may leave: files without a head, a dot-file, names outside the grammar")
	writeFile(t, dir, "facts/memory.md", strings.Repeat("x", 1535)+"\n")
	writeFile(t, dir, "episodes/2025-12.md", strings.Repeat("y", 4095)+"\n")
	writeFile(t, dir, "episodes/2025-11.md", "")
	writeFile(t, dir, "episodes/2025-10.md", strings.Repeat("z\n", 1<<19-1)+"w") // 1 MiB less a byte: the most that is read whole
	writeFile(t, dir, "episodes/2026-02.002.md", "part two\n")
	writeFile(t, dir, "episodes/2026-02.003.md", "part three\n")
	writeFile(t, dir, "facts/other.md", "not a configured fact file\n")
	writeFile(t, dir, "episodes/2026-13.md", "not a month\n")
	writeFile(t, dir, "episodes/.hidden.md", "hidden\n")
	writeFile(t, dir, "episodes/archive/2025-06.md", "# 2025-06 Episodes\n")
	lines := func(first, last int) string {
		var b strings.Builder
		all := strings.Split(strings.TrimSuffix(userFacts, "\n"), "\n")
		for i := first; i <= last; i++ {
			fmt.Fprintf(&b, "\n%6d\t%s", i, all[i-1])
		}
		return b.String()
	}
	head := "Here's the content of /memories/facts/user.md with line numbers:"
	const user = "/memories/facts/user.md"
	for _, tc := range []struct {
		name, input string
		want        string // the whole text, or its start when prefix is set
		prefix      bool
		isErr       bool
	}{
		{name: "root", input: cmd("command", "view", "path", "/memories"), prefix: true, want: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"1.0M\t/memories\n" +
			"1.0M\t/memories/episodes/\n" +
			"1024.0K\t/memories/episodes/2025-10.md\n0B\t/memories/episodes/2025-11.md\n4K\t/memories/episodes/2025-12.md\n" +
			"82B\t/memories/episodes/2026-01.md\n9B\t/memories/episodes/2026-02.002.md\n11B\t/memories/episodes/2026-02.003.md\n" +
			"1.6K\t/memories/facts/\n1.5K\t/memories/facts/memory.md\n105B\t/memories/facts/user.md\n\n" +
			"Note: memory here is a closed set of files. /memories/facts/ holds user.md (about the person"},
		{name: "root with a slash", input: cmd("command", "view", "path", "/memories/"), prefix: true, want: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n1.0M\t/memories\n"},
		{name: "facts folder", input: cmd("command", "view", "path", "/memories/facts"), prefix: true, want: "Here're the files and directories up to 2 levels deep in /memories/facts, excluding hidden items and node_modules:\n" +
			"1.6K\t/memories/facts\n1.5K\t/memories/facts/memory.md\n105B\t/memories/facts/user.md\n\nNote: "},
		{name: "folder's view_range ignored", input: cmd("command", "view", "path", "/memories/facts/", "view_range", []int{1, 2}), prefix: true, want: "Here're the files and directories up to 2 levels deep in /memories/facts, excluding"},
		{name: "whole file", input: cmd("command", "view", "path", user), want: head + lines(1, 7)},
		{name: "range", input: cmd("command", "view", "path", user, "view_range", []int{2, 3}), want: head + lines(2, 3)},
		{name: "range to the end", input: cmd("command", "view", "path", user, "view_range", []int{6, -1}), want: head + lines(6, 7)},
		{name: "range of the last line", input: cmd("command", "view", "path", user, "view_range", []int{7, 7}), want: head + lines(7, 7)},
		{name: "range whole", input: cmd("command", "view", "path", user, "view_range", []int{1, 7}), want: head + lines(1, 7)},
		{name: "range 5.0", input: `{"command":"view","path":"` + user + `","view_range":[5.0,6]}`, want: head + lines(5, 6)},
		{name: "range null", input: `{"command":"view","path":"` + user + `","view_range":null}`, want: head + lines(1, 7)},
		{name: "range first 0", input: cmd("command", "view", "path", user, "view_range", []int{0, 3}), isErr: true,
			want: "Invalid `view_range`: [0, 3]. Its first element `0` should be within the range of lines of the file: [1, 7]"},
		{name: "range first past the end", input: cmd("command", "view", "path", user, "view_range", []int{8, -1}), isErr: true,
			want: "Invalid `view_range`: [8, -1]. Its first element `8` should be within the range of lines of the file: [1, 7]"},
		{name: "range second past the end", input: cmd("command", "view", "path", user, "view_range", []int{2, 8}), isErr: true,
			want: "Invalid `view_range`: [2, 8]. Its second element `8` should be smaller than the number of lines in the file: `7`"},
		{name: "range backwards", input: cmd("command", "view", "path", user, "view_range", []int{4, 3}), isErr: true,
			want: "Invalid `view_range`: [4, 3]. Its second element `3` should be larger or equal than its first `4`"},
		{name: "range second -2", input: cmd("command", "view", "path", user, "view_range", []int{4, -2}), isErr: true,
			want: "Invalid `view_range`: [4, -2]. Its second element `-2` should be larger or equal than its first `4`"},
		{name: "range of one", input: cmd("command", "view", "path", user, "view_range", []int{4}), isErr: true, want: "Invalid `view_range`. It should be a list of two integers."},
		{name: "range of three", input: cmd("command", "view", "path", user, "view_range", []int{1, 2, 3}), isErr: true, want: "Invalid `view_range`. It should be a list of two integers."},
		{name: "range of text", input: cmd("command", "view", "path", user, "view_range", "1-3"), isErr: true, want: "Invalid `view_range`. It should be a list of two integers."},
		{name: "range of fractions", input: cmd("command", "view", "path", user, "view_range", []float64{1.5, 3}), isErr: true, want: "Invalid `view_range`. It should be a list of two integers."},
		{name: "empty file", input: cmd("command", "view", "path", "/memories/episodes/2025-11.md"), want: "Here's the content of /memories/episodes/2025-11.md with line numbers:"},
		{name: "empty file's range", input: cmd("command", "view", "path", "/memories/episodes/2025-11.md", "view_range", []int{1, -1}), isErr: true,
			want: "Invalid `view_range`: [1, -1]. Its first element `1` should be within the range of lines of the file: [1, 0]"},
		{name: "last line without newline", input: cmd("command", "view", "path", "/memories/episodes/2025-10.md", "view_range", []int{524287, -1}), want: "Here's the content of /memories/episodes/2025-10.md with line numbers:\n524287\tz\n524288\tw"},
		{name: "too long to show at once", input: cmd("command", "view", "path", "/memories/episodes/2025-10.md", "view_range", []int{10, -1}), prefix: true, want: "Here's the content of /memories/episodes/2025-10.md with line numbers:\n    10\tz\n    11\tz\n"},
		{name: "missing file", input: cmd("command", "view", "path", "/memories/episodes/2025-09.md"), isErr: true,
			want: "The path /memories/episodes/2025-09.md does not exist. Please provide a valid path. It can be made with create."},
		{name: "missing month with parts", input: cmd("command", "view", "path", "/memories/episodes/2026-02.md"), isErr: true,
			want: "The path /memories/episodes/2026-02.md does not exist. Please provide a valid path. The month's older entries are in 2 full parts, /memories/episodes/2026-02.002.md to /memories/episodes/2026-02.003.md"},
		{name: "an archived original", input: cmd("command", "view", "path", "/memories/episodes/archive/2025-06.md"), want: "Here's the content of /memories/episodes/archive/2025-06.md with line numbers:\n     1\t# 2025-06 Episodes"},
		{name: "a part", input: cmd("command", "view", "path", "/memories/episodes/2026-02.002.md"), want: "Here's the content of /memories/episodes/2026-02.002.md with line numbers:\n     1\tpart two"},
		{name: "not a memory file", input: cmd("command", "view", "path", "/memories/notes.md"), isErr: true, prefix: true,
			want: "The path /memories/notes.md does not exist. Please provide a valid path. /memories/notes.md is not a memory file. Memory here is a closed set of files: /memories/facts/user.md, /memories/facts/memory.md, /memories/procedures.md for rules learned from experience, and one file a month, /memories/episodes/YYYY-MM.md (this month's is /memories/episodes/2026-02.md)"},
		{name: "a fact file not configured", input: cmd("command", "view", "path", "/memories/facts/other.md"), isErr: true, prefix: true,
			want: "The path /memories/facts/other.md does not exist. Please provide a valid path. /memories/facts/other.md is not one of the fact files."},
		{name: "not a month", input: cmd("command", "view", "path", "/memories/episodes/2026-13.md"), isErr: true, prefix: true,
			want: "The path /memories/episodes/2026-13.md does not exist. Please provide a valid path. /memories/episodes/2026-13.md is not a month file"},
		{name: "another folder", input: cmd("command", "view", "path", "/memories/episodes/archive"), isErr: true, prefix: true,
			want: "The path /memories/episodes/archive does not exist. Please provide a valid path. /memories/episodes/archive is not a month file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := claude(t, s.NewSession(), tc.input)
			require.Equal(t, tc.isErr, r.IsError, r.Text)
			if tc.prefix {
				require.True(t, strings.HasPrefix(r.Text, tc.want), "got:\n%s\nwant a start of:\n%s", r.Text, tc.want)
			} else {
				require.Equal(t, tc.want, r.Text)
			}
		})
	}
}

// TestClaudeMemoryViewLong: a view shows about 128 KiB of lines at once and
// says which lines it showed and how to view the rest; a single line
// longer than that is cut at a character. Neither counts as viewing the
// file whole, so create may not replace it yet.
func TestClaudeMemoryViewLong(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "its months are a person's long files without a head")
	writeFile(t, dir, "episodes/2025-10.md", strings.Repeat("z\n", 1<<19-1)+"w") // 1 MiB less a byte: the most that is read whole
	writeFile(t, dir, "episodes/2025-09.md", "# long\nx"+strings.Repeat("é", 100_000)+"\nnext\n")
	c := s.NewSession()

	text := claudeOK(t, c, cmd("command", "view", "path", "/memories/episodes/2025-10.md"))
	require.True(t, strings.HasSuffix(text, "\n 65536\tz\n\nNote: the file has 524,288 lines and a view shows about 131,072 bytes at once: lines 1-65536 are shown; view with view_range [65537, 524288] for more."), text[len(text)-300:])
	r := claude(t, c, cmd("command", "create", "path", "/memories/episodes/2025-10.md", "file_text", "# short\n"))
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "was not viewed in this conversation")

	text = claudeOK(t, c, cmd("command", "view", "path", "/memories/episodes/2025-09.md", "view_range", []int{2, 2}))
	require.Equal(t, "Here's the content of /memories/episodes/2025-09.md with line numbers:\n     2\tx"+strings.Repeat("é", 65535)+
		"\n\nNote: line 2 is 200,001 bytes, longer than a view shows at once, so only its first 131,071 are shown.", text)
}

// TestClaudeMemoryViewNotText: a file a person left with bytes that are not
// text is shown with U+FFFD and a note; str_replace and insert refuse it,
// and create, after the view, replaces it.
func TestClaudeMemoryViewNotText(t *testing.T) {
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/user.md", "# User\n\n- bad \xff byte\n- nul \x00\n")
	c := s.NewSession()
	text := claudeOK(t, c, cmd("command", "view", "path", "/memories/facts/user.md"))
	require.Equal(t, "Here's the content of /memories/facts/user.md with line numbers:\n     1\t# User\n     2\t\n     3\t- bad \uFFFD byte\n     4\t- nul \uFFFD\n\n"+
		"Note: the file holds bytes that are not text (NUL bytes or invalid UTF-8, from an edit outside memory), shown as \uFFFD; str_replace and insert cannot change it: create it again with the whole corrected text.", text)
	notText := "The file /memories/facts/user.md holds bytes that are not text (NUL bytes or invalid UTF-8, from an edit outside memory), so str_replace and insert cannot change it: view it, then create it again with the whole corrected text"
	r := claude(t, c, cmd("command", "str_replace", "path", "/memories/facts/user.md", "old_str", "# User", "new_str", "# Person"))
	require.Equal(t, memory.ToolResult{Text: notText, IsError: true}, r)
	r = claude(t, c, cmd("command", "insert", "path", "/memories/facts/user.md", "insert_line", 1, "insert_text", "x"))
	require.Equal(t, memory.ToolResult{Text: notText, IsError: true}, r)
	claudeOK(t, c, cmd("command", "create", "path", "/memories/facts/user.md", "file_text", "# User\n\n> Summary: fixed\n\n- bad byte\n"))
	require.Equal(t, "# User\n\n> Summary: fixed\n\n- bad byte\n", readFile(t, dir, "facts/user.md"))
}

// TestClaudeMemoryCreate: create writes a whole file, new or viewed; it
// refuses to overwrite what the conversation has not seen, the facts budget
// holds, and paths outside the closed set are refused.
func TestClaudeMemoryCreate(t *testing.T) {
	const user = "/memories/facts/user.md"
	viewUser := cmd("command", "view", "path", user)
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, c *memory.Session, dir string)
		input  string
		want   string
		isErr  bool
		prefix bool
		file   string // facts/user.md afterwards ("" for unchanged)
	}{
		{name: "a new fact file gets its head", input: cmd("command", "create", "path", "/memories/facts/memory.md", "file_text", "- Use metric units"),
			want: "File created successfully at: /memories/facts/memory.md. The file was given the \"# \" title and \"> Summary:\" line every memory file starts with, so its line numbers differ from file_text's: view it before an insert"},
		{name: "a new month", input: cmd("command", "create", "path", "/memories/episodes/2026-02.md", "file_text", "# 2026-02 Episodes\n\n> Summary: gifts\n\n## Gift\n- Date: 2026-02-20\n"),
			want: "File created successfully at: /memories/episodes/2026-02.md"},
		{name: "after a view", before: func(t *testing.T, c *memory.Session, _ string) { claudeOK(t, c, viewUser) },
			input: cmd("command", "create", "path", user, "file_text", "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n"),
			want:  "File created successfully at: " + user + " (it replaces the text the file held)", file: "# User\n\n> Summary: Jianjun\n\n- Name: Jianjun\n"},
		{name: "after a memory_read", before: func(t *testing.T, c *memory.Session, _ string) {
			r, err := c.Call(context.Background(), "memory_read", json.RawMessage(`{"path":"facts/user.md"}`))
			require.NoError(t, err)
			require.False(t, r.IsError)
		}, input: cmd("command", "create", "path", user, "file_text", "# User\n\n> Summary: J\n\n- J\n"),
			want: "File created successfully at: " + user + " (it replaces the text the file held)", file: "# User\n\n> Summary: J\n\n- J\n"},
		{name: "not viewed", input: cmd("command", "create", "path", user, "file_text", "# User\n"), isErr: true,
			want: "File " + user + " already exists and was not viewed in this conversation, so create would overwrite text you have not seen: nothing was changed. view it first (whole, without view_range), then create it with the whole new text, or change part of it with str_replace or insert"},
		{name: "viewed in part", before: func(t *testing.T, c *memory.Session, _ string) {
			claudeOK(t, c, cmd("command", "view", "path", user, "view_range", []int{1, 3}))
		}, input: cmd("command", "create", "path", user, "file_text", "# User\n"), isErr: true, prefix: true, want: "File " + user + " already exists and was not viewed"},
		{name: "changed since viewed", before: func(t *testing.T, c *memory.Session, dir string) {
			claudeOK(t, c, viewUser)
			writeFile(t, dir, "facts/user.md", userFacts+"- Added: by a person\n")
		}, input: cmd("command", "create", "path", user, "file_text", "# User\n"), isErr: true,
			want: "File " + user + " changed since you last viewed it (edited by a person or another agent): nothing was changed. view it (whole, without view_range) to see its current text, then create again",
			file: userFacts + "- Added: by a person\n"},
		{name: "deleted since viewed", before: func(t *testing.T, c *memory.Session, dir string) {
			claudeOK(t, c, viewUser)
			require.NoError(t, os.Remove(filepath.Join(dir, "facts", "user.md")))
		}, input: cmd("command", "create", "path", user, "file_text", "# User\n"), isErr: true,
			want: "File " + user + " was deleted since you last viewed it: nothing was changed. If it should exist again, create it"},
		{name: "over the facts budget", before: func(t *testing.T, c *memory.Session, _ string) { claudeOK(t, c, viewUser) },
			input: cmd("command", "create", "path", user, "file_text", "# User\n\n> Summary: long\n\n"+strings.Repeat("- fact\n", 40)), isErr: true,
			want: "facts/ would be 305 bytes, over the 200-byte budget (the change alone is 305 bytes); nothing was written. Keep only the facts worth loading into every prompt, one short line each: shorten this change, or condense the fact files first (view one, then str_replace its outdated lines or create it again with a shorter text)"},
		{name: "a NUL byte", input: cmd("command", "create", "path", "/memories/facts/memory.md", "file_text", "a\x00b"), isErr: true,
			want: "file_text contains a NUL byte; memory files are plain text"},
		{name: "an open fence", input: cmd("command", "create", "path", "/memories/facts/memory.md", "file_text", "```\ncode"), isErr: true, prefix: true,
			want: "file_text ends inside an open block"},
		{name: "a summary with a control character", input: cmd("command", "create", "path", "/memories/facts/memory.md", "file_text", "# M\n\n> Summary: a\x01b\n"), isErr: true,
			want: "the content's summary line holds a control character or a line or paragraph separator; nothing was changed"},
		{name: "a folder", input: cmd("command", "create", "path", "/memories/facts", "file_text", "x"), isErr: true, prefix: true,
			want: "The path /memories/facts is a directory: create makes a file. The memory files are /memories/facts/user.md"},
		{name: "the root", input: cmd("command", "create", "path", "/memories", "file_text", "x"), isErr: true, prefix: true, want: "The path /memories is a directory"},
		{name: "another file", input: cmd("command", "create", "path", "/memories/notes.md", "file_text", "x"), isErr: true,
			want: "File /memories/notes.md cannot be created: notes.md is not a memory file. Memory here is a closed set of files: /memories/facts/user.md, /memories/facts/memory.md, /memories/procedures.md for rules learned from experience, and one file a month, /memories/episodes/YYYY-MM.md (this month's is /memories/episodes/2026-02.md)"},
		{name: "a new folder", input: cmd("command", "create", "path", "/memories/projects/a.md", "file_text", "x"), isErr: true, prefix: true,
			want: "File /memories/projects/a.md cannot be created: projects/a.md is not a memory file."},
		{name: "an archived original", input: cmd("command", "create", "path", "/memories/episodes/archive/2026-01.md", "file_text", "x"), isErr: true, prefix: true,
			want: "File /memories/episodes/archive/2026-01.md cannot be created: episodes/archive/2026-01.md is an original kept by compaction, and read only"},
		{name: "a part that does not exist", input: cmd("command", "create", "path", "/memories/episodes/2026-01.001.md", "file_text", "# x\n\n> Summary: x\n"), isErr: true,
			want: "episodes/2026-01.001.md does not exist, and only a full month's file becomes a part; write to episodes/2026-01.md instead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := claudeStore(t, &memory.Options{FactsBudget: 200})
			c := s.NewSession()
			if tc.before != nil {
				tc.before(t, c, dir)
			}
			before, _ := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
			r := claude(t, c, tc.input)
			require.Equal(t, tc.isErr, r.IsError, r.Text)
			if tc.prefix {
				require.True(t, strings.HasPrefix(r.Text, tc.want), "got:\n%s\nwant a start of:\n%s", r.Text, tc.want)
			} else {
				require.Equal(t, tc.want, r.Text)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
			if tc.file == "" {
				require.Equal(t, string(before), string(after))
			} else {
				require.Equal(t, tc.file, string(after))
			}
		})
	}
}

// TestClaudeMemoryStrReplace: str_replace is one patch: old_str must
// occur exactly once (several occurrences name their lines), it needs a
// view since the file last changed, and the result shows the change.
func TestClaudeMemoryStrReplace(t *testing.T) {
	const user = "/memories/facts/user.md"
	viewUser := func(t *testing.T, c *memory.Session, _ string) {
		claudeOK(t, c, cmd("command", "view", "path", user))
	}
	for _, tc := range []struct {
		name     string
		before   func(t *testing.T, c *memory.Session, dir string)
		old, new string
		path     string // default user
		want     string
		isErr    bool
		file     string // facts/user.md afterwards ("" for unchanged)
		broken   string // why the memory is left as Check reports it, "" when sound
	}{
		{name: "one line", before: viewUser, old: "- Likes: tea", new: "- Likes: green tea",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     4\t\n     5\t- Name: 建军 (Jianjun)\n     6\t- Likes: green tea\n     7\t- Language: prefers Chinese",
			file: strings.Replace(userFacts, "- Likes: tea", "- Likes: green tea", 1)},
		{name: "lines added", before: viewUser, old: "# User", new: "# User\n\nAbout the person",
			want:   "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t# User\n     2\t\n     3\tAbout the person\n     4\t\n     5\t> Summary: Jianjun, likes tea",
			file:   strings.Replace(userFacts, "# User", "# User\n\nAbout the person", 1),
			broken: "the text it puts between the title and the summary line is one a patch may splice in (Patch leaves the head to the caller)"},
		{name: "deleted", before: viewUser, old: "- Likes: tea\n", new: "",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     4\t\n     5\t- Name: 建军 (Jianjun)\n     6\t- Language: prefers Chinese",
			file: strings.Replace(userFacts, "- Likes: tea\n", "", 1)},
		{name: "unicode", before: viewUser, old: "建军", new: "建国",
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     3\t> Summary: Jianjun, likes tea\n     4\t\n     5\t- Name: 建国 (Jianjun)\n     6\t- Likes: tea\n     7\t- Language: prefers Chinese",
			file: strings.Replace(userFacts, "建军", "建国", 1)},
		{name: "not found", before: viewUser, old: "- Likes: coffee", new: "x", isErr: true,
			want: "No replacement was performed, old_str `- Likes: coffee` did not appear verbatim in " + user + "."},
		{name: "several", before: viewUser, old: "- ", new: "* ", isErr: true,
			want: "No replacement was performed. Multiple occurrences of old_str `- ` in lines: 5, 6, 7. Please ensure it is unique"},
		{name: "several on one line", before: viewUser, old: "e", new: "E", isErr: true,
			want: "No replacement was performed. Multiple occurrences of old_str `e` in lines: 1, 3, 5, 6, 7. Please ensure it is unique"},
		{name: "overlapping", before: func(t *testing.T, c *memory.Session, dir string) {
			writeFile(t, dir, "facts/user.md", "# User\n\n- aaa\n")
			viewUser(t, c, dir)
		}, old: "aa", new: "b", isErr: true, broken: "a person's fact file without a summary is its fixture",
			want: "No replacement was performed. Multiple occurrences of old_str `aa` in lines: 3. Please ensure it is unique"},
		{name: "very many", before: func(t *testing.T, c *memory.Session, dir string) {
			writeFile(t, dir, "facts/user.md", strings.Repeat("x\n", 150))
			viewUser(t, c, dir)
		}, old: "x", new: "y", isErr: true, broken: "a person's fact file without a head, over the budget, is its fixture",
			want: "No replacement was performed. Multiple occurrences of old_str `x` in lines: " + seq(1, 101) + ", … (more than 100 occurrences). Please ensure it is unique"},
		{name: "empty old_str", before: viewUser, old: "", new: "x", isErr: true,
			want: "No replacement was performed, old_str is empty. Copy the exact text to replace from a view of " + user},
		{name: "not viewed", old: "tea", new: "coffee", isErr: true,
			want: "File " + user + " was not viewed in this conversation: nothing was changed. view it (whole, without view_range) to see its current text, then str_replace again"},
		{name: "changed since viewed", before: func(t *testing.T, c *memory.Session, dir string) {
			viewUser(t, c, dir)
			writeFile(t, dir, "facts/user.md", userFacts+"- Added: by a person\n")
		}, old: "tea", new: "coffee", isErr: true,
			want: "File " + user + " changed since you last viewed it (edited by a person or another agent): nothing was changed. view it (whole, without view_range) to see its current text, then str_replace again",
			file: userFacts + "- Added: by a person\n"},
		{name: "missing file", path: "/memories/facts/memory.md", old: "a", new: "b", isErr: true,
			want: "The path /memories/facts/memory.md does not exist. Please provide a valid path. It can be made with create."},
		{name: "a folder", path: "/memories/facts", old: "a", new: "b", isErr: true,
			want: "The path /memories/facts is not a file. It is a directory: give the path of a file in it, one of /memories/facts/… or /memories/episodes/YYYY-MM.md"},
		{name: "over the budget", before: viewUser, old: "- Likes: tea", new: "- Likes: " + strings.Repeat("tea ", 30), isErr: true,
			want: "facts/ would be 222 bytes, over the 200-byte budget (it is 105 bytes now: facts/user.md has 105); nothing was written. Keep only the facts worth loading into every prompt, one short line each: shorten this change, or condense the fact files first (view one, then str_replace its outdated lines or create it again with a shorter text)"},
		{name: "a lone carriage return", before: viewUser, old: "tea", new: "te\ra", isErr: true,
			want: `new_str contains a carriage return (\r) that does not end a line with \n; end lines with \n only`},
		{name: "a fence left open", before: viewUser, old: "- Likes: tea\n", new: "```\n", isErr: true,
			want: "the patched file would end inside an open block (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>); nothing was changed"},
		{name: "missing new_str", before: viewUser, isErr: true, want: `missing required argument new_str for str_replace (use "" to delete old_str)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := claudeStore(t, &memory.Options{FactsBudget: 200})
			if tc.broken != "" {
				leavesBroken(t, tc.broken)
			}
			c := s.NewSession()
			if tc.before != nil {
				tc.before(t, c, dir)
			}
			before := readFile(t, dir, "facts/user.md")
			p := tc.path
			if p == "" {
				p = user
			}
			input := cmd("command", "str_replace", "path", p, "old_str", tc.old, "new_str", tc.new)
			if tc.name == "missing new_str" {
				input = cmd("command", "str_replace", "path", p, "old_str", "tea")
			}
			r := claude(t, c, input)
			require.Equal(t, tc.want, r.Text)
			require.Equal(t, tc.isErr, r.IsError)
			want := tc.file
			if want == "" {
				want = before
			}
			require.Equal(t, want, readFile(t, dir, "facts/user.md"))
		})
	}
}

// seq renders the numbers from a to b joined by ", ".
func seq(a, b int) string {
	var parts []string
	for i := a; i <= b; i++ {
		parts = append(parts, fmt.Sprint(i))
	}
	return strings.Join(parts, ", ")
}

// TestClaudeMemoryInsert: insert adds insert_text as whole lines after
// insert_line, from 0 (the top) to the number of lines (the end), and
// refuses a line outside that range with the reference's words.
func TestClaudeMemoryInsert(t *testing.T) {
	const user = "/memories/facts/user.md"
	for _, tc := range []struct {
		name    string
		content string // facts/user.md before, viewed
		line    int
		text    string
		want    string // the file afterwards, or the error
		isErr   bool
	}{
		{name: "at the top", content: "a\nb\n", line: 0, text: "top", want: "top\na\nb\n"},
		{name: "after the first line", content: "a\nb\n", line: 1, text: "mid\n", want: "a\nmid\nb\n"},
		{name: "at the end", content: "a\nb\n", line: 2, text: "end", want: "a\nb\nend\n"},
		{name: "several lines", content: "a\nb\n", line: 1, text: "x\ny\n", want: "a\nx\ny\nb\n"},
		{name: "an empty line", content: "a\nb\n", line: 1, text: "", want: "a\n\nb\n"},
		{name: "a blank line kept", content: "a\nb\n", line: 1, text: "x\n\n", want: "a\nx\n\nb\n"},
		{name: "after a last line without newline", content: "a\nb", line: 2, text: "c", want: "a\nb\nc\n"},
		{name: "before a last line without newline", content: "a\nb", line: 1, text: "c", want: "a\nc\nb"},
		{name: "into an empty file", content: "", line: 0, text: "first", want: "first\n"},
		{name: "unicode", content: "- 名字: 建军\n", line: 1, text: "- 城市: 上海", want: "- 名字: 建军\n- 城市: 上海\n"},
		{name: "crlf kept", content: "a\r\nb\r\n", line: 1, text: "x\r\n", want: "a\r\nx\r\nb\r\n"},
		{name: "past the end", content: "a\nb\n", line: 3, text: "x", isErr: true,
			want: "Invalid `insert_line` parameter: 3. It should be within the range of lines of the file: [0, 2]"},
		{name: "negative", content: "a\nb\n", line: -1, text: "x", isErr: true,
			want: "Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 2]"},
		{name: "empty file's range", content: "", line: 1, text: "x", isErr: true,
			want: "Invalid `insert_line` parameter: 1. It should be within the range of lines of the file: [0, 0]"},
		{name: "a lone carriage return", content: "a\nb\n", line: 1, text: "x\ry", isErr: true,
			want: `insert_text contains a carriage return (\r) that does not end a line with \n; end lines with \n only`},
		{name: "a fence left open", content: "a\nb\n", line: 1, text: "```", isErr: true,
			want: "No insertion was performed: the file would end inside an open block (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>), so anything after it would fall inside; close the block in insert_text"},
		{name: "nested too deep", content: strings.Repeat(">", 30) + " a\n", line: 1, text: strings.Repeat("> ", 33) + "b", isErr: true,
			want: "insert_text nests blockquotes or lists 33 levels deep; memory files keep to 32 levels"},
		{name: "over the budget", content: strings.Repeat("x", 149) + "\n", line: 1, text: strings.Repeat("y", 60), isErr: true,
			want: "facts/ would be 211 bytes, over the 200-byte budget (it is 150 bytes now: facts/user.md has 150); nothing was written. Keep only the facts worth loading into every prompt, one short line each: shorten this change, or condense the fact files first (view one, then str_replace its outdated lines or create it again with a shorter text)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := open(t, &memory.Options{FactsBudget: 200})
			leavesBroken(t, "its fact file is a person's bare lines, without title or summary, to count lines in")
			writeFile(t, dir, "facts/user.md", tc.content)
			c := s.NewSession()
			claudeOK(t, c, cmd("command", "view", "path", user))
			r := claude(t, c, cmd("command", "insert", "path", user, "insert_line", tc.line, "insert_text", tc.text))
			require.Equal(t, tc.isErr, r.IsError, r.Text)
			if tc.isErr {
				require.Equal(t, tc.want, r.Text)
				require.Equal(t, tc.content, readFile(t, dir, "facts/user.md"))
				return
			}
			require.Equal(t, "The file "+user+" has been edited.", r.Text)
			require.Equal(t, tc.want, readFile(t, dir, "facts/user.md"))
		})
	}
}

// TestClaudeMemoryInsertGuard: insert needs a view of the file since it
// last changed, and a file that does not exist or a folder is refused as
// the reference refuses it.
func TestClaudeMemoryInsertGuard(t *testing.T) {
	s, dir := claudeStore(t, nil)
	c := s.NewSession()
	ins := func(p string) memory.ToolResult {
		return claude(t, c, cmd("command", "insert", "path", p, "insert_line", 0, "insert_text", "x"))
	}
	r := ins("/memories/facts/user.md")
	require.Equal(t, memory.ToolResult{IsError: true, Text: "File /memories/facts/user.md was not viewed in this conversation: nothing was changed. view it (whole, without view_range) to see its current text, then insert again"}, r)
	r = ins("/memories/facts/memory.md")
	require.Equal(t, memory.ToolResult{IsError: true, Text: "The path /memories/facts/memory.md does not exist. Please provide a valid path. It can be made with create."}, r)
	r = ins("/memories/episodes")
	require.True(t, r.IsError)
	require.True(t, strings.HasPrefix(r.Text, "The path /memories/episodes is not a file. It is a directory"), r.Text)
	r = ins("/memories/x.md")
	require.True(t, r.IsError)
	require.True(t, strings.HasPrefix(r.Text, "The path /memories/x.md does not exist. Please provide a valid path. /memories/x.md is not a memory file."), r.Text)
	require.Equal(t, userFacts, readFile(t, dir, "facts/user.md"))
}

// TestClaudeMemoryOwnChanges: the conversation's own changes count as seen:
// after one view, str_replace, insert and create follow one another
// without another view, and a memory_patch of the same conversation does
// not make the memory tool view again, nor the other way round.
func TestClaudeMemoryOwnChanges(t *testing.T) {
	s, dir := claudeStore(t, nil)
	c := s.NewSession()
	const user = "/memories/facts/user.md"
	claudeOK(t, c, cmd("command", "view", "path", user))
	claudeOK(t, c, cmd("command", "str_replace", "path", user, "old_str", "- Likes: tea", "new_str", "- Likes: green tea"))
	claudeOK(t, c, cmd("command", "insert", "path", user, "insert_line", 7, "insert_text", "- City: Shanghai"))
	r, err := c.Call(context.Background(), "memory_patch", json.RawMessage(`{"path":"facts/user.md","patches":[{"oldText":"Shanghai","newText":"上海"}],"version":null}`))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	claudeOK(t, c, cmd("command", "insert", "path", user, "insert_line", 0, "insert_text", "<!-- kept by the agent -->"))
	claudeOK(t, c, cmd("command", "create", "path", user, "file_text", "# User\n\n> Summary: Jianjun\n\n- City: 上海\n"))
	r, err = c.Call(context.Background(), "memory_write", json.RawMessage(`{"path":"facts/user.md","content":"# User\n\n> Summary: J\n\n- City: 上海\n","version":null}`))
	require.NoError(t, err)
	require.False(t, r.IsError, r.Text)
	require.Equal(t, "# User\n\n> Summary: J\n\n- City: 上海\n", readFile(t, dir, "facts/user.md"))

	// Another conversation has seen none of it.
	r = claude(t, s.NewSession(), cmd("command", "str_replace", "path", user, "old_str", "J", "new_str", "K"))
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "was not viewed in this conversation")
}

// TestClaudeMemoryParallel: a model's parallel calls in one conversation,
// run at once, all take effect: each insert and str_replace after the one
// view is the conversation's own change.
func TestClaudeMemoryParallel(t *testing.T) {
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/memory.md", "# Memory\n\n> Summary: lessons\n\n- a0\n- b0\n- c0\n- d0\n")
	c := s.NewSession()
	const p = "/memories/facts/memory.md"
	claudeOK(t, c, cmd("command", "view", "path", p))
	var wg sync.WaitGroup
	results := make([]memory.ToolResult, 8)
	for i := range 8 {
		wg.Go(func() {
			in := cmd("command", "insert", "path", p, "insert_line", 4, "insert_text", fmt.Sprintf("- new %d", i))
			if i%2 == 1 {
				in = cmd("command", "str_replace", "path", p, "old_str", fmt.Sprintf("- %c0", 'a'+i/2), "new_str", fmt.Sprintf("- %c1", 'a'+i/2))
			}
			r, err := c.ClaudeMemory(context.Background(), json.RawMessage(in))
			require.NoError(t, err)
			results[i] = r
		})
	}
	wg.Wait()
	for i, r := range results {
		require.False(t, r.IsError, "call %d: %s", i, r.Text)
	}
	got := readFile(t, dir, "facts/memory.md")
	for i := range 4 {
		require.Contains(t, got, fmt.Sprintf("- new %d\n", 2*i))
		require.Contains(t, got, fmt.Sprintf("- %c1\n", 'a'+i))
	}
}

// TestClaudeMemoryClosedSet: delete and rename are refused with a text
// that explains the closed set of files and what to do instead, and
// nothing changes on disk.
func TestClaudeMemoryClosedSet(t *testing.T) {
	s, dir := claudeStore(t, nil)
	c := s.NewSession()
	claudeOK(t, c, cmd("command", "view", "path", "/memories/facts/user.md"))
	for _, tc := range []struct{ input, want string }{
		{cmd("command", "delete", "path", "/memories/facts/user.md"),
			"Cannot delete /memories/facts/user.md: memory here is a closed set of files, which are kept and never deleted: /memories/facts/user.md, /memories/facts/memory.md, /memories/procedures.md for rules learned from experience, and one file a month, /memories/episodes/YYYY-MM.md (this month's is /memories/episodes/2026-02.md). " +
				"To forget something, remove its lines with str_replace (an empty new_str), or view the file and create it again with only what should be kept"},
		{cmd("command", "delete", "path", "/memories"), "Cannot delete /memories: memory here is a closed set of files"},
		{cmd("command", "rename", "old_path", "/memories/facts/user.md", "new_path", "/memories/facts/person.md"),
			"Cannot rename /memories/facts/user.md to /memories/facts/person.md: memory here is a closed set of files with fixed names, never renamed or moved: /memories/facts/user.md, /memories/facts/memory.md, /memories/procedures.md for rules learned from experience, and one file a month, /memories/episodes/YYYY-MM.md (this month's is /memories/episodes/2026-02.md). " +
				"To move an entry to another of these files, insert or create it there, then remove it from this one with str_replace (an empty new_str)"},
	} {
		r := claude(t, c, tc.input)
		require.True(t, r.IsError)
		require.True(t, strings.HasPrefix(r.Text, tc.want), r.Text)
	}
	require.Equal(t, userFacts, readFile(t, dir, "facts/user.md"))
	require.FileExists(t, filepath.Join(dir, "episodes", "2026-01.md"))
}

// TestClaudeMemoryInput: malformed input is a model error that says what
// is wrong, before anything is read.
func TestClaudeMemoryInput(t *testing.T) {
	s, _ := claudeStore(t, nil)
	c := s.NewSession()
	for _, tc := range []struct{ input, want string }{
		{`not json`, "the arguments are not valid JSON (invalid character 'o' in literal null (expecting 'u')); send a JSON object"},
		{`null`, "the input must be a JSON object with a command, not null"},
		{``, "the arguments are not valid JSON (unexpected end of JSON input); send a JSON object"},
		{`[]`, "the arguments must be a JSON object, not an array"},
		{`{}`, "missing required argument command: one of view, create, str_replace, insert, delete and rename"},
		{`{"command":null}`, "missing required argument command: one of view, create, str_replace, insert, delete and rename"},
		{`{"command":7}`, "command must be a string, not a number"},
		{`{"command":"undo_edit","path":"/memories"}`, `Unknown command "undo_edit": the memory tool's commands are view, create, str_replace, insert, delete and rename`},
		{`{"command":"view"}`, "missing required argument path for view"},
		{`{"command":"view","path":null}`, "missing required argument path for view"},
		{`{"command":"view","path":3}`, "path must be a string, not a number"},
		{`{"command":"create","path":"/memories/facts/user.md"}`, "missing required argument file_text for create"},
		{`{"command":"insert","path":"/memories/facts/user.md","insert_line":"2","insert_text":"x"}`, "insert_line must be a whole number, not a string"},
		{`{"command":"insert","path":"/memories/facts/user.md","insert_line":1.5,"insert_text":"x"}`, "insert_line must be a whole number, not 1.5"},
		{`{"command":"insert","path":"/memories/facts/user.md","insert_text":"x"}`, "missing required argument insert_line for insert"},
		{`{"command":"rename","old_path":"/memories/a"}`, "missing required argument new_path for rename"},
	} {
		r := claude(t, c, tc.input)
		require.Equal(t, memory.ToolResult{Text: tc.want, IsError: true}, r, tc.input)
	}
}

// TestClaudeMemoryPaths: paths outside /memories, that climb out of it, or
// that resolve to no memory file are model errors, worded as the reference
// words them where it has words for them, and a path that does not exist
// keeps the reference's full sentence before what is wrong with it; no
// file is touched.
func TestClaudeMemoryPaths(t *testing.T) {
	s, dir := claudeStore(t, nil)
	c := s.NewSession()
	for _, tc := range []struct{ path, want string }{
		{"/etc/passwd", "Path must start with /memories, got: /etc/passwd. The memory files are /memories/facts/user.md, /memories/facts/memory.md, /memories/procedures.md for rules learned from experience, and one file a month, /memories/episodes/YYYY-MM.md (this month's is /memories/episodes/2026-02.md)"},
		{"facts/user.md", "Path must start with /memories, got: facts/user.md."},
		{"/memoriesx/facts/user.md", "Path must start with /memories, got: /memoriesx/facts/user.md."},
		{"", `Path must start with /memories, got: "".`},
		{"/memories/../etc/passwd", "Path /memories/../etc/passwd would escape /memories directory"},
		{"/memories/facts/../../x", "Path /memories/facts/../../x would escape /memories directory"},
		{"/memories/..", "Path /memories/.. would escape /memories directory"},
		{"/memories/facts/.user.md", "The path /memories/facts/.user.md does not exist. Please provide a valid path. The path may not name hidden files or folders."},
		{"/memories/facts/user.md/../../notes.md", "The path /memories/facts/user.md/../../notes.md does not exist. Please provide a valid path. /memories/notes.md is not a memory file."},
		{"/memories/facts\\user.md", `The path /memories/facts\user.md does not exist. Please provide a valid path. The path must use forward slashes, not backslashes.`},
		{"/memories/facts/user.md\n", `The path "/memories/facts/user.md\n" does not exist. Please provide a valid path. The path contains a control character.`},
	} {
		for _, command := range []string{"view", "str_replace"} {
			input := cmd("command", command, "path", tc.path, "old_str", "a", "new_str", "b")
			if command == "view" {
				input = cmd("command", command, "path", tc.path)
			}
			r := claude(t, c, input)
			require.True(t, r.IsError, "%s %q", command, tc.path)
			require.True(t, strings.HasPrefix(r.Text, tc.want), "%s %q:\n%s", command, tc.path, r.Text)
		}
	}
	require.Equal(t, userFacts, readFile(t, dir, "facts/user.md"))
}

// TestClaudeMemoryPathsResolved: as the reference resolves a path before it
// uses it, doubled slashes, "." segments, a trailing slash and ".."
// segments that stay inside /memories name the file or folder they
// resolve to, for every command; results name the resolved path.
func TestClaudeMemoryPathsResolved(t *testing.T) {
	const user = "/memories/facts/user.md"
	for _, tc := range []struct{ name, path, shown string }{
		{"doubled slash", "/memories/facts//user.md", user},
		{"doubled slash after the root", "/memories//facts/user.md", user},
		{"trailing slash", "/memories/facts/user.md/", user},
		{"dot segments", "/memories/./facts/./user.md", user},
		{"a dot segment at the end", "/memories/facts/user.md/.", user},
		{"dot-dot inside", "/memories/episodes/../facts/user.md", user},
		{"out and back in", "/memories/facts/../../memories/facts/user.md", user},
		{"folder with a dot", "/memories/./facts/", "/memories/facts"},
		{"root with dots", "/memories/facts/..", "/memories"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := claudeStore(t, nil)
			c := s.NewSession()
			view := claudeOK(t, c, cmd("command", "view", "path", tc.path))
			if tc.shown != user {
				require.True(t, strings.HasPrefix(view, "Here're the files and directories up to 2 levels deep in "+tc.shown+", excluding"), view)
				return
			}
			require.True(t, strings.HasPrefix(view, "Here's the content of "+user+" with line numbers:\n     1\t# User\n"), view)
			require.Equal(t, "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     4\t\n     5\t- Name: 建军 (Jianjun)\n     6\t- Likes: green tea\n     7\t- Language: prefers Chinese",
				claudeOK(t, c, cmd("command", "str_replace", "path", tc.path, "old_str", "- Likes: tea", "new_str", "- Likes: green tea")))
			require.Equal(t, "The file "+user+" has been edited.",
				claudeOK(t, c, cmd("command", "insert", "path", tc.path, "insert_line", 7, "insert_text", "- City: Shanghai")))
			require.Equal(t, "File created successfully at: "+user+" (it replaces the text the file held)",
				claudeOK(t, c, cmd("command", "create", "path", tc.path, "file_text", "# User\n\n> Summary: Jianjun\n\n- Name: 建军 (Jianjun)\n")))
			require.Equal(t, "# User\n\n> Summary: Jianjun\n\n- Name: 建军 (Jianjun)\n", readFile(t, dir, "facts/user.md"))
		})
	}
}

// TestClaudeMemoryIgnoredKeys: keys a command does not take are ignored,
// as the reference ignores them: another command's argument, a key in
// another case, one a later version of the tool may add.
func TestClaudeMemoryIgnoredKeys(t *testing.T) {
	s, dir := claudeStore(t, nil)
	c := s.NewSession()
	for _, tc := range []struct{ name, input, want string }{
		{"another command's argument", `{"command":"view","path":"/memories/facts/user.md","file_text":"x"}`, "Here's the content of /memories/facts/user.md with line numbers:\n     1\t# User"},
		{"a key in another case", `{"command":"view","Path":"/etc/passwd","path":"/memories/facts/user.md","VIEW_RANGE":[9,9]}`, "Here's the content of /memories/facts/user.md with line numbers:\n     1\t# User"},
		{"an unknown key with any value", `{"command":"insert","path":"/memories/facts/user.md","insert_line":7,"insert_text":"- City: Shanghai","mode":{"x":[1,null]}}`, "The file /memories/facts/user.md has been edited."},
		{"a view_range on str_replace", `{"command":"str_replace","path":"/memories/facts/user.md","old_str":"- City: Shanghai\n","new_str":"","view_range":"x"}`, "The memory file has been edited."},
	} {
		r := claude(t, c, tc.input)
		require.False(t, r.IsError, "%s: %s", tc.name, r.Text)
		require.True(t, strings.HasPrefix(r.Text, tc.want), "%s: %s", tc.name, r.Text)
	}
	require.Equal(t, userFacts, readFile(t, dir, "facts/user.md"))
	r := claude(t, c, `{"command":"view","Path":"/memories/facts/user.md"}`)
	require.Equal(t, memory.ToolResult{IsError: true, Text: "missing required argument path for view"}, r, "a key in another case is not the argument")
}

// TestClaudeMemoryMissing: a command on a memory file that does not exist
// gets the reference's sentence with its full stop, then what can be done:
// create for a file the tool may make, but not for persona.md (the
// person's own file), an original under episodes/archive/ or a month's
// full part, which create cannot make; a month's older parts when it has
// some.
func TestClaudeMemoryMissing(t *testing.T) {
	s, dir := claudeStore(t, nil)
	writeFile(t, dir, "episodes/2025-12.001.md", "# 2025-12 Episodes\n\n> Summary: part\n")
	c := s.NewSession()
	for _, tc := range []struct{ name, input, want string }{
		{"a fact file", cmd("command", "view", "path", "/memories/facts/memory.md"),
			"The path /memories/facts/memory.md does not exist. Please provide a valid path. It can be made with create."},
		{"procedures", cmd("command", "view", "path", "/memories/procedures.md"),
			"The path /memories/procedures.md does not exist. Please provide a valid path. It can be made with create."},
		{"an archived original", cmd("command", "view", "path", "/memories/episodes/archive/2025-09.md"),
			"The path /memories/episodes/archive/2025-09.md does not exist. Please provide a valid path. /memories/episodes/archive/ keeps the original entries of the months that were compacted, and nothing can be created there: view /memories/episodes for the months there are"},
		{"an archived part", cmd("command", "view", "path", "/memories/episodes/archive/2025-09.002.md"),
			"The path /memories/episodes/archive/2025-09.002.md does not exist. Please provide a valid path. /memories/episodes/archive/ keeps the original entries"},
		{"a part", cmd("command", "view", "path", "/memories/episodes/2025-12.002.md"),
			"The path /memories/episodes/2025-12.002.md does not exist. Please provide a valid path. A month's full parts are made only when its file is full, never by create: view /memories/episodes for the months and parts there are"},
		{"str_replace in a part", cmd("command", "str_replace", "path", "/memories/episodes/2025-12.002.md", "old_str", "a", "new_str", "b"),
			"The path /memories/episodes/2025-12.002.md does not exist. Please provide a valid path. A month's full parts"},
		{"persona", cmd("command", "view", "path", "/memories/persona.md"),
			"The path /memories/persona.md does not exist. Please provide a valid path. /memories/persona.md is the person's own file, written by hand: there is none, and it cannot be created here"},
		{"a month with parts", cmd("command", "view", "path", "/memories/episodes/2025-12.md"),
			"The path /memories/episodes/2025-12.md does not exist. Please provide a valid path. The month's older entries are in /memories/episodes/2025-12.001.md"},
		{"str_replace", cmd("command", "str_replace", "path", "/memories/facts/memory.md", "old_str", "a", "new_str", "b"),
			"The path /memories/facts/memory.md does not exist. Please provide a valid path. It can be made with create."},
		{"insert in a month with parts", cmd("command", "insert", "path", "/memories/episodes/2025-12.md", "insert_line", 0, "insert_text", "x"),
			"The path /memories/episodes/2025-12.md does not exist. Please provide a valid path. The month's older entries are in /memories/episodes/2025-12.001.md"},
	} {
		r := claude(t, c, tc.input)
		require.True(t, r.IsError, tc.name)
		require.True(t, strings.HasPrefix(r.Text, tc.want), "%s:\n%s", tc.name, r.Text)
		require.NotContains(t, r.Text, "Please provide a valid path:", tc.name)
	}
}

// TestClaudeMemorySymlink: a memory file that is a symbolic link out of
// the memory directory is refused, for every command, with the
// reference's sentence, naming the /memories path the model used, never
// the store's path; nothing is read or changed.
func TestClaudeMemorySymlink(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "memory")
	s, err := memory.Open(root, &memory.Options{Now: feb26})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.md"), []byte("SECRET\n"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(dir, "secret.md"), filepath.Join(root, "facts", "user.md")))
	c := s.NewSession()
	const want = "Path would escape /memories directory via symlink: /memories/facts/user.md is a symbolic link that leads outside the memory directory, so it cannot be used; nothing was changed. A person must replace the link with the file itself"
	for _, p := range []string{"/memories/facts/user.md", "/memories/facts//user.md", "/memories/episodes/../facts/user.md"} {
		for _, in := range []string{
			cmd("command", "view", "path", p),
			cmd("command", "create", "path", p, "file_text", "# User\n"),
			cmd("command", "str_replace", "path", p, "old_str", "SECRET", "new_str", "x"),
			cmd("command", "insert", "path", p, "insert_line", 0, "insert_text", "x"),
		} {
			require.Equal(t, memory.ToolResult{IsError: true, Text: want}, claude(t, c, in), in)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "secret.md"))
	require.NoError(t, err)
	require.Equal(t, "SECRET\n", string(b))
}

// TestClaudeMemoryHostErrors: a failure of the host is a Go error, never a
// result: a closed store, a cancelled context, a backend that cannot list
// or write. A listing a person's mistake made partial is a result that
// says so.
func TestClaudeMemoryHostErrors(t *testing.T) {
	s, _ := claudeStore(t, nil)
	c := s.NewSession()
	claudeOK(t, c, cmd("command", "view", "path", "/memories/facts/user.md"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, in := range []string{
		cmd("command", "view", "path", "/memories"),
		cmd("command", "view", "path", "/memories/facts/user.md"),
		cmd("command", "create", "path", "/memories/facts/user.md", "file_text", "# User\n"),
		cmd("command", "str_replace", "path", "/memories/facts/user.md", "old_str", "tea", "new_str", "x"),
		cmd("command", "insert", "path", "/memories/facts/user.md", "insert_line", 0, "insert_text", "x"),
	} {
		_, err := c.ClaudeMemory(ctx, json.RawMessage(in))
		require.ErrorIs(t, err, context.Canceled, in)
	}
	require.NoError(t, s.Close())
	for _, in := range []string{
		cmd("command", "view", "path", "/memories"),
		cmd("command", "view", "path", "/memories/facts/user.md"),
		cmd("command", "create", "path", "/memories/facts/user.md", "file_text", "# User\n"),
		cmd("command", "str_replace", "path", "/memories/facts/user.md", "old_str", "tea", "new_str", "x"),
		cmd("command", "insert", "path", "/memories/facts/user.md", "insert_line", 0, "insert_text", "x"),
	} {
		_, err := c.ClaudeMemory(context.Background(), json.RawMessage(in))
		require.ErrorIs(t, err, memory.ErrClosed, in)
		var me *memory.Error
		require.False(t, errors.As(err, &me))
	}

	f := newFaulty(t)
	fs2, err := memory.OpenBackend(f, &memory.Options{Now: feb26})
	require.NoError(t, err)
	fc := fs2.NewSession()
	claudeOK(t, fc, cmd("command", "create", "path", "/memories/facts/user.md", "file_text", userFacts))
	claudeOK(t, fc, cmd("command", "create", "path", "/memories/episodes/2026-02.md", "file_text", "# 2026-02 Episodes\n\n> Summary: x\n"))
	broken := errors.New("injected: the server is down")
	f.list = func(string) error { return broken }
	_, err = fc.ClaudeMemory(context.Background(), json.RawMessage(cmd("command", "view", "path", "/memories")))
	require.ErrorIs(t, err, broken)

	f.list = func(dir string) error {
		if dir == "episodes" || dir == "" {
			return fmt.Errorf("injected: %w", fs.ErrPermission)
		}
		return nil
	}
	text := claudeOK(t, fc, cmd("command", "view", "path", "/memories"))
	require.True(t, strings.HasPrefix(text, "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n105B\t/memories\n0B\t/memories/episodes/\n105B\t/memories/facts/\n105B\t/memories/facts/user.md\n\nNote: "), text)
	require.True(t, strings.HasSuffix(text, " Some memory files could not be listed (cannot be read; a person must fix it)."), text)

	f.list = nil
	f.write = func(string, int) error { return broken }
	_, err = fc.ClaudeMemory(context.Background(), json.RawMessage(cmd("command", "create", "path", "/memories/facts/user.md", "file_text", "# User\n")))
	require.ErrorIs(t, err, broken)
	_, err = fc.ClaudeMemory(context.Background(), json.RawMessage(cmd("command", "insert", "path", "/memories/facts/user.md", "insert_line", 0, "insert_text", "x")))
	require.ErrorIs(t, err, broken)
}

// FuzzClaudeMemory: whatever command the model sends, ClaudeMemory gives a
// result, never a host error on a sound store, and every file in the
// directory afterwards is a memory file or the store's own (its lock):
// nothing outside the grammar is made, and a file outside the directory is
// never shown.
func FuzzClaudeMemory(f *testing.F) {
	for _, in := range []string{
		cmd("command", "view", "path", "/memories"),
		cmd("command", "view", "path", "/memories/episodes/2026-01.md"),
		cmd("command", "view", "path", "/memories/../secret.md"),
		cmd("command", "create", "path", "/memories/facts/memory.md", "file_text", "- x"),
		cmd("command", "create", "path", "/memories/notes/a.md", "file_text", "x"),
		cmd("command", "create", "path", "/memories/facts/../x.md", "file_text", "x"),
		cmd("command", "str_replace", "path", "/memories/facts/user.md", "old_str", "# User", "new_str", "# U"),
		cmd("command", "insert", "path", "/memories/facts/user.md", "insert_line", 1, "insert_text", "x"),
		cmd("command", "delete", "path", "/memories/facts/user.md"),
		cmd("command", "rename", "old_path", "/memories/facts/user.md", "new_path", "/memories/x.md"),
		`{"command":"view","path":"/memories/episodes/2026-01.md","view_range":[1,-1]}`,
		`{"command":"insert","path":"/memories/facts/user.md","insert_line":-5,"insert_text":""}`,
	} {
		f.Add(in)
	}
	dir := f.TempDir()
	root := filepath.Join(dir, "memory")
	s, err := memory.Open(root, &memory.Options{Now: feb26})
	require.NoError(f, err)
	f.Cleanup(func() { s.Close() })
	require.NoError(f, os.WriteFile(filepath.Join(dir, "secret.md"), []byte("SECRET"), 0o644))
	require.NoError(f, os.Symlink(filepath.Join(dir, "secret.md"), filepath.Join(root, "episodes", "2026-01.md")))
	require.NoError(f, os.WriteFile(filepath.Join(root, "facts", "user.md"), []byte("# User\n"), 0o644))

	f.Fuzz(func(t *testing.T, input string) {
		c := s.NewSession()
		claude(t, c, cmd("command", "view", "path", "/memories/facts/user.md"))
		r, err := c.ClaudeMemory(context.Background(), json.RawMessage(input))
		require.NoError(t, err, input)
		require.NotContains(t, r.Text, "SECRET", input)
		require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if rel != ".lock" && !grammar.MatchString(rel) && !grammar.MatchString(segment.ReplaceAllString(strings.TrimPrefix(rel, ".history/"), "")) {
				t.Fatalf("%s made %s, outside the grammar", input, rel)
			}
			return nil
		}))
	})
}
