package memory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// isModelError reports whether err is one of the model's mistakes.
func isModelError(err error) bool {
	for _, s := range []error{memory.ErrInvalidPath, memory.ErrNotFound, memory.ErrBudgetExceeded, memory.ErrPatchFailed, memory.ErrInvalidContent} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// TestHostFailures provokes failures of the disk (root may ignore
// permissions, so the layout itself is broken) and checks that they come
// back as Go errors, not as model errors, and from the tools as errors too.
func TestHostFailures(t *testing.T) {
	ctx := context.Background()

	t.Run("a fact file is a folder", func(t *testing.T) {
		s, dir := open(t, nil)
		leavesBroken(t, "a folder in a fact file's place is its point")
		require.NoError(t, os.Mkdir(filepath.Join(dir, "facts", "user.md"), 0o755))
		_, err := s.Read(ctx, "facts/user.md")
		require.Error(t, err)
		require.False(t, isModelError(err), err)
		require.NoError(t, s.Write(ctx, "facts/memory.md", "- x"), "a folder does not count in the budget")
		err = s.Write(ctx, "facts/user.md", "- x")
		require.Error(t, err, "a folder cannot be replaced by a file")
		require.False(t, isModelError(err), err)
		// The tool tells the model to go on without the file, as for
		// any file a person must fix.
		res, err := tool(t, s.NewSession().Tools(), "memory_read").Call(ctx, []byte(`{"path":"facts/user.md"}`))
		require.NoError(t, err)
		require.True(t, res.IsError)
		require.Contains(t, res.Text, "a person must fix the memory directory")
		files, err := s.List(ctx)
		require.NoError(t, err)
		require.Equal(t, []memory.FileInfo{{Path: "facts/memory.md", Summary: "x", Size: 28}}, files, "a folder is not a memory file and is not listed")
	})

	t.Run("episodes is a file", func(t *testing.T) {
		s, dir := open(t, nil)
		leavesBroken(t, "a file in the place of episodes/ is its point")
		require.NoError(t, os.Remove(filepath.Join(dir, "episodes")))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "episodes"), []byte("x"), 0o644))
		writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n")
		// What can be read is listed, and what cannot says so: a task can
		// still start.
		files, err := s.List(ctx)
		require.NoError(t, err)
		require.Equal(t, []memory.FileInfo{
			{Path: "facts/user.md", Summary: "Zhang San", Size: 48},
			{Path: "episodes/", Error: "cannot be read: it is a file, not a folder; a person must fix the memory directory"},
		}, files)
		msg, err := s.NewSession().IndexMessage(ctx)
		require.NoError(t, err)
		require.Contains(t, msg, "- facts/user.md (48B): Zhang San\n- episodes/: cannot be read: it is a file, not a folder; a person must fix the memory directory\n")
		r, err := tool(t, s.NewSession().Tools(), "memory_list").Call(ctx, nil)
		require.NoError(t, err)
		require.Contains(t, r.Text, `{"path":"episodes/","summary":"","size":0,"error":"cannot be read: it is a file, not a folder; a person must fix the memory directory"}`)
		hits, err := s.Search(ctx, "Zhang", nil)
		require.NoError(t, err, "search covers what can be read")
		require.Len(t, hits, 1)
		err = s.Append(ctx, "episodes/2026-02.md", "## x", "")
		require.Error(t, err)
		require.False(t, isModelError(err), err)
	})

	t.Run("episodes is missing", func(t *testing.T) {
		s, dir := open(t, nil)
		require.NoError(t, os.Remove(filepath.Join(dir, "episodes")))
		files, err := s.List(ctx)
		require.NoError(t, err)
		require.Empty(t, files)
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## x", ""), "the folder is made again, as S3 has no folders to lose")
		require.FileExists(t, filepath.Join(dir, "episodes", "2026-02.md"))
	})

	t.Run("facts is missing", func(t *testing.T) {
		s, dir := open(t, nil)
		require.NoError(t, os.Remove(filepath.Join(dir, "facts")))
		files, err := s.List(ctx)
		require.NoError(t, err)
		require.Empty(t, files)
	})

	t.Run("facts is a dangling link", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "facts")))
		s, err := memory.Open(dir, nil)
		require.NoError(t, err)
		defer s.Close()
		err = s.Write(ctx, "facts/user.md", "- x")
		require.ErrorIs(t, err, memory.ErrInvalidPath, "os.Root follows no absolute link")
	})

	t.Run("links out of the root do not break the rest", func(t *testing.T) {
		s, dir := open(t, nil)
		leavesBroken(t, "memory files and folders that link out of the directory are its point")
		outside := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(outside, "x.md"), []byte("SECRET"), 0o644))
		require.NoError(t, os.Symlink(filepath.Join(outside, "x.md"), filepath.Join(dir, "facts", "user.md")))
		r := call(t, s, "memory_append", `{"path": "facts/memory.md", "entry": "- y", "summary": null}`)
		require.False(t, r.IsError, r.Text)
		require.NoError(t, os.Remove(filepath.Join(dir, "episodes")))
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "episodes")))
		files, err := s.List(ctx)
		require.NoError(t, err)
		require.Len(t, files, 2)
		require.Equal(t, "facts/user.md", files[0].Path)
		require.Contains(t, files[0].Error, "symbolic link", "listed, with the reason it cannot be read")
		require.Equal(t, "facts/memory.md", files[1].Path)
		_, err = s.NewSession().IndexMessage(ctx)
		require.NoError(t, err)
		hits, err := s.Search(ctx, "SECRET", nil)
		require.NoError(t, err)
		require.Empty(t, hits)
		s2, err := memory.Open(dir, nil)
		require.NoError(t, err, "Open leaves a linked folder alone")
		require.NoError(t, s2.Close())
		r = call(t, s, "memory_append", `{"path": "episodes/2026-02.md", "entry": "## x", "summary": null}`)
		require.True(t, r.IsError, "a model error: %s", r.Text)
	})

	t.Run("a dangling link inside the root is just missing", func(t *testing.T) {
		s, dir := open(t, nil)
		require.NoError(t, os.Symlink("user-old.md", filepath.Join(dir, "facts", "user.md")))
		_, err := s.Read(ctx, "facts/user.md")
		require.ErrorIs(t, err, memory.ErrNotFound)
	})
}

func TestLongPathInErrors(t *testing.T) {
	s, _ := open(t, nil)
	long := strings.Repeat("a", 300)
	_, err := s.Read(context.Background(), long)
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	require.Contains(t, err.Error(), strings.Repeat("a", 200)+"…")
	require.NotContains(t, err.Error(), strings.Repeat("a", 201))
	_, err = s.Read(context.Background(), "")
	require.Contains(t, err.Error(), `memory: read "": invalid path: the path is empty`)
}

func TestIndexMessageLargeFile(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "a person's month over 1 MiB is its point")
	writeFile(t, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: big\n\n"+strings.Repeat("x", 1<<20+100))
	msg, err := s.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	require.Contains(t, msg, "- episodes/2026-02.md (1.0MB): big\n")
}
