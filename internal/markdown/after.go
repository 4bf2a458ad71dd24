package markdown

import (
	"bytes"
	"slices"
	"sort"

	"github.com/yuin/goldmark/ast"
)

// An append to a memory file adds lines after the file's last block: an
// episode entry after a blank line, a fact line that continues the file's
// tight list, a paragraph. Parsing the whole grown file again costs time
// and memory in its size, for a change of a few hundred bytes. ParseAfter
// parses only the lines added and splices their structure after the
// earlier version's, when goldmark provably reads the file as the two
// parts: every block of the earlier version is closed by what follows it
// (or, for a bullet list, continued by the first item added), and the part
// added starts where a block of its own would start in a new document.
// SetHeadDoc does the same for a change of the head: it parses the new
// head and shifts the body's structure.

// tail is what Parse records about the end of a source, which decides
// what lines appended after it can change.
type tail struct {
	// headOpen: the blocks that decide the title and summary are not both
	// there, so that a block appended may be one of them.
	headOpen bool
	// open: a code block or an HTML block is on the last block's rightmost
	// path (the blocks open at the end of the source), which may take a
	// blank line and the lines after it as its content.
	open bool
	// list is the marker of the last block when it is a bullet list ('-',
	// '*' or '+'): an item with the same marker continues it. 0 otherwise.
	list byte
}

// tailOf returns the tail of the document root, whose title and summary
// Parse looked for in first and next.
func tailOf(root, first, next ast.Node) tail {
	t := tail{headOpen: first == nil || next == nil}
	last := root.LastChild()
	if l, ok := last.(*ast.List); ok && !l.IsOrdered() {
		t.list = l.Marker
	}
	for n := last; n != nil; n = n.LastChild() {
		switch n.Kind() {
		case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock:
			t.open = true
		}
	}
	return t
}

// ParseAfter returns what Parse(src) returns. prev is the Doc of an earlier
// source P, when the caller has it (nil when not). When src is P with its
// trailing blank lines trimmed (TrimTrailingBlankLines), a newline, and
// text appended that can only stand after P's blocks (see parseAfter), it
// parses only the text appended, and takes the structure of the rest from
// prev; otherwise it parses src whole. added, when not nil, is the Doc of
// some text the caller parsed: when it is the text appended, ParseAfter
// takes it rather than parse that text again.
func ParseAfter(prev *Doc, src []byte, added *Doc) *Doc {
	if d := parseAfter(prev, src, added); d != nil {
		return d
	}
	return Parse(src)
}

// parseAfter returns Parse(src) made from prev and a parse of the text
// appended to it, or nil when it cannot show that the two parts are read
// on their own. The text appended is taken when
//
//   - P, trimmed of its trailing blank lines, is base, not empty, and src
//     is base, a newline and more; base has no byte-order mark and does not
//     end with a carriage return;
//   - P has its title and summary decided before its last block (its head
//     is not open), and no code or HTML block is open at its end, which
//     could take the lines appended as its content;
//   - the text added, after the newline and any more empty lines, starts
//     with a printable character other than a space (nor a byte-order
//     mark), so that it cannot be an indented continuation of anything nor
//     a blank line, and holds no carriage return;
//   - it is separated from base by an empty line, which closes every
//     paragraph and blockquote, or, with no empty line, it starts with an
//     item of a bullet list with the marker of the bullet list that ends
//     P, which it continues (a list item interrupts the paragraph of the
//     item before, and closes it).
//
// A bullet list added after a bullet list with the same marker continues
// it, its items becoming items of that list; any other first block of the
// text added stands after P's last block, which the empty line or the
// text's first line at column 0 closes.
func parseAfter(prev *Doc, src []byte, added *Doc) *Doc {
	if prev == nil || prev.tail.headOpen || prev.tail.open {
		return nil
	}
	base := TrimTrailingBlankLines(prev.src)
	n := len(base)
	if n == 0 || base[n-1] == '\r' || len(src) <= n+1 || src[n] != '\n' ||
		bytes.HasPrefix(base, []byte(bom)) || !bytes.Equal(src[:n], base) {
		return nil
	}
	at := n + 1
	for at < len(src) && src[at] == '\n' {
		at++
	}
	add := src[at:]
	if len(add) == 0 || add[0] <= ' ' || bytes.HasPrefix(add, []byte(bom)) || bytes.IndexByte(add, '\r') >= 0 {
		return nil
	}
	// The state capNesting carries from line to line (lines starting a
	// definition in a row) starts again at an empty line and at a list
	// item, so that capNesting(src) is capNesting(base), the empty lines
	// and capNesting(add).
	a := added
	if a == nil || !bytes.Equal(a.src, add) {
		a, _ = parse(add, capNesting(add))
	}
	merge := a.first != 0 && a.first == prev.tail.list
	if at == n+1 && !merge {
		return nil
	}

	// Spans of P end at most at the end of base's last line, n in P when
	// P ends there, n+1 in src; one that runs further took P's trailing
	// blank lines, which src has not: then bad.
	bad := false
	fix := func(sp Span) Span {
		if sp.End == n {
			sp.End = n + 1
		}
		bad = bad || sp.End > n+1
		return sp
	}
	d := &Doc{src: src, Title: prev.Title, Summary: prev.Summary, quoteGoesOn: prev.quoteGoesOn, tail: a.tail, first: prev.first}
	d.tail.headOpen = false
	if d.Title.OK {
		d.Title.Span = fix(d.Title.Span)
	}
	if d.Summary.OK {
		d.Summary.Span = fix(d.Summary.Span)
	}

	// a is the Doc of add or of a copy of it (the entry as the caller
	// parsed it): capNesting changed nothing of it when its scan is its
	// src, wherever that is.
	if sameStart(prev.scan, prev.src) && sameStart(a.scan, a.src) {
		d.scan = src
	} else {
		d.scan = make([]byte, len(src))
		copy(d.scan, prev.scan[:n])
		copy(d.scan[n:], src[n:at])
		copy(d.scan[at:], a.scan)
	}

	// Line starts: base's, then one after each newline from n on. The
	// line at `at` is the text's first: its number in src, less one, is
	// what the lines of add move by.
	k := sort.SearchInts(prev.lines, n)
	d.lines = make([]int, k, k+len(a.lines)+at-n)
	copy(d.lines, prev.lines)
	for i := n + 1; i <= at; i++ {
		d.lines = append(d.lines, i)
	}
	for _, s := range a.lines[1:] {
		d.lines = append(d.lines, s+at)
	}
	lineOff := k + at - n - 1

	d.Headings = make([]Heading, 0, len(prev.Headings)+len(a.Headings))
	for _, h := range prev.Headings {
		h.Span = fix(h.Span)
		d.Headings = append(d.Headings, h)
	}
	d.Headings = shiftHeadings(d.Headings, a.Headings, at, lineOff)

	d.Items = make([]Item, 0, len(prev.Items)+len(a.Items))
	for _, it := range prev.Items {
		it.Span = fix(it.Span)
		d.Items = append(d.Items, it)
	}
	d.Items = shiftItems(d.Items, a.Items, at, lineOff)

	blocks := a.Blocks
	if merge {
		blocks = blocks[1:] // the list goes on: no block of its own
	}
	bad = bad || len(prev.Blocks) > 0 && prev.Blocks[len(prev.Blocks)-1] >= n
	d.Blocks = make([]int, len(prev.Blocks), len(prev.Blocks)+len(blocks))
	copy(d.Blocks, prev.Blocks)
	for _, b := range blocks {
		d.Blocks = append(d.Blocks, b+at)
	}

	// The entry that ran to the end of P runs on to the first heading of
	// level 1 or 2 added, or the end of src, and takes its Summary and
	// Date from the items added before it when it had none.
	end := len(src)
	for _, h := range a.Headings {
		if h.Level <= 2 {
			end = h.Start + at
			break
		}
	}
	d.Entries = make([]Entry, 0, len(prev.Entries)+len(a.Entries))
	for _, e := range prev.Entries {
		if e.End == len(prev.src) {
			e.End = end
			for _, it := range a.Items {
				if it.Start+at >= end {
					break
				}
				if v, ok := field(it.Text, "Summary:"); ok && e.Summary == "" {
					e.Summary = v
				}
				if v, ok := field(it.Text, "Date:"); ok && e.Date == "" {
					e.Date = v
				}
			}
		} else {
			bad = bad || e.End >= n // it ends at a heading of base
		}
		d.Entries = append(d.Entries, e)
	}
	if bad {
		return nil
	}
	for _, e := range a.Entries {
		e.Start, e.End, e.Line = e.Start+at, e.End+at, e.Line+lineOff
		d.Entries = append(d.Entries, e)
	}
	d.trim()
	return d
}

// SetHeadDoc returns what SetHead returns, and its Doc: d itself when the
// head is as it was; d's, the body's structure moved to where the body now
// starts, when the new head provably leaves the body's blocks as they were
// (see headDoc); else Parse of it.
func (d *Doc) SetHeadDoc(title, summary string) ([]byte, *Doc) {
	out := d.SetHead(title, summary)
	if bytes.Equal(out, d.src) {
		return out, d // the head as it was: d is the Doc of out
	}
	if nd := d.headDoc(out); nd != nil {
		return out, nd
	}
	return out, Parse(out)
}

// headDoc returns Parse(out), where out is what SetHead returned for d,
// made from a parse of the new head and d's structure of the body, or nil
// when it cannot show that the body reads as it did. It can when
//
//   - the body holds more than blank lines, and its first line that is not
//     blank starts a top-level block of d, so that nothing before it, the
//     old head, was open there;
//   - the summary's blockquote holds only the summary (SetHead writes the
//     rest of it after the new summary line, in the same blockquote), and
//     d has no byte-order mark (which SetHead moves before a new title);
//   - capNesting changed no line of d nor of the new head: the state it
//     carries from line to line starts again at the empty line SetHead
//     writes before the body.
//
// SetHead writes the body after an empty line that closes the summary's
// blockquote, so that the body's first block starts as it would in a new
// document, and it did in d.
func (d *Doc) headDoc(out []byte) *Doc {
	if d.quoteGoesOn || bytes.HasPrefix(d.src, []byte(bom)) || !sameStart(d.scan, d.src) {
		return nil
	}
	rest := TrimLeadingBlankLines(d.src[d.Body().Start:])
	r0 := len(d.src) - len(rest)
	h := len(out) - len(rest)
	if len(rest) == 0 || h < 2 || string(out[h-2:h]) != "\n\n" {
		return nil
	}
	if _, ok := slices.BinarySearch(d.Blocks, r0); !ok {
		return nil
	}
	head := out[:h]
	hd, _ := parse(head, capNesting(head))
	// What SetHead wrote: a title and a summary, and nothing else that
	// the body's structure could hold.
	if !sameStart(hd.scan, head) || !hd.Title.OK || !hd.Summary.OK || hd.quoteGoesOn || len(hd.Entries) > 0 || len(hd.Items) > 0 ||
		len(d.Items) > 0 && d.Items[0].Start < r0 || len(d.Entries) > 0 && d.Entries[0].Start < r0 {
		return nil
	}

	shift := h - r0
	i0 := sort.SearchInts(d.lines, r0) // d.lines[i0] == r0: line i0+1
	lineOff := len(hd.lines) - i0      // the body's first line is line len(hd.lines)+1 of out
	nd := &Doc{src: out, scan: out, Title: hd.Title, Summary: hd.Summary, tail: d.tail, first: hd.first}
	nd.tail.headOpen = false

	nd.lines = make([]int, len(hd.lines), len(hd.lines)+len(d.lines)-i0)
	copy(nd.lines, hd.lines)
	for _, s := range d.lines[i0:] {
		nd.lines = append(nd.lines, s+shift)
	}
	nd.Blocks = append(make([]int, 0, len(hd.Blocks)+len(d.Blocks)), hd.Blocks...)
	for _, b := range d.Blocks {
		if b >= r0 {
			nd.Blocks = append(nd.Blocks, b+shift)
		}
	}
	nd.Headings = append(make([]Heading, 0, len(hd.Headings)+len(d.Headings)), hd.Headings...)
	j := sort.Search(len(d.Headings), func(i int) bool { return d.Headings[i].Start >= r0 })
	nd.Headings = shiftHeadings(nd.Headings, d.Headings[j:], shift, lineOff)
	nd.Items = shiftItems(make([]Item, 0, len(d.Items)), d.Items, shift, lineOff)
	nd.Entries = make([]Entry, 0, len(d.Entries))
	for _, e := range d.Entries {
		e.Start, e.End, e.Line = e.Start+shift, e.End+shift, e.Line+lineOff
		nd.Entries = append(nd.Entries, e)
	}
	nd.trim()
	return nd
}

// trim makes the empty lists of d nil, as Parse leaves them.
func (d *Doc) trim() {
	d.Headings, d.Items, d.Entries, d.Blocks = orNil(d.Headings), orNil(d.Items), orNil(d.Entries), orNil(d.Blocks)
}

// orNil returns s, or nil when s is empty.
func orNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// shiftHeadings appends to dst the headings hs moved by off bytes and
// lines lines.
func shiftHeadings(dst, hs []Heading, off, lines int) []Heading {
	for _, h := range hs {
		h.Start, h.End, h.Line = h.Start+off, h.End+off, h.Line+lines
		dst = append(dst, h)
	}
	return dst
}

// shiftItems appends to dst the items is moved by off bytes and lines
// lines.
func shiftItems(dst, is []Item, off, lines int) []Item {
	for _, it := range is {
		it.Start, it.End, it.Line = it.Start+off, it.End+off, it.Line+lines
		dst = append(dst, it)
	}
	return dst
}

// sameStart reports whether a and b start at the same byte of memory:
// whether capNesting returned its argument rather than a changed copy.
func sameStart(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}
