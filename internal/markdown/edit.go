package markdown

import "bytes"

// SetHead returns the document's source with its head rewritten to
// "# title", a blank line, "> Summary: summary" and a blank line before the
// body. An existing title line is kept as written (title is used only when
// the document has none); an existing summary blockquote is replaced. Every
// byte of the body is kept. summary must be a single line.
func (d *Doc) SetHead(title, summary string) []byte {
	var b bytes.Buffer
	b.Grow(len(d.src) + len(title) + len(summary) + 24)
	body := d.src[d.Body().Start:]
	if d.Title.OK {
		b.Write(d.src[:d.Title.End])
		if d.Title.End == 0 || d.src[d.Title.End-1] != '\n' {
			b.WriteByte('\n')
		}
	} else {
		if bytes.HasPrefix(body, []byte(bom)) {
			// The mark stays first in the file, before the new title.
			b.WriteString(bom)
			body = body[len(bom):]
		}
		b.WriteString("# " + title + "\n")
	}
	b.WriteString("\n> " + SummaryPrefix + " " + summary + "\n")
	if d.quoteGoesOn {
		// The blockquote goes on after its Summary paragraph: keep it one.
		b.Write(d.src[d.Summary.End:])
	} else if rest := TrimLeadingBlankLines(body); len(rest) > 0 {
		b.WriteByte('\n')
		b.Write(rest)
	}
	return b.Bytes()
}

// TrimLeadingBlankLines drops the whole lines at the start of b that hold
// only spaces, tabs or a carriage return. A line with anything else is kept
// byte for byte, its indentation included.
func TrimLeadingBlankLines(b []byte) []byte {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if isBlank(b) {
				return b[:0]
			}
			return b
		}
		if !isBlank(b[:i]) {
			return b
		}
		b = b[i+1:]
	}
}

// TrimTrailingBlankLines drops the blank lines at the end of b and the
// newline ending its last non-blank line.
func TrimTrailingBlankLines(b []byte) []byte {
	for {
		i := bytes.LastIndexByte(b, '\n')
		if !isBlank(b[i+1:]) {
			return b
		}
		if i < 0 {
			return b[:0]
		}
		b = b[:i]
	}
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Closed reports whether every block src opens is closed by its end: a
// paragraph placed after src, past a blank line, would stand on its own
// rather than fall inside a ``` or ~~~ code fence, an HTML comment, a <pre>
// block or another block that only its end marker closes.
func Closed(src []byte) bool {
	// Only fences and HTML blocks are closed by an end marker of their own;
	// every other block ends at a blank line or the end of the source.
	if !bytes.Contains(src, []byte("```")) && !bytes.Contains(src, []byte("~~~")) && bytes.IndexByte(src, '<') < 0 {
		return true
	}
	probe := make([]byte, 0, len(src)+4)
	probe = append(probe, src...)
	if len(probe) > 0 && probe[len(probe)-1] != '\n' {
		probe = append(probe, '\n')
	}
	probe = append(probe, "\nx\n"...)
	return Parse(probe).StartsBlock(len(probe) - 2)
}
