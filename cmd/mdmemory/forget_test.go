package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForget(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	const text = "Mei, birthday March 15"
	mdm(t, env, "add", "facts/user.md", "Pet: a cat").ok(t)
	before := tree(t, dir)

	// --dry-run lists where it is, by file and version, never the text,
	// and changes nothing.
	out := mdm(t, env, "forget", "--dry-run", text).ok(t)
	require.NotContains(t, out, "March 15")
	lines := strings.Split(out, "\n")
	require.Regexp(t, `^PATH +VERSION +TIME +LINES$`, lines[0])
	require.Regexp(t, `^facts/user.md +now +7$`, lines[1])
	require.Regexp(t, `^facts/user.md +[0-9a-f]{8} +2026-02-26 \d\d:\d\d:\d\d +7$`, lines[2])
	require.Contains(t, out, "\n2 places; nothing changed. 'mdmemory forget' without --dry-run takes it out.\n")
	require.Equal(t, before, tree(t, dir))

	var places struct {
		Places []struct {
			Path, Version string
			Lines         []int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "forget", "--dry-run", "--json", text).ok(t)), &places))
	require.Len(t, places.Places, 2)
	require.Equal(t, []int{7}, places.Places[1].Lines)

	// Without it, it forgets, from standard input too.
	out = mdmIn(t, context.Background(), strings.NewReader(text+"\n"), env, "forget", "-").ok(t)
	require.Equal(t, "Forgot it in 2 places: no file and no version in the history holds it now.\n", out)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		require.False(t, bytes.Contains(b, []byte(text)), p)
		return err
	})
	require.NoError(t, err)
	require.Contains(t, read(t, dir, "facts/user.md"), "\n- Wife: , likes ceramics\n")
	rows := logRows(t, mdm(t, env, "log", "facts/user.md").ok(t))
	require.Equal(t, []string{"forget", "facts/user.md", "cli"}, rows[0][1:4])
	require.Equal(t, "(redacted)", rows[1][len(rows[1])-1])

	require.Equal(t, "Not in memory, nor in its history: nothing to forget.\n", mdm(t, env, "forget", text).ok(t))
	require.Equal(t, "{\n  \"forgot\": 0\n}\n", mdm(t, env, "forget", "--json", text).ok(t))
	require.Contains(t, mdm(t, env, "forget", "Mei").failed(t), "fewer than 4")
}
