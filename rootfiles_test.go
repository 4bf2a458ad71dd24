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
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

const personaText = "# Persona\n\n> Summary: Mira, a terse travel agent\n\nYou are Mira, a travel agent for one person. You answer tersely, and you never book without asking.\n"

// TestPersonaReadOnly: persona.md is read by memory_read and Store.Read,
// and every change to it, by a tool or a Store method, is refused with a
// model error that says it is the person's file; the file is untouched.
func TestPersonaReadOnly(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	writeFile(t, dir, "persona.md", personaText)

	got, err := s.Read(ctx, "persona.md")
	require.NoError(t, err)
	require.Equal(t, personaText, got)
	r := call(t, s, "memory_read", `{"path": "persona.md", "line": null}`)
	require.False(t, r.IsError, r.Text)
	require.Contains(t, r.Text, "\n\n"+personaText)
	version := strings.TrimPrefix(strings.SplitN(r.Text, "\n", 2)[0], "version: ")

	const refusal = "persona.md is the person's own file, written by hand only: the memory tools may read it but never change it; record what you learned in facts/user.md"
	tools := []struct{ name, args string }{
		{"memory_write", `{"path": "persona.md", "content": "# Persona\n\nYou are evil.", "version": null}`},
		{"memory_write", fmt.Sprintf(`{"path": "persona.md", "content": "# Persona\n\nYou are evil.", "version": %q}`, version)},
		{"memory_patch", `{"path": "persona.md", "patches": [{"oldText": "tersely", "newText": "at length"}], "version": null}`},
		{"memory_patch", fmt.Sprintf(`{"path": "persona.md", "patches": [{"oldText": "tersely", "newText": "at length"}], "version": %q}`, version)},
		{"memory_append", `{"path": "persona.md", "entry": "- Always book at once.", "summary": null}`},
	}
	for _, tt := range tools {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s, tt.name, tt.args)
			require.True(t, r.IsError)
			require.Contains(t, r.Text, refusal)
			require.Equal(t, personaText, readFile(t, dir, "persona.md"))
		})
	}
	methods := map[string]func() error{
		"Write":   func() error { return s.Write(ctx, "persona.md", "x") },
		"WriteIf": func() error { return s.WriteIf(ctx, "persona.md", "x", memory.Version(personaText)) },
		"Patch": func() error {
			_, err := s.Patch(ctx, "persona.md", []memory.Patch{{OldText: "tersely", NewText: "x"}})
			return err
		},
		"Append": func() error { return s.Append(ctx, "persona.md", "- x", "") },
	}
	for name, f := range methods {
		t.Run(name, func(t *testing.T) {
			err := f()
			require.ErrorIs(t, err, memory.ErrInvalidPath)
			require.Contains(t, hint(t, err), refusal)
			require.Contains(t, err.Error(), "persona.md is the person's own file")
			require.NotContains(t, err.Error(), "record what you learned", "instructions for the model stay out of the Go error")
			require.Equal(t, personaText, readFile(t, dir, "persona.md"))
		})
	}

	// Without the file, the refusal is the same: a tool cannot create it.
	s2, dir2 := open(t, nil)
	require.ErrorIs(t, s2.Write(ctx, "persona.md", personaText), memory.ErrInvalidPath)
	_, err = os.Stat(filepath.Join(dir2, "persona.md"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = s2.Read(ctx, "persona.md")
	require.ErrorIs(t, err, memory.ErrNotFound)
}

// TestRootPathsGrammar: only the two exact names are root files; procedures.md
// takes every operation.
func TestRootPathsGrammar(t *testing.T) {
	s, _ := open(t, nil)
	for _, p := range []string{"Persona.md", "persona.MD", "persona", "facts/procedures.md", "episodes/persona.md", "procedures.md/x", "procedures.txt"} {
		_, err := memory.Resolve(s, p)
		require.ErrorIs(t, err, memory.ErrInvalidPath, p)
	}
	got, err := memory.Resolve(s, "procedures.md")
	require.NoError(t, err)
	require.Equal(t, "procedures.md", got)
	_, err = memory.Resolve(s, "persona.md")
	require.ErrorIs(t, err, memory.ErrInvalidPath, "Resolve is not a read: persona.md is refused")
}

// TestProcedureFormat: the fixed line format, on append, write and patch,
// with the lines that pass and those refused, and what the refusal says.
func TestProcedureFormat(t *testing.T) {
	ctx := context.Background()
	pass := []string{
		"- When the flight search returns stale prices: cross-check the airline's site",
		"- When a deploy fails: roll back first, then read the logs: they name the cause",
		"- When the user asks for 发票: 用公司抬头",
		"- When a test is flaky: rerun it once\n- When it fails twice: look for a race",
		"\n\n- When X happens: do Y\n\n",
	}
	for _, entry := range pass {
		t.Run("pass "+entry, func(t *testing.T) {
			s, dir := open(t, nil)
			require.NoError(t, s.Append(ctx, "procedures.md", entry, ""))
			require.Contains(t, readFile(t, dir, "procedures.md"), strings.TrimSpace(entry))
		})
	}
	fail := []struct{ entry, line string }{
		{"- Cross-check airline sites", "- Cross-check airline sites"},
		{"When prices are stale: cross-check", "When prices are stale: cross-check"},
		{"- when prices are stale: cross-check", "- when prices are stale: cross-check"},
		{"- When prices are stale, cross-check", "- When prices are stale, cross-check"},
		{"- When : cross-check", "- When : cross-check"},
		{"- When prices are stale:", "- When prices are stale:"},
		{"- When prices are stale:cross-check", "- When prices are stale:cross-check"},
		{"* When prices are stale: cross-check", "* When prices are stale: cross-check"},
		{"## Procedures", "## Procedures"},
		{"- When prices are stale: cross-check\n  the airline's site", "  the airline's site"},
		{"- When prices are stale: cross-check\nthen book", "then book"},
	}
	for _, tt := range fail {
		t.Run("fail "+tt.entry, func(t *testing.T) {
			s, dir := open(t, nil)
			err := s.Append(ctx, "procedures.md", tt.entry, "")
			require.ErrorIs(t, err, memory.ErrInvalidContent)
			h := hint(t, err)
			require.Contains(t, h, fmt.Sprintf("%q, is not a procedure", tt.line))
			require.Contains(t, h, `each line of procedures.md is one rule in the form "- When <situation>: <action>", such as "- When the flight search returns stale prices: cross-check the airline's site"`)
			require.Contains(t, h, "Nothing was written")
			_, err = os.Stat(filepath.Join(dir, "procedures.md"))
			require.ErrorIs(t, err, os.ErrNotExist)
		})
	}

	s, dir := open(t, nil)
	leavesBroken(t, "a person's procedures.md line in another shape is one of its cases")
	// A write without a head gets the title and a summary of situations.
	require.NoError(t, s.Write(ctx, "procedures.md", "- When the flight search returns stale prices: cross-check the airline's site\n- When a deploy fails: roll back"))
	require.Equal(t, "# Procedures\n\n> Summary: the flight search returns stale prices; a deploy fails\n\n"+
		"- When the flight search returns stale prices: cross-check the airline's site\n- When a deploy fails: roll back\n", readFile(t, dir, "procedures.md"))
	err := s.Write(ctx, "procedures.md", "# Procedures\n\n> Summary: rules\n\n- cross-check prices\n")
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, hint(t, err), `line 5, "- cross-check prices", is not a procedure`)
	_, err = s.Patch(ctx, "procedures.md", []memory.Patch{{OldText: "- When a deploy fails: roll back", NewText: "- Deploys: roll back"}})
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, hint(t, err), `line 6, "- Deploys: roll back", is not a procedure`)
	n, err := s.Patch(ctx, "procedures.md", []memory.Patch{{OldText: "- When a deploy fails: roll back", NewText: "- When a deploy fails: roll back, then read the logs"}})
	require.NoError(t, err)
	require.Equal(t, 1, n)

	// A person's line in another shape does not block the lines after it.
	writeFile(t, dir, "procedures.md", readFile(t, dir, "procedures.md")+"Some notes a person wrote.\n")
	require.NoError(t, s.Append(ctx, "procedures.md", "- When a build breaks: bisect", "deploys, builds"))
	require.Contains(t, readFile(t, dir, "procedures.md"), "> Summary: deploys, builds\n")

	// The tools give the same refusal to the model.
	r := call(t, s, "memory_append", `{"path": "procedures.md", "entry": "- the airline site is right", "summary": null}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, `"- When <situation>: <action>"`)
}

// TestProceduresBudget: procedures.md has a budget of its own, and the
// facts budget does not count it.
func TestProceduresBudget(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{ProceduresBudget: 200, FactsBudget: 100})
	leavesBroken(t, "a person's edit takes procedures.md over its budget")
	require.NoError(t, s.Append(ctx, "procedures.md", "- When the flight search returns stale prices: cross-check the airline's site", ""))
	require.Greater(t, len(readFile(t, dir, "procedures.md")), 100, "over the facts budget, and accepted")
	err := s.Append(ctx, "procedures.md", "- When a deploy fails: roll back, then read the logs, then tell the person what happened", "")
	require.ErrorIs(t, err, memory.ErrBudgetExceeded)
	require.Contains(t, hint(t, err), "over its 200-byte budget")
	require.Contains(t, hint(t, err), "Condense it first")
	// Facts have all of their budget still.
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Name: Zhang San", ""))

	// A shrinking change of an oversized file is allowed.
	writeFile(t, dir, "procedures.md", "# Procedures\n\n> Summary: many\n\n"+strings.Repeat("- When a: b\n", 30))
	require.NoError(t, s.Write(ctx, "procedures.md", "# Procedures\n\n> Summary: many\n\n"+strings.Repeat("- When a: b\n", 20)))

	_, err = memory.Open(t.TempDir(), &memory.Options{ProceduresBudget: -1})
	require.ErrorContains(t, err, "ProceduresBudget")
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 200, st.ProceduresBudget)

	s2, _ := open(t, nil)
	st, err = s2.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, memory.DefaultProceduresBudget, st.ProceduresBudget)
}

// TestRootFilesListedAndIndexed: List, memory_list, the index message and
// Stats show persona.md first and procedures.md after the fact files.
func TestRootFilesListedAndIndexed(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{IndexBudget: 10})
	writeFile(t, dir, "persona.md", personaText)
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Name: Zhang San", ""))
	require.NoError(t, s.Append(ctx, "procedures.md", "- When the flight search returns stale prices: cross-check the airline's site", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-01.md", "## Old task\n- Date: 2026-01-05", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## New task", ""))

	files, err := s.List(ctx)
	require.NoError(t, err)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	require.Equal(t, []string{"persona.md", "facts/user.md", "procedures.md", "episodes/2026-02.md", "episodes/2026-01.md"}, paths)
	require.Equal(t, memory.FileInfo{Path: "persona.md", Summary: "Mira, a terse travel agent", Size: int64(len(personaText))}, files[0])
	require.Equal(t, "the flight search returns stale prices", files[2].Summary)
	require.False(t, files[2].Compacted)

	r := call(t, s, "memory_list", `{}`)
	var listed []memory.FileInfo
	require.NoError(t, json.Unmarshal([]byte(r.Text), &listed))
	require.Equal(t, files, listed)

	msg, err := s.NewSession().IndexMessage(ctx)
	require.NoError(t, err)
	require.Contains(t, msg, "Available memory:\n- persona.md (")
	require.Contains(t, msg, "): Mira, a terse travel agent\n- facts/user.md (")
	require.Contains(t, msg, "\n- procedures.md (")
	require.Contains(t, msg, "): the flight search returns stale prices\n- episodes/2026-02.md (")
	require.Contains(t, msg, "- (1 older episode file not shown", "a tiny budget drops old months, never the root files")

	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(len(personaText)), st.PersonaSize)
	require.Equal(t, int64(len(readFile(t, dir, "procedures.md"))), st.ProceduresSize)
	require.Equal(t, int64(len(readFile(t, dir, "facts/user.md"))), st.FactsSize, "the root files are not facts")
	require.Equal(t, 5, st.Files)

	// A persona.md that is a folder is listed as unreadable.
	s2, dir2 := open(t, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(dir2, "persona.md"), 0o755))
	files, err = s2.List(ctx)
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Equal(t, "persona.md", files[0].Path)
	require.NotEmpty(t, files[0].Error)
}

// TestSearchFindsProcedures: each rule is a search document with its line;
// the persona is not searched (it goes whole into prompts).
func TestSearchFindsProcedures(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	writeFile(t, dir, "persona.md", "# Persona\n\n- Loves zebras\n")
	require.NoError(t, s.Append(ctx, "procedures.md", "- When a deploy fails: roll back\n- When the flight search returns stale prices: cross-check the airline's site", ""))
	hits, err := s.Search(ctx, "stale flight prices", nil)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	require.Equal(t, "procedures.md", hits[0].Path)
	require.Equal(t, 6, hits[0].Line)
	require.Equal(t, "When the flight search returns stale prices: cross-check the airline's site", hits[0].Snippet)

	hits, err = s.Search(ctx, "zebras", nil)
	require.NoError(t, err)
	require.Empty(t, hits)

	r := call(t, s, "memory_search", `{"query": "deploy", "limit": null}`)
	require.False(t, r.IsError)
	require.Contains(t, r.Text, `"path":"procedures.md","line":5`)
}

// TestStorePersona: what a host renders first in its prompts.
func TestStorePersona(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, nil)
	leavesBroken(t, "a person's persona.md over PersonaMax is one of its cases")
	got, err := s.Persona(ctx)
	require.NoError(t, err)
	require.Empty(t, got, "no persona.md")

	writeFile(t, dir, "persona.md", " \n\n\t\n")
	got, err = s.Persona(ctx)
	require.NoError(t, err)
	require.Empty(t, got, "white space only")

	writeFile(t, dir, "persona.md", "You are Mira.\n\n\n")
	got, err = s.Persona(ctx)
	require.NoError(t, err)
	require.Equal(t, "You are Mira.\n", got)

	writeFile(t, dir, "persona.md", "You are \xffMira.")
	got, err = s.Persona(ctx)
	require.NoError(t, err)
	require.Equal(t, "You are \uFFFDMira.\n", got)

	line := strings.Repeat("x", 99) + "\n"
	writeFile(t, dir, "persona.md", strings.Repeat(line, 1<<20/100))
	got, err = s.Persona(ctx)
	require.NoError(t, err)
	kept := memory.PersonaMax / 100 * 100
	require.Equal(t, strings.Repeat(line, kept/100)+fmt.Sprintf("(persona.md is 1,048,500 bytes; only its first %s are shown)\n", "8,100"), got)

	require.NoError(t, s.Close())
	_, err = s.Persona(ctx)
	require.ErrorIs(t, err, memory.ErrClosed)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	s2, dir2 := open(t, nil)
	_, err = s2.Persona(cctx)
	require.ErrorIs(t, err, context.Canceled)

	outside := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(outside, []byte("SECRET"), 0o644))
	if err := os.Symlink(outside, filepath.Join(dir2, "persona.md")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	got, err = s2.Persona(ctx)
	require.ErrorIs(t, err, memory.ErrInvalidPath)
	require.Empty(t, got)
}

// TestReflectorPromptPersonaGolden: persona.md opens the reflector's system
// prompt and replaces ReflectorOptions.Persona; the procedures are shown.
func TestReflectorPromptPersonaGolden(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	seedStore(t, s)
	writeFile(t, dir, "persona.md", personaText)
	require.NoError(t, s.Append(ctx, "procedures.md", "- When the flight search returns stale prices: cross-check the airline's site", ""))
	llm := script(t, reply("Nothing new worth recording."))
	r := memory.NewReflector(s, llm, &memory.ReflectorOptions{Persona: memory.Persona{Name: "Pegasus", Role: "a general-purpose personal assistant"}})
	_, err := r.Reflect(ctx, memory.Task{Input: "hi", Iterations: 2})
	require.NoError(t, err)
	sys := llm.reqs[0].System
	require.True(t, strings.HasPrefix(sys, personaText+"\nThe text above is persona.md"), "the file opens the prompt")
	require.NotContains(t, sys, "Pegasus", "the file replaces the struct")
	require.NotContains(t, sys, "## Who you are")
	require.Contains(t, sys, "<file path=\"procedures.md\"")
	golden(t, "reflector_prompt_persona.golden", []byte(sys))
}

// TestReflectorPromptWithoutPersonaFile: a persona.md of white space only
// leaves the prompt byte for byte as without the file, the struct's
// persona in it; a huge one is cut.
func TestReflectorPromptWithoutPersonaFile(t *testing.T) {
	ctx := context.Background()
	opts := &memory.ReflectorOptions{Persona: memory.Persona{Name: "Pegasus", Role: "assistant"}}
	prompt := func(dir string) string {
		s := openAt(t, dir, nil)
		leavesBroken(t, "a person's persona.md over PersonaMax is one of its cases")
		seedStore(t, s)
		llm := script(t, reply("Nothing."))
		_, err := memory.NewReflector(s, llm, opts).Reflect(ctx, memory.Task{Input: "hi"})
		require.NoError(t, err)
		return llm.reqs[0].System
	}
	without := prompt(t.TempDir())
	dir := t.TempDir()
	writeFile(t, dir, "persona.md", "\n  \n")
	require.Equal(t, without, prompt(dir))
	require.True(t, strings.HasPrefix(without, "You are Pegasus, looking back"))

	dir = t.TempDir()
	writeFile(t, dir, "persona.md", strings.Repeat("You are patient.\n", 1<<20/17))
	huge := prompt(dir)
	require.Contains(t, huge, "(persona.md is 1,048,560 bytes; only its first 8,177 are shown)\n\nThe text above is persona.md")
	require.Less(t, len(huge), len(without)+memory.PersonaMax+1000)
}

// TestReflectorRecordsProcedure: the model appends a rule, then patches it
// without reading the file (the prompt showed it whole); a malformed rule
// is refused to the model, which can correct it.
func TestReflectorRecordsProcedure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	require.NoError(t, s.Append(ctx, "procedures.md", "- When a deploy fails: roll back", ""))
	llm := script(t,
		reply("", toolCall("1", "memory_append", `{"path": "procedures.md", "entry": "- Cross-check airline sites", "summary": null}`)),
		reply("", toolCall("2", "memory_append", `{"path": "procedures.md", "entry": "- When the flight search returns stale prices: cross-check the airline's site", "summary": null}`),
			toolCall("3", "memory_patch", `{"path": "procedures.md", "patches": [{"oldText": "roll back", "newText": "roll back, then read the logs"}], "version": null}`)),
		reply("Recorded a procedure."),
	)
	res, err := memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{Input: "find flights", Iterations: 3, Actions: 4})
	require.NoError(t, err)
	require.Equal(t, []string{"procedures.md"}, res.Changed)
	require.Len(t, llm.reqs, 3)
	second := llm.reqs[1].Messages
	require.Contains(t, second[len(second)-1].Content, "is not a procedure")
	third := llm.reqs[2].Messages
	require.NotContains(t, third[len(third)-1].Content, "Error")
	text := readFile(t, dir, "procedures.md")
	require.Contains(t, text, "- When a deploy fails: roll back, then read the logs\n")
	require.Contains(t, text, "- When the flight search returns stale prices: cross-check the airline's site\n")
}

// TestReflectorPromptProceduresStates: an oversized procedures.md is shown
// cut and not counted as read; an unreadable one says so.
func TestReflectorPromptProceduresStates(t *testing.T) {
	ctx := context.Background()
	sys := func(dir string, opts *memory.Options) string {
		s := openAt(t, dir, opts)
		leavesBroken(t, "a person's procedures.md over its budget is its point")
		llm := script(t, reply("Nothing."))
		_, err := memory.NewReflector(s, llm, nil).Reflect(ctx, memory.Task{})
		require.NoError(t, err)
		return llm.reqs[0].System
	}
	dir := t.TempDir()
	writeFile(t, dir, "procedures.md", "# Procedures\n\n> Summary: many\n\n"+strings.Repeat("- When a: b\n", 40))
	got := sys(dir, &memory.Options{ProceduresBudget: 100})
	require.Contains(t, got, "procedures.md is 511 bytes, far over its budget, so only its start is shown")

	dir = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "procedures.md"), 0o755))
	got = sys(dir, nil)
	require.Contains(t, got, "procedures.md: cannot be read")

	dir = t.TempDir()
	outside := filepath.Join(t.TempDir(), "x.md")
	require.NoError(t, os.WriteFile(outside, []byte("- When x: y"), 0o644))
	if err := os.Symlink(outside, filepath.Join(dir, "procedures.md")); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
	writeFile(t, dir, "procedures.md.keep", "")
	got = sys(dir, nil)
	require.Contains(t, got, "procedures.md: cannot be read: procedures.md is a symbolic link that leads outside the memory directory")
}

// TestCheckRootFiles: Check reports on persona.md only its size, and on
// procedures.md its head, its budget and lines in another shape.
func TestCheckRootFiles(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{ProceduresBudget: 100})
	leavesBroken(t, "a person's persona.md and procedures.md in every shape Check reports are its point")
	writeFile(t, dir, "persona.md", "You are Mira.\n")
	writeFile(t, dir, "procedures.md", "# Procedures\n\n> Summary: deploys\n\n- When a deploy fails: roll back\n")
	findings, err := s.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, findings, "a persona without a title and good procedures are fine")

	writeFile(t, dir, "persona.md", strings.Repeat("You are Mira.\n", 1000))
	writeFile(t, dir, "procedures.md", "- When a deploy fails: roll back\nroll back twice\n"+strings.Repeat("- When a: b\n", 10))
	findings, err = s.Check(ctx)
	require.NoError(t, err)
	var got []string
	for _, f := range findings {
		got = append(got, fmt.Sprintf("%s:%d %v %s", f.Path, f.Line, f.Warning, f.Problem))
	}
	require.Equal(t, []string{
		"persona.md:0 true 14,000 bytes, over the 8,192 bytes of it that go into prompts: the rest is cut",
		"procedures.md:0 false 169 bytes, over the 100-byte procedures budget: agents can only shorten it",
		`procedures.md:1 false has no "# " title as its first line`,
		`procedures.md:1 false has no "> Summary:" line right after its title: the index an agent sees first shows nothing for it`,
		`procedures.md:2 true not a rule in the form "- When <situation>: <action>": memory_search does not find it as one`,
	}, got)
	require.Contains(t, findings[3].Fix, `"> Summary: a deploy fails; a; a; a; a; a; a; a; a; a; a"`)
}

// TestProceduresNotEpisodes: a large procedures.md is never sealed into
// parts, and an episode-shaped entry is refused by the format.
func TestProceduresNotEpisodes(t *testing.T) {
	ctx := context.Background()
	s, dir := open(t, &memory.Options{ProceduresBudget: 64 << 10})
	for i := range 400 {
		require.NoError(t, s.Append(ctx, "procedures.md", fmt.Sprintf("- When case %d arises: handle it the way number %d was handled", i, i), "rules"))
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	require.Equal(t, []string{"episodes", "facts", "procedures.md"}, names)
	err = s.Append(ctx, "procedures.md", "## Task\n- Date: 2026-02-26", "")
	require.True(t, errors.Is(err, memory.ErrInvalidContent))
}

// TestProceduresSearchedWhenRootUnlisted: when the whole memory cannot be
// listed (a person's mistake) and each folder is listed on its own,
// procedures.md is still searched.
func TestProceduresSearchedWhenRootUnlisted(t *testing.T) {
	ctx := context.Background()
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	f := &checkFaults{Backend: d, list: func(dir string) error {
		if dir == "" {
			return &fs.PathError{Op: "open", Path: ".", Err: fs.ErrPermission}
		}
		return nil
	}}
	s, err := memory.OpenBackend(f, nil)
	require.NoError(t, err)
	require.NoError(t, s.Append(ctx, "procedures.md", "- When a deploy fails: read the log first", ""))
	require.NoError(t, s.Append(ctx, "facts/user.md", "- Deploys: on Fridays never", ""))
	hits, err := s.Search(ctx, "deploy", nil)
	require.NoError(t, err)
	var paths []string
	for _, h := range hits {
		paths = append(paths, h.Path)
	}
	require.ElementsMatch(t, []string{"procedures.md", "facts/user.md"}, paths)
}

// TestSetPersona: the person's write of persona.md, only at the version
// read, held to the rules of text, recorded in the history; the tools
// still may not change it.
func TestSetPersona(t *testing.T) {
	s, dir := open(t, nil)
	ctx := memory.WithActor(context.Background(), "person")
	require.NoError(t, s.SetPersona(ctx, "I am Ada.\n", ""))
	require.ErrorIs(t, s.SetPersona(ctx, "I am Bob.\n", ""), memory.ErrConflict, "it exists: not at version \"\"")
	require.NoError(t, s.SetPersona(ctx, "I am Bob.\n", memory.Version("I am Ada.\n")))
	require.ErrorIs(t, s.SetPersona(ctx, "bad\x00", memory.Version("I am Bob.\n")), memory.ErrInvalidContent)
	b, err := os.ReadFile(filepath.Join(dir, "persona.md"))
	require.NoError(t, err)
	require.Equal(t, "I am Bob.\n", string(b))
	h, err := s.History(ctx, "persona.md", nil)
	require.NoError(t, err)
	require.Len(t, h, 2)
	require.Equal(t, "person", h[0].Actor)
	require.ErrorIs(t, s.Write(ctx, "persona.md", "x"), memory.ErrInvalidPath, "no tool or Store.Write changes it")

	s.Close()
	require.ErrorIs(t, s.SetPersona(ctx, "x\n", ""), memory.ErrClosed)
}
