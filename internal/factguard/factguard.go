// Package factguard decides whether a change of a fact file adds a line
// that is not a lasting fact or that says again what the facts say: lines
// in, a refusal out. It reads no file and words no message: the memory
// package gathers the files and words the [Refusal] for the model.
//
// Facts are lasting truths loaded into every prompt, so a change of a fact
// file is refused when a line it adds
//
//   - is worded as temporary: "this time", "for now", "just today",
//     "temporarily", "for this task", "这次", "暂时", "今天先", "先不" and the
//     like (see temporaryPhrases): an instruction for one task is not a fact
//     ([Temporary]);
//   - has the text of a line of the file or of the other files compared
//     ([Repeat]);
//   - restates the key of a line of the same file ("- Language: English"
//     when a "- Language: …" line is there): a fact that changed replaces its
//     line instead of piling up beside it ([KeyRestated]). A key is a list,
//     and another line with it allowed, when the file held it on two or more
//     lines already, or when it names what a person has many of
//     (colleagues, friends, children, lessons, …; see listKey);
//   - says again nearly what a line says: more than 70% of the two lines'
//     words in common (Jaccard similarity of their sets of search terms, so
//     that "reviews" and "reviewed" compare as the search matches them;
//     Chinese by its characters), every word of one in the other (a line
//     that swaps a word, "Father lives in Hangzhou" beside "Mother lives in
//     Hangzhou", states another fact), the same numbers in the same order,
//     and the same small words of order and quantity ("before", "all":
//     "prefers Chinese for all conversations" says more than "prefers
//     Chinese conversation"; see orderWords) ([NearRepeat]).
//
// Only what a change adds is checked: the lines of the new content that
// were not in the file before, so that a change that keeps a person's
// questionable line as it is, or condenses the file, is not held up by
// it, and a change that only removes or reorders lines always passes. The
// lines one change adds are not compared with each other: a list written
// at once is a list.
//
// A fact line is a top-level list item of the file's body, its nested and
// wrapped lines included, or one line of a top-level paragraph; headings,
// the title and summary, code blocks, HTML and blockquotes are not facts,
// nor is a line with no word in it ("---").
//
// A [File] is one version of a fact file, its lines described and, on
// first use, indexed by their words, so that a caller that keeps the Files
// of the versions it has seen compares a new line with only the lines that
// share a word with it, without reading the facts again.
package factguard

import (
	"strings"
	"sync"

	"github.com/mdmemory/memory/internal/markdown"
)

// MaxPairs bounds the pairs of lines one [Change.Check] compares for near
// repeats, counted as if every added line were compared with every line of
// every file in order: a change of a person's oversized file may check
// fewer. The checks that cost one look-up a line (the same text, a key)
// apply to every line.
const MaxPairs = 1 << 18

// nearRepeat is the share of words two lines have in common (Jaccard
// similarity of their sets of search terms) over which one repeats the
// other.
const nearRepeat = 0.7

// A Line is one fact of a fact file.
type Line struct {
	Num   int    // 1-based line in its file
	Src   string // its text as in the file, trimmed: what tells old lines from new
	First string // its first line without the list marker: what is quoted, and keyed

	norm  string   // its text without list markers, lower-cased, spaces collapsed
	key   string   // the key of "Key: value", normalised; "" when it has none
	terms []string // the search terms of its text, sorted, each once
	small string   // its words of order and quantity (orderWords, quantityWords), sorted
	nums  string   // the numbers in its text, in order ("3 15" for "room 3 from March 15")
	at    [3]int32 // where First, norm and key are in Src, or -1 where Src does not hold them
}

// Lines returns the fact lines of a fact file's content, in order.
func Lines(src []byte) []Line {
	var lines []Line
	if len(src) > 0 {
		lines = split(markdown.Parse(src), string(src), 0)
	}
	for i := range lines {
		lines[i].describe()
	}
	return lines
}

// A File is one version of a fact file: its fact lines and, made on first
// use, an index of their texts, keys and words. A File is safe for
// concurrent use.
type File struct {
	Path  string // the file's path, as a Refusal names it
	Lines []Line // its fact lines, in order

	src  string // the content it was made from
	base *index // until the index is made: the earlier version's whole index, when f adds lines to that version
	once sync.Once
	ix   *index
}

// An index is what a File's lines are looked up by. A whole index holds
// every line. The index of a version made by adding lines after those of
// an earlier one, as an append does, holds only the lines from off on,
// beside base, the whole index of the earlier version's lines (shared
// with that version, and with the versions after it until one indexes
// more than maxAdded lines of its own: that one is indexed whole); its
// look-ups consult both, and answer as one index of all the lines would.
// A shared base keeps the texts of the version it was made for, one
// version's content, until the versions sharing it are dropped.
type index struct {
	texts [2]chains        // the lines by Src (srcText) and by norm (normText)
	keys  map[string]int32 // key → its line when one line holds it, -1 when more do
	terms map[string]int32 // term → its number, t
	start []int32          // the lines holding term t are post[start[t]:start[t+1]]
	post  []int32

	base *index // the whole index of the lines before off; nil for a whole index
	off  int32  // the first line this index holds
	all  []Line // the File's lines, when base is not nil
}

// chains maps one text of the lines to the first line with it, and links
// each line to the next one with the same text.
type chains struct {
	first map[string]int32 // text → the first line with it
	next  []int32          // next[i-off] is the next line after line i with its text, or -1
}

// The texts of a line an index chains.
const (
	srcText  = 0 // Src
	normText = 1 // norm
)

// text returns the text k of l.
func text(l *Line, k int) string {
	if k == srcText {
		return l.Src
	}
	return l.norm
}

// maxAdded returns how many lines of its own, at most, the index of a
// version of n lines holds beside an earlier version's: past it, the
// version is indexed whole. Each version of a chain of appends indexes
// again the lines its base does not hold, half the bound on average, and
// one version in about the bound indexes all n: 8 + n/16 keeps both to a
// few percent of a whole index for each version of a fact file (for 200
// lines: 20 lines, and 200 every 20 versions).
var maxAdded = func(n int) int { return 8 + n/16 }

// Parse returns the File of content src at path. prev, when not nil, is
// an earlier version of the file: the lines of src it has, the same text,
// take their description from it rather than from the tokenizer, so that
// a version that adds one line costs the parse and that line.
func Parse(path string, src []byte, prev *File) *File {
	if len(src) == 0 {
		return FromDoc(path, nil, prev)
	}
	return FromDoc(path, markdown.Parse(src), prev)
}

// FromDoc returns what Parse(path, d.Src(), prev) returns, its lines split
// from d rather than from a parse of its source: a caller that has the
// Doc of the content, as an append does, parses it once. d nil is empty
// content.
func FromDoc(path string, d *markdown.Doc, prev *File) *File {
	f := &File{Path: path}
	hint := 0
	if prev != nil {
		hint = len(prev.Lines) + 4
	}
	if d != nil {
		f.src = string(d.Src())
		f.Lines = split(d, f.src, hint)
	}
	var pix *index
	same := 0 // the lines f starts with as prev does, the same texts
	if prev != nil && len(prev.Lines) > 0 {
		pix = prev.index()
		for same < len(prev.Lines) && same < len(f.Lines) && f.Lines[same].Src == prev.Lines[same].Src {
			same++
		}
		if same == len(prev.Lines) {
			// f adds lines to prev: its index will hold those alone.
			f.base = pix
			if pix.base != nil {
				f.base = pix.base
			}
		}
	}
	for i := range f.Lines {
		l := &f.Lines[i]
		j := int32(i)
		if i >= same {
			ok := false
			if pix != nil {
				j, ok = pix.first(srcText, l.Src)
			}
			if !ok {
				l.describe()
				continue
			}
		}
		// Its description from prev, its texts taken from its own Src
		// where they are part of it, so that f holds no string of prev's
		// content.
		p := &prev.Lines[j]
		l.First, l.norm, l.key = part(p.First, l.Src, p.at[0]), part(p.norm, l.Src, p.at[1]), part(p.key, l.Src, p.at[2])
		l.terms, l.small, l.nums, l.at = p.terms, p.small, p.nums, p.at
	}
	return f
}

// Is reports whether f was made from the content src.
func (f *File) Is(src []byte) bool { return f.src == string(src) }

// index returns f's index, made on first use: beside the index of the
// earlier version f adds lines to, when it has one (see index).
func (f *File) index() *index {
	f.once.Do(func() {
		base := f.base
		f.base = nil
		if base != nil && len(f.Lines)-len(base.texts[srcText].next) <= maxAdded(len(f.Lines)) {
			f.ix = build(f.Lines, len(base.texts[srcText].next), base)
			return
		}
		f.ix = build(f.Lines, 0, nil)
	})
	return f.ix
}

// build returns the index of lines from off on, beside base, the whole
// index of the lines before off (nil when off is 0).
func build(lines []Line, off int, base *index) *index {
	n := len(lines) - off
	ix := &index{base: base, off: int32(off)}
	if base != nil {
		ix.all = lines
	}
	for k := range ix.texts {
		c := &ix.texts[k]
		c.first = make(map[string]int32, n)
		c.next = make([]int32, n)
		for i := len(lines) - 1; i >= off; i-- {
			s := text(&lines[i], k)
			if j, ok := c.first[s]; ok {
				c.next[i-off] = j
			} else {
				c.next[i-off] = -1
			}
			c.first[s] = int32(i)
		}
	}
	ix.keys = make(map[string]int32, n)
	count := 0
	for i := off; i < len(lines); i++ {
		l := &lines[i]
		if _, ok := ix.keys[l.key]; ok {
			ix.keys[l.key] = -1
		} else {
			ix.keys[l.key] = int32(i)
		}
		count += len(l.terms)
	}
	// The lines of each term, grouped by term in one slice.
	ix.terms = make(map[string]int32, n)
	ids := make([]int32, 0, count)
	sizes := make([]int32, 0, n)
	for i := off; i < len(lines); i++ {
		for _, t := range lines[i].terms {
			id, ok := ix.terms[t]
			if !ok {
				id = int32(len(sizes))
				ix.terms[t] = id
				sizes = append(sizes, 0)
			}
			sizes[id]++
			ids = append(ids, id)
		}
	}
	ix.start = make([]int32, len(sizes)+1)
	for t, c := range sizes {
		ix.start[t+1] = ix.start[t] + c
	}
	ix.post = make([]int32, count)
	fill := sizes[:0]
	fill = append(fill, ix.start[:len(sizes)]...)
	k := 0
	for i := off; i < len(lines); i++ {
		for range lines[i].terms {
			id := ids[k]
			ix.post[fill[id]] = int32(i)
			fill[id]++
			k++
		}
	}
	return ix
}

// part returns the text s of a line whose Src is src, at in src (see
// Line.at), or s where src does not hold it.
func part(s, src string, at int32) string {
	if at < 0 {
		return s
	}
	return src[at : int(at)+len(s)]
}

// first returns the first line whose text k is s.
func (ix *index) first(k int, s string) (int32, bool) {
	if ix.base != nil {
		if i, ok := ix.base.texts[k].first[s]; ok {
			return i, true
		}
	}
	i, ok := ix.texts[k].first[s]
	return i, ok
}

// next returns the next line after line i with its text k, or -1.
func (ix *index) next(k int, i int32) int32 {
	if i >= ix.off {
		return ix.texts[k].next[i-ix.off]
	}
	if j := ix.base.texts[k].next[i]; j >= 0 {
		return j
	}
	if j, ok := ix.texts[k].first[text(&ix.all[i], k)]; ok {
		return j
	}
	return -1
}

// key returns the line holding key k, -1 when more do; false when none.
func (ix *index) key(k string) (int32, bool) {
	i, ok := ix.keys[k]
	if ix.base != nil {
		if j, found := ix.base.keys[k]; found {
			if ok {
				return -1, true
			}
			return j, true
		}
	}
	return i, ok
}

// lines returns the lines holding term t, in order, in two parts: those
// before off (from base) and those from off on.
func (ix *index) lines(t string) (before, after []int32) {
	if ix.base != nil {
		_, before = ix.base.lines(t) // a whole index: all in its second part
	}
	if id, ok := ix.terms[t]; ok {
		after = ix.post[ix.start[id]:ix.start[id+1]]
	}
	return before, after
}

// A Change is a change of a fact file from one version to another: the
// lines it adds, and which lines of the version before it keeps.
type Change struct {
	Added []Line // the lines of the new version that were not in the old, in order

	before *File
	kept   []int32 // the lines of before kept, in the order of the new version
	rank   []int32 // rank[i] is the place of before's line i in kept, or -1
}

// Diff returns the change from the version before (nil for a new file) to
// after. A line of after is kept when before had a line with the same text
// that no earlier line of after was matched with; the others are added.
// The lines kept are compared with what is added under their numbers in
// before, which are those of the file as the writer saw it.
func Diff(before, after *File) *Change {
	if before == nil {
		before = &File{Path: after.Path}
	}
	c := &Change{before: before}
	if len(before.Lines) == 0 {
		c.Added = after.Lines
		return c
	}
	ix := before.index()
	c.rank = make([]int32, len(before.Lines))
	for i := range c.rank {
		c.rank[i] = -1
	}
	c.kept = make([]int32, 0, min(len(before.Lines), len(after.Lines)))
	// The lines the two versions start with alike are kept, each for the
	// line of before at its place: the first not matched with its text,
	// as below, without a look-up. An append keeps them all.
	p := 0
	for p < len(before.Lines) && p < len(after.Lines) && before.Lines[p].Src == after.Lines[p].Src {
		c.rank[p] = int32(p)
		c.kept = append(c.kept, int32(p))
		p++
	}
	// cur[h] is 2 + the next line not matched yet with the text of line
	// h, the first line with it (1 when none is left); 0 before the first
	// match.
	var cur []int32
	for _, a := range after.Lines[p:] {
		h, ok := ix.first(srcText, a.Src)
		if !ok {
			c.Added = append(c.Added, a)
			continue
		}
		if cur == nil {
			cur = make([]int32, len(before.Lines))
		}
		j := h
		if cur[h] != 0 {
			j = cur[h] - 2
		}
		for j >= 0 && j < int32(p) {
			j = ix.next(srcText, j) // matched at its place above
		}
		if j < 0 {
			c.Added = append(c.Added, a)
			continue
		}
		c.rank[j] = int32(len(c.kept))
		c.kept = append(c.kept, j)
		cur[h] = ix.next(srcText, j) + 2
	}
	return c
}

// Kind is what a [Refusal] refuses.
type Kind int

// The kinds of refusal.
const (
	Temporary   Kind = iota + 1 // the line is worded as temporary (Refusal.Phrase)
	Repeat                      // the line's text is that of a line there
	KeyRestated                 // the line restates the key of a line of the same file
	NearRepeat                  // the line nearly repeats a line there
)

// A Refusal says why a change is refused: which line it adds, and the line
// there it collides with.
type Refusal struct {
	Kind   Kind
	Line   Line   // the new line
	Phrase string // Temporary: the wording that marks it
	Path   string // the file of Other (for KeyRestated, the file changed)
	Other  Line   // the line there it repeats, or whose key it restates
}

// Temporary returns the refusal of the first line c adds that is worded
// as temporary, or nil.
func (c *Change) Temporary() *Refusal {
	for _, a := range c.Added {
		if phrase := temporary(a.norm); phrase != "" {
			return &Refusal{Kind: Temporary, Line: a, Phrase: phrase}
		}
	}
	return nil
}

// Check returns the refusal of the change c, or nil: its first added line
// worded as temporary, else its first added line that repeats, or nearly
// repeats, a line of the file kept by c or of others, in that order, or
// restates the key of a line of the file. Lines with no word are not
// facts and pass. others are the other files c's lines are compared with,
// in the order their lines count against MaxPairs.
func (c *Change) Check(others ...*File) *Refusal {
	if r := c.Temporary(); r != nil {
		return r
	}
	b := c.before
	bix := b.index()
	oix := make([]*index, len(others))
	base := make([]int, len(others)+1) // the place of each file's first line after the kept lines
	base[0] = len(c.kept)
	for j, f := range others {
		oix[j] = f.index()
		base[j+1] = base[j] + len(f.Lines)
	}
	n := base[len(others)] // the lines compared with each added line
	var hits []int32       // by place: the terms a line shares with the added line
	var touched []int      // the places hits counts
	k := 0                 // the added lines compared so far
	for _, a := range c.Added {
		if len(a.terms) == 0 {
			continue // no word: not a fact
		}
		if r := c.repeat(a, others, oix); r != nil {
			return r
		}
		if a.key != "" {
			if i, ok := bix.key(a.key); ok && i >= 0 && c.rank[i] >= 0 && !listKey(a) {
				return &Refusal{Kind: KeyRestated, Line: a, Path: b.Path, Other: b.Lines[i]}
			}
		}
		// The pairs are counted as if a were compared with every line in
		// order: place p of added line k is pair k*n+p+1.
		limit := MaxPairs - k*n
		k++
		if limit <= 0 || n == 0 {
			continue
		}
		if hits == nil {
			hits = make([]int32, n)
		}
		touched = touched[:0]
		count := func(p int) {
			if p < limit {
				if hits[p] == 0 {
					touched = append(touched, p)
				}
				hits[p]++
			}
		}
		for _, t := range a.terms {
			kept, added := bix.lines(t)
			for _, part := range [2][]int32{kept, added} {
				for _, i := range part {
					if r := c.rank[i]; r >= 0 {
						count(int(r))
					}
				}
			}
			for j, ix := range oix {
				before, after := ix.lines(t)
				for _, part := range [2][]int32{before, after} {
					for _, i := range part {
						count(base[j] + int(i))
					}
				}
			}
		}
		best, bestPath, bestLine := -1, "", (*Line)(nil)
		for _, p := range touched {
			common := int(hits[p])
			hits[p] = 0
			if best >= 0 && p > best {
				continue
			}
			path, l := c.at(p, others, base)
			if near(&a, l, common) {
				best, bestPath, bestLine = p, path, l
			}
		}
		if best >= 0 {
			return &Refusal{Kind: NearRepeat, Line: a, Path: bestPath, Other: *bestLine}
		}
	}
	return nil
}

// repeat returns the refusal of a when a line kept or a line of others
// has its text: the first in order.
func (c *Change) repeat(a Line, others []*File, oix []*index) *Refusal {
	b := c.before
	bix := b.index()
	if i, ok := bix.first(normText, a.norm); ok {
		best := int32(-1)
		for ; i >= 0; i = bix.next(normText, i) {
			if r := c.rank[i]; r >= 0 && (best < 0 || r < c.rank[best]) {
				best = i
			}
		}
		if best >= 0 {
			return &Refusal{Kind: Repeat, Line: a, Path: b.Path, Other: b.Lines[best]}
		}
	}
	for j, ix := range oix {
		if i, ok := ix.first(normText, a.norm); ok {
			return &Refusal{Kind: Repeat, Line: a, Path: others[j].Path, Other: others[j].Lines[i]}
		}
	}
	return nil
}

// at returns the file and line at place p: the kept lines first, then
// the lines of others.
func (c *Change) at(p int, others []*File, base []int) (string, *Line) {
	if p < len(c.kept) {
		return c.before.Path, &c.before.Lines[c.kept[p]]
	}
	j := 0
	for base[j+1] <= p {
		j++
	}
	return others[j].Path, &others[j].Lines[p-base[j]]
}

// near reports whether a nearly repeats b, sharing common terms: the same
// numbers and small words, the terms of one all in the other, and more
// than nearRepeat of their union in common.
func near(a, b *Line, common int) bool {
	union := len(a.terms) + len(b.terms) - common
	return a.nums == b.nums && a.small == b.small && common == min(len(a.terms), len(b.terms)) &&
		union > 0 && float64(common)/float64(union) > nearRepeat
}

// split returns the fact lines of a fact file's content, in order, with
// their Num and Src only: describe fills in the rest. d is the Doc of the
// content and src the same content as a string; hint is how many lines
// it likely has (0 when not known), to size the slice once.
func split(d *markdown.Doc, src string, hint int) []Line {
	if len(src) == 0 {
		return nil
	}
	body := d.Body().Start
	out := make([]Line, 0, max(hint, len(d.Items)))
	pos, line := 0, 1 // line is the number of the line at pos; add is called in source order
	add := func(start, end int) {
		line += strings.Count(src[pos:start], "\n")
		pos = start
		out = append(out, Line{Num: line, Src: strings.TrimSpace(src[start:end])})
	}
	items, heads := d.Items, d.Headings
	for i, start := range d.Blocks {
		end := len(src)
		if i+1 < len(d.Blocks) {
			end = d.Blocks[i+1]
		}
		if start < body {
			continue
		}
		if len(items) > 0 && items[0].Start <= start {
			// A list: its items, each with its nested and wrapped lines.
			for len(items) > 0 && items[0].Start < end {
				add(items[0].Start, items[0].End)
				items = items[1:]
			}
			continue
		}
		for len(heads) > 0 && heads[0].Start < start {
			heads = heads[1:]
		}
		if len(heads) > 0 && heads[0].Start == start || !paragraph(src[start:end]) {
			continue
		}
		// A paragraph: each line is a fact, up to the blank line that
		// ends it.
		for at := start; at < end; {
			next := end
			if i := strings.IndexByte(src[at:end], '\n'); i >= 0 {
				next = at + i + 1
			}
			if strings.TrimSpace(src[at:next]) == "" {
				break
			}
			add(at, next)
			at = next
		}
	}
	return out
}
