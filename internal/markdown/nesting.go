package markdown

import (
	"bytes"
	"strings"
)

// How deep containers nest. A blockquote or list opened inside another
// costs goldmark a scan of the rest of the line for every container open
// around it, on every line, so that nesting placed by hand ("> > > …" four
// thousand deep on one line, or lists indented a step further on each line)
// parses in time that grows with its square. No memory needs more than
// MaxNesting levels: the tools refuse text nested deeper (Nesting), and
// Parse reads the part of a line nested deeper than any memory needs as
// plain text, so that it parses in time linear in its size.

// MaxNesting bounds how deep blockquotes and lists in a memory file nest.
const MaxNesting = 32

// maxPrefixSpace bounds the columns of white space in the container prefix
// of a line (before, between and after its markers) that Parse gives
// goldmark: room for MaxNesting list items with markers up to "99." and
// the four columns of an indented code block inside, which is more than
// any memory file holds. A tab counts four columns.
const maxPrefixSpace = 4 * (MaxNesting + 1)

// Nesting returns the deepest nesting of container blocks that any line of
// text opens with its prefix: '>' and list markers ("-", "*", "+", "1.",
// "1)"), the first after at most three spaces, each followed by spaces or
// tabs; a thematic break ("- - -", "* * *") ends the prefix, as it opens
// no list. It counts the markers of a line's prefix, so it may count a
// little more than CommonMark would, never less. It runs in time linear in
// the size of text.
func Nesting(text string) int {
	deepest := 0
	for line := range strings.Lines(text) {
		depth := 0
		walkPrefix(line, true, nil, func(int, int) bool { depth++; return true })
		deepest = max(deepest, depth)
	}
	return deepest
}

// walkPrefix walks the container prefix of line, one line of text: runs
// of spaces and tabs, and the container markers between them. It calls
// space, when not nil, with the offset of each space or tab, and marker
// with the offset and length of each marker, until marker returns false.
// It stops at the first byte that is neither, and at a thematic break.
// When strict, as CommonMark reads a line at the top level, the first
// marker may follow at most three spaces and no tab.
func walkPrefix[T ~string | ~[]byte](line T, strict bool, space func(int), marker func(at, n int) bool) {
	brk := thematicFrom(line)
	for i := 0; i < len(line); {
		if c := line[i]; c == ' ' || c == '\t' {
			if strict && (c == '\t' || i >= 3) {
				return
			}
			if space != nil {
				space(i)
			}
			i++
			continue
		}
		strict = false
		n := markerLen(line[i:min(len(line), i+11)])
		if n == 0 || brk(i) || !marker(i, n) {
			return
		}
		i += n
	}
}

// markerLen returns the length of the container marker s starts with: ">",
// or a list marker followed by a space, a tab or the end of the line; 0
// when it starts with none.
func markerLen[T ~string | ~[]byte](s T) int {
	if len(s) == 0 {
		return 0
	}
	if s[0] == '>' {
		return 1
	}
	n := 0
	switch s[0] {
	case '-', '*', '+':
		n = 1
	default:
		for n < len(s) && n < 9 && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		if n == 0 || n == len(s) || s[n] != '.' && s[n] != ')' {
			return 0
		}
		n++
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' && s[n] != '\n' && s[n] != '\r' {
		return 0
	}
	return n
}

// thematicFrom returns whether line, from an offset on, is a thematic
// break: three or more '-', '*' or '_' of one kind, with only spaces and
// tabs besides. It reads line once; the function it returns answers in
// constant time.
func thematicFrom[T ~string | ~[]byte](line T) func(at int) bool {
	// Back from the end: the last mark, the start of the run of the
	// line's end that holds only it and white space, and the third mark
	// from the end, the last offset from which three remain.
	var c byte
	from, third, n := len(line), -1, 0
	for i := len(line) - 1; i >= 0; i-- {
		switch b := line[i]; {
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
		case c == 0 && (b == '-' || b == '*' || b == '_'):
			c = b
			fallthrough
		case c != 0 && b == c:
			if n++; n == 3 {
				third = i
			}
		default:
			i = 0 // another byte: no break starts before it
			continue
		}
		from = i
	}
	return func(at int) bool { return c != 0 && at >= from && at <= third && line[at] == c }
}

// maxDefinitions bounds the lines that may start a link reference
// definition ("[label]: destination") in one paragraph. goldmark takes
// the definitions out of a paragraph one at a time, copying the lines
// after each, in time that grows with the square of their number: a 1 MiB
// file of "[a]: b" lines took 24 s to parse. No memory needs more than a
// few in a row.
const maxDefinitions = 32

// capNesting returns src as Parse gives it to goldmark: src itself, unless
// a line's container prefix nests deeper than MaxNesting or holds more
// than maxPrefixSpace columns of white space, or more than maxDefinitions
// lines in a row start with '[' after their prefix. A line nested too deep
// keeps its first MaxNesting markers, and the marker after them becomes a
// '\' that starts plain text; the white space past maxPrefixSpace columns
// moves to the end of the line. A line that starts with '[', past the
// first maxDefinitions of a paragraph (the lines since a blank line or a
// list item's marker), has its '[' made a '\', so that it is the text of
// the paragraph, not a definition; a definition starts only at the start
// of a line, so that a paragraph holds at most maxDefinitions. Every line
// keeps its length, so the offsets goldmark reports are offsets in src,
// and every other line is left as it is. Unlike Nesting, it counts a
// marker after any white space, as a container's content may be indented
// by more than three spaces.
func capNesting(src []byte) []byte {
	var out, buf []byte
	defs := 0 // lines of this paragraph that start with '['
	for start := 0; start < len(src); {
		end := len(src)
		if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
			end = start + i
		}
		body := end
		if body > start && src[body-1] == '\r' {
			body--
		}
		line := src[start:body]
		if capped, ok := capLine(line, &buf); ok {
			if out == nil {
				out = bytes.Clone(src)
			}
			copy(out[start:], capped)
			line = capped
		}
		at, item := afterPrefix(line)
		switch {
		case at == len(line) || len(bytes.Trim(line[at:], " \t")) == 0:
			defs = 0 // a blank line ends the paragraph
		case item:
			defs = 0 // a list item starts one
		}
		if at < len(line) && line[at] == '[' {
			if defs++; defs > maxDefinitions {
				if out == nil {
					out = bytes.Clone(src)
				}
				out[start+at] = '\\'
			}
		}
		start = end + 1
	}
	if out == nil {
		return src
	}
	return out
}

// capLine returns line, without its line ending, as capNesting changes it,
// in *buf, and whether it changed it.
func capLine(line []byte, buf *[]byte) ([]byte, bool) {
	// A pass that only looks, so that the lines left as they are, nearly
	// all, cost no copy.
	cols, depth, over := 0, 0, false
	walkPrefix(line, false, func(i int) {
		cols += columns(line[i])
		over = over || cols > maxPrefixSpace
	}, func(int, int) bool {
		depth++
		over = over || depth > MaxNesting
		return !over
	})
	if !over {
		return nil, false
	}
	out := (*buf)[:0]
	cols, depth, moved, rest := 0, 0, 0, 0
	walkPrefix(line, false, func(i int) {
		if cols += columns(line[i]); cols > maxPrefixSpace {
			moved++
		} else {
			out = append(out, line[i])
		}
		rest = i + 1
	}, func(i, n int) bool {
		if depth++; depth > MaxNesting {
			// A backslash starts no block: from here on, the line is the
			// text of a paragraph.
			out = append(out, '\\')
			rest = i + 1
			return false
		}
		out = append(out, line[i:i+n]...)
		rest = i + n
		return true
	})
	out = append(out, line[rest:]...)
	out = append(out, bytes.Repeat([]byte{' '}, moved)...)
	*buf = out
	return out, true
}

// afterPrefix returns the offset in line of the first byte after its
// container prefix, and whether the prefix holds a list item's marker.
func afterPrefix(line []byte) (at int, item bool) {
	walkPrefix(line, false, func(i int) { at = i + 1 }, func(i, n int) bool {
		item = item || line[i] != '>'
		at = i + n
		return true
	})
	return at, item
}

// columns is how many columns a space or tab counts for in a prefix.
func columns(c byte) int {
	if c == '\t' {
		return 4
	}
	return 1
}
