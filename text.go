package memory

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/markdown"
)

// What text a memory file may hold, and what the model is shown of it.
//
// Text from the model (content, an entry, a patch's newText) is UTF-8 with
// no NUL byte, no carriage return other than in a CRLF line ending (a lone
// CR ends a line for CommonMark readers and terminals but not for the
// store, so it could forge structure), containers nested at most maxNesting
// deep, and no block left open at its end; a memory file is at most
// maxFileSize bytes. A summary is one line of printable text.
//
// A person's editor may put anything in a file. What goes to the model of
// it is made printable: a summary or title with control characters, NUL
// bytes or invalid UTF-8 is shown with each such character replaced (see
// printable), and memory_read shows a file that is not text with U+FFFD in
// place of the bytes that are not, and says so.

// maxNesting bounds how deep blockquotes and lists in model text nest:
// deeper nesting serves no memory (see markdown.MaxNesting).
const maxNesting = markdown.MaxNesting

// checkText refuses text from the model that no memory file may hold.
func checkText(op, p, what, text string) error {
	switch {
	case !utf8.ValidString(text):
		return modelErr(op, p, ErrInvalidContent, what+" is not valid UTF-8 text", "")
	case strings.IndexByte(text, 0) >= 0:
		return modelErr(op, p, ErrInvalidContent, what+" contains a NUL byte", "; memory files are plain text")
	case len(text) > maxFileSize:
		return modelErr(op, p, ErrInvalidContent, fmt.Sprintf("%s is %s bytes, over the %s-byte limit for one memory file", what, thousands(len(text)), thousands(maxFileSize)), "; keep memory condensed")
	case loneCR(text):
		return modelErr(op, p, ErrInvalidContent, what+` contains a carriage return (\r) that does not end a line with \n`, `; end lines with \n only`)
	}
	if n := markdown.Nesting(text); n > maxNesting {
		return modelErr(op, p, ErrInvalidContent, fmt.Sprintf("%s nests blockquotes or lists %d levels deep", what, n), fmt.Sprintf("; memory files keep to %d levels", maxNesting))
	}
	return nil
}

// checkClosed refuses model text that leaves a block open at its end: an
// unclosed ``` or ~~~ fence, HTML comment or <pre> block would swallow
// whatever is added after it, and every later append would be refused.
func checkClosed(op, p, what string, text []byte) error {
	if markdown.Closed(text) {
		return nil
	}
	return modelErr(op, p, ErrInvalidContent, what+" ends inside an open block (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>, <script> or <style>)",
		", so anything added after it would fall inside; close the block at its end")
}

// checkEntry holds an entry to append to the rules of model text, trims
// the blank lines around it, and parses it, a newline at its end: it must
// say something, and close every block it opens, so that what is appended
// after it stands on its own.
func checkEntry(op, p, entry string) (*markdown.Doc, error) {
	if err := checkText(op, p, "entry", entry); err != nil {
		return nil, err
	}
	body := markdown.TrimTrailingBlankLines(markdown.TrimLeadingBlankLines([]byte(entry)))
	if len(body) == 0 {
		return nil, modelErr(op, p, ErrInvalidContent, "the entry is empty", "; give the text to add")
	}
	if err := checkClosed(op, p, "the entry", body); err != nil {
		return nil, err
	}
	// Parsed ending with the newline it ends with in the file, so that
	// the append takes this parse for the text it appends.
	return markdown.Parse(append(body, '\n')), nil
}

func loneCR(text string) bool {
	for i := strings.IndexByte(text, '\r'); i >= 0; {
		if i+1 == len(text) || text[i+1] != '\n' {
			return true
		}
		next := strings.IndexByte(text[i+1:], '\r')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// The one frame every prompt puts around text memory holds: a fact file, a
// topic, an entry, a list of summaries. What a frame holds was written by
// a person, an earlier task or another agent, and is data, never
// instructions; the frame says where it starts and ends, so that no text
// inside can pass for the prompt's own.

// frameLines returns the lines that open and close a frame:
// <tag attrs version="v"> and </tag version="v">, each ending in a newline.
// v is the version (see [Version]) of the framed text or of the file it
// is the start of: a hash the text cannot contain, so nothing inside can
// forge the closing line and end the frame early. attrs, when not empty,
// starts with a space: ` path="facts/user.md"`.
func frameLines(tag, attrs, v string) (open, closing string) {
	return "<" + tag + attrs + ` version="` + v + "\">\n", "</" + tag + ` version="` + v + "\">\n"
}

// frame returns text, which ends in a newline, in its frame, versioned by
// the text itself.
func frame(tag, attrs, text string) string {
	open, closing := frameLines(tag, attrs, Version(text))
	return open + text + closing
}

// isText reports whether a file's bytes are text the model can be shown
// and patch as they are: valid UTF-8 with no NUL byte.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// shownText is a file's content as the model is shown it: as it is when it
// is text, otherwise with U+FFFD for each NUL byte and each byte that is
// not valid UTF-8.
func shownText(b []byte) string {
	if isText(b) {
		return string(b)
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// printable makes one line of text safe to show the model: invalid UTF-8
// becomes U+FFFD, and control characters, line and paragraph separators
// and NUL become spaces, with the spacing around them made single.
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unprintable) {
		return s
	}
	s = strings.Map(func(r rune) rune {
		if unprintable(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// unprintable reports the characters a one-line text may not hold: control
// characters and the Unicode line and paragraph separators.
func unprintable(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// checkSummary validates an explicit summary and returns it trimmed.
func checkSummary(op, p, summary string) (string, error) {
	switch {
	case strings.ContainsAny(summary, "\r\n\u2028\u2029"):
		return "", modelErr(op, p, ErrInvalidContent, "summary must be a single line", "; drop the line breaks")
	case !utf8.ValidString(summary) || strings.ContainsFunc(summary, unicode.IsControl):
		return "", modelErr(op, p, ErrInvalidContent, "summary contains a control character or is not UTF-8 text", "")
	}
	summary = strings.TrimSpace(summary)
	if n := utf8.RuneCountInString(summary); n > summaryArgMax {
		return "", modelErr(op, p, ErrInvalidContent, fmt.Sprintf("summary is %d characters, over the limit of %d", n, summaryArgMax), "; aim for under 10 words")
	}
	return summary, nil
}

// maxFileSize bounds any one memory file the library writes: memory files
// are read whole into prompts, and a model asking for more is mistaken.
const maxFileSize = 1 << 20

// readLimit is the most of one memory file the library reads: the write
// limit. A file a person made larger is read as its first readLimit bytes
// (whole lines), shown with a note that says so, searched by them, listed
// with its real size, reported by Check, and changed by no tool: a person
// splits or condenses it. No read of a memory file, on any backend, takes
// more.
const readLimit = maxFileSize

// Version returns the version of a file's content, as [Store.WriteIf] and
// the tools' version tokens check it: a short hash of the content alone.
// A file that does not exist has no content; WriteIf and the tools take ""
// as its version.
func Version(content string) string { return journal.Version([]byte(content)) }

// versionOf is Version of the content b, which may be nil: the one
// definition is the history's (journal.Version).
func versionOf(b []byte) string { return journal.Version(b) }

func version(b []byte) string {
	if b == nil {
		return ""
	}
	return versionOf(b)
}

// thousands formats n with comma separators: 15360 → "15,360".
func thousands(n int) string { return thousands64(int64(n)) }

// thousands64 is thousands for a size that may not fit an int on 32 bits.
func thousands64(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// cut shortens s to at most n characters, marking a cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// summaryArgMax bounds an explicit summary, in characters.
const summaryArgMax = 200

// plural renders a count with its noun: "1 message", "3 messages".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// joinFit joins as many parts as fit in summaryMax characters, keeping the
// last ones when newest is set and the first ones otherwise.
func joinFit(parts []string, sep string, newest bool, empty string) string {
	if len(parts) == 0 {
		return empty
	}
	n, size := 0, 0
	for n < len(parts) {
		p := parts[n]
		if newest {
			p = parts[len(parts)-1-n]
		}
		add := len([]rune(p))
		if n > 0 {
			add += len([]rune(sep))
		}
		if size+add > summaryMax {
			break
		}
		size += add
		n++
	}
	if n == 0 {
		p := parts[0]
		if newest {
			p = parts[len(parts)-1]
		}
		return cut(p, summaryMax)
	}
	if newest {
		return strings.Join(parts[len(parts)-n:], sep)
	}
	return strings.Join(parts[:n], sep)
}

// Summary derivation. When a write has no summary line or an append has no
// summary argument, the summary is derived from the file's content:
//
//   - a month file lists its entry titles in file order, separated by ", ";
//     when they do not fit in summaryMax characters the oldest are left out,
//     so the newest entries are always named;
//   - a fact file or a world topic names its top-level bullets, separated by "; ", as many
//     of the first ones as fit, since a person puts the defining facts
//     first: a bullet's label, the words before a colon ("Name" for
//     "- Name: Zhang San"), or its first words and "…" (at most three,
//     never all of them; of a one-word fact, all but its last character),
//     so that the summary never repeats a fact line;
//
// A single part too long to fit is cut with "…". A file with nothing to list
// gets "no entries yet" (month) or "no facts yet" (facts).
const summaryMax = 100
