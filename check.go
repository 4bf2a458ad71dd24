package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Check: a lint of the memory files for the person who edits them. Every
// decision is the one the library makes when it uses a file: a path is a
// memory file when the sandbox (resolve) takes it, an entry is dated when
// search dates it, a block is open when an append would refuse the file.
// Check only reports; it changes nothing.

// A Finding is one thing [Store.Check] found that a person should look at:
// where it is, what is wrong and what it does to the memory, and what to
// do about it.
type Finding struct {
	// Path is the file, relative and slash-separated ("facts/user.md"),
	// or a folder ending in "/" ("facts/" for the facts budget).
	Path string `json:"path"`
	// Line is the 1-based line the finding is about; 0 when it is about
	// the whole file or folder.
	Line int `json:"line"`
	// Problem says what is wrong and what it does to the memory.
	Problem string `json:"problem"`
	// Fix says what to do, as a sentence for a person.
	Fix string `json:"fix"`
	// Warning marks a finding that needs no change when the person meant
	// it so: a file outside facts/ and episodes/, which the library leaves
	// alone by design, and text of a fact file outside its bullets, which
	// goes into prompts but which search does not find.
	Warning bool `json:"warning,omitempty"`
}

// Check reads every file of the store as the library reads it and reports
// what a person should look at, sorted by path, then line:
//
//   - files the library ignores: in facts/ a name that is not one of
//     Options.FactFiles (facts/notes.md), in episodes/ a name that is not a
//     real month (episodes/2026-13.md), in the shared world/ (with
//     Options.World) a name that is not a topic (world/My_Notes.md), other
//     extensions, folders inside them; and, as warnings, files elsewhere in
//     the root, which the library leaves alone by design, among them a
//     world/ in the agent's own memory when it shares another;
//   - files and folders that cannot be read (permissions, a symbolic link
//     that leads out of the directory);
//   - a file without its "# " title or "> Summary:" line, or with an empty
//     summary;
//   - in month files (and their parts and archived originals): text that
//     is in no "## " entry, an entry with an empty heading, without a
//     "- Date:" line (it never shows among the latest entries), with a date
//     not written YYYY-MM-DD, or dated outside the file's month; a month's
//     file that starts with the entries of its newest part again, as a
//     crash between a seal's two steps leaves it;
//   - in fact files and world topics, as a warning, text outside "- "
//     bullets;
//   - what the tools would refuse to write: bytes that are not UTF-8 text,
//     a carriage return that does not end a line, lists or blockquotes
//     nested more than 32 deep, a block left open at the end (a ``` fence,
//     an HTML comment or block: every append to the file is refused), a file
//     over 1 MiB;
//   - the fact files together over Options.FactsBudget, and the world
//     topics together over Options.WorldBudget;
//   - a credential's value (see [ErrSecret]) in a memory file, with its
//     line, or in a version the history keeps, with the version (in the
//     version that brought it), by its kind and never its value;
//   - a history that is inconsistent (the logs under .history/): a line
//     of a log that is not a record, a version a file had that its log
//     cannot rebuild, a log larger than the library reads, and, as a
//     warning, a log of no memory file of the store. A file changed
//     outside the library since its last record is no finding: its next
//     change records it.
//
// Check changes nothing. A file changed while it runs is seen as it was
// when it was read. An empty slice, not nil, means nothing was found.
// Check returns an error for a done context, a closed store ([ErrClosed]),
// and a backend that cannot list or read for another reason than a
// person's mistake in the folder (the network, the server): those mistakes
// are findings.
func (s *Store) Check(ctx context.Context) ([]Finding, error) {
	const op = "check"
	end, err := s.begin(ctx, op, "")
	if err != nil {
		return nil, err
	}
	defer end()

	c := &checker{s: s, out: []Finding{}, months: map[string][]byte{}}
	// The store's own backend whole; with a shared world, its world/ is
	// not the shared one, and no agent sees what it holds.
	own := s.b
	if sp, ok := s.b.(split); ok {
		own = sp.own
	}
	all, err := own.List(ctx, "")
	if err != nil {
		return nil, hostErr(op, "", err)
	}
	var entries []Entry
	for _, e := range all {
		top, _, nested := strings.Cut(e.Name, "/")
		switch {
		case nested && s.opts.World != nil && top == worldDir:
			c.warn(e.Name, 0, "in a world/ folder of this agent's own memory, not in the world it shares with other agents, so the library ignores it: no agent sees what it holds",
				"Move its facts into the topic of the shared world they belong to, and remove it.")
		case !nested || top != factsDir && top != episodesDir:
			entries = append(entries, e)
		}
	}
	// Each folder on its own as well: on a directory the whole listing
	// skips a folder it cannot read, and only the folder's own says so;
	// world/ is the shared backend's.
	var facts []Entry
	factsOK := true
	for _, dir := range s.folders() {
		in, err := s.b.List(ctx, dir)
		if err != nil {
			factsOK = factsOK && dir != factsDir
			if classify(err) != faultPerson {
				return nil, hostErr(op, dir, err)
			}
			if !slices.ContainsFunc(all, func(e Entry) bool { return e.Name == dir }) {
				c.unreadable(dir+"/", err)
			}
		}
		if dir == factsDir {
			facts = in
		}
		entries = append(entries, in...)
	}

	for _, e := range entries {
		t, err := s.resolve("read", e.Name)
		if err != nil {
			c.ignored(e.Name)
			continue
		}
		if err := c.file(ctx, t); err != nil {
			return nil, hostErr(op, t.path, err)
		}
	}
	if err := c.factFiles(ctx, facts, factsOK); err != nil {
		return nil, hostErr(op, factsDir, err)
	}
	c.worldBudget(entries)
	c.sealed(entries)
	if err := c.history(ctx); err != nil {
		return nil, hostErr(op, paths.HistoryDir, err)
	}
	slices.SortStableFunc(c.out, func(a, b Finding) int {
		if n := strings.Compare(a.Path, b.Path); n != 0 {
			return n
		}
		return a.Line - b.Line
	})
	return c.out, nil
}

// checker gathers the findings of one Check.
type checker struct {
	s      *Store
	out    []Finding
	months map[string][]byte // the months' files and parts read, for sealed
}

func (c *checker) add(p string, line int, problem, fix string) {
	c.out = append(c.out, Finding{Path: p, Line: line, Problem: problem, Fix: fix})
}

func (c *checker) warn(p string, line int, problem, fix string) {
	c.out = append(c.out, Finding{Path: p, Line: line, Problem: problem, Fix: fix, Warning: true})
}

// factNames lists the configured fact files: "facts/user.md or facts/memory.md".
func (c *checker) factNames() string {
	names := make([]string, len(c.s.opts.FactFiles))
	for i, f := range c.s.opts.FactFiles {
		names[i] = factPath(f.Name)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ignored reports a file the sandbox does not take, and so the library
// never reads, and says why in a person's terms.
func (c *checker) ignored(name string) {
	const ignored = ", so the library ignores it: no agent sees what it holds"
	top, rest, nested := strings.Cut(name, "/")
	dir, base := path.Split(name)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case top == worldDir && c.s.opts.World != nil:
		c.add(name, 0, "not a world topic (world/<topic>.md, the topic in lower-case letters and digits, words joined by single dashes, at most 64 characters)"+ignored,
			"Rename it to such a name, such as "+topicExample+", or merge its facts into the topic they belong to.")
	case !nested && (top == factsDir || top == episodesDir):
		c.add(name, 0, "a file where the folder "+top+"/ belongs"+ignored,
			"Rename or remove it, and move what it holds into the memory files under "+top+"/.")
	case top != factsDir && top != episodesDir:
		c.warn(name, 0, "outside facts/ and episodes/"+ignored+" (the library leaves other files alone by design)",
			"Nothing to do if it is not memory; otherwise move its facts into "+c.factNames()+", or its entries into the month files episodes/YYYY-MM.md, and remove it.")
	case top == factsDir && dir != factsDir+"/":
		c.add(name, 0, "in a folder inside facts/, where the library reads no file"+ignored,
			"Move its facts into "+c.factNames()+", and remove it.")
	case top == factsDir:
		problem := "not one of the fact files (" + strings.ReplaceAll(c.factNames(), " or ", ", ") + ")" + ignored
		for _, f := range c.s.opts.FactFiles {
			if strings.ToLower(stem)+".md" == f.Name {
				c.add(name, 0, problem, "Rename it to "+factPath(f.Name)+" (names are lower-case and end in .md), or merge it into that file if it exists.")
				return
			}
		}
		c.add(name, 0, problem, "Move its facts into "+c.factNames()+" and remove it; or, if the program using this memory lists it in Options.FactFiles, check with the same options.")
	case strings.HasPrefix(rest, archiveDir+"/"):
		c.add(name, 0, "not an archived month file (episodes/archive/YYYY-MM.md or YYYY-MM.NNN.md)"+ignored,
			"Give it the name of the month file it is the original of, or remove it.")
	case dir != episodesDir+"/":
		problem := "in a folder inside episodes/, where the library reads no file but archive/" + ignored
		if m, ok := monthOfName(stem); ok {
			c.add(name, 0, problem, "Move it to "+monthPath(m)+", or merge its entries into that file if it exists.")
			return
		}
		c.add(name, 0, problem, "Move its entries into the month files of their dates, episodes/YYYY-MM.md, and remove it.")
	default:
		problem := "not a month file (episodes/YYYY-MM.md, with a month from 01 to 12 and a year from 1000 to 9999)" + ignored
		if m, ok := monthOfName(stem); ok {
			c.add(name, 0, problem, "Rename it to "+monthPath(m)+", or merge its entries into that file if it exists.")
			return
		}
		c.add(name, 0, problem, "Move its entries, each a \"## \" section with a \"- Date:\" line, into the month files of their dates (episodes/YYYY-MM.md), and remove it.")
	}
}

// monthOfName reads a month from a file name's stem a person wrote loosely
// ("2026-2", "2026-02" with another extension): "2026-02", when it names a
// month the grammar has.
func monthOfName(stem string) (string, bool) {
	y, m, ok := strings.Cut(stem, "-")
	year, err1 := strconv.Atoi(y)
	month, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(y) != 4 || len(m) > 2 {
		return "", false
	}
	name := fmt.Sprintf("%04d-%02d", year, month)
	return name, paths.ValidMonth(name)
}

// unreadable reports a file or folder (p ends in "/") that cannot be read.
func (c *checker) unreadable(p string, err error) {
	what, access := "file", "read and write access to it (chmod u+rw)"
	if strings.HasSuffix(p, "/") {
		what, access = "folder", "read, write and search access to it (chmod u+rwx)"
	}
	var pe *fs.PathError
	switch {
	case errors.Is(err, errOutside) || errors.Is(err, errLinkedFolder):
		c.add(p, 0, "a symbolic link the library does not follow (it leads outside the memory directory, or is a folder below the top level), so no agent sees what it holds",
			"Replace the link with the "+what+" itself.")
	case errors.Is(err, syscall.ENOTDIR):
		c.add(p, 0, "cannot be read: a file stands where a folder belongs, so no agent sees it", "Rename or remove that file.")
	case errors.As(err, &pe):
		c.add(p, 0, "cannot be read ("+pe.Err.Error()+"), so no agent sees it", "Give the user the agent runs as "+access+".")
	default:
		c.add(p, 0, "cannot be read ("+err.Error()+"), so no agent sees it", "Give the user the agent runs as "+access+".")
	}
}

// readable reads the file at p for Check. ok is false when it is gone or
// cannot be read by a person's mistake (reported); err is a host failure.
func (c *checker) readable(ctx context.Context, p string, limit int64) (got Content, ok bool, err error) {
	got, err = c.s.b.Read(ctx, p, limit)
	switch {
	case err == nil:
		return got, true, nil
	case classify(err) == faultMissing:
		return Content{}, false, nil
	case classify(err).gone():
		c.unreadable(p, err)
		return Content{}, false, nil
	}
	return Content{}, false, err
}

// factFiles reports the configured fact files that are not listed but are
// there (a link out of the directory) when facts/ could be listed, and the
// fact files over the budget.
func (c *checker) factFiles(ctx context.Context, listed []Entry, listedOK bool) error {
	sizes := map[string]int64{}
	for _, e := range listed {
		sizes[e.Name] = e.Size
	}
	total := int64(0)
	var held []string
	for _, f := range c.s.opts.FactFiles {
		p := factPath(f.Name)
		size, ok := sizes[p]
		if !ok {
			if !listedOK {
				continue
			}
			if _, _, err := c.readable(ctx, p, 0); err != nil {
				return err
			}
			continue
		}
		total += size
		held = append(held, fmt.Sprintf("%s %s", p, thousands(int(size))))
	}
	if budget := int64(c.s.opts.FactsBudget); total > budget {
		c.add(factsDir+"/", 0,
			fmt.Sprintf("the fact files hold %s bytes together, over the %s-byte budget (%s): an agent may not add a fact until they are under it, only shorten them",
				thousands(int(total)), thousands(int(budget)), strings.Join(held, ", ")),
			fmt.Sprintf("Condense them by %s bytes or more: merge facts that say the same, drop outdated ones, keep one short line each.", thousands(int(total-budget))))
	}
	return nil
}

// worldBudget reports the world topics over Options.WorldBudget.
func (c *checker) worldBudget(entries []Entry) {
	if c.s.opts.World == nil {
		return
	}
	total := int64(0)
	for _, e := range entries {
		if paths.IsTopic(e.Name) {
			total += e.Size
		}
	}
	if budget := int64(c.s.opts.WorldBudget); total > budget {
		c.add(worldDir+"/", 0,
			fmt.Sprintf("the world topics hold %s bytes together, over the %s-byte budget: no agent may add a fact to them until they are under it, only shorten them",
				thousands(int(total)), thousands(int(budget))),
			fmt.Sprintf("Condense them by %s bytes or more: merge facts that say the same, drop outdated ones and topics no agent needs.", thousands(int(total-budget))))
	}
}

// file checks one memory file.
func (c *checker) file(ctx context.Context, t target) error {
	got, ok, err := c.readable(ctx, t.path, readLimit)
	if !ok {
		return err
	}
	p := t.path
	if cutShort(got) {
		// Only its start is read, by Check as by the agents: what a check
		// of it would find at the cut is no finding.
		c.add(p, 0, fmt.Sprintf("%s bytes, over the %s-byte limit for one memory file: agents see only its start, and no tool can change it", thousands64(got.Size), thousands(readLimit)),
			"Condense it, or split it: move old entries to other files.")
		return nil
	}
	src := got.Data
	if t.isEpisode() && !t.archived {
		c.months[t.path] = src
	}
	d := markdown.Parse(src)
	c.text(p, d)
	c.secretsIn(p, src)
	if t.root != "" {
		c.rootBody(t, d)
		return nil
	}
	c.head(t, d)
	if t.factual() {
		c.factBody(p, d)
	} else {
		c.episodeBody(t, d)
	}
	return nil
}

// text reports what checkText and checkClosed refuse in model text.
func (c *checker) text(p string, d *markdown.Doc) {
	src := d.Src()
	if !isText(src) {
		at := 0
		for at < len(src) {
			r, n := utf8.DecodeRune(src[at:])
			if r == 0 || r == utf8.RuneError && n == 1 {
				break
			}
			at += n
		}
		c.add(p, lineAt(src, at), "holds bytes that are not text (a NUL byte or invalid UTF-8): agents see them as \uFFFD and cannot patch the file",
			"Save the file as UTF-8 text, without the stray bytes.")
	}
	if i := loneCRAt(src); i >= 0 {
		c.add(p, lineAt(src, i), `holds a carriage return (\r) that does not end a line with \n: markdown readers take it for a line break and the library does not, and agents cannot patch around it`,
			`Save the file with \n (or \r\n) line endings.`)
	}
	line := 0
	for l := range bytes.Lines(src) {
		line++
		if n := markdown.Nesting(string(l)); n > maxNesting {
			c.add(p, line, fmt.Sprintf("nests lists or blockquotes %d levels deep, more than the %d an agent may write: it cannot write the file whole", n, maxNesting),
				"Flatten the nesting.")
			break
		}
	}
	if !markdown.Closed(src) {
		c.add(p, lineAt(src, d.Blocks[len(d.Blocks)-1]), "the file ends inside an open block that starts here or inside the block starting here (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>): every append to the file is refused, as the text added would fall inside it",
			"Close the block: end the fence with the same ``` or ~~~, the comment with -->, the HTML block with its closing tag.")
	}
}

// loneCRAt returns the offset of the first carriage return in src that does
// not end a line, or -1.
func loneCRAt(src []byte) int {
	for i, b := range src {
		if b == '\r' && (i+1 == len(src) || src[i+1] != '\n') {
			return i
		}
	}
	return -1
}

// lineAt returns the 1-based line of the byte at offset at.
func lineAt(src []byte, at int) int { return 1 + bytes.Count(src[:at], []byte("\n")) }

// head reports a missing title or summary line.
func (c *checker) head(t target, d *markdown.Doc) {
	src := d.Src()
	line := 1
	if d.Title.OK {
		line = lineAt(src, d.Title.Start)
	} else {
		c.add(t.path, 1, `has no "# " title as its first line`, fmt.Sprintf("Add the line %q at the top.", "# "+c.s.title(t)))
	}
	fix := fmt.Sprintf("Add the line %q after the title (what the library would write), or a better one-line summary.", "> "+markdown.SummaryPrefix+" "+c.s.deriveSummary(t, d))
	switch {
	case !d.Summary.OK:
		c.add(t.path, line, `has no "> Summary:" line right after its title: the index an agent sees first shows nothing for it`, fix)
	case strings.TrimSpace(d.Summary.Text) == "":
		c.add(t.path, lineAt(src, d.Summary.Start), `its "> Summary:" line is empty: the index an agent sees first shows nothing for it`, fix)
	}
}

// factBody warns of text in a fact file outside its bullets: prompts hold
// it, search does not find it.
func (c *checker) factBody(p string, d *markdown.Doc) {
	var first, n int
	for _, at := range d.Blocks {
		if at < d.Body().Start || slices.ContainsFunc(d.Headings, func(h markdown.Heading) bool { return h.Start == at }) || slices.ContainsFunc(d.Items, func(it markdown.Item) bool { return it.Start == at }) {
			continue
		}
		if n == 0 {
			first = at
		}
		n++
	}
	if n == 0 {
		return
	}
	problem := `text that is not a "- " bullet: it goes into prompts with the file, but memory_search does not find it`
	if n > 1 {
		problem += fmt.Sprintf(" (and %d more such blocks after it)", n-1)
	}
	c.warn(p, lineAt(d.Src(), first), problem, `Write each fact as a "- " bullet line, such as "- Language: prefers Chinese".`)
}

// episodeBody reports text outside entries and entries that are not
// dated within the file's month.
func (c *checker) episodeBody(t target, d *markdown.Doc) {
	src := d.Src()
	inEntry := func(at int) bool {
		return slices.ContainsFunc(d.Entries, func(e markdown.Entry) bool { return e.Start <= at && at < e.End })
	}
	outside := false // the previous block was outside every entry: report a run once
	for _, at := range d.Blocks {
		if at < d.Body().Start || inEntry(at) {
			outside = false
			continue
		}
		if outside {
			continue
		}
		outside = true
		i := slices.IndexFunc(d.Headings, func(h markdown.Heading) bool { return h.Start == at })
		switch {
		case i >= 0 && d.Headings[i].Level == 1:
			c.add(t.path, lineAt(src, at), `a second "# " title: the text under it, up to the next "## " heading, is in no entry, so search never finds it`,
				`Make it a "## " entry heading with a "- Date:" line, or remove it.`)
		case i >= 0:
			c.add(t.path, lineAt(src, at), fmt.Sprintf(`a level-%d heading outside any entry: entries start with "## ", so this and the text under it are in no entry, and search never finds them`, d.Headings[i].Level),
				`Make it a "## " entry heading with a "- Date:" line, or move it under an entry.`)
		default:
			c.add(t.path, lineAt(src, at), `text before the first "## " entry is in no entry, so search never finds it`,
				`Put it under a "## " heading that names the task, with a "- Date:" line, or remove it.`)
		}
	}
	for _, e := range d.Entries {
		if e.Title == "" {
			c.add(t.path, e.Line, `the entry's "## " heading is empty`, "Name the task in the heading.")
		}
		example := fmt.Sprintf("- Date: %s-DD", t.month)
		switch {
		case e.Date == "":
			c.add(t.path, e.Line, `the entry has no "- Date:" line: it never shows among the latest entries, and searches by date leave it out`,
				fmt.Sprintf("Add the line %q under its heading, with the day the task happened.", example))
		case !validDate(e.Date):
			c.add(t.path, dateLine(d, e), fmt.Sprintf("the entry's date %q is not written YYYY-MM-DD, so the entry counts as undated: it never shows among the latest entries, and searches by date leave it out", cut(printable(e.Date), 40)),
				fmt.Sprintf("Write it as %q.", example))
		case e.Date[:7] != t.month:
			c.add(t.path, dateLine(d, e), fmt.Sprintf("the entry is dated %s, outside %s, the month of this file: entries are kept in the file of their month, and compaction condenses them with it", e.Date, t.month),
				fmt.Sprintf("Move the entry to %s, or correct its date.", monthPath(e.Date[:7])))
		}
	}
}

// dateLine returns the line of the entry's "- Date:" bullet, the first
// one, as Parse takes it.
func dateLine(d *markdown.Doc, e markdown.Entry) int {
	i := slices.IndexFunc(d.Items, func(it markdown.Item) bool {
		return it.Start >= e.Start && it.Start < e.End && strings.HasPrefix(it.Text, "Date:")
	})
	return d.Items[i].Line // e.Date is set: Parse found the bullet
}

// sealed reports a month's file that starts with the entries of the
// month's newest part again: a crash between a seal's two steps left them
// in both.
func (c *checker) sealed(entries []Entry) {
	newest := map[string]int{}
	g := c.s.grammar()
	for _, e := range entries {
		if p, why := g.Parse(e.Name); why == paths.OK && (p.Kind == paths.KindMonth || p.Kind == paths.KindPart) {
			newest[p.Month] = max(newest[p.Month], p.Part)
		}
	}
	for m, n := range newest {
		month, part := c.months[monthPath(m)], c.months[partPath(m, n)]
		if n == 0 || month == nil || part == nil {
			continue
		}
		if k, _ := sealedPrefix(part, month, nil); k > 0 {
			c.add(monthPath(m), markdown.Parse(month).Entries[0].Line,
				fmt.Sprintf("its first %s repeat those of %s, the month's newest part: a crash cut short the append that sealed that part", plural(k, "entry", "entries"), partPath(m, n)),
				"Delete them from this file, as the part keeps them; the month's next seal would drop them too.")
		}
	}
}

// rootBody checks persona.md or procedures.md for Store.Check.
func (c *checker) rootBody(t target, d *markdown.Doc) {
	src := d.Src()
	if t.root == personaFile {
		if len(src) > personaMax {
			c.warn(t.path, 0, fmt.Sprintf("%s bytes, over the %s bytes of it that go into prompts: the rest is cut", thousands(len(src)), thousands(personaMax)),
				"Shorten it to what defines the agent: who it is, its role, its manner.")
		}
		return
	}
	c.head(t, d)
	if len(src) > c.s.opts.ProceduresBudget {
		c.add(t.path, 0, fmt.Sprintf("%s bytes, over the %s-byte procedures budget: agents can only shorten it", thousands(len(src)), thousands(c.s.opts.ProceduresBudget)),
			"Merge related rules and drop outdated ones.")
	}
	line := strings.Count(string(src[:d.Body().Start]), "\n")
	for _, l := range strings.Split(string(src[d.Body().Start:]), "\n") {
		line++
		if strings.TrimSpace(l) != "" {
			if _, _, ok := procedure(strings.TrimRight(l, "\r")); !ok {
				c.warn(t.path, line, `not a rule in the form "- When <situation>: <action>": memory_search does not find it as one`,
					"Rewrite it as such a line, for example \""+procedureExample+"\", or move it to the file where it belongs.")
			}
		}
	}
}

// history reports a history that is inconsistent: of each log under
// .history/ (the shared world's logs of its topics too), a line that is
// not a record, a version its file had that the log cannot rebuild, a log
// larger than the library reads, and, as a warning, a log of no memory
// file of this store. A file changed outside the library since its last
// record is no finding: its next change records it.
func (c *checker) history(ctx context.Context) error {
	dirs := []string{paths.HistoryDir}
	if c.s.opts.World != nil {
		dirs = append(dirs, paths.HistoryDir+"/"+worldDir)
	}
	for _, dir := range dirs {
		entries, err := c.s.b.List(ctx, dir)
		if err != nil {
			if classify(err) != faultPerson && classify(err) != faultMissing {
				return err
			}
			continue
		}
		for _, e := range entries {
			p, ok := logPath(e.Name)
			if paths.InWorld(p) != (dir != paths.HistoryDir) {
				continue // the shared world's, listed from its own backend
			}
			if _, err := c.s.resolve("read", p); !ok || err != nil {
				c.warn(e.Name, 0, "not the history of a memory file of this store (.history/<path>/<segment>.log, for a path the library uses), so the library never reads it",
					"Nothing to do if it is the history of a file no longer used (a fact file taken out of Options.FactFiles); otherwise remove it.")
				continue
			}
			if err := c.log(ctx, e, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// log checks the log e, the history of the memory file at p.
func (c *checker) log(ctx context.Context, e Entry, p string) error {
	name := e.Name
	if n, _ := segNumber(strings.TrimSuffix(path.Base(name), ".log")); n == segCeiling-1 {
		c.add(name, 0, "the history of "+p+" is at the last segment a log may have: "+p+" takes no change until that file is moved away (the library numbers a log's segments from 1, and pruning leaves it a few)",
			"Move "+name+" out of .history/, keeping it if its versions matter.")
	}
	limit := c.s.logLimit()
	if e.Size <= limit {
		got, ok, err := c.readable(ctx, name, limit)
		if err != nil || !ok {
			return err
		}
		e.Size = got.Size
		if !cutShort(got) {
			return c.records(ctx, name, p, got.Data)
		}
	}
	c.add(name, 0, fmt.Sprintf("the history of %s is %s bytes, more than the %s the library reads of a log: the versions it records cannot be read or restored (the changes of %s since are recorded in segments of their own)", p, thousands64(e.Size), thousands64(limit), p),
		"Move it out of .history/ (keep it if its old versions matter): the library starts a new history of "+p+" at its next change.")
	return nil
}

// records checks the records of the log at name, the history of the
// memory file at p.
func (c *checker) records(ctx context.Context, name, p string, log []byte) error {
	// Line by line, to say which line.
	var records []journal.Record
	var lines []int
	n := 0
	for data := log; len(data) > 0; {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // a last line a crash cut: the library skips it, and the next record starts a line of its own
		}
		line := data[:i+1]
		data = data[i+1:]
		n++
		rs, errs := journal.Decode(line)
		if len(errs) > 0 && !journal.Cut(line) {
			c.add(name, n, "line "+strconv.Itoa(n)+" of the history of "+p+" is not a record (it was edited): the library skips it, so the version it recorded cannot be read back",
				"Put the log back from a backup: a log is written only by the library.")
		}
		for _, r := range rs {
			records = append(records, r)
			lines = append(lines, n)
		}
	}
	current, err := c.s.currentVersion(ctx, p)
	if err != nil {
		return err
	}
	var prev, prevData []byte // the version before, as the last record rebuilt it
	var prevVersion string
	for _, i := range journal.Landed(records, current) {
		r := records[i]
		if r.New == "" {
			continue
		}
		data, err := journal.Content(records, r.New)
		if err != nil {
			c.add(name, lines[i], fmt.Sprintf("the version %s of %s, recorded %s, cannot be rebuilt from its history (%v): it cannot be read back or restored", r.New, p, r.Time.Format(time.RFC3339), err),
				"Put the log back from a backup if that version matters; otherwise leave it: the library keeps recording, and drops the version when it prunes the log.")
			continue
		}
		prev = nil
		if r.Old != "" && r.Old == prevVersion {
			prev = prevData
		} else if r.Old != "" {
			prev, _ = journal.Content(records, r.Old)
		}
		c.secretsInVersion(name, lines[i], p, r, prev, data)
		prevVersion, prevData = r.New, data
	}
	return nil
}

// secretsIn reports the credentials' values in src, the content of the
// memory file at p: the line and the kind, never the value.
func (c *checker) secretsIn(p string, src []byte) {
	fix := "Revoke the credential if it is real: it has been exposed. Replace the value with where it is kept ('mdmemory edit " + p + "'), then remove it from the history too with 'mdmemory forget' and the value."
	if strings.HasPrefix(p, episodesDir+"/"+archiveDir+"/") {
		fix = "Revoke the credential if it is real: it has been exposed. Remove it with 'mdmemory forget' and the value: an archived original is read only."
	}
	for _, f := range c.s.secrets(string(src)) {
		c.add(p, lineAt(src, f.Start), fmt.Sprintf("holds %s: a credential's value, which goes with the memory into every prompt, sync and backup, and into the history of the file", f.Kind), fix)
	}
}

// secretsInVersion reports the credentials' values that the recorded
// version data of the memory file at p added to prev, the version before
// (nil when none): each once, in the version that brought it. name and
// line are the log and the record's line in it.
func (c *checker) secretsInVersion(name string, line int, p string, r journal.Record, prev, data []byte) {
	for _, f := range c.s.addedSecrets(prev, data, false) {
		c.add(name, line, fmt.Sprintf("the version %s of %s, recorded %s, holds %s on its line %d: the history keeps it, readable and restorable, for as long as it keeps the version",
			r.New, p, r.Time.Format(time.RFC3339), f.Kind, lineAt(data, f.Start)),
			"Revoke the credential if it is real: it has been exposed. Remove it from the history, and from the file if it is still there, with 'mdmemory forget' and the value.")
	}
}
