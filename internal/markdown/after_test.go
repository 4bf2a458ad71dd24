package markdown

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sameDoc fails t unless got is want, every field compared, the ones
// only methods read included.
func sameDoc(t testing.TB, want, got *Doc, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	// A Doc's scan is its src itself when capNesting changed nothing, and
	// only then: SetHeadDoc and ParseAfter take the short path on that.
	require.Equal(t, sameStart(want.scan, want.src), sameStart(got.scan, got.src), "scan is src: "+msg)
	if reflect.DeepEqual(want, got) {
		return
	}
	require.Equal(t, string(want.src), string(got.src), msg)
	require.Equal(t, string(want.scan), string(got.scan), "scan: "+msg)
	require.Equal(t, want.lines, got.lines, "lines: "+msg)
	require.Equal(t, want.Title, got.Title, "title: "+msg)
	require.Equal(t, want.Summary, got.Summary, "summary: "+msg)
	require.Equal(t, want.Blocks, got.Blocks, "blocks: "+msg)
	require.Equal(t, want.Headings, got.Headings, "headings: "+msg)
	require.Equal(t, want.Items, got.Items, "items: "+msg)
	require.Equal(t, want.Entries, got.Entries, "entries: "+msg)
	require.Equal(t, want.quoteGoesOn, got.quoteGoesOn, "quoteGoesOn: "+msg)
	require.Equal(t, want.tail, got.tail, "tail: "+msg)
	require.Equal(t, want.first, got.first, "first: "+msg)
	t.Fatalf("docs differ: %s", msg)
}

// factFile returns a fact file of about size bytes, one tight list.
func factFile(size int) string {
	var b strings.Builder
	b.WriteString("# User\n\n> Summary: many facts\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- Fact %d: prefers option %d over the others, in meetings and reviews\n", i, i)
	}
	return b.String()
}

// monthFile returns an episode file of about size bytes, entries of about
// 300 bytes each.
func monthFile(size int) string {
	var b strings.Builder
	b.WriteString("# 2026-02 Episodes\n\n> Summary: Tokyo flights, gifts, bugs\n")
	for i := 0; b.Len() < size; i++ {
		b.WriteString("\n" + episode(i))
	}
	return b.String()
}

// episode returns an entry of about 300 bytes, without a final newline.
func episode(i int) string {
	return fmt.Sprintf("## Tokyo flight research %d\n- Summary: Spring Airlines cheapest for April, booked the early flight\n"+
		"- Date: 2026-02-%02d\n- Outcome: booked after comparing three sites and the airline's own page for the fare\n"+
		"- Lesson: search results had stale prices; cross-check airline sites before booking anything", i, i%28+1)
}

// appendCases are the appends of the memory package, each with the
// separator it writes, that parseAfter must take.
var appendCases = []struct {
	name, old, sep, add string
}{
	{"fact line", factFile(15 << 10), "\n", "- Lesson: check time arithmetic first\n"},
	{"two fact lines", factFile(2 << 10), "\n", "- Lesson: a\n- Lesson: b\n"},
	{"fact after paragraph", "# User\n\n> Summary: s\n\nA paragraph of facts.\n", "\n\n", "- Name: Li\n"},
	{"entry", monthFile(16 << 10), "\n\n", episode(99) + "\n"},
	{"entry, old ends without newline", strings.TrimSuffix(monthFile(2<<10), "\n"), "\n\n", episode(99) + "\n"},
	{"entry after blank lines", monthFile(2<<10) + "\n\n  \n", "\n\n", episode(99) + "\n"},
	{"entry after a nested list", "# M\n\n> Summary: s\n\n## A\n- a\n  - b\n    > quote\n", "\n\n", episode(1) + "\n"},
	{"entry with no summary bullet yet", "# M\n\n> Summary: s\n\n## A\ntext\n", "\n\n", "- Summary: late\n- Date: 2026-01-01\n\n## B\n- Summary: b\n"},
	{"loose list", factFile(1 << 10), "\n\n", "- Name: Li\n"},
	{"nesting capped before", "# T\n\n> Summary: s\n\n" + strings.Repeat("> ", 40) + "deep\n\n- a\n", "\n", "- b\n"},
	{"nesting capped in the text", "# T\n\n> Summary: s\n\n- a\n", "\n\n", strings.Repeat("[x]: y\n", 40) + strings.Repeat("- ", 40) + "deep\n"},
	{"no headings", "text\n\nmore\n", "\n\n", "- a\n"},
}

func TestParseAfterTakesAppends(t *testing.T) {
	for _, c := range appendCases {
		t.Run(c.name, func(t *testing.T) {
			prev := Parse([]byte(c.old))
			src := []byte(string(TrimTrailingBlankLines([]byte(c.old))) + c.sep + c.add)
			d := parseAfter(prev, src, nil)
			require.NotNil(t, d, "the short path must be taken")
			sameDoc(t, Parse(src), d, "%q", src)
			sameDoc(t, Parse(src), ParseAfter(prev, src, nil), "%q", src)
		})
	}
}

func TestParseAfterFallsBack(t *testing.T) {
	for _, c := range []struct {
		name, old, src string
	}{
		{"no prev", "", "# T\n"},
		{"not a prefix", "# T\n\n> Summary: s\n\n- a\n", "# U\n\n> Summary: s\n\n- a\n- b\n"},
		{"no newline", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- ab\n"},
		{"nothing added", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n\n"},
		{"head open", "# T\n", "# T\n\n> Summary: s\n"},
		{"open fence", "# T\n\n> Summary: s\n\n```\ncode\n", "# T\n\n> Summary: s\n\n```\ncode\n\n## E\n"},
		{"fence in an item", "# T\n\n> Summary: s\n\n- ```\n  code\n", "# T\n\n> Summary: s\n\n- ```\n  code\n\n## E\n"},
		{"html", "# T\n\n> Summary: s\n\n<!--\n", "# T\n\n> Summary: s\n\n<!--\n\n## E\n"},
		{"lazy line", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\nlazy\n"},
		{"indented", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n\n  more\n"},
		{"other marker", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n* b\n"},
		{"ordered", "# T\n\n> Summary: s\n\n1. a\n", "# T\n\n> Summary: s\n\n1. a\n2. b\n"},
		{"setext", "# T\n\n> Summary: s\n\ntext\n", "# T\n\n> Summary: s\n\ntext\n---\n"},
		{"byte-order mark", bom + "# T\n\n> Summary: s\n\n- a\n", bom + "# T\n\n> Summary: s\n\n- a\n- b\n"},
		{"mark added", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n\n" + bom + "- b\n"},
		{"form feed", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n\f\n- b\n"},
		{"carriage return", "# T\n\n> Summary: s\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n- b\r\n"},
		{"base ends with CR", "# T\n\n> Summary: s\n\n- a\r\n", "# T\n\n> Summary: s\n\n- a\r\n- b\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var prev *Doc
			if c.old != "" {
				prev = Parse([]byte(c.old))
			}
			require.Nil(t, parseAfter(prev, []byte(c.src), nil))
			sameDoc(t, Parse([]byte(c.src)), ParseAfter(prev, []byte(c.src), nil), "%q", c.src)
		})
	}
}

// separators are the ones FuzzParseAfter places between the old source
// and the text added, by its choice.
var separators = []string{"\n", "\n\n", "\n\n\n", ""}

func FuzzParseAfter(f *testing.F) {
	for _, c := range appendCases {
		old := c.old
		if len(old) > 3000 {
			old = old[len(old)-3000:] // the head cut off: still a source
			old = "# T\n\n> Summary: s\n\n" + old[strings.IndexByte(old, '\n')+1:]
		}
		f.Add(old, c.add, uint8(strings.Count(c.sep, "\n")-1))
	}
	head := "# T\n\n> Summary: s\n\n"
	for _, s := range []struct {
		old, add string
		sep      uint8
	}{
		{head + "- a\n  - b\n", "- c\n  - d\n", 0},
		{head + "- a\n  > q\n", "- c\n", 0},
		{head + "- a\n  > q", "- c\n", 1},
		{head + "-\n", "- c\n", 1},
		{head + "-", "- c\n", 0},
		{head + "- a\n-", "  - c\n", 0},
		{head + "- a\n", "- - -\n", 0},
		{head + "- a\n", "- ---\n", 1},
		{head + "* a\n", "* * *\n", 0},
		{head + "+ a\n", "+\n\n  b\n", 0},
		{head + "- a\n", "-\tb\n", 0},
		{head + "- a\n", "- [a]: /b\n", 0},
		{head + "- a\n\n      code\n", "## E\n", 1},
		{head + "    code\n", "## E\n", 1},
		{head + "[a]: /b\n", "[c]: /d\n\ntext\n", 1},
		{head + "text\n", "===\n", 1},
		{head + "> q\n", "> r\n", 1},
		{head + "> q\n", "- a\n", 0},
		{head + "## E\n- Date: x\n", "## F\n- Summary: y\n", 1},
		{head + "## E\n", "- Summary: late\n\n# Top\n\n## F\n", 1},
		{head + "<div>\n</div>\n", "<!--\n## E\n", 1},
		{head + "```\n```\n", "## E\n", 1},
		{"# T\n", "> Summary: s\n", 1},
		{"[a]: /b\n", "# T\n", 1},
		{"T\n=\n> Summary: s\nlazy\n", "- a\n", 1},
		{head + "- a\n" + strings.Repeat("[x]: y\n", 40), "- b\n", 0},
		{head + "- a\n", strings.Repeat("> ", 40) + "deep\n", 1},
		{head + "- a\n", strings.Repeat("[x]: y\n", 40), 1},
		{head + "- a\n\n\n", "- b\n", 2},
	} {
		f.Add(s.old, s.add, s.sep)
	}
	f.Fuzz(func(t *testing.T, old, add string, sep uint8) {
		// As given; after a head, which the memory package's files have
		// and which ParseAfter needs; and as a continuation of a tight
		// list, the fact append.
		for _, c := range [][2]string{
			{old, separators[int(sep)%len(separators)] + add},
			{head + old, separators[int(sep)%len(separators)] + add},
			{head + old + "\n\n- item", "\n- " + add},
		} {
			prev := Parse([]byte(c[0]))
			base := TrimTrailingBlankLines([]byte(c[0]))
			src := []byte(string(base) + c[1])
			want := Parse(src)
			sameDoc(t, want, ParseAfter(prev, src, nil), "old %q, src %q", c[0], src)
			// Given the Doc of the text appended, parsed apart from a
			// copy of it, as an append has it: the same.
			at := len(base) + 1
			for at < len(src) && src[at] == '\n' {
				at++
			}
			if at <= len(src) {
				sameDoc(t, want, ParseAfter(prev, src, Parse(bytes.Clone(src[at:]))), "old %q, src %q, added parsed apart", c[0], src)
			}
		}
	})
}

func TestSetHeadDoc(t *testing.T) {
	for _, src := range []string{
		factFile(15 << 10),
		monthFile(16 << 10),
		"# T\n\n> Summary: old\n\n- a\n",
		"# T\n\n- a\n",
		"# T\n- a\n",
		"- a\n- b\n",
		"T\n===\n\n> Summary: a\n> b\n\ntext\n",
		"[r]: /u\n# T\n\n## E\n- Summary: e\n",
	} {
		d := Parse([]byte(src))
		out := d.SetHead("Title", "a new summary")
		nd := d.headDoc(out)
		require.NotNil(t, nd, "the short path must be taken for %q", src)
		sameDoc(t, Parse(out), nd, "%q", out)
		out2, nd2 := d.SetHeadDoc("Title", "a new summary")
		require.Equal(t, out, out2)
		sameDoc(t, Parse(out), nd2, "%q", out)
	}
	for _, src := range []string{
		"", "# T\n", "# T\n\n> Summary: s\n> \n> more\n\n- a\n", bom + "- a\n",
		"# T\n\n> Summary: s\n>\n- a\n", strings.Repeat("> ", 40) + "deep\n",
	} {
		d := Parse([]byte(src))
		require.Nil(t, d.headDoc(d.SetHead("Title", "s")), "%q", src)
		out, nd := d.SetHeadDoc("Title", "s")
		sameDoc(t, Parse(out), nd, "%q", out)
	}
}

func FuzzSetHeadDoc(f *testing.F) {
	for _, s := range []string{
		"", "# T\n\n> Summary: s\n\n## A\n- Date: x\n", factFile(2 << 10), monthFile(2 << 10),
		"Title\n=====\n> Summary: a\nlazy\n## B\n```\n## c\n```\n",
		"> Summary: x\n- a\n- b\n", "<div>\n# x\n</div>\n", "    # indented\n", "\r\n# T\r\n",
		"[ref]: /url\n# T\n", "* * *\n## E\n", "# T\n> Summary: s\n2. a\n", "# T\n> Summary: s\n-\n",
		"# T\n\n> Summary: s\n>\n- a\n", "# T\n\n    code\n", "# T\n\n[a]: /b\n\ntext\n",
	} {
		f.Add(s, "a summary")
	}
	f.Fuzz(func(t *testing.T, src, summary string) {
		summary = strings.TrimSpace(strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, summary))
		if summary == "" {
			summary = "s"
		}
		out, nd := Parse([]byte(src)).SetHeadDoc("Title", summary)
		sameDoc(t, Parse(out), nd, "src %q, out %q", src, out)
	})
}

func BenchmarkParseAfter(b *testing.B) {
	for _, c := range appendCases[:4] {
		if c.name == "two fact lines" || c.name == "fact after paragraph" {
			continue
		}
		prev := Parse([]byte(c.old))
		src := []byte(string(TrimTrailingBlankLines([]byte(c.old))) + c.sep + c.add)
		b.Run(c.name+"/Parse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(src)
			}
		})
		b.Run(c.name+"/ParseAfter", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ParseAfter(prev, src, nil)
			}
		})
	}
}

func BenchmarkSetHeadDoc(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"facts 15KB", factFile(15 << 10)},
		{"month 16KB", monthFile(16 << 10)},
	} {
		d := Parse([]byte(c.src))
		b.Run(c.name+"/SetHead+Parse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(d.SetHead("Title", "a new summary"))
			}
		})
		b.Run(c.name+"/SetHead", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.SetHead("Title", "a new summary")
			}
		})
		b.Run(c.name+"/SetHeadDoc", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.SetHeadDoc("Title", "a new summary")
			}
		})
	}
}

func TestEndsWithList(t *testing.T) {
	for src, want := range map[string]bool{
		"": false, "text\n": false, "- a\n": true, "# T\n\n1. a\n  b\n": true,
		"- a\n\ntext\n": false, "- a\n\n## E\n": false, "- a\n  - b\n": true,
	} {
		require.Equal(t, want, Parse([]byte(src)).EndsWithList(), "%q", src)
	}
}
