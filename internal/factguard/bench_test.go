package factguard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mdmemory/memory/internal/markdown"
)

// facts returns a fact file of about size bytes, its lines all sharing
// some words ("prefers option … over the others, in meetings and
// reviews"), as BenchmarkVetFacts in the memory package fills one.
func facts(size, k int) []byte {
	var b strings.Builder
	b.WriteString("# User\n\n> Summary: many facts\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- Fact %d of %d: prefers option %d over the others, in meetings and reviews\n", i, k, i)
	}
	return []byte(b.String())
}

// BenchmarkCheck measures the guard on a change that adds one line to a
// fact file of 15 KB (about 200 lines), the versions before and after
// already parsed and indexed, as the memory package keeps them: the steady
// state of a file that did not change between two checks. "new-words" adds
// a line that shares no word with the facts, "shared-words" one that
// shares words with every line (and nearly repeats none); "30-files"
// compares with 30 files of 500 bytes, as world topics are.
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct {
		name, line string
		others     int
	}{
		{"new-words", "- Colleague: Li Wei, designer, sits by the window\n", 0},
		{"shared-words", "- Prefers the second option in reviews and meetings, over others\n", 0},
		{"30-files", "- Prefers the second option in reviews and meetings, over others\n", 30},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := facts(15<<10, 0)
			var others []*File
			for k := range c.others {
				f := Parse(fmt.Sprintf("world/t%d.md", k), facts(500, k+1), nil)
				f.index()
				others = append(others, f)
			}
			before := Parse("facts/user.md", src, nil)
			after := Parse("facts/user.md", append(src, c.line...), before)
			before.index()
			b.ReportAllocs()
			for b.Loop() {
				if r := Diff(before, after).Check(others...); r != nil {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkIndex measures what a version of a 15 KB fact file costs once:
// "parse" parses and indexes it from nothing (its lines described by the
// tokenizer), as when the memory package first meets it; "next" parses
// and indexes a version that adds a line to one already indexed, whose
// lines it takes, as each change of the file does. The markdown parse is
// most of both.
func BenchmarkIndex(b *testing.B) {
	src := facts(15<<10, 0)
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse("facts/user.md", src, nil).index()
		}
	})
	b.Run("next", func(b *testing.B) {
		prev := Parse("facts/user.md", src, nil)
		prev.index()
		next := append(src, "- Colleague: Li Wei, designer, sits by the window\n"...)
		b.ReportAllocs()
		for b.Loop() {
			Parse("facts/user.md", next, prev).index()
		}
	})
	b.Run("lines", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			split(markdown.Parse(src), string(src), 0)
		}
	})
}

// BenchmarkFromDoc measures a version of a 15 KB fact file that adds a
// line, made from an indexed earlier version: "parse" from its content,
// which it parses; "doc" from the Doc the append made, which it does not.
func BenchmarkFromDoc(b *testing.B) {
	src := facts(15<<10, 0)
	prev := Parse("facts/user.md", src, nil)
	prev.index()
	next := append(src, "- Colleague: Li Wei, designer, sits by the window\n"...)
	d := markdown.Parse(next)
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Parse("facts/user.md", next, prev)
		}
	})
	b.Run("doc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			FromDoc("facts/user.md", d, prev)
		}
	})
}
