package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// TestAdd: add appends fact lines as one tight list and entries with the
// model's refusals, worded for a person, and reads standard input for -.
func TestAdd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory") // made by the first add
	env := map[string]string{dirEnv: dir}
	require.Equal(t, "Added to facts/user.md.\n", mdm(t, env, "add", "facts/user.md", "Name: Zhang San").ok(t))
	mdm(t, env, "add", "facts/user.md", "- Language: prefers Chinese").ok(t)
	mdmIn(t, context.Background(), strings.NewReader("- City: Hangzhou\n"), env, "add", "facts/user.md", "-").ok(t)
	require.Equal(t, "# User\n\n> Summary: Name; Language; City\n\n- Name: Zhang San\n- Language: prefers Chinese\n- City: Hangzhou\n", read(t, dir, "facts/user.md"))
	require.FileExists(t, filepath.Join(dir, "facts", "user.md"))

	// The model's refusals, with a person's commands in place of its tools.
	msg := mdm(t, env, "add", "facts/user.md", "- Language: English").failed(t)
	require.Contains(t, msg, `mdmemory: facts/user.md: the new line "Language: English" restates the key of facts/user.md line 6`)
	require.Contains(t, msg, "change line 6 of facts/user.md instead ('mdmemory edit facts/user.md')")
	require.NotContains(t, msg, "memory_")
	require.Contains(t, mdm(t, env, "add", "facts/user.md", "for now, answer in English").failed(t), `("for now" marks it as temporary); nothing was written`)
	require.Contains(t, mdm(t, env, "add", "facts/notes.md", "- x").failed(t), "not one of the fact files")
	require.Contains(t, mdm(t, env, "add", "persona.md", "x").failed(t), "use 'mdmemory edit persona.md'")
	require.Contains(t, mdm(t, map[string]string{dirEnv: dir}, "--facts-budget", "130", "add", "facts/memory.md", "- Tavily: prices are stale").failed(t), "over the 130-byte budget")
	require.Contains(t, mdm(t, env, "add", "facts/memory.md", "- x\n```\nopen").failed(t), "facts/memory.md: ")

	// Episodes: a "## " entry, dated, set off by a blank line.
	require.Contains(t, mdm(t, env, "add", "episodes/2026-02.md", "no heading").failed(t), `an episode entry must start with a "## " heading`)
	mdm(t, env, "add", "episodes/2026-02.md", "## Tokyo flights\n- Date: 2026-02-26").ok(t)
	mdmIn(t, context.Background(), strings.NewReader("## Gift\n- Date: 2026-02-27\n"), env, "add", "episodes/2026-02.md", "-").ok(t)
	require.True(t, strings.HasSuffix(read(t, dir, "episodes/2026-02.md"), "- Date: 2026-02-26\n\n## Gift\n- Date: 2026-02-27\n"))
	require.Contains(t, mdm(t, env, "add", "episodes/2026-02.md", "## Late\n- Date: 2026-03-01").failed(t), "outside episodes/2026-02.md")

	// Standard input is bounded.
	big := strings.NewReader("- " + strings.Repeat("x", maxInput))
	r := mdmIn(t, context.Background(), big, env, "add", "facts/memory.md", "-")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "standard input holds more than 1,048,576 bytes")
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}

func TestAsFactLine(t *testing.T) {
	for in, want := range map[string]string{
		"Name: Zhang San":     "- Name: Zhang San",
		"  Name: Zhang San  ": "- Name: Zhang San",
		"- Name: Zhang San":   "- Name: Zhang San",
		"* Name":              "* Name",
		"1. first":            "1. first",
		"12) first":           "12) first",
		"2026 was good":       "- 2026 was good",
		"## heading":          "## heading",
		"a\nb":                "a\nb",
		"":                    "",
	} {
		require.Equal(t, want, asFactLine("facts/user.md", in), in)
	}
	require.Equal(t, "## A", asFactLine("episodes/2026-02.md", "## A"))
}

// editorScript writes a shell script that stands in for a person's
// editor: it runs body with the file to edit as $1.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the scripted editor is a shell script")
	}
	p := filepath.Join(t.TempDir(), "editor.sh")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700))
	return p
}

// TestEdit: edit opens a copy in $VISUAL or $EDITOR, writes it back
// through the library only if the file is still as read, keeps the
// person's text when it cannot, and shows check's findings.
func TestEdit(t *testing.T) {
	dir := sample(t)
	env := func(editor string) map[string]string { return map[string]string{dirEnv: dir, "EDITOR": editor} }

	// A fact added by hand.
	ed := editorScript(t, `printf -- '- Home airport: Shanghai Pudong (PVG)\n' >> "$1"`)
	out := mdm(t, env(ed), "edit", "facts/user.md").ok(t)
	require.Equal(t, "Saved facts/user.md.\nNo problems found in facts/user.md.\n", out)
	require.Equal(t, sampleUser+"- Home airport: Shanghai Pudong (PVG)\n", read(t, dir, "facts/user.md"))

	// $VISUAL wins; an editor with arguments.
	visual := editorScript(t, `sed -i.bak 's/Jianjun/Zhang San/' "$2"; rm -f "$2.bak"`)
	r := mdm(t, map[string]string{dirEnv: dir, "VISUAL": visual + " --wait", "EDITOR": "false"}, "edit", "facts/user.md")
	r.ok(t)
	require.Contains(t, read(t, dir, "facts/user.md"), "- Name: Zhang San\n")

	// Unchanged, and emptied: nothing written.
	require.Equal(t, "facts/user.md is unchanged; nothing written.\n", mdm(t, env("true"), "edit", "facts/user.md").ok(t))
	require.Contains(t, mdm(t, env(editorScript(t, `: > "$1"`)), "edit", "facts/user.md").ok(t), "The text is empty; nothing written")

	// The file changed while the person edited it: nothing written, the
	// person's text kept in a file named.
	other := `printf -- '- Written meanwhile: yes\n' >> ` + filepath.Join(dir, "facts", "user.md") + `; printf -- '- Mine: yes\n' >> "$1"`
	msg := mdm(t, env(editorScript(t, other)), "edit", "facts/user.md").failed(t)
	require.Contains(t, msg, "facts/user.md changed while you edited it; nothing was written, and your text is kept in ")
	kept := strings.TrimSpace(msg[strings.Index(msg, "kept in ")+len("kept in "):])
	kept = kept[:strings.Index(kept, ": compare")]
	t.Cleanup(func() { os.Remove(kept) })
	require.Contains(t, read(t, "/", kept), "- Mine: yes\n")
	require.NotContains(t, read(t, dir, "facts/user.md"), "- Mine: yes")

	// A rule refuses it: the same, with the library's reason.
	msg = mdm(t, env(editorScript(t, `printf -- '- Language: English\n' >> "$1"`)), "edit", "facts/user.md").failed(t)
	require.Contains(t, msg, "restates the key")
	require.Contains(t, msg, "; your text is kept in ")

	// Refused for a credential: the message says the kept file holds it,
	// and the file is the person's only.
	value := "Zq8#" + "kLm2Vw"
	msg = mdm(t, env(editorScript(t, `printf -- '- NAS password: `+value+`\n' >> "$1"`)), "edit", "facts/user.md").failed(t)
	require.Contains(t, msg, "a password")
	require.NotContains(t, msg, value)
	require.Contains(t, msg, "holds the credential too: remove the value there and edit again, or delete the file (rm ")
	kept = strings.TrimSpace(msg[strings.Index(msg, "kept in ")+len("kept in "):])
	kept = kept[:strings.Index(kept, ",")]
	t.Cleanup(func() { os.Remove(kept) })
	require.Contains(t, read(t, "/", kept), value)
	fi, err := os.Stat(kept)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NotContains(t, read(t, dir, "facts/user.md"), value)

	// The editor fails: nothing written.
	require.Contains(t, mdm(t, env("false"), "edit", "facts/user.md").failed(t), "the editor (false) exited with status 1; nothing was written")
	require.Contains(t, mdm(t, nil, "--dir", dir, "edit", "facts/user.md").failed(t), "no editor: set $VISUAL or $EDITOR")

	// A new file; check's findings after the save.
	ed = editorScript(t, `printf '# 2026-03 Episodes\n\n> Summary: x\n\n## Undated\n- Task: y\n' > "$1"`)
	out = mdm(t, env(ed), "edit", "episodes/2026-03.md").ok(t)
	require.Contains(t, out, "Saved episodes/2026-03.md.\nepisodes/2026-03.md:5: the entry has no \"- Date:\" line")

	// persona.md, the person's own, written as it is.
	ed = editorScript(t, `printf 'You are Pegasus, a careful assistant.\n' > "$1"`)
	require.Contains(t, mdm(t, env(ed), "edit", "persona.md").ok(t), "Saved persona.md.")
	require.Equal(t, "You are Pegasus, a careful assistant.\n", read(t, dir, "persona.md"))
	ed = editorScript(t, `printf 'changed meanwhile\n' > `+filepath.Join(dir, "persona.md")+`; printf 'mine\n' > "$1"`)
	require.Contains(t, mdm(t, env(ed), "edit", "persona.md").failed(t), "persona.md changed while you edited it")
}

// TestCompact: compact condenses old months with the local rule; the dry
// run lists what it would condense and writes nothing.
func TestCompact(t *testing.T) {
	dir := sample(t)
	env := map[string]string{dirEnv: dir}
	before := tree(t, dir)
	out := mdm(t, env, "compact", "--before", "2026-02", "--dry-run").ok(t)
	require.Equal(t, "MONTH    ENTRIES  CONDENSE  KEEP  BYTES\n2026-01        1         1     0    "+itoa(int64(len(read(t, dir, "episodes/2026-01.md"))))+"\n\n", out[:strings.Index(out, "\n\n")+2])
	require.Contains(t, out, "Would compact 1 month (2026-01): 1 entry condensed, 0 kept whole;")
	require.Equal(t, before, tree(t, dir), "a dry run writes nothing")

	require.Equal(t, "Nothing to compact.\n", mdm(t, env, "compact", "--before", "2026-01").ok(t))

	out = mdm(t, env, "compact", "--before", "2026-03", "--keep", "1").ok(t)
	require.Contains(t, out, "Compacted 1 month (2026-02): 1 entry condensed, 1 kept whole;")
	require.Contains(t, out, "2026-01 left as it is: nothing to condense\n")
	require.Contains(t, out, "The originals are in episodes/archive/.")
	require.FileExists(t, filepath.Join(dir, "episodes", "archive", "2026-02.md"))

	var res memory.CompactResult
	require.NoError(t, json.Unmarshal([]byte(mdm(t, env, "compact", "--before", "2026-03", "--keep", "1", "--json").ok(t)), &res))
	require.Empty(t, res.Months)
	require.Len(t, res.Skipped, 2)
	require.Contains(t, mdm(t, env, "compact", "--before", "2026-03", "--keep", "1").ok(t), "2026-02 left as it is: already compacted")
}

// TestColor: colour on a terminal only, never with NO_COLOR, never in a
// pipe.
func TestColor(t *testing.T) {
	dir := sample(t)
	put(t, dir, "facts/notes.md", "# Notes\n")
	run1 := func(stdout *ttyBuffer, env map[string]string, args ...string) string {
		env[dirEnv] = dir
		run(context.Background(), args, strings.NewReader(""), stdout, &ttyBuffer{}, func(k string) string { return env[k] })
		return stdout.String()
	}
	out := run1(&ttyBuffer{tty: true}, map[string]string{}, "check")
	require.Contains(t, out, "\x1b[1mfacts/notes.md\x1b[0m: \x1b[31mnot one of the fact files")
	require.Contains(t, run1(&ttyBuffer{tty: true}, map[string]string{}, "ls"), "[\x1b[32m#\x1b[0m...")
	require.NotContains(t, run1(&ttyBuffer{tty: true}, map[string]string{"NO_COLOR": "1"}, "check"), "\x1b[")
	require.NotContains(t, run1(&ttyBuffer{tty: true}, map[string]string{"TERM": "dumb"}, "check"), "\x1b[")
	require.NotContains(t, run1(&ttyBuffer{}, map[string]string{}, "check"), "\x1b[")
	require.NotContains(t, mdm(t, map[string]string{dirEnv: dir}, "ls").stdout, "\x1b[")

	require.Equal(t, "[\x1b[33m################\x1b[0m....] 80 / 100 bytes (80%)", budgetLine(80, 100, true))
	require.Equal(t, "[\x1b[31m####################\x1b[0m] 101 / 100 bytes (101%)\x1b[31m, over the budget\x1b[0m", budgetLine(101, 100, true))
	require.False(t, isTerminal(os.Stdin) && os.Getenv("CI") != "", "a CI's standard input is no terminal")
}

// ttyBuffer is a buffer that says it is a terminal, or not.
type ttyBuffer struct {
	strings.Builder
	tty bool
}

func (b *ttyBuffer) IsTerminal() bool { return b.tty }

// TestCompletion: each shell's script is one its shell accepts (checked
// when the shell is installed), and bash's completes commands, flags and
// arguments.
func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			script := mdm(t, nil, "completion", sh).ok(t)
			for _, c := range commands() {
				require.Contains(t, script, c.name)
			}
			bin, err := exec.LookPath(sh)
			if err != nil {
				t.Skipf("%s is not installed (apt-get install %s): its syntax check is skipped", sh, sh)
			}
			p := filepath.Join(t.TempDir(), "completion."+sh)
			require.NoError(t, os.WriteFile(p, []byte(script), 0o600))
			out, err := exec.Command(bin, "-n", p).CombinedOutput()
			require.NoError(t, err, "%s -n: %s", sh, out)
			if sh != "bash" {
				return
			}
			complete := func(words ...string) string {
				prog := "source " + p + "; COMP_WORDS=(" + strings.Join(words, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + `; _mdmemory; echo "${COMPREPLY[*]}"`
				out, err := exec.Command(bin, "-c", prog).CombinedOutput()
				require.NoError(t, err, "%s", out)
				return strings.TrimSpace(string(out))
			}
			require.Equal(t, "search", complete("mdmemory", "--dir", "mem", "se"))
			require.Equal(t, "compact completion", complete("mdmemory", "comp"))
			require.Equal(t, "--limit", complete("mdmemory", "search", "--l"))
			require.Equal(t, "--dry-run", complete("mdmemory", "compact", "--dr"))
			require.Equal(t, "openclaw", complete("mdmemory", "import", "op"))
			require.Equal(t, "--json", complete("mdmemory", "--js"))
			require.Equal(t, "log", complete("mdmemory", "lo"))
			require.Equal(t, "--diff --dir", complete("mdmemory", "restore", "--di"))
			require.Equal(t, "facts/user.md facts/memory.md", complete("mdmemory", "diff", "facts/"))
		})
	}
}

// ttyReader is an empty standard input that says it is a terminal.
type ttyReader struct{ strings.Reader }

func (*ttyReader) IsTerminal() bool { return true }

// TestMCPOnATerminal: mcp started by a person at a terminal says on
// standard error what it waits for; started by a client, it says nothing.
func TestMCPOnATerminal(t *testing.T) {
	dir := sample(t)
	r := mdmIn(t, context.Background(), &ttyReader{}, map[string]string{dirEnv: dir}, "mcp")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "mdmemory: waiting for an MCP client on standard input;")
	require.Equal(t, 1, strings.Count(r.stderr, "\n"))
	require.Empty(t, mdm(t, map[string]string{dirEnv: dir}, "mcp").stderr)
}
