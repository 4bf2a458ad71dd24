package markdown

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseEpisodeFile(t *testing.T) {
	src := "# 2026-02 Episodes\n\n> Summary: Tokyo, gifts\n\n" +
		"## Tokyo flight research\n- Summary: Spring cheapest\n- Date: 2026-02-26\n\n" +
		"```\n## not an entry\n# nor a title\n```\n\n" +
		"Birthday gift\n-------------\n- Date: 2026-02-27\n- Summary: tea set\n\n" +
		"### Notes\nnested\n\n" +
		"## \n"
	d := Parse([]byte(src))

	require.True(t, d.Title.OK)
	require.Equal(t, "2026-02 Episodes", d.Title.Text)
	require.Equal(t, "# 2026-02 Episodes\n", src[d.Title.Start:d.Title.End])
	require.True(t, d.Summary.OK)
	require.Equal(t, "Tokyo, gifts", d.Summary.Text)
	require.Equal(t, "> Summary: Tokyo, gifts\n", src[d.Summary.Start:d.Summary.End])
	require.False(t, d.Level1() && len(d.Headings) == 0)

	require.Len(t, d.Entries, 3, "a fenced ## is not an entry; a Setext heading is")
	e := d.Entries[0]
	require.Equal(t, "Tokyo flight research", e.Title)
	require.Equal(t, 5, e.Line)
	require.Equal(t, "Spring cheapest", e.Summary)
	require.Equal(t, "2026-02-26", e.Date)
	require.Contains(t, src[e.Start:e.End], "## not an entry", "code fences stay inside their entry")

	e = d.Entries[1]
	require.Equal(t, "Birthday gift", e.Title)
	require.Equal(t, "Birthday gift\n-------------\n", src[d.Headings[2].Start:d.Headings[2].End])
	require.Equal(t, "tea set", e.Summary)
	require.Equal(t, "2026-02-27", e.Date)
	require.Contains(t, src[e.Start:e.End], "### Notes", "deeper headings belong to the entry")

	require.Equal(t, "", d.Entries[2].Title)
	require.Equal(t, len(src), d.Entries[2].End)
}

func TestParseFactFile(t *testing.T) {
	src := "User\n====\n> Summary: first\n> second\nlazy line\n\n- Name: 建军\n- Language: Chinese\n  continued\n\n1. ordered\n"
	d := Parse([]byte(src))
	require.Equal(t, "User", d.Title.Text)
	require.Equal(t, "User\n====\n", src[d.Title.Start:d.Title.End])
	require.Equal(t, "first second lazy line", d.Summary.Text)
	require.Equal(t, "> Summary: first\n> second\nlazy line\n", src[d.Summary.Start:d.Summary.End])
	require.Equal(t, []Item{
		{Line: 7, Span: Span{strings.Index(src, "- Name"), strings.Index(src, "- Lang")}, Text: "Name: 建军"},
		{Line: 8, Span: Span{strings.Index(src, "- Lang"), strings.Index(src, "\n1. ")}, Text: "Language: Chinese"},
		{Line: 11, Span: Span{strings.Index(src, "1. "), len(src)}, Text: "ordered"},
	}, d.Items)
	require.Equal(t, Span{Start: d.Summary.End, End: len(src)}, d.Body())
}

func TestParseHeads(t *testing.T) {
	tests := []struct {
		name, src       string
		title           string
		summary         string
		titleOK, sumOK  bool
		level1Somewhere bool
	}{
		{name: "empty", src: ""},
		{name: "no title", src: "- a\n"},
		{name: "summary without title", src: "> Summary: s\n\nbody\n", summary: "s", sumOK: true},
		{name: "blockquote not a summary", src: "# T\n\n> quoted\n", title: "T", titleOK: true, level1Somewhere: true},
		{name: "summary not right after title", src: "# T\n\npara\n\n> Summary: s\n", title: "T", titleOK: true, level1Somewhere: true},
		{name: "h2 first is no title", src: "## E\n"},
		{name: "later h1", src: "text\n\n# Late\n", level1Somewhere: true},
		{name: "hash without space is not ATX", src: "#foo\n===\n", title: "#foo", titleOK: true, level1Somewhere: true},
		{name: "empty summary", src: "# T\n> Summary:\n", title: "T", titleOK: true, sumOK: true, level1Somewhere: true},
		{name: "no final newline", src: "# T", title: "T", titleOK: true, level1Somewhere: true},
		{name: "CRLF", src: "# T\r\n\r\n> Summary: s\r\n", title: "T", titleOK: true, summary: "s", sumOK: true, level1Somewhere: true},
		{name: "quote starting with a list", src: "# T\n\n> - x\n", title: "T", titleOK: true, level1Somewhere: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Parse([]byte(tt.src))
			require.Equal(t, tt.titleOK, d.Title.OK)
			require.Equal(t, tt.title, d.Title.Text)
			require.Equal(t, tt.sumOK, d.Summary.OK)
			require.Equal(t, tt.summary, d.Summary.Text)
			require.Equal(t, tt.level1Somewhere, d.Level1())
			require.Equal(t, []byte(tt.src), d.Src())
		})
	}
}

func TestSetHead(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"empty", "", "# T\n\n> Summary: s\n"},
		{"body only", "\n\n- a\n", "# T\n\n> Summary: s\n\n- a\n"},
		{"title only", "# Mine\n- a\n", "# Mine\n\n> Summary: s\n\n- a\n"},
		{"title without newline", "# Mine", "# Mine\n\n> Summary: s\n"},
		{"replace summary", "# Mine\n\n> Summary: old\n\n\n  - a  \n", "# Mine\n\n> Summary: s\n\n  - a  \n"},
		{"summary then heading", "# Mine\n> Summary: old\n## E\n", "# Mine\n\n> Summary: s\n\n## E\n"},
		{"untitled summary", "> Summary: old\n\nbody", "# T\n\n> Summary: s\n\nbody"},
		{"setext title kept", "Mine\n===\n\nx\n", "Mine\n===\n\n> Summary: s\n\nx\n"},
		{"indented code kept", "# Mine\n\n    code\n", "# Mine\n\n> Summary: s\n\n    code\n"},
		{"rest of the blockquote kept", "# Mine\n\n> Summary: old\n> still old\n>\n> Important: never call after 9pm\n\n- a\n",
			"# Mine\n\n> Summary: s\n>\n> Important: never call after 9pm\n\n- a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parse([]byte(tt.src)).SetHead("T", "s")
			require.Equal(t, tt.want, string(got))
			d := Parse(got)
			require.True(t, d.Title.OK)
			require.Equal(t, "s", d.Summary.Text)
		})
	}
}

func TestHeadLen(t *testing.T) {
	tests := []struct {
		src  string
		want int
	}{
		{"", 0},
		{"# T\n", 4},
		{"# T\n\n> Summary: s\n\n- a\n", len("# T\n\n> Summary: s\n\n")},
		{"\n\n# T\n> Summary: s\n \n- a\n\n- b\n", len("\n\n# T\n> Summary: s\n \n- a\n\n")},
		{"# T\n\n> Summary: s", len("# T\n\n> Summary: s")},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, HeadLen([]byte(tt.src)), "%q", tt.src)
	}
}

func TestTrimBlankLines(t *testing.T) {
	require.Equal(t, "  x\n \n", string(TrimLeadingBlankLines([]byte(" \t\n\r\n  x\n \n"))))
	require.Equal(t, "", string(TrimLeadingBlankLines([]byte("\n  "))))
	require.Equal(t, "x", string(TrimLeadingBlankLines([]byte("x"))))
	require.Equal(t, "\n  x  ", string(TrimTrailingBlankLines([]byte("\n  x  \n \n\t\n"))))
	require.Equal(t, "", string(TrimTrailingBlankLines([]byte(" \n\n"))))
	require.Equal(t, "x", string(TrimTrailingBlankLines([]byte("x"))))
}

// FuzzSetHead checks that the splicer never panics and that parse → splice
// → parse keeps the structure: the same entries, the new summary, a title,
// and the body's bytes untouched.
func FuzzSetHead(f *testing.F) {
	for _, s := range []string{
		"", "# T\n\n> Summary: s\n\n## A\n- Date: x\n",
		"Title\n=====\n> Summary: a\nlazy\n## B\n```\n## c\n```\n",
		"> Summary: x\n- a\n- b\n", "<div>\n# x\n</div>\n", "    # indented\n", "\r\n# T\r\n",
		"[ref]: /url\n# T\n", "* * *\n## E\n",
	} {
		f.Add(s, "a summary")
	}
	f.Fuzz(func(t *testing.T, src, summary string) {
		summary = string(bytes.TrimSpace(bytes.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, []byte(summary))))
		if summary == "" {
			summary = "s"
		}
		before := Parse([]byte(src))
		cut := HeadLen([]byte(src))
		if head := Parse([]byte(src[:cut])); head.Summary.OK && head.Summary.End < cut {
			if head.Title != before.Title || head.Summary != before.Summary {
				t.Fatalf("head of %q: title %+v summary %+v, whole: %+v %+v", src, head.Title, head.Summary, before.Title, before.Summary)
			}
		}
		out := before.SetHead("Title", summary)
		after := Parse(out)

		if !after.Title.OK || !after.Summary.OK {
			t.Fatalf("no title or summary after SetHead:\n%q", out)
		}
		if after.Summary.Text != summary {
			t.Fatalf("summary %q, want %q in\n%q", after.Summary.Text, summary, out)
		}
		body := TrimLeadingBlankLines([]byte(src[before.Body().Start:]))
		if !bytes.HasSuffix(out, body) {
			t.Fatalf("body not kept byte for byte:\nbefore %q\nafter  %q", src, out)
		}
		if len(before.Entries) != len(after.Entries) {
			t.Fatalf("entries %d → %d:\n%q\n%q", len(before.Entries), len(after.Entries), src, out)
		}
		for i := range before.Entries {
			if before.Entries[i].Title != after.Entries[i].Title {
				t.Fatalf("entry %d title %q → %q", i, before.Entries[i].Title, after.Entries[i].Title)
			}
		}
	})
}

func TestStartsBlock(t *testing.T) {
	src := "# T\n\n- a\n- b\n\n```\ncode\n\n- not an item\n```\n\npara\n"
	d := Parse([]byte(src))
	for _, at := range []string{"# T", "- a", "- b", "```\ncode", "para"} {
		require.True(t, d.StartsBlock(strings.Index(src, at)), at)
	}
	require.False(t, d.StartsBlock(strings.Index(src, "- not")))
	require.False(t, d.StartsBlock(strings.Index(src, "code\n")))
}

func TestEmptyListItem(t *testing.T) {
	d := Parse([]byte("-\n- b\n"))
	require.Equal(t, []string{"", "b"}, []string{d.Items[0].Text, d.Items[1].Text})
}

// TestByteOrderMark: a UTF-8 byte-order mark (Windows Notepad writes one)
// before the title counts as indentation, and edits keep it.
func TestByteOrderMark(t *testing.T) {
	src := []byte("\ufeff# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n")
	d := Parse(src)
	require.True(t, d.Title.OK)
	require.Equal(t, "User", d.Title.Text)
	require.Equal(t, 0, d.Title.Start)
	require.Equal(t, "Zhang San", d.Summary.Text)
	require.Len(t, d.Items, 1)
	require.Equal(t, "Name: Zhang San", d.Items[0].Text)
	require.Equal(t, "\ufeff# User\n\n> Summary: new\n\n- Name: Zhang San\n", string(d.SetHead("x", "new")))

	d = Parse([]byte("\ufeffUser\n====\n\n> Summary: s\n"))
	require.Equal(t, "User", d.Title.Text, "a Setext title")
	d = Parse([]byte("\ufeff## Entry\n- Date: 2026-02-01\n"))
	require.Len(t, d.Entries, 1)
	require.Equal(t, "Entry", d.Entries[0].Title)
	require.Equal(t, "2026-02-01", d.Entries[0].Date)
	d = Parse([]byte("\ufeffjust text\n"))
	require.False(t, d.Title.OK)
}

// TestByteOrderMarkWithoutTitle: a file with the mark and no title gets its
// head after the mark, so its first block stays what it was.
func TestByteOrderMarkWithoutTitle(t *testing.T) {
	d := Parse([]byte("\ufeff- Name: Zhang San\n- Lang: zh\n"))
	require.Len(t, d.Items, 2)
	out := d.SetHead("User", "s")
	require.Equal(t, "\ufeff# User\n\n> Summary: s\n\n- Name: Zhang San\n- Lang: zh\n", string(out))
	require.Len(t, Parse(out).Items, 2)

	d = Parse([]byte("\ufeff## Trip\n- Date: 2026-02-01\n"))
	out = d.SetHead("2026-02 Episodes", "Trip")
	require.Equal(t, "\ufeff# 2026-02 Episodes\n\n> Summary: Trip\n\n## Trip\n- Date: 2026-02-01\n", string(out))
	require.Len(t, Parse(out).Entries, 1)
}
