package memory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

func TestOpenCreatesLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "memory")
	s, err := memory.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	for _, sub := range []string{"facts", "episodes"} {
		fi, err := os.Stat(filepath.Join(dir, sub))
		require.NoError(t, err)
		require.True(t, fi.IsDir())
	}
}

func TestOpenOptions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		opts    memory.Options
		wantErr error
		text    string
	}{
		{name: "uppercase name", opts: memory.Options{FactFiles: []memory.FactFile{{Name: "User.md"}}}, wantErr: memory.ErrInvalidPath},
		{name: "no extension", opts: memory.Options{FactFiles: []memory.FactFile{{Name: "user"}}}, wantErr: memory.ErrInvalidPath},
		{name: "only extension", opts: memory.Options{FactFiles: []memory.FactFile{{Name: ".md"}}}, wantErr: memory.ErrInvalidPath},
		{name: "traversal", opts: memory.Options{FactFiles: []memory.FactFile{{Name: "../x.md"}}}, wantErr: memory.ErrInvalidPath},
		{name: "duplicate", opts: memory.Options{FactFiles: []memory.FactFile{{Name: "a.md"}, {Name: "a.md"}}}, wantErr: memory.ErrInvalidPath},
		{name: "empty set", opts: memory.Options{FactFiles: []memory.FactFile{}}, text: "FactFiles is empty"},
		{name: "negative budget", opts: memory.Options{FactsBudget: -1}, text: "may not be negative"},
		{name: "negative index budget", opts: memory.Options{IndexBudget: -1}, text: "may not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := memory.Open(dir, &tt.opts)
			require.Error(t, err)
			require.Nil(t, s)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			}
			require.Contains(t, err.Error(), tt.text)
			require.True(t, strings.HasPrefix(err.Error(), "memory: open"), err.Error())
		})
	}
}

func TestOpenCopiesOptions(t *testing.T) {
	facts := []memory.FactFile{{Name: "a.md", Purpose: "a"}}
	opts := &memory.Options{FactFiles: facts}
	s, _ := open(t, opts)
	facts[0].Name = "b.md"
	opts.FactsBudget = 1
	require.NoError(t, s.Append(context.Background(), "facts/a.md", "- still a.md, budget unchanged", ""))
}

func TestOpenFailures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := memory.Open(file, nil)
	require.Error(t, err)
	_, err = memory.Open(filepath.Join(file, "sub"), nil)
	require.Error(t, err)

	// facts/ is a file: the store opens, and says what it cannot read.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "facts"), nil, 0o644))
	s, err := memory.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	files, err := s.List(context.Background())
	require.NoError(t, err)
	require.Len(t, files, 2)
	for _, f := range files {
		require.Equal(t, "cannot be read: its folder is a file; a person must fix the memory directory", f.Error, f.Path)
	}
	require.Error(t, s.Write(context.Background(), "facts/user.md", "- x"), "a host failure until a person fixes it")
}

func TestOpenRemovesLeftoverTemps(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "facts/.user.md.tmp-abc123", "half")
	writeFile(t, dir, "episodes/.2026-02.md.tmp-zz", "half")
	writeFile(t, dir, "episodes/.keep", "a person's file")
	writeFile(t, dir, "notes.txt", "a person's file")
	s, err := memory.Open(dir, nil)
	require.NoError(t, err)
	defer s.Close()
	for _, gone := range []string{"facts/.user.md.tmp-abc123", "episodes/.2026-02.md.tmp-zz"} {
		_, err := os.Stat(filepath.Join(dir, gone))
		require.ErrorIs(t, err, os.ErrNotExist, gone)
	}
	require.Equal(t, "a person's file", readFile(t, dir, "episodes/.keep"))
	require.Equal(t, "a person's file", readFile(t, dir, "notes.txt"))
}

func TestClose(t *testing.T) {
	s, _ := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close returns nil")

	_, err := s.List(ctx)
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = s.Read(ctx, "facts/user.md")
	require.ErrorIs(t, err, memory.ErrClosed)
	require.ErrorIs(t, s.Write(ctx, "facts/user.md", "x"), memory.ErrClosed)
	require.ErrorIs(t, s.Append(ctx, "facts/user.md", "- x", ""), memory.ErrClosed)
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "a", NewText: "b"}})
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = s.NewSession().IndexMessage(ctx)
	require.ErrorIs(t, err, memory.ErrClosed)

	args := map[string]string{
		"memory_list":   `{}`,
		"memory_search": `{"query": "x", "limit": null}`,
		"memory_read":   `{"path":"facts/user.md"}`,
		"memory_write":  `{"path":"facts/user.md","content":"x"}`,
		"memory_patch":  `{"path":"facts/user.md","patches":[{"oldText":"a","newText":"b"}]}`,
		"memory_append": `{"path":"facts/user.md","entry":"- x","summary":null}`,
	}
	for _, tl := range s.NewSession().Tools() {
		r, err := tl.Call(ctx, []byte(args[tl.Name]))
		require.ErrorIs(t, err, memory.ErrClosed, tl.Name)
		require.Equal(t, memory.ToolResult{}, r)
	}
}

func TestCancelledContext(t *testing.T) {
	s, _ := open(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.List(ctx)
	require.ErrorIs(t, err, context.Canceled)
	_, err = s.Read(ctx, "facts/user.md")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, s.Write(ctx, "facts/user.md", "x"), context.Canceled)
	require.ErrorIs(t, s.Append(ctx, "episodes/2026-02.md", "## x", ""), context.Canceled)
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "a", NewText: "b"}})
	require.ErrorIs(t, err, context.Canceled)
	_, err = tool(t, s.NewSession().Tools(), "memory_read").Call(ctx, []byte(`{"path":"facts/user.md"}`))
	require.ErrorIs(t, err, context.Canceled)
}

func TestReadSeesHandEdits(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "its hand edit is a month without a head")
	ctx := context.Background()
	_, err := s.Read(ctx, "facts/user.md")
	require.ErrorIs(t, err, memory.ErrNotFound)
	r := call(t, s, "memory_read", `{"path":"facts/user.md"}`)
	require.Equal(t, memory.ToolResult{Text: "facts/user.md does not exist yet; call memory_list to see the files there are", IsError: true}, r)

	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n"))
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: Li Si\n\n- Name: Li Si (fixed by hand)\n")
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.Contains(t, got, "fixed by hand")
	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, "Li Si", files[0].Summary)

	writeFile(t, dir, "episodes/2026-01.md", "")
	got, err = s.Read(ctx, "episodes/2026-01.md")
	require.NoError(t, err)
	require.Equal(t, "", got, "an empty file reads as empty, not missing")
}

func TestWrite(t *testing.T) {
	tests := []struct{ name, path, content, want string }{
		{"title and summary kept", "facts/user.md",
			"# Me\n\n> Summary: mine\n\n- Name: Zhang San",
			"# Me\n\n> Summary: mine\n\n- Name: Zhang San\n"},
		{"title added, summary kept", "facts/user.md",
			"> Summary: mine\n\n- Name: Zhang San\n",
			"# User\n\n> Summary: mine\n\n- Name: Zhang San\n"},
		{"summary derived from facts", "facts/memory.md",
			"# Memory\n\n- Tavily has stale prices\n- User wants options first\n",
			"# Memory\n\n> Summary: Tavily has stale…; User wants options…\n\n- Tavily has stale prices\n- User wants options first\n"},
		{"both added", "facts/user.md", "- Name: Zhang San\n",
			"# User\n\n> Summary: Name\n\n- Name: Zhang San\n"},
		{"empty fact file", "facts/user.md", "", "# User\n\n> Summary: no facts yet\n"},
		{"month file", "episodes/2026-02.md", "## A\n- Date: 2026-02-01\n\n## B\n",
			"# 2026-02 Episodes\n\n> Summary: A, B\n\n## A\n- Date: 2026-02-01\n\n## B\n"},
		{"empty month file", "episodes/2026-02.md", "  \n", "# 2026-02 Episodes\n\n> Summary: no entries yet\n"},
		{"formatting kept", "facts/user.md",
			"# User\n> Summary: x\n\n*  Name:   Zhang San  \n\n<!-- note -->\n",
			"# User\n> Summary: x\n\n*  Name:   Zhang San  \n\n<!-- note -->\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := open(t, nil)
			if tt.name == "month file" {
				leavesBroken(t, "its entry B has no date, and Write keeps it so: Write does not hold a month to dated entries")
			}
			r := call(t, s, "memory_write", mustJSON(t, map[string]string{"path": tt.path, "content": tt.content}))
			require.False(t, r.IsError, r.Text)
			require.Equal(t, tt.want, readFile(t, dir, tt.path))
			require.JSONEq(t, mustJSON(t, map[string]any{"path": tt.path, "size": len(tt.want), "version": memory.Version(tt.want)}), r.Text)
		})
	}
}

func TestWriteKeepsMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no unix permissions")
	}
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/user.md", "# User\n")
	require.NoError(t, os.Chmod(filepath.Join(dir, "facts/user.md"), 0o600))
	require.NoError(t, s.Write(context.Background(), "facts/user.md", "# User\n\n- x\n"))
	fi, err := os.Stat(filepath.Join(dir, "facts/user.md"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestInvalidContent(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "Write takes a month of text outside entries (a megabyte of x) and seals it as a part: the library does not hold Write to entries")
	ctx := context.Background()
	big := strings.Repeat("x", 1<<20+1)
	for name, content := range map[string]string{"NUL": "a\x00b", "not UTF-8": "a\xffb", "too big": big} {
		t.Run(name, func(t *testing.T) {
			require.ErrorIs(t, s.Write(ctx, "episodes/2026-02.md", content), memory.ErrInvalidContent)
			require.ErrorIs(t, s.Append(ctx, "episodes/2026-02.md", "## x\n"+content, ""), memory.ErrInvalidContent)
		})
	}
	require.NoError(t, s.Write(ctx, "episodes/2026-02.md", "## a\n"))
	_, err := s.Patch(ctx, "episodes/2026-02.md", []memory.Patch{{OldText: "## a", NewText: "\x00"}})
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	_, err = s.Patch(ctx, "episodes/2026-02.md", []memory.Patch{{OldText: "## a", NewText: big[:1<<20-10]}})
	require.ErrorIs(t, err, memory.ErrInvalidContent, "the result is over the limit")
	require.NotContains(t, readFile(t, dir, "episodes/2026-02.md"), "xxx")

	// A month at the limit has no wall: the append seals it as a part and
	// starts the month's file anew.
	require.NoError(t, s.Write(ctx, "episodes/2026-02.md", big[:1<<20-100]))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## more\n"+strings.Repeat("y", 200), ""))
	require.Greater(t, len(readFile(t, dir, "episodes/2026-02.001.md")), 1<<20-100)
	require.Contains(t, readFile(t, dir, "episodes/2026-02.md"), "## more\n")
}

func TestPatch(t *testing.T) {
	const start = "# User\n\n> Summary: Zhang San, Chinese\n\n- Name: Zhang San\n- Language: Chinese\n- Note: aaa\n"
	tests := []struct {
		name    string
		patches []memory.Patch
		want    string // file afterwards; start when the patch fails
		wantErr error
		text    string
	}{
		{name: "one", patches: []memory.Patch{{OldText: "- Language: Chinese", NewText: "- Language: 中文"}},
			want: strings.Replace(start, "- Language: Chinese", "- Language: 中文", 1)},
		{name: "in order, later sees earlier", patches: []memory.Patch{
			{OldText: "Name: Zhang San", NewText: "Name: Li Si"}, {OldText: "Li Si", NewText: "Wang Wu"}},
			want: strings.Replace(start, "Name: Zhang San", "Name: Wang Wu", 1)},
		{name: "delete", patches: []memory.Patch{{OldText: "- Note: aaa\n", NewText: ""}},
			want: strings.Replace(start, "- Note: aaa\n", "", 1)},
		{name: "summary not regenerated", patches: []memory.Patch{{OldText: "- Name: Zhang San\n", NewText: ""}},
			want: strings.Replace(start, "- Name: Zhang San\n", "", 1)},
		{name: "not found", patches: []memory.Patch{{OldText: "Beijing", NewText: "x"}},
			want: start, wantErr: memory.ErrPatchFailed, text: "patch 1 of 1: oldText was not found"},
		{name: "twice", patches: []memory.Patch{{OldText: "Chinese", NewText: "x"}},
			want: start, wantErr: memory.ErrPatchFailed, text: "found 2 times"},
		{name: "overlapping counts", patches: []memory.Patch{{OldText: "aa", NewText: "b"}},
			want: start, wantErr: memory.ErrPatchFailed, text: "found 2 times"},
		{name: "empty oldText", patches: []memory.Patch{{OldText: "", NewText: "x"}},
			want: start, wantErr: memory.ErrPatchFailed, text: "oldText is empty"},
		{name: "all or nothing", patches: []memory.Patch{
			{OldText: "Zhang San\n", NewText: "Li Si\n"}, {OldText: "Beijing", NewText: "x"}},
			want: start, wantErr: memory.ErrPatchFailed, text: "patch 2 of 2: oldText was not found in facts/user.md (after the earlier patches were applied)"},
		{name: "no patches", patches: nil, want: start, wantErr: memory.ErrInvalidContent, text: "patches is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := open(t, nil)
			writeFile(t, dir, "facts/user.md", start)
			n, err := s.Patch(context.Background(), "facts/user.md", tt.patches)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.Contains(t, err.Error(), tt.text)
				require.Zero(t, n)
			} else {
				require.NoError(t, err)
				require.Equal(t, len(tt.patches), n)
			}
			require.Equal(t, tt.want, readFile(t, dir, "facts/user.md"))
		})
	}
}

func TestPatchMissingFile(t *testing.T) {
	s, _ := open(t, nil)
	_, err := s.Patch(context.Background(), "facts/user.md", []memory.Patch{{OldText: "a", NewText: "b"}})
	require.ErrorIs(t, err, memory.ErrNotFound)
	_, err = s.Patch(context.Background(), "facts/x.md", []memory.Patch{{OldText: "a", NewText: "b"}})
	require.ErrorIs(t, err, memory.ErrInvalidPath)
}

func TestList(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "its fixture holds a crash's temporary file and a person's months without heads or dates")
	ctx := context.Background()
	files, err := s.List(ctx)
	require.NoError(t, err)
	require.NotNil(t, files)
	require.Empty(t, files)
	require.Equal(t, memory.ToolResult{Text: "[]"}, call(t, s, "memory_list", ""))

	writeFile(t, dir, "facts/memory.md", "# Memory\n\n> Summary: lessons\n")
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: who\n")
	writeFile(t, dir, "facts/notes.md", "# not a configured fact file\n")
	writeFile(t, dir, "episodes/2025-12.md", "# 2025-12 Episodes\n\n> Summary: december\n")
	writeFile(t, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: february\n")
	writeFile(t, dir, "episodes/2026-01.md", "no title, no summary\n")
	writeFile(t, dir, "episodes/2026-13.md", "bad month")
	writeFile(t, dir, "episodes/notes.md", "a person's notes")
	writeFile(t, dir, "episodes/.2026-03.md.tmp-x", "a temp file")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "episodes", "2026-04.md"), 0o755))
	long := strings.Repeat("long summary ", 200)
	writeFile(t, dir, "episodes/2024-01.md", "# 2024-01 Episodes\n\n> Summary: "+long+"\n\n## e\n")
	odd := "[ref]: https://example.com\n\n# 2023-01 Episodes\n\n> Summary: after a link definition\n"
	writeFile(t, dir, "episodes/2023-01.md", odd)

	files, err = s.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []memory.FileInfo{
		{Path: "facts/user.md", Summary: "who", Size: int64(len("# User\n\n> Summary: who\n"))},
		{Path: "facts/memory.md", Summary: "lessons", Size: int64(len("# Memory\n\n> Summary: lessons\n"))},
		{Path: "episodes/2026-02.md", Summary: "february", Size: 40},
		{Path: "episodes/2026-01.md", Summary: "", Size: 21},
		{Path: "episodes/2025-12.md", Summary: "december", Size: 40},
		{Path: "episodes/2024-01.md", Summary: strings.TrimSpace(long), Size: int64(len(readFile(t, dir, "episodes/2024-01.md")))},
		{Path: "episodes/2023-01.md", Summary: "after a link definition", Size: int64(len(odd))},
	}, files)

	r := call(t, s, "memory_list", "{}")
	require.False(t, r.IsError)
	require.True(t, strings.HasPrefix(r.Text, `[{"path":"facts/user.md","summary":"who","size":23},`), r.Text)
	require.Equal(t, "a person's notes", readFile(t, dir, "episodes/notes.md"), "other files are left alone")
}

func TestErrorsAreWrapped(t *testing.T) {
	s, _ := open(t, nil)
	err := s.Write(context.Background(), "../x", "y")
	require.True(t, errors.Is(err, memory.ErrInvalidPath))
	require.True(t, strings.HasPrefix(err.Error(), "memory: write ../x: invalid path: "), err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "memory:"))
}
