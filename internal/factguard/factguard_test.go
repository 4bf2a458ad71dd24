package factguard

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/stretchr/testify/require"
)

// check runs the guard on the change of the file at path from before to
// after, compared with others, and holds it to the reference.
func check(t testing.TB, path, before, after string, others ...*File) *Refusal {
	t.Helper()
	old := Parse(path, []byte(before), nil)
	c := Diff(old, Parse(path, []byte(after), old))
	got := c.Check(others...)
	require.Equal(t, refCheck(path, []byte(before), []byte(after), others...), got, "the indexed guard and the reference disagree")
	if got != nil && got.Kind == Temporary {
		require.Equal(t, got, c.Temporary())
	} else {
		require.Nil(t, c.Temporary())
	}
	return got
}

const head = "# User\n\n> Summary: x\n\n"

// jianjun is the fact file of the design: line 5 "- Name: …", 6
// "- Language: …", 7 "- Wife's birthday: …".
const jianjun = head +
	"- Name: 建军 (Jianjun)\n" +
	"- Language: prefers Chinese conversation\n" +
	"- Wife's birthday: March 15\n"

// TestCheck: each kind of refusal, with the line it names, and the changes
// that pass; each held to the reference too.
func TestCheck(t *testing.T) {
	memoryMD := Parse("facts/memory.md", []byte("# Memory\n\n> Summary: know-how\n\n- Tavily returns stale prices for flights; cross-check airline sites\n"), nil)
	type want struct {
		kind  Kind
		path  string
		other int
	}
	for _, c := range []struct {
		name, before, after string
		want                want
	}{
		{"temporary", jianjun, jianjun + "- Skip the charts this time\n", want{Temporary, "", 0}},
		{"temporary before a repeat", jianjun, jianjun + "- Name: 建军 (Jianjun)\n- Skip it for now\n", want{Temporary, "", 0}},
		{"identical line", jianjun, jianjun + "- Name: 建军 (Jianjun)\n", want{Repeat, "facts/user.md", 5}},
		{"identical but for spacing and case", jianjun, jianjun + "-   wife's BIRTHDAY:   March 15\n", want{Repeat, "facts/user.md", 7}},
		{"identical to the other file", jianjun, jianjun + "- Tavily returns stale prices for flights; cross-check airline sites\n", want{Repeat, "facts/memory.md", 5}},
		{"key restated", jianjun, jianjun + "- Languages: English\n", want{KeyRestated, "facts/user.md", 6}},
		{"near repeat", jianjun, jianjun + "- Wife's birthday is March 15\n", want{NearRepeat, "facts/user.md", 7}},
		{"near repeat of the other file", jianjun, jianjun + "- Tavily returns stale flight prices: cross-check the airline sites\n", want{NearRepeat, "facts/memory.md", 5}},
		{"near repeat in Chinese", head + "- 每周末喜欢去公园散步\n", head + "- 每周末喜欢去公园散步\n- 每个周末喜欢去公园散步\n", want{NearRepeat, "facts/user.md", 5}},
		{"a new file", "", head + "- Name: Li Wei\n- Name: Zhang Min\n", want{}},
		{"a new fact", jianjun, jianjun + "- Colleague: Li Wei (design)\n", want{}},
		{"all says more", head + "- Prefers Chinese conversation\n", head + "- Prefers Chinese conversation\n- Prefers Chinese for all conversations\n", want{}},
		{"other numbers", head + "- Room 101: projector broken\n", head + "- Room 101: projector broken\n- Room 102: projector broken\n", want{}},
		{"other numbers, no key", head + "- Room 101 has a broken projector\n", head + "- Room 101 has a broken projector\n- Room 102 has a broken projector\n", want{}},
		{"a list key", jianjun + "- Colleague: Li Wei (design)\n", jianjun + "- Colleague: Li Wei (design)\n- Colleague: Zhang Min (backend)\n", want{}},
		{"a key held twice", jianjun + "- Editor: vim\n- Editor: Typora\n", jianjun + "- Editor: vim\n- Editor: Typora\n- Editor: Excel\n", want{}},
		{"a key whose line goes", jianjun, strings.Replace(jianjun, "- Language: prefers Chinese conversation\n", "- Language: English\n", 1), want{}},
		{"the added lines are not compared", jianjun, jianjun + "- Likes green tea\n- Likes the green tea\n", want{}},
		{"only removed", jianjun, head + "- Name: 建军 (Jianjun)\n", want{}},
		{"no word", jianjun, jianjun + "- the\n", want{}},
		// Reordered kept lines of one text: the first in the new order is named.
		{"repeat of a reordered line", head + "- Likes tea\n- Other\n* likes TEA\n", head + "* likes TEA\n- Other\n- Likes tea\n-   likes  tea\n", want{Repeat, "facts/user.md", 7}},
		// Lines of one text: the new content keeps them in turn.
		{"duplicate lines kept", head + "- A b c\n- A b c\n- A b c\n", head + "- A b c\n- A b c\n- A b c\n- A b c\n", want{Repeat, "facts/user.md", 5}},
		{"the first in order", head + "- Drinks coffee every morning at home\n- Drinks coffee every morning\n", head + "- Drinks coffee every morning at home\n- Drinks coffee every morning\n- Drinks the coffee each morning\n", want{NearRepeat, "facts/user.md", 5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := check(t, "facts/user.md", c.before, c.after, memoryMD)
			if c.want.kind == 0 {
				require.Nil(t, r)
				return
			}
			require.NotNil(t, r)
			require.Equal(t, c.want.kind, r.Kind)
			require.Equal(t, c.want.path, r.Path)
			require.Equal(t, c.want.other, r.Other.Num)
			if r.Kind == Temporary {
				require.NotEmpty(t, r.Phrase)
			}
		})
	}
	// Without another file, the first file's lines alone.
	require.Nil(t, check(t, "facts/user.md", jianjun, jianjun+"- Tavily returns stale prices for flights; cross-check airline sites\n"))
	// Files in order: the first one with the text is named.
	dup := Parse("facts/z.md", []byte(head+"- Tavily returns stale prices for flights; cross-check airline sites\n"), nil)
	r := check(t, "facts/user.md", jianjun, jianjun+"- Tavily returns stale prices for flights; cross-check airline sites\n", dup, memoryMD)
	require.Equal(t, "facts/z.md", r.Path)
	// A near repeat in a later file.
	r = check(t, "facts/user.md", jianjun, jianjun+"- Tavily returns stale flight prices: cross-check the airline sites\n", Parse("facts/e.md", nil, nil), memoryMD)
	require.Equal(t, "facts/memory.md", r.Path)
}

// TestDiff: the lines added and kept, with lines of one text matched in
// turn, and a change from nothing.
func TestDiff(t *testing.T) {
	old := Parse("f.md", []byte(head+"- a\n- b\n- a\n- c\n"), nil)
	c := Diff(old, Parse("f.md", []byte(head+"- a\n- a\n- a\n- d\n- c\n"), old))
	var added []int
	for _, a := range c.Added {
		added = append(added, a.Num)
	}
	require.Equal(t, []int{7, 8}, added)
	require.Equal(t, []int32{0, 2, 3}, c.kept)
	require.Equal(t, []int32{0, -1, 1, 2}, c.rank)
	require.Len(t, Diff(nil, old).Added, 4)
	require.Empty(t, Diff(old, old).Added)
	require.Nil(t, Diff(nil, Parse("f.md", nil, nil)).Check())
}

// TestBound: the near-repeat comparison of one change stops after
// MaxPairs pairs of lines, counted as the reference counts them; the text
// and key checks still apply to every line.
func TestBound(t *testing.T) {
	n := 600 // 600 × 600 pairs is more than MaxPairs
	require.Greater(t, n*n, MaxPairs)
	var old, data strings.Builder
	old.WriteString(head)
	for i := range n {
		fmt.Fprintf(&old, "- alpha%d beta%d gamma%d delta\n", i, i, i)
	}
	data.WriteString(old.String())
	for i := range n - 1 {
		fmt.Fprintf(&data, "- omega%d psi%d chi%d\n", i, i, i)
	}
	// The last new line nearly repeats an old one, past the bound.
	data.WriteString("- alpha7 beta7 gamma7 delta epsilon\n")
	require.Nil(t, check(t, "facts/user.md", old.String(), data.String()))
	// Within the bound it is caught.
	lines := strings.SplitAfter(data.String(), "\n")
	small := strings.Join(append(lines[:4+n:4+n], lines[len(lines)-2:]...), "")
	r := check(t, "facts/user.md", old.String(), small)
	require.Equal(t, NearRepeat, r.Kind)
	require.Equal(t, 12, r.Other.Num)
	// An identical line past the bound is caught too.
	exact := strings.Replace(data.String(), "alpha7 beta7 gamma7 delta epsilon", "alpha7 beta7 gamma7 delta", 1)
	require.Equal(t, Repeat, check(t, "facts/user.md", old.String(), exact).Kind)
	// Just at the bound, counted across another file: with 448 lines
	// kept and 64 in the other file, the 512th added line is compared with
	// all 512 lines, its last pair the MaxPairs-th; the 513th with none.
	var other strings.Builder
	other.WriteString(head)
	for i := range 64 {
		fmt.Fprintf(&other, "- zeta%d eta%d theta%d\n", i, i, i)
	}
	o := Parse("facts/o.md", []byte(other.String()), nil)
	var kept, added strings.Builder
	kept.WriteString(head)
	for i := range 448 {
		fmt.Fprintf(&kept, "- alpha%d beta%d gamma%d delta\n", i, i, i)
	}
	for i := range 511 {
		fmt.Fprintf(&added, "- omega%d psi%d chi%d\n", i, i, i)
	}
	require.Equal(t, MaxPairs, 512*512)
	r = check(t, "facts/user.md", kept.String(), kept.String()+added.String()+"- zeta63 eta63 theta63 iota\n", o)
	require.Equal(t, NearRepeat, r.Kind)
	require.Equal(t, "facts/o.md", r.Path)
	require.Equal(t, 68, r.Other.Num)
	added.WriteString("- omega511 psi511 chi511\n")
	for _, last := range []string{"zeta63 eta63 theta63 iota", "zeta0 eta0 theta0 iota", "alpha0 beta0 gamma0 delta iota"} {
		require.Nil(t, check(t, "facts/user.md", kept.String(), kept.String()+added.String()+"- "+last+"\n", o), last)
	}
}

// TestParseReuse: a version parsed from an earlier one has the lines it
// would have alone, and holds no string of the earlier content, so that a
// chain of versions does not keep them all.
func TestParseReuse(t *testing.T) {
	v1 := []byte(jianjun + "- Likes green tea\n- 每周末喜欢去公园散步\n")
	v2 := []byte(strings.Replace(string(v1), "# User\n\n> Summary: x\n", "# User\n\n> Summary: a longer summary\n\n", 1) + "- Colleague: Li Wei\n")
	prev := Parse("f.md", v1, nil)
	f := Parse("f.md", v2, prev)
	require.Equal(t, Parse("f.md", v2, nil).Lines, f.Lines)
	require.True(t, f.Is(v2))
	require.False(t, f.Is(v1))
	within := func(s, in string) bool {
		p, b := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(in)))
		return p >= b && p < b+uintptr(len(in))
	}
	for _, l := range f.Lines {
		for _, s := range []string{l.Src, l.First, l.norm, l.key} {
			require.False(t, s != "" && within(s, prev.src), "%q is in the earlier content", s)
		}
	}
}

// sameFile fails t unless got has want's path, content and lines, their
// descriptions included.
func sameFile(t testing.TB, want, got *File) {
	t.Helper()
	require.Equal(t, want.Path, got.Path)
	require.Equal(t, want.src, got.src)
	require.Equal(t, want.Lines, got.Lines)
}

// TestFromDoc: a File made from a Doc is the one parsed from its source,
// with or without an earlier version, for an empty file too.
func TestFromDoc(t *testing.T) {
	v1 := []byte(jianjun + "- Likes green tea\n")
	v2 := append(bytes.Clone(v1), "- Colleague: Li Wei\n"...)
	prev := Parse("f.md", v1, nil)
	for _, c := range []struct {
		src  []byte
		prev *File
	}{{v1, nil}, {v2, nil}, {v2, prev}, {nil, nil}, {nil, prev}} {
		d := markdown.Parse(c.src)
		sameFile(t, Parse("f.md", c.src, c.prev), FromDoc("f.md", d, c.prev))
		require.True(t, FromDoc("f.md", d, c.prev).Is(c.src))
	}
	sameFile(t, Parse("f.md", nil, nil), FromDoc("f.md", nil, nil))
	sameFile(t, Parse("f.md", v2, prev), FromDoc("f.md", markdown.ParseAfter(markdown.Parse(v1), v2, nil), prev))
}

// sameIndex fails t unless f's index answers every look-up as a whole
// index of f's lines does: the lines of each text, key and term of f's
// lines, and of texts and words f does not have.
func sameIndex(t testing.TB, f *File) {
	t.Helper()
	got, want := f.index(), build(f.Lines, 0, nil)
	texts := map[string]bool{"": true, "no such line": true}
	for _, l := range f.Lines {
		texts[l.Src], texts[l.norm], texts[l.key] = true, true, true
		for _, w := range l.terms {
			texts[w] = true
		}
	}
	chain := func(ix *index, k int, s string) []int32 {
		var out []int32
		i, ok := ix.first(k, s)
		for ; ok && i >= 0; i = ix.next(k, i) {
			out = append(out, i)
		}
		return out
	}
	for s := range texts {
		for k := range ix2 {
			require.Equal(t, chain(want, k, s), chain(got, k, s), "lines of text %d %q", k, s)
		}
		wi, wok := want.key(s)
		gi, gok := got.key(s)
		require.Equal(t, [2]any{wi, wok}, [2]any{gi, gok}, "key %q", s)
		wb, wa := want.lines(s)
		gb, ga := got.lines(s)
		require.Empty(t, wb)
		require.Equal(t, fmt.Sprint(wa), fmt.Sprint(append(append([]int32{}, gb...), ga...)), "term %q", s)
	}
}

// ix2 ranges over the texts an index chains.
var ix2 = [...]int{srcText, normText}

// TestIndexAdded: the index of a version that adds lines to an earlier
// one, made beside the earlier version's, answers as a whole index would,
// through a chain of appends past the bound where a version is indexed
// whole again, lines repeated, keys held once and twice, a version that
// changes an earlier line (indexed whole) and one that adds no line; and
// the guard's refusals are those of the reference.
func TestIndexAdded(t *testing.T) {
	src := head
	prev := Parse("f.md", []byte(src), nil)
	prev.index()
	layered := 0
	for i := range 60 {
		switch {
		case i%7 == 3:
			src += "- Language: zh\n" // a key held more than once, a text repeated
		case i == 40:
			src = strings.Replace(src, "- Fact 1:", "- Fact one:", 1) // not an append
		case i%11 == 5:
			src += "\n## Notes\n\n" // no line added
		default:
			src += fmt.Sprintf("- Fact %d: prefers option %d in meetings\n", i, i%5)
		}
		f := Parse("f.md", []byte(src), prev)
		if f.base != nil {
			layered++
		}
		sameIndex(t, f)
		if f.ix.base != nil {
			require.Less(t, len(f.Lines)-int(f.ix.off), maxAdded(len(f.Lines))+1)
		}
		for _, add := range []string{"- Language: en\n", "- Fact 3: prefers option 3 in meetings\n", "- Fact 70: prefers option 3 in meetings\n", "- Fact 3: prefers option 3 in the meetings\n"} {
			c := Diff(f, Parse("f.md", []byte(src+add), f))
			require.Equal(t, refCheck("f.md", []byte(src), []byte(src+add), prev), c.Check(prev), "%d %q", i, add)
		}
		prev = f
	}
	require.Greater(t, layered, 40)
}
