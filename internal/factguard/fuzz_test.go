package factguard

import (
	"testing"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/stretchr/testify/require"
)

// FuzzCheck: whatever the contents of a fact file before and after a
// change and of another fact file, the guard does not panic and refuses
// what the reference refuses, naming the same lines: the indexed search
// finds every line the comparison of all pairs would; and a version parsed
// from an earlier one has the lines it has parsed alone, and one made from
// a Doc is the one parsed from the Doc's source.
func FuzzCheck(f *testing.F) {
	f.Add(jianjun, "- Wife's birthday is March 15\n", "# Memory\n\n> Summary: m\n\n- Likes tea\n")
	f.Add(jianjun, "- Languages: English\n- Skip it this time\n", "")
	f.Add(head+"- 每周末喜欢去公园散步\n", "- 每个周末喜欢去公园散步\n", head+"- 同事：李伟\n")
	f.Add(head+"- a b c\n- a b c\n* A  B C\n", "\n- a b c d\n1. [x] a b\n", head+"Para one: x\nPara two\n")
	f.Add(head+"```\n- code: x\n```\n- Room 101: broken\n", "\n> quote\n\n- Room 102: broken\n  - nested\n", "")
	f.Fuzz(func(t *testing.T, before, add, other string) {
		if len(before)+len(add)+len(other) > 1<<12 {
			t.Skip("the reference compares every pair: small files only")
		}
		o := Parse("facts/other.md", []byte(other), nil)
		check(t, "facts/user.md", before, before+add, o)
		check(t, "facts/user.md", before, add, o)
		check(t, "facts/user.md", before, add+before)
		prev := Parse("facts/user.md", []byte(before), nil)
		require.Equal(t, Parse("f", []byte(before+add), nil).Lines, Parse("f", []byte(before+add), prev).Lines)
		// A chain of versions, each adding add to the one before: its
		// indexes, made beside the earlier ones, answer as whole ones.
		v, src := prev, before
		for range 3 {
			src += add
			v = Parse("facts/user.md", []byte(src), v)
			sameIndex(t, v)
		}
		// The guard on a change of a version so made, compared with a
		// file so made.
		o2 := Parse("facts/other.md", []byte(other+add), o)
		cv := Diff(v, Parse("facts/user.md", []byte(src+other), v))
		require.Equal(t, refCheck("facts/user.md", []byte(src), []byte(src+other), o2), cv.Check(o2))
		after := []byte(string(markdown.TrimTrailingBlankLines([]byte(before))) + "\n" + add)
		sameFile(t, Parse("f", after, prev), FromDoc("f", markdown.ParseAfter(markdown.Parse([]byte(before)), after, nil), prev))
	})
}
