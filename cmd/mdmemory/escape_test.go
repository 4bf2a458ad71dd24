package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// TestEscapesShownEscaped: what a model wrote reaches the person's
// terminal with its control characters escaped (as Go writes them), never
// acted on: through show, diff, search, context, log and check alike; a
// newline and a tab stay as they are, and --json gives the content
// exactly.
func TestEscapesShownEscaped(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{dirEnv: dir}
	s, err := memory.Open(dir, nil)
	require.NoError(t, err)
	ctx := memory.WithActor(context.Background(), "agent\x1b[2J")
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n- Name: Zhang San\n"))
	hostile := "# User\n\n- Name: Zhang San\n- Title: \x1b]0;pwned\x07\x1b[31mred\x1b[0m\u009b6n zeppelin\u202egnp.exe\n- Tab:\tkept\n"
	require.NoError(t, s.Write(ctx, "facts/user.md", hostile))
	changes, err := s.History(ctx, "facts/user.md", nil)
	require.NoError(t, err)
	v1 := changes[0].Old
	require.NoError(t, s.Close())
	want := `- Title: \x1b]0;pwned\x07\x1b[31mred\x1b[0m\x9b6n zeppelin\u202egnp.exe`

	for _, args := range [][]string{
		{"show", "facts/user.md"},
		{"diff", "facts/user.md", v1[:8]},
		{"search", "zeppelin"},
		{"context", "zeppelin"},
		{"log", "facts/user.md"},
	} {
		out := mdm(t, env, args...).ok(t)
		for _, c := range []string{"\x1b", "\x07", "\r", "\u009b", "\u202e"} {
			require.NotContains(t, out, c, "%v prints a %q as it is", args, c)
		}
		if args[0] != "log" && args[0] != "search" { // search gives its hits' words, log no content
			require.Contains(t, out, strings.TrimPrefix(want, "- "), "%v", args)
		}
	}
	require.Contains(t, mdm(t, env, "show", "facts/user.md").ok(t), "- Tab:\tkept\n", "a tab and a newline are kept")
	require.Contains(t, mdm(t, env, "log", "facts/user.md").ok(t), `agent\x1b[2J`)
	js := mdm(t, env, "show", "--json", "facts/user.md").ok(t)
	require.Contains(t, js, `\u001b]0;pwned\u0007`, "--json is exact")
	require.Contains(t, js, `\u009b6n`, "a C1 control is escaped in JSON too")
	require.NotContains(t, js, "\u009b")
	var shown struct{ Content string }
	require.NoError(t, json.Unmarshal([]byte(js), &shown))
	require.Equal(t, read(t, dir, "facts/user.md"), shown.Content, "the same string to a JSON reader")

	// What import leaves out, a refusal quoting the line, is escaped too.
	src := t.TempDir()
	put(t, src, "USER.md", "- Name: Zhang\x1b[2J San\n")
	out := mdm(t, map[string]string{dirEnv: sample(t)}, "import", "openclaw", src).ok(t)
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, `Zhang\x1b[2J San`)

	for _, tc := range []struct{ in, want string }{
		{"plain text, 东京 and é", "plain text, 东京 and é"},
		{"a\x1bb", `a\x1bb`},
		{"del\x7f", `del\x7f`},
		{"bad \xff byte", `bad \xff byte`},
		{"c1 \u0085", `c1 \x85`},
		{"iso \u2066x\u2069", `iso \u2066x\u2069`},
		{"line\nnext\ttab", `line\x0anext\x09tab`},
	} {
		require.Equal(t, tc.want, printable(tc.in), "printable(%q)", tc.in)
	}
	require.Equal(t, "line\nnext\ttab\x5cx1b", printableText("line\nnext\ttab\\x1b"))
	require.Equal(t, `line\x0d`+"\n", printableText("line\r\n"))
}

// TestSettingFilesBounded: --token-file and a users file are read within a
// bound, and one past it is refused as it is read, not loaded whole.
func TestSettingFilesBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // 1 GiB of zeros, sparse
	require.NoError(t, f.Close())
	_, err = readToken(big, func(string) string { return "" })
	require.ErrorContains(t, err, "more than 4096 bytes")
	_, err = readUsers(big, "", memory.Options{}, func(string) string { return "" })
	require.ErrorContains(t, err, "more than 4194304 bytes")

	ok := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(ok, []byte("0123456789abcdef0123\n"), 0o600))
	tok, err := readToken(ok, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, "0123456789abcdef0123", tok)
}
