package markdown

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNesting(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"plain\n", 0},
		{"> a\n", 1},
		{"> > - 1. b\n", 4},
		{"   > a\n", 1},
		{"    > a\n", 0},          // indented code
		{"\t> a\n", 0},            // indented code
		{">\t>  \t- x\n", 3},      // any white space after a marker
		{"-\n", 1},                // an empty item
		{"-x\n", 0},               // no space after the marker
		{"1234567890. x\n", 0},    // more than nine digits
		{"123456789) x\n", 1},     // nine
		{"- - -\n", 0},            // a thematic break, no list
		{"- * * *\n", 1},          // an item holding a break
		{"> _ _ _\n", 1},          // a quote holding one
		{"- - - x\n", 3},          // no break: text follows
		{"- -\n", 2},              // two dashes are no break
		{"* - *\n", 3},            // marks of two kinds are none
		{"- \x00 \x00 \x00\n", 1}, // NUL is no mark
		{"a\n" + strings.Repeat("> ", 40) + "x\n> b\n", 40},
	} {
		require.Equal(t, tc.want, Nesting(tc.text), "%q", tc.text)
	}
}

// deepQuote is a file whose one line opens n blockquotes, as a person may
// type or paste it.
func deepQuote(n int) string { return "# T\n\n" + strings.Repeat("> ", n) + "x\n" }

// deepList opens n lists on one line.
func deepList(n int) string { return "# T\n\n" + strings.Repeat("- ", n) + "x\n" }

// indentedList nests n list items, each line indented two spaces more.
func indentedList(n int) string {
	var b strings.Builder
	b.WriteString("# T\n\n")
	for i := range n {
		b.WriteString(strings.Repeat("  ", i) + "- x\n")
	}
	return b.String()
}

// TestCapNesting: lines nested within MaxNesting, with little white space
// in their prefix, reach goldmark as they are; deeper ones keep
// MaxNesting markers and the rest is plain text, with every line's length
// and so every offset kept.
func TestCapNesting(t *testing.T) {
	deep := strings.Repeat("> ", MaxNesting)
	for _, tc := range []struct{ name, src, want string }{
		{"ordinary", "# T\n\n> Summary: s\n\n- a\n  - b\n    > c\n", ""},
		{"at the cap", deep + "x\n", ""},
		{"a thematic break of many marks", "- " + strings.Repeat("* ", 100) + "\n", ""},
		{"one past the cap", deep + "> x\n", deep + "\\ x\n"},
		{"lists", strings.Repeat("- ", MaxNesting) + "1. - x\r\n", strings.Repeat("- ", MaxNesting) + "\\. - x\r\n"},
		{"white space moved to the end", "-" + strings.Repeat(" ", 200) + "x\n", "-" + strings.Repeat(" ", maxPrefixSpace) + "x" + strings.Repeat(" ", 200-maxPrefixSpace) + "\n"},
		{"tabs count four", strings.Repeat("\t", 40) + "x\n", strings.Repeat("\t", maxPrefixSpace/4) + "x" + strings.Repeat(" ", 40-maxPrefixSpace/4) + "\n"},
		{"only the deep line", "a\n" + deep + "> > y\nb\n", "a\n" + deep + "\\ > y\nb\n"},
		{"no newline at the end", deep + "> z", deep + "\\ z"},
		{"definitions at the cap", strings.Repeat("[a]: b\n", maxDefinitions), ""},
		{"definitions past the cap", strings.Repeat("[a]: b\n", maxDefinitions) + "[c]: d\n  [e]:\nf\n", strings.Repeat("[a]: b\n", maxDefinitions) + "\\c]: d\n  \\e]:\nf\n"},
		{"quoted definitions", strings.Repeat("> [a]: b\r\n", maxDefinitions+1), strings.Repeat("> [a]: b\r\n", maxDefinitions) + "> \\a]: b\r\n"},
		{"a blank line starts again", strings.Repeat("[a]: b\n", maxDefinitions) + " \t\n" + strings.Repeat("[a]: b\n", maxDefinitions), ""},
		{"a quoted blank line too", strings.Repeat("> [a]: b\n", maxDefinitions) + ">\n" + strings.Repeat("> [a]: b\n", maxDefinitions), ""},
		{"list items start again", strings.Repeat("- [ ] task\n", 3*maxDefinitions), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := capNesting([]byte(tc.src))
			if tc.want == "" {
				require.Equal(t, tc.src, string(got))
				return
			}
			require.Equal(t, tc.want, string(got))
			require.Len(t, got, len(tc.src))
		})
	}
	src := []byte("# T\n\n- a\n")
	require.Same(t, &src[0], &capNesting(src)[0], "a file with nothing to cap is not copied")
}

// TestParseDeepNesting: a file nested far deeper than MaxNesting parses,
// its title, summary, entries and items found as in the same file without
// the nesting, and the nested line's span is whole.
func TestParseDeepNesting(t *testing.T) {
	for name, nested := range map[string]string{
		"quotes":        strings.Repeat("> ", 20000) + "x\n",
		"lists":         strings.Repeat("- ", 20000) + "x\n",
		"ordered":       strings.Repeat("1. ", 20000) + "x\n",
		"indented":      indentedList(300)[len("# T\n\n"):],
		"quoted indent": "> " + strings.Repeat(" ", 5000) + "- x\n",
	} {
		t.Run(name, func(t *testing.T) {
			src := "# T\n\n> Summary: s\n\n## Entry\n- Date: 2026-02-01\n\n" + nested + "\n## Next\n- Summary: n\n"
			d := Parse([]byte(src))
			require.Equal(t, "T", d.Title.Text)
			require.Equal(t, "s", d.Summary.Text)
			require.Len(t, d.Entries, 2)
			require.Equal(t, "Entry", d.Entries[0].Title)
			require.Equal(t, "2026-02-01", d.Entries[0].Date)
			require.Equal(t, "Next", d.Entries[1].Title)
			require.Equal(t, "n", d.Entries[1].Summary)
			require.Contains(t, src[d.Entries[0].Start:d.Entries[0].End], nested, "the nested lines stay in their entry, whole")
			require.True(t, Closed([]byte(src)))
		})
	}
}

// FuzzCapNesting: whatever the text, capNesting keeps its length and its
// line starts, changes nothing in a text nested within MaxNesting whose
// prefixes hold little white space, and leaves nothing nested deeper; and
// Parse gives the same structure for a text and for its capped form.
func FuzzCapNesting(f *testing.F) {
	for _, s := range []string{
		"", "# T\n\n> Summary: s\n", deepQuote(40), deepList(40), indentedList(20),
		"- - - - -\n", "> \t> \t" + strings.Repeat("1) ", 35) + "\r\n", strings.Repeat(" ", 300) + "x",
		definitions(40), strings.Repeat("[a]:\nb\n", 40), strings.Repeat("> [a]: b\n", 40) + "---\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		got := capNesting([]byte(src))
		require.Len(t, got, len(src))
		require.Equal(t, lineStarts([]byte(src)), lineStarts(got))
		capped := string(got)
		for line := range strings.Lines(capped) {
			depth := 0
			walkPrefix(line, false, nil, func(int, int) bool { depth++; return true })
			require.LessOrEqual(t, depth, MaxNesting, "%q", line)
		}
		short := !strings.Contains(src, "\t")
		for line := range strings.Lines(src) {
			short = short && len(line) <= MaxNesting
		}
		require.Equal(t, capped, string(capNesting(got)), "capping twice changes nothing more")
		// No paragraph of the capped text holds more than maxDefinitions
		// lines that can start a definition; a '[' escaped is the one
		// change besides the nesting's.
		defs, escaped, underline := 0, false, false
		srcLines := strings.Split(src, "\n")
		for i, line := range slices.Collect(strings.Lines(capped)) {
			line = strings.TrimRight(line, "\r\n")
			at, item := afterPrefix([]byte(line))
			if strings.Trim(line[at:], " \t") == "" || item {
				defs = 0
			}
			if at < len(line) && line[at] == '[' {
				defs++
				require.LessOrEqual(t, defs, maxDefinitions, "line %d", i)
			}
			if at < len(line) && line[at] == '\\' && srcLines[i][at] == '[' {
				escaped = true
			}
			underline = underline || strings.Trim(line[at:], "=- \t") == "" && strings.Trim(line[at:], " \t") != ""
		}
		if short && !escaped {
			require.Equal(t, src, capped, "no line of %d bytes or less can be nested deeper or hold more white space", MaxNesting)
		}
		if escaped && underline {
			// A setext underline can make a heading of a line that was a
			// definition: the structure may differ.
			return
		}
		a, b := Parse([]byte(src)), Parse(got)
		require.Equal(t, a.Title, b.Title)
		require.Equal(t, a.Summary, b.Summary)
		require.Equal(t, a.Entries, b.Entries)
	})
}

// definitions is a paragraph of n link reference definitions of distinct
// labels.
func definitions(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "[label%d]: https://example.com/%d\n", i, i)
	}
	return b.String()
}

// BenchmarkParsePathological parses files of 64 KiB, 256 KiB and 1 MiB
// made of one paragraph of link reference definitions, which goldmark
// takes out of a paragraph in time that grows with the square of their
// number: of one label, of distinct ones, and spread over two lines each.
// Time per parse grows with the size, not its square.
func BenchmarkParsePathological(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
		for _, shape := range []struct {
			name string
			src  string
		}{
			{"definitions", strings.Repeat("[a]: b\n", size/7)},
			{"labels", definitions(size / 32)},
			{"two-line", strings.Repeat("[a]:\nb\n", size/7)},
		} {
			src := []byte(shape.src)
			b.Run(fmt.Sprintf("%s/%dK", shape.name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					Parse(src)
				}
			})
		}
	}
}

// BenchmarkParseNesting parses files nested by hand 4,000, 16,000 and
// 64,000 deep: time per parse grows with the size, not its square.
func BenchmarkParseNesting(b *testing.B) {
	for _, n := range []int{4000, 16000, 64000} {
		for _, shape := range []struct {
			name string
			src  string
		}{
			{"quotes", deepQuote(n)},
			{"lists", deepList(n)},
			{"indented", indentedList(n / 40)}, // n/40 levels: the file is already n²/800 bytes
		} {
			src := []byte(shape.src)
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(src)))
				for b.Loop() {
					Parse(src)
				}
			})
		}
	}
}
