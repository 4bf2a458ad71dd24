// Package markdown reads the structure of memory files with goldmark's AST
// and edits them by splicing the original bytes.
//
// A memory file is a level-1 title, an optional "> Summary: …" blockquote
// right after it, and a body: bullet lines in fact files, "## " entries in
// episode files. Parse reports where each of these sits in the source as byte
// offsets of whole lines, so that an edit replaces exactly one span and leaves
// every other byte as a person wrote it. Nothing here does I/O.
package markdown

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// SummaryPrefix starts the text of a file-level summary blockquote.
const SummaryPrefix = "Summary:"

// Span is a range of whole lines in a source: [Start, End) in bytes. End
// includes the final line's newline when the source has one.
type Span struct{ Start, End int }

// Block is a located block with its plain text. OK is false when the block
// is absent, in which case the other fields are zero.
type Block struct {
	Span
	Text string
	OK   bool
}

// Heading is a heading at the top level of the document (not inside a list
// or blockquote). Start is the offset of its first line.
type Heading struct {
	Span  // the heading's lines (two for a Setext heading)
	Level int
	Line  int // 1-based
	Text  string
}

// Entry is a "## " section: its heading line through the line before the
// next top-level heading of level 1 or 2, or the end of the source.
type Entry struct {
	Span
	Line    int // 1-based line of the heading
	Title   string
	Summary string // value of a "- Summary: …" bullet in the entry, if any
	Date    string // value of a "- Date: …" bullet in the entry, if any
}

// Item is a top-level list item: its lines, nested lists and wrapped lines
// included, and the text of its first line.
type Item struct {
	Span
	Line int // 1-based
	Text string
}

// Doc is the structure of one memory file.
type Doc struct {
	Title    Block // a level-1 heading that is the first block
	Summary  Block // the "> Summary:" blockquote after the title (or first, when untitled); Text excludes the prefix
	Headings []Heading
	Entries  []Entry
	Items    []Item
	Blocks   []int // offsets of the first lines of the top-level blocks

	quoteGoesOn bool // the summary's blockquote has more after the Summary paragraph
	tail        tail // how the source ends: what text appended to it may change
	first       byte // the marker of the first block when it is a bullet list ('-', '*' or '+'); 0 otherwise

	src   []byte
	scan  []byte // src as goldmark read it: a byte-order mark turned into spaces
	lines []int  // offsets of line starts
}

// bom is the UTF-8 byte-order mark some editors (Windows Notepad) write at
// the start of a file.
const bom = "\ufeff"

// Parse reads src. It never fails: any byte sequence is some markdown. A
// byte-order mark at the start counts as indentation, so "\ufeff# User" has
// the title "User"; edits keep it where it is. The part of a line nested
// deeper than MaxNesting, and white space past 4×(MaxNesting+1) columns in
// the containers that open a line, are read as the plain text of the line
// (see capNesting), so that Parse takes time linear in the size of src
// whatever nesting a person placed in it.
func Parse(src []byte) *Doc {
	scan := src
	if bytes.HasPrefix(src, []byte(bom)) {
		// Three spaces of indentation change no block's meaning, and keep
		// every offset as it is in src.
		scan = append([]byte("   "), src[len(bom):]...)
	}
	// Nesting deeper than any memory needs is read as plain text, so that
	// parsing takes time linear in the size of src.
	d, _ := parse(src, capNesting(scan))
	return d
}

// parse reads src, which goldmark reads as scan, and returns its Doc and
// goldmark's tree of it.
func parse(src, scan []byte) (*Doc, ast.Node) {
	root := blockParser().Parse(text.NewReader(scan))
	d := &Doc{src: src, scan: scan, lines: lineStarts(src)}

	if l, ok := root.FirstChild().(*ast.List); ok && !l.IsOrdered() {
		d.first = l.Marker
	}
	first := root.FirstChild()
	for first != nil && first.Kind() == ast.KindLinkReferenceDefinition {
		first = first.NextSibling() // definitions are not content
	}
	next := first
	if h, ok := first.(*ast.Heading); ok && h.Level == 1 {
		d.Title = Block{Span: d.headingSpan(h), Text: d.text(h), OK: true}
		next = first.NextSibling()
	}
	if q, ok := next.(*ast.Blockquote); ok {
		if t, ok := d.summaryText(q); ok {
			// Only the Summary paragraph: more paragraphs a person wrote in
			// the same blockquote stay theirs.
			sp := d.blockSpan(q.FirstChild())
			sp.Start = d.lineStart(q.Pos())
			d.Summary = Block{Span: sp, Text: t, OK: true}
			d.quoteGoesOn = q.FirstChild().NextSibling() != nil
		}
	}

	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		d.Blocks = append(d.Blocks, d.lineStart(n.Pos()))
		switch n := n.(type) {
		case *ast.Heading:
			sp := d.headingSpan(n)
			d.Headings = append(d.Headings, Heading{Span: sp, Level: n.Level, Line: d.lineNo(sp.Start), Text: d.text(n)})
		case *ast.List:
			for it := n.FirstChild(); it != nil; it = it.NextSibling() {
				start := d.lineStart(it.Pos())
				end := max(d.blockSpan(it).End, d.lineEnd(start))
				d.Items = append(d.Items, Item{Span: Span{Start: start, End: end}, Line: d.lineNo(start), Text: d.firstLine(it)})
			}
		}
	}

	k := 0 // items and entries are both in source order: one pass
	for i, h := range d.Headings {
		if h.Level != 2 {
			continue
		}
		e := Entry{Span: Span{Start: h.Start, End: len(src)}, Line: h.Line, Title: h.Text}
		for _, g := range d.Headings[i+1:] {
			if g.Level <= 2 {
				e.Span.End = g.Start
				break
			}
		}
		for k < len(d.Items) && d.Items[k].Start < e.Start {
			k++
		}
		for ; k < len(d.Items) && d.Items[k].Start < e.End; k++ {
			it := d.Items[k]
			if v, ok := field(it.Text, "Summary:"); ok && e.Summary == "" {
				e.Summary = v
			}
			if v, ok := field(it.Text, "Date:"); ok && e.Date == "" {
				e.Date = v
			}
		}
		d.Entries = append(d.Entries, e)
	}
	d.tail = tailOf(root, first, next)
	return d, root
}

// HeadLen returns the length of the prefix of src that decides its title
// and summary: through the second run of non-blank lines, or all of src.
// The title and summary are the first two blocks, and a block that starts
// in that prefix and is cut by its end is still recognised for what it is,
// so Parse(src[:HeadLen(src)]) has the same Title and Summary as Parse(src)
// as long as the summary block ends within the prefix.
func HeadLen(src []byte) int {
	groups, inGroup := 0, false
	for at := 0; at < len(src); {
		next := len(src)
		if i := bytes.IndexByte(src[at:], '\n'); i >= 0 {
			next = at + i + 1
		}
		blank := isBlank(bytes.TrimSuffix(src[at:next], []byte("\n")))
		switch {
		case !blank && !inGroup:
			inGroup = true
		case blank && inGroup:
			inGroup = false
			if groups++; groups == 2 {
				return next
			}
		}
		at = next
	}
	return len(src)
}

// Src returns the source the document was parsed from.
func (d *Doc) Src() []byte { return d.src }

// Level1 reports whether the document has a level-1 heading anywhere at the
// top level.
func (d *Doc) Level1() bool {
	for _, h := range d.Headings {
		if h.Level == 1 {
			return true
		}
	}
	return false
}

// EndsWithList reports whether the last top-level block is a list: a
// list item appended on the next line continues it.
func (d *Doc) EndsWithList() bool {
	return len(d.Blocks) > 0 && len(d.Items) > 0 && d.Items[len(d.Items)-1].Start >= d.Blocks[len(d.Blocks)-1]
}

// Body returns the span after the title and summary: where the file's
// content starts, leading blank lines included.
func (d *Doc) Body() Span {
	start := 0
	if d.Title.OK {
		start = d.Title.End
	}
	if d.Summary.OK {
		start = d.Summary.End
	}
	return Span{Start: start, End: len(d.src)}
}

// field returns the value after key in s ("Date: 2026-02-01" → "2026-02-01").
func field(s, key string) (string, bool) {
	if !strings.HasPrefix(s, key) {
		return "", false
	}
	return strings.TrimSpace(s[len(key):]), true
}

// blockParser reads block structure only. Inline syntax (emphasis, links,
// code spans) never changes which blocks a file has, so it is not parsed.
// A goldmark parser is safe for concurrent use once built: its set-up runs
// once under a sync.Once and Parse keeps its state in a per-call context.
var blockParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
})

func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' && i+1 < len(src) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineStart returns the offset of the start of the line holding pos.
func (d *Doc) lineStart(pos int) int {
	pos = max(0, min(pos, len(d.src))) // goldmark gives -1 for an unknown position
	i := sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > pos }) - 1
	return d.lines[i]
}

// lineEnd returns the offset just after the newline ending the line that
// holds pos (or the end of the source).
func (d *Doc) lineEnd(pos int) int {
	pos = min(pos, len(d.src))
	if i := bytes.IndexByte(d.src[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(d.src)
}

func (d *Doc) lineNo(start int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > start })
}

// headingSpan covers an ATX heading's line, or a Setext heading's text
// lines and underline.
func (d *Doc) headingSpan(h *ast.Heading) Span {
	start := d.lineStart(h.Pos())
	end := d.lineEnd(start)
	if lines := h.Lines(); lines.Len() > 0 && !d.isATX(start) {
		end = d.lineEnd(d.lineEnd(lines.At(lines.Len() - 1).Start))
	}
	return Span{Start: start, End: end}
}

// isATX reports whether the line at start opens an ATX heading: up to three
// spaces, one to six '#', then a space, a tab or the end of the line.
func (d *Doc) isATX(start int) bool {
	line := d.scan[start:d.lineEnd(start)]
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	n := 0
	for i < len(line) && line[i] == '#' {
		i++
		n++
	}
	return n >= 1 && n <= 6 && (i == len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n')
}

// StartsBlock reports whether a top-level block or list item starts at the
// line at offset at: whether text placed there stands on its own rather
// than inside a code fence or another open block.
func (d *Doc) StartsBlock(at int) bool {
	_, ok := slices.BinarySearch(d.Blocks, at)
	return ok || slices.ContainsFunc(d.Items, func(it Item) bool { return it.Start == at })
}

// blockSpan covers a container block through the end of the last line any
// of its descendants occupies.
func (d *Doc) blockSpan(n ast.Node) Span {
	start := d.lineStart(n.Pos())
	last := start
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && c.Type() == ast.TypeBlock {
			if l := c.Lines(); l.Len() > 0 {
				last = max(last, l.At(l.Len()-1).Start)
			}
		}
		return ast.WalkContinue, nil
	})
	return Span{Start: start, End: d.lineEnd(last)}
}

// summaryText returns the text of a blockquote whose first paragraph starts
// with SummaryPrefix, without the prefix, lines joined by spaces.
func (d *Doc) summaryText(q *ast.Blockquote) (string, bool) {
	p, ok := q.FirstChild().(*ast.Paragraph)
	if !ok {
		return "", false
	}
	t, ok := field(d.text(p), SummaryPrefix)
	return t, ok
}

// text joins a block's lines with single spaces.
func (d *Doc) text(n ast.Node) string {
	lines := n.Lines()
	parts := make([]string, 0, lines.Len())
	for i := range lines.Len() {
		seg := lines.At(i)
		if s := strings.TrimSpace(string(seg.Value(d.scan))); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// firstLine returns the first line of text in a list item.
func (d *Doc) firstLine(it ast.Node) string {
	for c := it.FirstChild(); c != nil; c = c.NextSibling() {
		if l := c.Lines(); l.Len() > 0 {
			seg := l.At(0)
			return strings.TrimSpace(string(seg.Value(d.scan)))
		}
	}
	return ""
}
