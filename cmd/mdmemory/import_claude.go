package main

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Claude Code's auto memory (~/.claude/projects/PROJECT/memory): MEMORY.md,
// an index of one line a note ("- [Title](file.md) — hook"), and one file
// a note, with YAML front matter:
//
//	---
//	name: no-db-mocks
//	description: integration tests hit a real database
//	type: feedback
//	---
//
//	Integration tests must hit a real database, not mocks.
//
//	**Why:** mocks hid a broken migration last quarter.
//
// type is one of user (who the person is), feedback (how to work),
// project (what goes on in the work) and reference (where things are).
// A note goes where its type says: user to facts/user.md, the others to
// facts/memory.md, keyed by its name; a project note dated by its name or
// its first words (YYYY-MM-DD) reads as an event, and becomes an entry of
// its month. Its text comes whole: its paragraphs (and list items) joined
// into one fact line when it fits in one, else a line a paragraph (its
// description, a summary of that text, is said to be left out, unless the
// text says it word for word, or is the text of a note with no other); a title
// (a first "#" heading) is the note's name again, and left. A file with no
// front matter (the older auto memory's topic files) is a topic file, as
// in the other layouts; in MEMORY.md and those, a paragraph becomes a line
// of its own.

// note imports the Claude Code note from.
func (p *planner) note(from string) {
	src := p.read(from, &p.first)
	if src == nil {
		return
	}
	fm, body, offset := frontMatter(src)
	if offset == 0 {
		// A topic file of the older auto memory, with no front matter:
		// its lines, as any layout's topic file.
		p.topic(from)
		return
	}
	name := cmp.Or(oneSpaced(fm["name"]), strings.TrimSuffix(path.Base(from), ".md"))
	typ := strings.ToLower(fm["type"])
	paras := paragraphs(body)
	for i := range paras {
		paras[i].line += bytes.Count(src[:offset], []byte("\n"))
	}
	desc := oneSpaced(fm["description"])
	switch {
	case len(paras) == 0 && desc != "":
		paras = []paragraph{{line: fieldLine(src[:offset], "description"), text: desc}}
	case len(paras) == 0:
		p.first = append(p.first, importItem{From: from, Text: name, Reason: "a note with no text: nothing to import"})
		return
	case desc != "" && !strings.Contains(strings.ToLower(oneSpaced(string(body))), strings.ToLower(desc)):
		// The text comes, not its summary: said, so that nothing goes
		// unsaid.
		p.first = append(p.first, importItem{From: from, Line: fieldLine(src[:offset], "description"), Text: "description: " + desc,
			Reason: "the note's description, a summary of its text, which is imported: left out (add it with 'mdmemory add' if it says more)"})
	}
	if day := eventDay(typ, name, paras[0].text); day != "" {
		var b strings.Builder
		b.WriteString("## " + name + "\n- Date: " + day + "\n\n")
		for _, pa := range paras {
			b.WriteString(pa.text + "\n\n")
		}
		entry := strings.TrimRight(b.String(), "\n") + "\n"
		p.logs = append(p.logs, importItem{From: from, Line: paras[0].line, To: paths.Month(day[:7]), Text: "## " + name, entry: entry})
		return
	}
	to := "facts/memory.md"
	if typ == "user" {
		to = "facts/user.md"
	}
	key := strings.NewReplacer(":", " ", "：", " ").Replace(name)
	texts := make([]string, len(paras))
	for i, pa := range paras {
		texts[i] = pa.text
	}
	if whole := "- " + key + ": " + strings.Join(texts, " "); len(whole) <= maxItemText {
		p.first = append(p.first, importItem{From: from, Line: paras[0].line, To: to, Text: whole, entry: whole})
		return
	}
	for i, pa := range paras {
		line := fmt.Sprintf("- %s (%d/%d): %s", key, i+1, len(paras), pa.text)
		if len(line) > maxItemText {
			p.first = append(p.first, importItem{From: from, Line: pa.line, Text: line, Reason: fmt.Sprintf("a paragraph of %s bytes is no fact line: condense it and add it with 'mdmemory add'", thousands(int64(len(pa.text))))})
			continue
		}
		p.first = append(p.first, importItem{From: from, Line: pa.line, To: to, Text: line, entry: line})
	}
}

// eventDay is the day a note reads as an event on: a project note whose
// name or first words start with a date (YYYY-MM-DD); "" for any other.
func eventDay(typ, name, first string) string {
	if typ != "project" {
		return ""
	}
	for _, s := range []string{name, first} {
		if len(s) >= 10 && isDay(s[:10]) {
			return s[:10]
		}
	}
	return ""
}

// frontMatter splits a note's YAML front matter (between "---" lines at
// its start) from its body: its "key: value" lines, the value without
// quotes, and the body's offset in src. A note without front matter is
// all body.
func frontMatter(src []byte) (map[string]string, []byte, int) {
	fm := map[string]string{}
	rest, ok := bytes.CutPrefix(src, []byte("---\n"))
	if !ok {
		rest, ok = bytes.CutPrefix(src, []byte("---\r\n"))
	}
	if !ok {
		return fm, src, 0
	}
	for at := 0; at < len(rest); {
		end := bytes.IndexByte(rest[at:], '\n')
		line := rest[at:]
		next := len(rest)
		if end >= 0 {
			line, next = rest[at:at+end], at+end+1
		}
		if t := strings.TrimSpace(string(line)); t == "---" || t == "..." {
			body := rest[next:]
			return fm, body, len(src) - len(body)
		}
		if k, v, ok := strings.Cut(string(line), ":"); ok && !strings.HasPrefix(k, " ") {
			v = strings.TrimSpace(v)
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			fm[strings.ToLower(strings.TrimSpace(k))] = v
		}
		at = next
	}
	return map[string]string{}, src, 0 // no closing line: no front matter
}

// fieldLine is the line of the front matter fm where key is set, 1-based;
// 1 when none is.
func fieldLine(fm []byte, key string) int {
	for i, l := range strings.Split(string(fm), "\n") {
		if k, _, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return i + 1
		}
	}
	return 1
}

// paragraph is one block of a note's text, made one line.
type paragraph struct {
	line int // its first line in the body, 1-based
	text string
}

// paragraphs returns body's blocks, each made one line: a paragraph's
// lines joined by spaces, a list's items by "; ", a heading as its text;
// a thematic break is none.
func paragraphs(body []byte) []paragraph {
	d := markdown.Parse(body)
	var out []paragraph
	for i, at := range d.Blocks {
		end := len(body)
		if i+1 < len(d.Blocks) {
			end = d.Blocks[i+1]
		}
		text := strings.TrimSpace(string(body[at:end]))
		if text == "" || strings.Trim(text, "-*_ ") == "" || d.Title.OK && at == d.Title.Start {
			continue
		}
		line := bytes.Count(body[:at], []byte("\n")) + 1
		var parts []string
		for _, it := range d.Items {
			if it.Start >= at && it.Start < end {
				parts = append(parts, strings.TrimPrefix(factLine(body[it.Start:it.End]), "- "))
			}
		}
		switch {
		case len(parts) > 0:
			text = strings.Join(parts, "; ")
		case slices.ContainsFunc(d.Headings, func(h markdown.Heading) bool { return h.Start == at }):
			text = strings.TrimSpace(strings.TrimLeft(text, "#"))
		default:
			text = oneSpaced(text)
		}
		if text != "" {
			out = append(out, paragraph{line: line, text: text})
		}
	}
	return out
}

// oneSpaced is s on one line: its runs of white space made one space.
func oneSpaced(s string) string { return strings.Join(strings.Fields(s), " ") }
