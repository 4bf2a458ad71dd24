package main

import (
	"context"
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
	require.Contains(t, mdm(t, env, "show", "--json", "facts/user.md").ok(t), `\u001b]0;pwned\u0007`, "--json is exact")

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
