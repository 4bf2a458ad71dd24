package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// import: the memory of the systems people come from, moved in through
// the library. What each layout holds, and where it goes:
//
//	openclaw     SOUL.md, USER.md, MEMORY.md, memory/YYYY-MM-DD.md, memory/*.md
//	claude-code  MEMORY.md (its index lines are left out), *.md notes (see note)
//	agnx         [agents/ID/]MEMORY.md, daily/YYYY-MM-DD.md, world/*.md
//	toebeans     SOUL.md, knowledge/USER.md, knowledge/YYYY-MM-DD.md, knowledge/*.md
//
// SOUL.md becomes persona.md (only when there is none); the bullets of
// USER.md become fact lines of facts/user.md, those of MEMORY.md of
// facts/memory.md; a daily log becomes dated entries in its month, one per
// "#"/"##" section; a topic file's bullets become a world topic with
// --world, else fact lines of facts/memory.md.

// importFormats are the layouts import reads.
var importFormats = []string{"openclaw", "claude-code", "agnx", "toebeans"}

// Bounds on what import reads of a tree a person points it at.
const (
	maxImportFiles = 10000 // files looked at in one folder
	maxItemText    = 2000  // bytes of one fact line
)

// importItem is one thing import moves, or leaves out and why.
type importItem struct {
	From   string `json:"from"`           // the file in the tree, slash-separated
	Line   int    `json:"line,omitempty"` // its line; 0 for the whole file
	To     string `json:"to,omitempty"`   // where it goes in the memory
	Text   string `json:"text"`           // its first line, to show; what the library refused, in full
	Reason string `json:"reason,omitempty"`

	entry   string // what is appended (or persona.md's text)
	persona bool
}

func cmdImport() *command {
	return &command{
		name: "import", args: "FORMAT DIR", summary: "bring in openclaw, claude-code, agnx or toebeans memory (dry run; --apply)", minArgs: 2, maxArgs: 2, json: true,
		about: `Reads the memory another system keeps in DIR and says what would go where in
this memory; with --apply, writes it. FORMAT is one of:

  openclaw     SOUL.md, USER.md, MEMORY.md, memory/YYYY-MM-DD.md daily logs,
               memory/*.md topic files (the workspace folder)
  claude-code  MEMORY.md and its notes *.md (Claude Code's auto memory
               folder, ~/.claude/projects/PROJECT/memory)
  agnx         MEMORY.md, daily/YYYY-MM-DD.md and the shared world/*.md
               (.agnx/memory, with --agent ID when it holds several agents,
               or one agent's folder)
  toebeans     SOUL.md, knowledge/USER.md, knowledge/YYYY-MM-DD.md daily
               logs, knowledge/*.md topic files (~/.toebeans)

SOUL.md becomes persona.md, when there is none. The bullets of USER.md
become fact lines of facts/user.md, those of MEMORY.md of facts/memory.md.
A daily log becomes entries of its month (episodes/YYYY-MM.md), one per
"#" or "##" section, dated the log's day. A topic file's bullets become a
world topic (world/NAME.md) with --world, else fact lines of
facts/memory.md.

A Claude Code note (front matter with name, description and type) goes
where its type says: user to facts/user.md, feedback, project and reference
to facts/memory.md, a project note dated by its name or first words
(YYYY-MM-DD) as an entry of its month. It comes whole, keyed by its name:
"- NAME: its paragraphs and list items", on one line when it fits (2,000
bytes), else a line a paragraph. A paragraph of MEMORY.md becomes a line.

Nothing is overwritten: every line goes through the library as memory_append
does, with its refusals (a line worded as temporary, a fact already there,
a budget full) and its bounds. What does not fit is listed with the reason:
text that is no list item in a file of facts, a refusal, a file over 1 MiB,
a file the layout does not know, a link (never followed, a folder's
included), a named pipe or a device (never opened), a folder on another
file system (a mount: never entered). Without --apply, a dry run: the same
judgement on a scratch copy of the memory's facts, and nothing written.

With --json: {"format", "dir", "applied", "imported": [{"from", "line",
"to", "text"}], "left": [{"from", "line", "to", "text", "reason"}]}.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			apply := fs.Bool("apply", false, "write what the dry run shows")
			agent := fs.String("agent", "", "agnx: the agent whose memory to import, when .agnx/memory holds several")
			return func(ctx context.Context, e *env) error {
				format, dir := e.args[0], e.args[1]
				if !slices.Contains(importFormats, format) {
					return usageErr{fmt.Sprintf("unknown format %q: give %s", format, strings.Join(importFormats, ", "))}
				}
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					return fmt.Errorf("%s is not a directory to import from", dir)
				}
				world := e.store.worldWhere(e.getenv) != ""
				items, err := importPlan(ctx, format, dir, *agent, world)
				if err != nil {
					return err
				}
				if err := e.runImport(ctx, items, *apply); err != nil {
					return err
				}
				return e.reportImport(format, dir, items, *apply)
			}
		},
	}
}

// runImport moves items into the memory, or, without apply, into a
// scratch copy of what judges them (the fact files, procedures.md,
// persona.md and the world topics), and records in each item's Reason why
// it was left out.
func (e *env) runImport(ctx context.Context, items []importItem, apply bool) error {
	opts, err := e.store.options()
	if err != nil {
		return err
	}
	var s *memory.Store
	if apply {
		st, close, err := e.open(ctx, true)
		if err != nil {
			return err
		}
		defer close()
		s = st
	} else {
		st, cleanup, err := e.scratch(ctx, opts)
		if err != nil {
			return err
		}
		defer cleanup()
		s = st
	}
	// What an earlier import wrote (a run cut short, or run twice) is
	// not written again: the memory's months are read as they are.
	done := &importedEntries{months: map[string][][]string{}}
	if mem, closeMem, err := e.open(ctx, false); err == nil {
		defer closeMem()
		done.s = mem
	}
	for i := range items {
		it := &items[i]
		if it.Reason != "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if dup, err := done.has(ctx, it.To, it.entry); err != nil {
			return err
		} else if dup {
			it.Reason = "already in " + it.To + ": imported before"
			continue
		}
		if it.persona {
			err := s.SetPersona(ctx, it.entry, "")
			var me *memory.Error
			switch {
			case errors.Is(err, memory.ErrConflict):
				it.Reason = "persona.md exists, and import overwrites nothing: merge SOUL.md into it by hand (mdmemory edit persona.md)"
			case errors.As(err, &me):
				it.Reason = strings.Join(strings.Fields(personalHint(me)), " ") // a refusal, such as a credential in it
			case err != nil:
				return err
			}
			continue
		}
		if err := s.Append(ctx, it.To, it.entry, ""); err != nil {
			var me *memory.Error
			if !errors.As(err, &me) {
				return err // the host failed: stop, and say so
			}
			it.Reason = strings.Join(strings.Fields(personalHint(me)), " ")
			// Refused: the entry in full, for the person to bring by hand
			// (a daily log's or a note's entry showed only its heading).
			it.Text = cmp.Or(it.entry, it.Text)
		}
	}
	return nil
}

// scratch opens a store in a temporary folder that holds a copy of what
// judges an import (the fact files, procedures.md, persona.md, and the
// world topics in a shared root of its own), for a dry run to apply the
// library's rules to without writing to the memory.
func (e *env) scratch(ctx context.Context, opts memory.Options) (*memory.Store, func(), error) {
	tmp, err := os.MkdirTemp("", "mdmemory-import-*")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	mem, shared := filepath.Join(tmp, "memory"), filepath.Join(tmp, "world")
	if err := os.MkdirAll(filepath.Join(shared, "world"), 0o700); err != nil {
		cleanup()
		return nil, nil, err
	}
	src, closeSrc, err := e.open(ctx, false)
	switch {
	case err == nil:
		defer closeSrc()
		files, err := src.List(ctx)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		for _, f := range files {
			if strings.HasPrefix(f.Path, "episodes/") || f.Error != "" {
				continue
			}
			text, err := src.Read(ctx, f.Path)
			if err != nil {
				continue // unreadable: the scratch copy judges without it
			}
			to := filepath.Join(mem, filepath.FromSlash(f.Path))
			if strings.HasPrefix(f.Path, "world/") {
				to = filepath.Join(shared, filepath.FromSlash(f.Path))
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
				cleanup()
				return nil, nil, err
			}
			if err := os.WriteFile(to, []byte(text), 0o600); err != nil {
				cleanup()
				return nil, nil, err
			}
		}
	case errors.Is(err, errNoMemory):
		// A memory that is not there yet: the import would start it.
	default:
		cleanup()
		return nil, nil, err
	}
	if e.store.worldWhere(e.getenv) != "" {
		w, err := memory.OpenDir(shared, 0)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		cleanupAll := cleanup
		cleanup = func() { w.Close(); cleanupAll() }
		opts.World = w
	}
	s, err := memory.Open(mem, &opts)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	cleanupAll := cleanup
	return s, func() { s.Close(); cleanupAll() }, nil
}

// reportImport prints what import did or would do.
func (e *env) reportImport(format, dir string, items []importItem, applied bool) error {
	var in, left []importItem
	for _, it := range items {
		if it.Reason == "" {
			in = append(in, it)
		} else {
			left = append(left, it)
		}
	}
	if e.json {
		return writeJSON(e.stdout, struct {
			Format   string       `json:"format"`
			Dir      string       `json:"dir"`
			Applied  bool         `json:"applied"`
			Imported []importItem `json:"imported"`
			Left     []importItem `json:"left"`
		}{format, dir, applied, cmpNil(in), cmpNil(left)})
	}
	w := e.stdout
	if applied {
		fmt.Fprintf(w, "Imported from %s (%s):\n", dir, format)
	} else {
		fmt.Fprintf(w, "Would import from %s (%s); a dry run, nothing is written: --apply writes.\n", dir, format)
	}
	rows := [][]string{}
	for _, it := range in {
		rows = append(rows, []string{"  " + it.To, "<- " + where(it), cut(it.Text, 60)})
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	table(w, rows)
	if len(left) > 0 {
		fmt.Fprintf(w, "\n%s:\n", paint(e.color, yellow, "Left out"))
		for _, it := range left {
			fmt.Fprintf(w, "  %s", where(it))
			switch text := strings.TrimRight(it.Text, "\n"); {
			case strings.Contains(text, "\n"):
				// An entry of many lines: under it, each line indented.
				for l := range strings.Lines(printableText(text)) {
					fmt.Fprintf(w, "\n%s", strings.TrimRight("        "+strings.TrimSuffix(l, "\n"), " "))
				}
			case text != "":
				// In full: what is left out is the person's to bring by hand.
				fmt.Fprintf(w, "  %s", printable(text))
			}
			fmt.Fprintf(w, "\n      %s\n", printable(it.Reason)) // a refusal quotes the line
		}
	}
	verb := "to import"
	if applied {
		verb = "imported"
	}
	fmt.Fprintf(w, "\n%d %s, %d left out.\n", len(in), verb, len(left))
	return nil
}

func cmpNil(items []importItem) []importItem {
	if items == nil {
		return []importItem{}
	}
	return items
}

// where is an item's place in the tree: FILE or FILE:LINE.
func where(it importItem) string {
	if it.Line > 0 {
		return fmt.Sprintf("%s:%d", shownPath(it.From), it.Line)
	}
	return shownPath(it.From)
}

// cut shortens s to n runes, with "…".
func cut(s string, n int) string {
	s = printable(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// importPlan reads the tree at dir as format lays it out, and returns what
// goes where: persona first, then the facts about the person, the other
// facts, the topics, and the daily logs oldest first.
//
// It opens the folder dir once, and the tree's folders and files beneath
// it without following a link and without blocking (treeDir), and says
// what it left out and why: a link, a named pipe or a device where a
// folder or a file belongs, a folder on another file system. It stops when
// ctx ends.
func importPlan(ctx context.Context, format, dir, agent string, world bool) ([]importItem, error) {
	tree, err := openTree(dir)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	p := &planner{ctx: ctx, root: dir, tree: tree, world: world}
	switch format {
	case "openclaw":
		p.folder("", map[string]func(string){
			"SOUL.md":   p.persona,
			"USER.md":   p.facts("facts/user.md"),
			"MEMORY.md": p.facts("facts/memory.md"),
			"memory":    func(string) {},
		}, "an OpenClaw workspace file that is not memory")
		p.folder("memory", nil, "")
	case "claude-code":
		p.prose, p.notes = true, true
		p.folder("", map[string]func(string){
			"MEMORY.md": p.facts("facts/memory.md"),
		}, "")
	case "agnx":
		own, shared, err := agnxFolders(tree, dir, agent, &p.first)
		if err != nil {
			return nil, err
		}
		p.folder(own, map[string]func(string){
			"MEMORY.md": p.facts("facts/memory.md"),
			"daily":     func(string) {},
		}, "not part of an agnx agent's memory")
		p.folder(path.Join(own, "daily"), nil, "")
		if shared != "" {
			p.folder(shared, nil, "")
		}
	case "toebeans":
		p.folder("", map[string]func(string){
			"SOUL.md":   p.persona,
			"knowledge": func(string) {},
		}, "not part of toebeans' memory")
		p.folder("knowledge", map[string]func(string){
			"USER.md": p.facts("facts/user.md"),
		}, "")
	}
	if p.err != nil {
		return nil, p.err
	}
	// The persona, then the facts about the person, then the others.
	rank := func(it importItem) int {
		switch it.To {
		case personaPath:
			return 0
		case "facts/user.md":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(p.first, func(a, b importItem) int { return rank(a) - rank(b) })
	slices.SortStableFunc(p.logs, func(a, b importItem) int { return strings.Compare(a.To+a.From, b.To+b.From) })
	out := append(p.first, p.topics...)
	return append(out, p.logs...), nil
}

// agnxFolders finds an agnx tree's agent folder and shared world folder
// (relative to dir; "" for the root, and for none). A folder that is a
// link, or no folder, is left out, and said so in left.
func agnxFolders(tree *treeDir, dir, agent string, left *[]importItem) (own, shared string, err error) {
	if agent != "" {
		if !oneName(agent) {
			return "", "", usageErr{fmt.Sprintf("--agent %s: give an agent's folder name, one name beneath agents/ (no /, not . or ..)", printable(agent))}
		}
		own = "agents/" + agent
	} else if isDir(tree, "agents", left) && !exists(filepath.Join(dir, "MEMORY.md")) {
		f, err := tree.openDir("agents")
		if err != nil {
			return "", "", err
		}
		ents, err := f.ReadDir(maxImportFiles)
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return "", "", err
		}
		var ids []string
		for _, e := range ents {
			if e.IsDir() {
				ids = append(ids, e.Name())
			}
		}
		switch len(ids) {
		case 0:
			return "", "", fmt.Errorf("%s/agents holds no agent", dir)
		case 1:
			own = path.Join("agents", ids[0])
		default:
			if len(ids) > 10 {
				ids = append(ids[:10], "…")
			}
			return "", "", usageErr{fmt.Sprintf("%s holds %d agents (%s): name one with --agent ID", dir, len(ids), strings.Join(ids, ", "))}
		}
	}
	if own != "" && !isDir(tree, own, nil) {
		if _, err := tree.openDir(own); errors.As(err, new(*treeError)) {
			return "", "", fmt.Errorf("%s: %s", dir, oneLine(err))
		}
		return "", "", fmt.Errorf("%s has no folder %s", dir, own)
	}
	if isDir(tree, "world", left) {
		shared = "world"
	}
	return own, shared, nil
}

// isDir reports whether rel beneath tree is a folder, opened as import
// opens one (treeDir.openDir). What stands there that is not a folder is
// said in left, when left is not nil.
func isDir(tree *treeDir, rel string, left *[]importItem) bool {
	f, err := tree.openDir(rel)
	if err != nil {
		if left != nil && errors.As(err, new(*treeError)) {
			*left = append(*left, importItem{From: rel + "/", Reason: oneLine(err)})
		}
		return false
	}
	f.Close()
	return true
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// planner collects what import moves.
type planner struct {
	ctx    context.Context
	root   string   // the tree's folder, as named
	tree   *treeDir // that folder, open
	at     *treeDir // the folder whose files are being looked at
	world  bool
	prose  bool         // a paragraph of a file of facts becomes a line, not left out (claude-code)
	notes  bool         // a topic file is a note with front matter (claude-code: note)
	first  []importItem // persona and the facts, in the order found
	topics []importItem
	logs   []importItem
	err    error
}

// folder looks at the files of the folder rel: those named in known go to
// their function; a daily log (YYYY-MM-DD.md) becomes entries; another .md
// file is a topic, unless other says why it is left out; anything else is
// left out.
//
// The folder is opened without following a link or blocking: a link, a
// named pipe or anything else where the folder belongs is left out, and
// said so.
func (p *planner) folder(rel string, known map[string]func(string), other string) {
	if p.err != nil {
		return
	}
	if err := p.ctx.Err(); err != nil {
		p.err = err
		return
	}
	f, err := p.tree.openDir(rel)
	var te *treeError
	switch {
	case errors.Is(err, fs.ErrNotExist) && rel != "":
		return
	case errors.As(err, &te) && rel != "":
		p.first = append(p.first, importItem{From: rel + "/", Reason: oneLine(err)})
		return
	case err != nil:
		p.err = err
		return
	}
	defer f.Close()
	p.at = f
	var ents []fs.DirEntry
	for len(ents) <= maxImportFiles {
		batch, err := f.ReadDir(256)
		ents = append(ents, batch...)
		if err != nil || len(batch) == 0 {
			break
		}
	}
	if len(ents) > maxImportFiles {
		p.first = append(p.first, importItem{From: rel + "/", Reason: fmt.Sprintf("more than %d files in the folder: only the first %d, in no particular order, were looked at", maxImportFiles, maxImportFiles)})
		ents = ents[:maxImportFiles]
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, ent := range ents {
		if err := p.ctx.Err(); err != nil {
			p.err = err
			return
		}
		name := ent.Name()
		from := path.Join(rel, name)
		if do, ok := known[name]; ok {
			if ent.IsDir() {
				continue // a folder the layout names, looked at on its own
			}
			// A file the layout names, or a folder it names that is not
			// one (a link, a pipe), which its own look refuses.
			do(from)
			continue
		}
		switch {
		case strings.HasPrefix(name, "."):
			// Hidden files are tools' own (.git, .DS_Store).
		case ent.Type()&fs.ModeSymlink != 0:
			p.first = append(p.first, importItem{From: from, Reason: from + " is a symbolic link: not followed, so that nothing outside the tree is read"})
		case ent.IsDir():
			p.first = append(p.first, importItem{From: from + "/", Reason: "a folder the layout does not have: not read"})
		case !strings.HasSuffix(name, ".md"):
			p.first = append(p.first, importItem{From: from, Reason: "not a markdown file: not read"})
		case isDay(strings.TrimSuffix(name, ".md")):
			p.daily(from, strings.TrimSuffix(name, ".md"))
		case other != "":
			p.first = append(p.first, importItem{From: from, Reason: other + ": not read"})
		case p.notes:
			p.note(from)
		default:
			p.topic(from)
		}
	}
}

// isDay reports a date written YYYY-MM-DD.
func isDay(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil && len(s) == 10
}

// read reads a file of the folder being looked at (the handle its name
// was listed from), at most maxInput bytes, or records why it is left out
// and returns nil.
func (p *planner) read(from string, into *[]importItem) []byte {
	var b []byte
	f, err := p.at.openFile(path.Base(from))
	if err == nil {
		b, err = io.ReadAll(io.LimitReader(f, maxInput+1))
		f.Close()
	}
	switch {
	case err != nil:
		*into = append(*into, importItem{From: from, Reason: oneLine(err)})
		return nil
	case len(b) > maxInput:
		*into = append(*into, importItem{From: from, Reason: fmt.Sprintf("over %s bytes, the most one memory file holds: not read; split it first", thousands(maxInput))})
		return nil
	case !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0:
		*into = append(*into, importItem{From: from, Reason: "holds bytes that are not text (invalid UTF-8 or NUL): not read"})
		return nil
	}
	return b
}

// persona makes SOUL.md the memory's persona.md.
func (p *planner) persona(from string) {
	b := p.read(from, &p.first)
	if b == nil {
		return
	}
	if len(bytes.TrimSpace(b)) == 0 {
		p.first = append(p.first, importItem{From: from, Reason: "empty"})
		return
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	p.first = append(p.first, importItem{From: from, To: personaPath, Text: first, entry: string(b), persona: true})
}

// facts returns the function that makes a file's list items fact lines of
// the fact file to.
func (p *planner) facts(to string) func(string) {
	return func(from string) { p.first = p.lines(from, to, p.first) }
}

// topic makes a topic file's list items a world topic's lines, or with no
// shared world, lines of facts/memory.md.
func (p *planner) topic(from string) {
	to := "facts/memory.md"
	if p.world {
		to = paths.Topic(cmp.Or(paths.TopicFor(path.Base(from)), "topic"))
	}
	p.topics = p.lines(from, to, p.topics)
}

// lines adds the list items of the file from as fact lines of to, and
// lists its other text as left out. The title, the summary line and
// headings (a list's category) carry no fact of their own.
func (p *planner) lines(from, to string, out []importItem) []importItem {
	src := p.read(from, &out)
	if src == nil {
		return out
	}
	d := markdown.Parse(src)
	index := from == "MEMORY.md" && to == "facts/memory.md"
	items := d.Items
	for i, at := range d.Blocks {
		end := len(src)
		if i+1 < len(d.Blocks) {
			end = d.Blocks[i+1]
		}
		line := bytes.Count(src[:at], []byte("\n")) + 1
		text := strings.TrimSpace(string(src[at:end]))
		switch {
		case text == "", d.Title.OK && at == d.Title.Start, d.Summary.OK && at <= d.Summary.Start && d.Summary.Start < end,
			slices.ContainsFunc(d.Headings, func(h markdown.Heading) bool { return h.Start == at }),
			strings.Trim(text, "-*_ ") == "":
			continue
		case !slices.ContainsFunc(items, func(it markdown.Item) bool { return it.Start == at }) && p.prose:
			// A paragraph: one line, whole.
			fact := "- " + oneSpaced(text)
			if why := paragraphTooLong(fact); why != "" {
				out = append(out, importItem{From: from, Line: line, Text: fact, Reason: why})
			} else {
				out = append(out, importItem{From: from, Line: line, To: to, Text: fact, entry: fact})
			}
			continue
		case !slices.ContainsFunc(items, func(it markdown.Item) bool { return it.Start == at }):
			out = append(out, importItem{From: from, Line: line, Text: oneSpaced(text), Reason: "not a list item: only bullets become fact lines (add it with 'mdmemory add' if it is a fact)"})
			continue
		}
		for _, it := range items {
			if it.Start < at || it.Start >= end {
				continue
			}
			fact := factLine(src[it.Start:it.End])
			itLine := bytes.Count(src[:it.Start], []byte("\n")) + 1
			switch {
			case index && linksToTopic(p.root, fact):
				out = append(out, importItem{From: from, Line: itLine, Text: fact, Reason: "an index line of a topic file, whose own lines are imported"})
			case len(fact) > maxItemText:
				out = append(out, importItem{From: from, Line: itLine, Text: fact, Reason: fmt.Sprintf("a list item of %s bytes is no fact line: condense it and add it with 'mdmemory add'", thousands(int64(len(fact))))})
			case strings.TrimSpace(strings.TrimPrefix(fact, "-")) == "":
			default:
				out = append(out, importItem{From: from, Line: itLine, To: to, Text: fact, entry: fact})
			}
		}
	}
	return out
}

// paragraphTooLong says why the fact line a paragraph made, line, is
// none: longer than a fact line holds (maxItemText); "" when it fits. The
// one rule for a paragraph of MEMORY.md and of a Claude Code note alike,
// measured on the line as it would be written.
func paragraphTooLong(line string) string {
	if len(line) <= maxItemText {
		return ""
	}
	return fmt.Sprintf("a paragraph whose line is %s bytes, more than the %s of a fact line: condense it and add it with 'mdmemory add'", thousands(int64(len(line))), thousands(maxItemText))
}

// factLine makes a list item one fact line: "- " and its first line, with
// the lines under it (wrapped text, nested items) joined by "; ".
func factLine(item []byte) string {
	var parts []string
	for i, l := range strings.Split(strings.TrimSpace(string(item)), "\n") {
		l = strings.TrimSpace(l)
		if i == 0 {
			l = strings.TrimSpace(strings.TrimLeft(l, "-*+0123456789.)"))
		} else if len(l) > 1 && strings.ContainsRune("-*+", rune(l[0])) && l[1] == ' ' {
			l = strings.TrimSpace(l[1:])
		}
		if l != "" {
			parts = append(parts, l)
		}
	}
	return "- " + strings.Join(parts, "; ")
}

// linksToTopic reports a line that links to a markdown file beside
// MEMORY.md, as Claude Code's index lines do: "- [Debugging](debugging.md) …".
func linksToTopic(root, line string) bool {
	i := strings.Index(line, "](")
	if i < 0 {
		return false
	}
	target, _, ok := strings.Cut(line[i+2:], ")")
	return ok && strings.HasSuffix(target, ".md") && !strings.Contains(target, "..") && exists(filepath.Join(root, filepath.FromSlash(target)))
}

// daily makes a daily log entries of its month: one per "#" or "##"
// section (a "#" title first in the file names the day, and is no entry),
// and one for text before the first section, each dated day.
func (p *planner) daily(from, day string) {
	src := p.read(from, &p.logs)
	if src == nil {
		return
	}
	d := markdown.Parse(src)
	to := paths.Month(day[:7])
	var heads []markdown.Heading
	for _, h := range d.Headings {
		if h.Level <= 2 {
			heads = append(heads, h)
		}
	}
	title := "Notes of " + day
	start := 0
	if len(heads) > 0 && heads[0].Level == 1 && strings.TrimSpace(string(src[:heads[0].Start])) == "" {
		if t := strings.TrimSpace(heads[0].Text); t != "" && t != day {
			title = t
		}
		start = heads[0].End
		heads = heads[1:]
	}
	add := func(title string, line int, body []byte) {
		body = bytes.TrimSpace(body)
		if len(body) == 0 && title == "" {
			return
		}
		title = strings.TrimSpace(cmp.Or(strings.Join(strings.Fields(title), " "), "Notes of "+day))
		var b strings.Builder
		b.WriteString("## " + title + "\n- Date: " + day + "\n")
		if len(body) > 0 {
			if !bytes.HasPrefix(body, []byte("- ")) && !bytes.HasPrefix(body, []byte("* ")) {
				b.WriteString("\n")
			}
			b.Write(body)
			b.WriteString("\n")
		}
		p.logs = append(p.logs, importItem{From: from, Line: line, To: to, Text: "## " + title, entry: b.String()})
	}
	end := len(src)
	if len(heads) > 0 {
		end = heads[0].Start
	}
	if pre := bytes.TrimSpace(src[start:end]); len(pre) > 0 {
		at := start + bytes.Index(src[start:end], pre)
		add(title, bytes.Count(src[:at], []byte("\n"))+1, pre)
	} else if len(heads) == 0 {
		p.logs = append(p.logs, importItem{From: from, Reason: "empty"})
	}
	for i, h := range heads {
		end := len(src)
		if i+1 < len(heads) {
			end = heads[i+1].Start
		}
		add(h.Text, h.Line, src[h.End:end])
	}
}

// importedEntries tells which daily-log entries a memory's months already
// hold, reading each month (its parts, then its file) once.
type importedEntries struct {
	s      *memory.Store         // the memory; nil when it does not exist yet
	months map[string][][]string // a month file's path: its entries, as lines
}

// has reports whether the episode file to already holds entry: an entry
// with its heading and each of its lines (the library adds a Date line).
// Fact lines are the guard's to judge, which refuses a repeat.
func (d *importedEntries) has(ctx context.Context, to, entry string) (bool, error) {
	if _, month := paths.MonthOf(to); d.s == nil || !month {
		return false, nil
	}
	entries, ok := d.months[to]
	if !ok {
		var err error
		if entries, err = d.read(ctx, to); err != nil {
			return false, err
		}
		d.months[to] = entries
	}
	want := nonBlankLines(entry)
	if len(want) == 0 {
		return false, nil
	}
	for _, e := range entries {
		if len(e) == 0 || e[0] != want[0] {
			continue
		}
		if !slices.ContainsFunc(want[1:], func(l string) bool { return !slices.Contains(e[1:], l) }) {
			return true, nil
		}
	}
	return false, nil
}

// read returns the entries of the month file to and its parts, each as its
// lines without the blank ones.
func (d *importedEntries) read(ctx context.Context, to string) ([][]string, error) {
	list, err := d.s.List(ctx)
	if err != nil {
		return nil, err
	}
	month, _ := paths.MonthOf(to)
	ps := []string{to}
	for _, f := range list {
		if f.Path == to {
			for i := f.Parts; i >= 1; i-- {
				ps = append([]string{paths.Part(month, i)}, ps...)
			}
		}
	}
	var entries [][]string
	for _, p := range ps {
		text, err := d.s.Read(ctx, p)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			var me *memory.Error
			if errors.As(err, &me) {
				continue // a person's mistake in the file: Check's to report
			}
			return nil, err
		}
		for _, block := range strings.Split("\n"+text, "\n## ")[1:] {
			entries = append(entries, nonBlankLines("## "+block))
		}
	}
	return entries, nil
}

// nonBlankLines returns text's lines, each trimmed, without the blank ones.
func nonBlankLines(text string) []string {
	var lines []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}
