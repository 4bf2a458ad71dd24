package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// importResult is import's --json output.
type importResult struct {
	Format   string       `json:"format"`
	Applied  bool         `json:"applied"`
	Imported []importItem `json:"imported"`
	Left     []importItem `json:"left"`
}

// importJSON runs import with --json and decodes what it says.
func importJSON(t *testing.T, env map[string]string, args ...string) importResult {
	t.Helper()
	var res importResult
	out := mdm(t, env, append([]string{"import", "--json"}, args...)...).ok(t)
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	return res
}

// moved lists the imported items as "TO <- FROM:LINE TEXT".
func moved(items []importItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.To+" <- "+where(it)+" "+it.Text)
	}
	return out
}

// leftOut maps each item left out, "FROM:LINE", to its reason.
func leftOut(items []importItem) map[string]string {
	out := map[string]string{}
	for _, it := range items {
		out[where(it)] = it.Reason
	}
	return out
}

const (
	soul     = "# Soul\n\nYou are Pegasus, a careful travel assistant.\n"
	userMD   = "# USER.md\n\n- Name: Zhang San\n- Language: prefers Chinese\n  - at work: English\n\nSome prose about the user.\n"
	memoryMD = "# MEMORY.md\n\n## Travel\n\n* Tavily: flight prices are often days old\n- For now, use the staging API\n\n## People\n\n- Colleague: Lao Wang, backend\n"
	dayLog   = "# 2026-02-26\n\nMorning notes before any section.\n\n## Tokyo flight research\n- Spring Airlines cheapest\n\n## Gift ideas\nWife likes ceramics.\n"
)

// TestImportOpenClaw: an OpenClaw workspace, dry run then --apply, and a
// second apply that adds nothing.
func TestImportOpenClaw(t *testing.T) {
	src := t.TempDir()
	put(t, src, "SOUL.md", soul)
	put(t, src, "USER.md", userMD)
	put(t, src, "MEMORY.md", memoryMD)
	put(t, src, "AGENTS.md", "# Agents\n")
	put(t, src, "memory/2026-02-26.md", dayLog)
	put(t, src, "memory/2026-01-05.md", "- visa renewed\n")
	put(t, src, "memory/projects.md", "- Apollo: launches in May\n")
	put(t, src, "memory/notes.txt", "x")
	put(t, src, "memory/2026-03-01.md", "")
	dir := filepath.Join(t.TempDir(), "memory")
	env := map[string]string{dirEnv: dir}

	dry := importJSON(t, env, "openclaw", src)
	require.False(t, dry.Applied)
	require.NoDirExists(t, dir, "a dry run writes nothing")
	require.Equal(t, []string{
		"persona.md <- SOUL.md # Soul",
		"facts/user.md <- USER.md:3 - Name: Zhang San",
		"facts/user.md <- USER.md:4 - Language: prefers Chinese; at work: English",
		"facts/memory.md <- MEMORY.md:5 - Tavily: flight prices are often days old",
		"facts/memory.md <- MEMORY.md:10 - Colleague: Lao Wang, backend",
		"facts/memory.md <- memory/projects.md:1 - Apollo: launches in May",
		"episodes/2026-01.md <- memory/2026-01-05.md:1 ## Notes of 2026-01-05",
		"episodes/2026-02.md <- memory/2026-02-26.md:3 ## Notes of 2026-02-26",
		"episodes/2026-02.md <- memory/2026-02-26.md:5 ## Tokyo flight research",
		"episodes/2026-02.md <- memory/2026-02-26.md:8 ## Gift ideas",
	}, moved(dry.Imported))
	left := leftOut(dry.Left)
	require.Contains(t, left["AGENTS.md"], "an OpenClaw workspace file that is not memory")
	require.Contains(t, left["USER.md:7"], "not a list item")
	require.Contains(t, left["MEMORY.md:6"], `("for now" marks it as temporary)`, "the fact guard, in the dry run too")
	require.Contains(t, left["memory/notes.txt"], "not a markdown file")
	require.Equal(t, "empty", left["memory/2026-03-01.md"])
	require.Len(t, dry.Left, 5)

	// The text a person reads says the same.
	out := mdm(t, env, "import", "openclaw", src).ok(t)
	require.Contains(t, out, "a dry run, nothing is written: --apply writes.")
	require.Regexp(t, `facts/user.md +<- USER.md:3 +- Name: Zhang San\n`, out)
	require.Contains(t, out, "\n10 to import, 5 left out.\n")

	applied := importJSON(t, env, "openclaw", src, "--apply")
	require.True(t, applied.Applied)
	require.Equal(t, dry.Imported, applied.Imported, "the dry run said what --apply did")
	require.Equal(t, soul, read(t, dir, "persona.md"))
	require.Equal(t, "# User\n\n> Summary: Name; Language\n\n- Name: Zhang San\n- Language: prefers Chinese; at work: English\n", read(t, dir, "facts/user.md"))
	feb := read(t, dir, "episodes/2026-02.md")
	require.Contains(t, feb, "## Notes of 2026-02-26\n- Date: 2026-02-26\n\nMorning notes before any section.\n\n## Tokyo flight research\n- Date: 2026-02-26\n- Spring Airlines cheapest\n\n## Gift ideas\n- Date: 2026-02-26\n\nWife likes ceramics.\n")
	require.Equal(t, "No problems found.\n", mdm(t, env, "check").ok(t))

	// Nothing is overwritten: again, the facts are there, persona.md is.
	again := importJSON(t, env, "openclaw", src, "--apply")
	left = leftOut(again.Left)
	require.Contains(t, left["SOUL.md"], "persona.md exists, and import overwrites nothing")
	require.Contains(t, left["USER.md:3"], "is already in facts/user.md")
	require.Equal(t, soul, read(t, dir, "persona.md"))
	// Nor written twice: a second run (or one after a run cut short)
	// leaves out the daily-log entries already imported.
	require.Contains(t, left["memory/2026-02-26.md:5"], "already in episodes/2026-02.md: imported before")
	require.Empty(t, again.Imported)
	require.Equal(t, feb, read(t, dir, "episodes/2026-02.md"))
}

// TestImportClaudeCode: MEMORY.md's index lines are left out, its topic
// files' lines imported, as facts or with --world as world topics.
func TestImportClaudeCode(t *testing.T) {
	src := t.TempDir()
	put(t, src, "MEMORY.md", "# Memory\n\n- [Debugging](debugging.md): how we debug\n- The build needs Go 1.26\n")
	put(t, src, "debugging.md", "# Debugging\n\n- Run tests with -race first\n- Logs are in /var/log/app\n")
	put(t, src, "API Conventions.md", "- Errors wrap sentinels\n")
	dir := filepath.Join(t.TempDir(), "memory")
	world := t.TempDir()

	res := importJSON(t, map[string]string{dirEnv: dir}, "claude-code", src)
	require.Equal(t, []string{
		"facts/memory.md <- MEMORY.md:4 - The build needs Go 1.26",
		"facts/memory.md <- API Conventions.md:1 - Errors wrap sentinels",
		"facts/memory.md <- debugging.md:3 - Run tests with -race first",
		"facts/memory.md <- debugging.md:4 - Logs are in /var/log/app",
	}, moved(res.Imported))
	require.Contains(t, leftOut(res.Left)["MEMORY.md:3"], "an index line of a topic file")

	env := map[string]string{dirEnv: dir, worldEnv: world}
	res = importJSON(t, env, "claude-code", src, "--apply")
	require.Equal(t, []string{
		"facts/memory.md <- MEMORY.md:4 - The build needs Go 1.26",
		"world/api-conventions.md <- API Conventions.md:1 - Errors wrap sentinels",
		"world/debugging.md <- debugging.md:3 - Run tests with -race first",
		"world/debugging.md <- debugging.md:4 - Logs are in /var/log/app",
	}, moved(res.Imported))
	require.True(t, strings.HasSuffix(read(t, world, "world/debugging.md"), "\n- Run tests with -race first\n- Logs are in /var/log/app\n"))
}

// TestImportAgnx: an agnx tree with one agent, or several and --agent.
func TestImportAgnx(t *testing.T) {
	src := t.TempDir()
	put(t, src, "world/people.md", "# People\n\n- Li Na: product manager\n")
	put(t, src, "agents/planner/MEMORY.md", "- Prefers morning flights\n")
	put(t, src, "agents/planner/daily/2026-02-26.md", "## 09:30\nBooked the Tokyo flights.\n\n## 14:00\nChecked visa rules.\n")
	dir := filepath.Join(t.TempDir(), "memory")
	env := map[string]string{dirEnv: dir}
	res := importJSON(t, env, "agnx", src)
	require.Equal(t, []string{
		"facts/memory.md <- agents/planner/MEMORY.md:1 - Prefers morning flights",
		"facts/memory.md <- world/people.md:3 - Li Na: product manager",
		"episodes/2026-02.md <- agents/planner/daily/2026-02-26.md:1 ## 09:30",
		"episodes/2026-02.md <- agents/planner/daily/2026-02-26.md:4 ## 14:00",
	}, moved(res.Imported))
	require.Empty(t, res.Left)

	put(t, src, "agents/writer/MEMORY.md", "- Short sentences\n")
	r := mdm(t, env, "import", "agnx", src)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "holds 2 agents (planner, writer): name one with --agent ID")
	res = importJSON(t, env, "agnx", src, "--agent", "writer")
	require.Equal(t, "facts/memory.md <- agents/writer/MEMORY.md:1 - Short sentences", moved(res.Imported)[0])
	require.Contains(t, mdm(t, env, "import", "agnx", src, "--agent", "nobody").failed(t), "has no folder agents/nobody")

	// One agent's own folder.
	res = importJSON(t, env, "agnx", filepath.Join(src, "agents", "planner"))
	require.Len(t, res.Imported, 3)
}

// TestImportToebeans: SOUL.md, knowledge/USER.md, topic files and daily
// logs; the facts budget applies, and what does not fit is listed.
func TestImportToebeans(t *testing.T) {
	src := t.TempDir()
	put(t, src, "SOUL.md", soul)
	put(t, src, "knowledge/USER.md", userMD)
	put(t, src, "knowledge/anki-chinese-workflow.md", "- Review cards every morning\n")
	put(t, src, "knowledge/2026-02-26.md", "Summary: talked about Tokyo.\n")
	put(t, src, "knowledge/huge.md", strings.Repeat("- x\n", maxInput/4+1))
	put(t, src, "knowledge/bad.md", "- \xff\xfe\n")
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(src, "knowledge", "link.md")))
	dir := sample(t)
	env := map[string]string{dirEnv: dir}

	res := importJSON(t, env, "toebeans", src)
	require.Equal(t, []string{
		"persona.md <- SOUL.md # Soul",
		"facts/memory.md <- knowledge/anki-chinese-workflow.md:1 - Review cards every morning",
		"episodes/2026-02.md <- knowledge/2026-02-26.md:1 ## Notes of 2026-02-26",
	}, moved(res.Imported))
	left := leftOut(res.Left)
	require.Contains(t, left["knowledge/huge.md"], "over 1,048,576 bytes")
	require.Contains(t, left["knowledge/bad.md"], "not text")
	require.Contains(t, left["knowledge/link.md"], "is a symbolic link: not followed")
	// The sample memory has a name and a language already: the guard says
	// so, in the dry run as with --apply.
	require.Contains(t, left["knowledge/USER.md:3"], `restates the key of facts/user.md line 5, "Name: Jianjun"`)
	require.Contains(t, left["knowledge/USER.md:4"], "restates the key of facts/user.md line 6")
	require.Contains(t, left["knowledge/USER.md:7"], "not a list item")
	require.Len(t, res.Left, 6)

	res2 := importJSON(t, env, "toebeans", src, "--apply")
	require.Equal(t, res.Imported, res2.Imported)
	require.Equal(t, res.Left, res2.Left)
	require.Contains(t, read(t, dir, "episodes/2026-02.md"), "## Notes of 2026-02-26\n- Date: 2026-02-26\n\nSummary: talked about Tokyo.\n")

	// A budget too small for the facts: each line over it is listed.
	small := filepath.Join(t.TempDir(), "memory")
	res = importJSON(t, map[string]string{dirEnv: small}, "--facts-budget", "100", "toebeans", src, "--apply")
	require.Contains(t, leftOut(res.Left)["knowledge/anki-chinese-workflow.md:1"], "over the 100-byte budget")

	require.Contains(t, mdm(t, env, "import", "toebeans", filepath.Join(src, "nope")).failed(t), "is not a directory to import from")
}
