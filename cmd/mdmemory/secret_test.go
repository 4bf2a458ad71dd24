package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdmemory/memory/backendtest"
	"github.com/stretchr/testify/require"
)

// TestSecrets: add refuses a credential's value, naming its kind and what
// to keep instead, never the value; a mention is added; check finds one a
// person put in a file, by line and kind, with forget as the remedy; import
// leaves out the lines and the SOUL.md that hold one, and says why.
func TestSecrets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	env := map[string]string{dirEnv: dir}
	key := backendtest.FakeKey(1)
	msg := mdm(t, env, "add", "facts/user.md", "- OpenAI key for the side project: "+key).failed(t)
	require.Contains(t, msg, "an OpenAI API key")
	require.Contains(t, msg, "where it is kept")
	require.NotContains(t, msg, key)
	require.NotContains(t, msg, "memory_")
	mdm(t, env, "add", "facts/user.md", "the Tavily API key has a 1,000/day limit").ok(t)
	require.Equal(t, "No problems found.\n", mdm(t, env, "check").ok(t))

	put(t, dir, "facts/memory.md", "# Memory\n\n> Summary: keys\n\n- Side project key: "+key+"\n")
	r := mdm(t, env, "check")
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stdout, "facts/memory.md:5: holds an OpenAI API key")
	require.Contains(t, r.stdout, "mdmemory forget")
	require.NotContains(t, r.stdout, key)

	src := t.TempDir()
	put(t, src, "SOUL.md", "# Soul\n\nYou are Pegasus. Your key is "+key+"\n")
	put(t, src, "USER.md", "# USER.md\n\n- Name: Zhang San\n- Token: "+key+"\n")
	res := importJSON(t, env, "openclaw", src, "--apply")
	left := leftOut(res.Left)
	require.Contains(t, left["SOUL.md"], "an OpenAI API key")
	require.Contains(t, left["USER.md:4"], "an OpenAI API key")
	require.NotContains(t, left["USER.md:4"], key)
	require.Contains(t, read(t, dir, "facts/user.md"), "- Name: Zhang San")
	require.NotContains(t, read(t, dir, "facts/user.md"), key)
	require.NoFileExists(t, filepath.Join(dir, "persona.md"))
	require.False(t, strings.Contains(read(t, dir, "facts/user.md"), "Token"))
}
