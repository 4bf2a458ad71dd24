package memory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	s, _ := open(t, nil)
	valid := []string{"facts/user.md", "facts/memory.md", "episodes/2026-02.md", "episodes/1000-01.md", "episodes/9999-12.md"}
	for _, p := range valid {
		got, err := memory.Resolve(s, p)
		require.NoError(t, err, p)
		require.Equal(t, p, got)
	}
	invalid := []struct{ path, why string }{
		{"", "empty"},
		{"/etc/passwd", "absolute"},
		{"/facts/user.md", "absolute"},
		{`C:\x`, "absolute"},
		{`C:/facts/user.md`, "absolute"},
		{`\\host\share\x`, "absolute"},
		{`facts\user.md`, "backslashes"},
		{"facts/user.md\x00", "control"},
		{"facts/\nuser.md", "control"},
		{"../facts/user.md", ". or .."},
		{"facts/../facts/user.md", ". or .."},
		{"./facts/user.md", ". or .."},
		{"facts//user.md", "empty segment"},
		{"facts/user.md/", "empty segment"},
		{"facts/.user.md", "hidden"},
		{".git/config", "hidden"},
		{"facts/notes.md", "not one of the fact files"},
		{"facts/USER.md", "not one of the fact files"},
		{"Facts/user.md", "not a memory file"},
		{"facts/user.txt", "not one of the fact files"},
		{"facts/user.md.bak", "not one of the fact files"},
		{"facts/sub/user.md", "not a memory file"},
		{"user.md", "not a memory file"},
		{"episodes/2026-13.md", "not a month file"},
		{"episodes/2026-00.md", "not a month file"},
		{"episodes/0999-01.md", "not a month file"},
		{"episodes/2026-2.md", "not a month file"},
		{"episodes/2026-02.MD", "not a month file"},
		{"episodes/202a-02.md", "not a month file"},
		{"episodes/2026_02.md", "not a month file"},
		{"episodes/2026-02.md.tmp", "not a month file"},
		{"episodes/notes.md", "not a month file"},
		{"episodes/2026-02/x.md", "not a memory file"},
		{"lock", "not a memory file"},
	}
	for _, tt := range invalid {
		t.Run(tt.path, func(t *testing.T) {
			_, err := memory.Resolve(s, tt.path)
			require.ErrorIs(t, err, memory.ErrInvalidPath)
			require.Contains(t, err.Error(), tt.why)
			require.Contains(t, hint(t, err), tt.why)
			require.NotContains(t, err.Error(), "valid paths are", "instructions for the model stay out of the Go error")
			require.Contains(t, hint(t, err), "valid paths are facts/user.md, facts/memory.md, procedures.md for rules learned from experience, or episodes/YYYY-MM.md for a month's episodes (such as episodes/2026-02.md)")
		})
	}
}

func TestResolveCustomFactFiles(t *testing.T) {
	s, _ := open(t, &memory.Options{FactFiles: []memory.FactFile{{Name: "persona.md"}, {Name: "lessons_learned.md"}}})
	_, err := memory.Resolve(s, "facts/persona.md")
	require.NoError(t, err)
	_, err = memory.Resolve(s, "facts/user.md")
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	require.Contains(t, hint(t, err), "facts/persona.md, facts/lessons_learned.md")
}

func TestSymlinkOutOfRoot(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "memory files that link out of the directory are its point")
	outside := filepath.Join(filepath.Dir(dir), "outside")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.md"), []byte("SECRET"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "facts", "user.md")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "episodes", "2026-01.md")))

	ctx := context.Background()
	_, err := s.Read(ctx, "facts/user.md")
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	require.Contains(t, err.Error(), "symbolic link")
	require.ErrorIs(t, s.Write(ctx, "facts/user.md", "- x"), memory.ErrInvalidPath)
	require.ErrorIs(t, s.Append(ctx, "facts/user.md", "- x", ""), memory.ErrInvalidPath)
	_, err = s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "SECRET", NewText: "x"}})
	require.ErrorIs(t, err, memory.ErrInvalidPath)

	r := call(t, s, "memory_read", `{"path": "facts/user.md"}`)
	require.True(t, r.IsError)
	require.NotContains(t, r.Text, "SECRET")
	require.NotContains(t, r.Text, outside, "no host paths in model text")

	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, files, 2, "links out of the root are listed with the reason they cannot be read")
	for _, f := range files {
		require.Contains(t, f.Error, "symbolic link that leads outside the memory directory")
		require.Zero(t, f.Size)
		require.Empty(t, f.Summary)
	}

	b, err := os.ReadFile(filepath.Join(outside, "secret.md"))
	require.NoError(t, err)
	require.Equal(t, "SECRET", string(b), "the file outside is untouched")
}

func TestSymlinkedFolderOutOfRoot(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "a folder that links out of the directory is its point")
	outside := filepath.Join(filepath.Dir(dir), "elsewhere")
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "episodes")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "episodes")))
	err := s.Append(context.Background(), "episodes/2026-02.md", "## x", "")
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// grammar is the sandbox's grammar restated independently of its code.
// segment is what a log's segment adds to the path of its memory file:
// ".history/facts/user.md/00000001.log" is the log of facts/user.md.
var segment = regexp.MustCompile(`(/[0-9]{8})?\.log$`)

var grammar = regexp.MustCompile(`^(persona\.md|procedures\.md|facts/(user|memory)\.md|world/[a-z0-9]+(-[a-z0-9]+)*\.md|episodes/(archive/)?[1-9][0-9]{3}-(0[1-9]|1[0-2])(\.(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2}))?\.md)$`)

// inGrammar reports whether p is a path of the grammar, a topic's name at
// most 64 characters.
func inGrammar(p string) bool {
	topic, isTopic := strings.CutPrefix(p, "world/")
	return grammar.MatchString(p) && (!isTopic || len(topic) <= 64+len(".md"))
}

// FuzzResolve checks that no input resolves to a path outside the grammar,
// and that reading any input through the store never reaches the file that
// a symbolic link inside the root points to outside it.
func FuzzResolve(f *testing.F) {
	for _, p := range []string{
		"facts/user.md", "episodes/2026-02.md", "../x", "facts/../facts/user.md", "/etc/passwd",
		`C:\x`, "facts/user.md\x00", "episodes/2026-13.md", "facts/USER.md", "episodes/2026-01.md",
		"facts/./user.md", "facts/user.md/", "episodes/0000-01.md", "ｆacts/user.md",
		"world/apollo.md", "world/leak.md", "world/../facts/user.md", "world/a--b.md", "world/Apollo.md", "world/x/y.md",
	} {
		f.Add(p)
	}
	dir := f.TempDir()
	root := filepath.Join(dir, "memory")
	shared, err := memory.OpenDir(filepath.Join(dir, "shared"), 0)
	require.NoError(f, err)
	f.Cleanup(func() { shared.Close() })
	s, err := memory.Open(root, &memory.Options{World: shared})
	require.NoError(f, err)
	f.Cleanup(func() { s.Close() })
	require.NoError(f, os.WriteFile(filepath.Join(dir, "secret.md"), []byte("SECRET"), 0o644))
	require.NoError(f, os.Symlink(filepath.Join(dir, "secret.md"), filepath.Join(root, "episodes", "2026-01.md")))
	require.NoError(f, os.MkdirAll(filepath.Join(dir, "shared", "world"), 0o755))
	require.NoError(f, os.Symlink(filepath.Join(dir, "secret.md"), filepath.Join(dir, "shared", "world", "leak.md")))
	require.NoError(f, os.WriteFile(filepath.Join(root, "facts", "user.md"), []byte("# User\n"), 0o644))

	f.Fuzz(func(t *testing.T, p string) {
		got, err := memory.Resolve(s, p)
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidPath) {
				t.Fatalf("Resolve(%q): error %v does not wrap ErrInvalidPath", p, err)
			}
		} else if got != p || !inGrammar(got) {
			t.Fatalf("Resolve(%q) = %q, outside the grammar", p, got)
		}
		text, err := s.Read(context.Background(), p)
		if strings.Contains(text, "SECRET") {
			t.Fatalf("Read(%q) reached a file outside the root", p)
		}
		if err == nil && !inGrammar(p) {
			t.Fatalf("Read(%q) succeeded outside the grammar", p)
		}
	})
}
