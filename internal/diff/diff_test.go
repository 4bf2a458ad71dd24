package diff_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/diff"
)

// TestUnified: each case's want is what GNU diff 3.8 prints with
// -U<context> --label a.md --label b.md.
func TestUnified(t *testing.T) {
	twelve := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	for _, tc := range []struct {
		name, a, b string
		context    int
		want       string
	}{
		{"equal", "x\ny\n", "x\ny\n", 3, ""},
		{"both empty", "", "", 3, ""},
		{"one line changed", "x\ny\nz\n", "x\nY\nz\n", 3, "@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n"},
		{"created", "", "one\ntwo\n", 3, "@@ -0,0 +1,2 @@\n+one\n+two\n"},
		{"emptied", "one\ntwo\n", "", 3, "@@ -1,2 +0,0 @@\n-one\n-two\n"},
		{"newline added", "a\nb", "a\nb\n", 3, "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"newline removed", "a\nb\n", "a\nc", 3, "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"},
		{"no newline on either", "same", "same\n", 0, "@@ -1 +1 @@\n-same\n\\ No newline at end of file\n+same\n"},
		{"two hunks", twelve, strings.Replace(strings.Replace(twelve, "\n2\n", "\nX\n", 1), "\n10\n", "\nY\n", 1), 3,
			"@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n@@ -7,6 +7,6 @@\n 7\n 8\n 9\n-10\n+Y\n 11\n 12\n"},
		{"two hunks, context 2", twelve, strings.Replace(strings.Replace(twelve, "\n2\n", "\nX\n", 1), "\n10\n", "\nY\n", 1), 2,
			"@@ -1,4 +1,4 @@\n 1\n-2\n+X\n 3\n 4\n@@ -8,5 +8,5 @@\n 8\n 9\n-10\n+Y\n 11\n 12\n"},
		{"a gap of twice the context joins", twelve, strings.Replace(strings.Replace(twelve, "\n2\n", "\nX\n", 1), "\n9\n", "\nY\n", 1), 3,
			"@@ -1,12 +1,12 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+Y\n 10\n 11\n 12\n"},
		{"insertion, no context", "1\n2\n3\n4\n", "1\n2\nnew\n3\n4\n", 0, "@@ -2,0 +3 @@\n+new\n"},
		{"negative context", "1\n2\n3\n4\n", "1\n2\nnew\n3\n4\n", -1, "@@ -2,0 +3 @@\n+new\n"},
		{"deletion", "1\n2\n3\n4\n", "1\n3\n4\n", 1, "@@ -1,3 +1,2 @@\n 1\n-2\n 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want != "" {
				want = "--- a.md\n+++ b.md\n" + want
			}
			got := diff.Unified("a.md", "b.md", tc.a, tc.b, tc.context)
			require.Equal(t, want, got)
		})
	}
}

// patch applies a unified diff to a, checking every context and removed
// line and each hunk's header: what patch(1) would do.
func patch(a, u string) (string, error) {
	if u == "" {
		return a, nil
	}
	var la []string
	for s := a; s != ""; {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		la = append(la, s[:i])
		s = s[i:]
	}
	ls := strings.SplitAfter(u, "\n")
	if len(ls) < 3 || !strings.HasPrefix(ls[0], "--- ") || !strings.HasPrefix(ls[1], "+++ ") {
		return "", errors.New("no header")
	}
	ls = ls[2 : len(ls)-1]
	var out strings.Builder
	at := 0 // lines of a written or skipped
	for len(ls) > 0 {
		var a0, an, b0, bn int
		h := ls[0]
		if _, err := fmt.Sscanf(strings.NewReplacer(",", " ", "-", "", "+", "").Replace(h), "@@ %d %d %d %d @@", &a0, &an, &b0, &bn); err != nil {
			// One-line ranges have no count: normalise them.
			f := strings.Fields(h)
			parse := func(s string) (int, int) {
				s = s[1:]
				if i := strings.IndexByte(s, ','); i >= 0 {
					x, _ := strconv.Atoi(s[:i])
					n, _ := strconv.Atoi(s[i+1:])
					return x, n
				}
				x, _ := strconv.Atoi(s)
				return x, 1
			}
			a0, an = parse(f[1])
			b0, bn = parse(f[2])
		}
		start := a0 - 1
		if an == 0 {
			start = a0
		}
		if start < at {
			return "", fmt.Errorf("hunk %q out of order", h)
		}
		for ; at < start; at++ {
			out.WriteString(la[at])
		}
		if b0v := out.Len(); b0v < 0 {
			return "", nil
		}
		ls = ls[1:]
		gotA, gotB := 0, 0
		for len(ls) > 0 && !strings.HasPrefix(ls[0], "@@") {
			l := ls[0]
			ls = ls[1:]
			text := l[1:]
			if len(ls) > 0 && ls[0] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				ls = ls[1:]
			}
			switch l[0] {
			case ' ', '-':
				if at >= len(la) || la[at] != text {
					return "", fmt.Errorf("line %d is %q, the diff says %q", at+1, la[at], text)
				}
				if l[0] == ' ' {
					out.WriteString(text)
					gotB++
				}
				at++
				gotA++
			case '+':
				out.WriteString(text)
				gotB++
			default:
				return "", fmt.Errorf("bad line %q", l)
			}
		}
		if gotA != an || gotB != bn {
			return "", fmt.Errorf("hunk %q has %d and %d lines", h, gotA, gotB)
		}
	}
	for ; at < len(la); at++ {
		out.WriteString(la[at])
	}
	return out.String(), nil
}

// randomText makes a text of lines drawn from a few, so that texts share
// many of them, sometimes without a last newline.
func randomText(r *rand.Rand, lines int, alphabet int) string {
	var b strings.Builder
	for range r.IntN(lines + 1) {
		b.WriteString("line " + strconv.Itoa(r.IntN(alphabet)) + "\n")
	}
	if r.IntN(3) == 0 {
		b.WriteString("last " + strconv.Itoa(r.IntN(2)))
	}
	return b.String()
}

func TestUnifiedApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		a, b := randomText(r, 30, 8), randomText(r, 30, 8)
		if i%2 == 0 { // an edit of a
			b = edit(r, a)
		}
		u := diff.Unified("a", "b", a, b, r.IntN(5))
		got, err := patch(a, u)
		require.NoError(t, err, "a=%q b=%q\n%s", a, b, u)
		require.Equal(t, b, got, "a=%q b=%q\n%s", a, b, u)
	}
}

// edit changes, removes and adds a few lines of a.
func edit(r *rand.Rand, a string) string {
	ls := strings.SplitAfter(a, "\n")
	for range r.IntN(4) + 1 {
		i := r.IntN(len(ls) + 1)
		switch r.IntN(3) {
		case 0:
			ls = append(ls[:i], append([]string{"new " + strconv.Itoa(r.IntN(100)) + "\n"}, ls[i:]...)...)
		case 1:
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		case 2:
			if i < len(ls) {
				ls[i] = "changed " + strconv.Itoa(r.IntN(100)) + "\n"
			}
		}
	}
	return strings.Join(ls, "")
}

func TestDeltaRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, old, new string }{
		{"both empty", "", ""},
		{"created", "", "# Title\n\nbody\n"},
		{"emptied", "# Title\n", ""},
		{"equal", "a\nb\nc\n", "a\nb\nc\n"},
		{"no newline at the end", "a\nb", "a\nb\nc"},
		{"control bytes and percent", "a\n", "a\r\n100%\x00\x7f\x1b[0m\ttab\n"},
		{"broken UTF-8", "é\n", "\xc3\n\xff\xfe é\n"},
		{"a changed character inside a multibyte one", "- 建军 said\n", "- 建国 said\n"},
		{"lines moved", "1\n2\n3\n4\n5\n", "5\n4\n3\n2\n1\n"},
		{"all changed", "a\nb\nc\n", "x\ny\nz\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDelta(t, []byte(tc.old), []byte(tc.new))
		})
	}
	d := diff.Delta(nil, []byte("hello"))
	require.Equal(t, "d1;5+5:hello", string(d))
	require.Equal(t, "d1;0", string(diff.Delta([]byte("x"), nil)))
	require.Equal(t, "d1;3+3:%25%0D%FF", string(diff.Delta(nil, []byte("%\r\xff"))))
}

// checkDelta checks that the delta from old to new rebuilds new, and is
// printable UTF-8.
func checkDelta(t testing.TB, old, new []byte) []byte {
	d := diff.Delta(old, new)
	require.True(t, utf8.Valid(d), "delta %q is not UTF-8", d)
	for _, c := range d {
		require.False(t, c < ' ' && c != '\n' && c != '\t' || c == 0x7f, "delta %q holds a control character", d)
	}
	got, err := diff.Apply(old, d)
	require.NoError(t, err, "delta %q", d)
	require.Equal(t, string(new), string(got), "delta %q", d)
	size, err := diff.Size(d)
	require.NoError(t, err)
	require.Equal(t, len(new), size)
	return d
}

// month makes an episode month file of about size bytes: a title, a
// summary line and entries.
func month(size int) (text string, entries int) {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Entry %d about the quarterly roadmap\n- Summary: Marcus and I reviewed item %d at the garage.\n- Date: 2026-11-%02d\n- Details: Nobody had the latest numbers, so I promised to send them by email (%d).\n\n", i, i, i%28+1, i*7)
		entries++
	}
	return b.String(), entries
}

// appendCase is an append to a 16 KB month file: its summary line at the
// top changes, and a 300-byte entry is added at the end.
func appendCase() (old, new []byte) {
	body, n := month(16 << 10)
	head := "# Episodes of 2026-11\n- Summary: %d entries, the last on 2026-11-%02d\n\n"
	entry := "## Sent the roadmap numbers to Marcus\n- Summary: I emailed Marcus the latest quarterly numbers as promised, with the garage notes.\n- Date: 2026-11-29\n- Details: He asked for the spreadsheet too; I said I would share it on Monday after cleaning it up a bit.\n\n"
	old = []byte(fmt.Sprintf(head, n, 28) + body)
	new = []byte(fmt.Sprintf(head, n+1, 29) + body + entry)
	return old, new
}

func TestDeltaAppendIsSmall(t *testing.T) {
	old, new := appendCase()
	require.Greater(t, len(old), 16<<10)
	d := checkDelta(t, old, new)
	t.Logf("delta of an append to a %d-byte month: %d bytes: %q", len(old), len(d), d[:60])
	require.Less(t, len(d), 400)
}

// TestBounded: texts the search gives up on still make correct deltas
// and diffs, and Delta and Unified return (the benchmarks time them).
func TestBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var a, b strings.Builder
	for a.Len() < 1<<20 {
		fmt.Fprintf(&a, "a line of the first text %d\n", r.Int64())
		fmt.Fprintf(&b, "a line of the second text %d\n", r.Int64())
	}
	cases := map[string][2]string{
		"nothing in common": {a.String(), b.String()},
		"repeated lines":    {strings.Repeat("x\n", 1<<19), strings.Repeat("x\ny\n", 1<<18)},
		"shuffled": func() [2]string {
			ls := strings.SplitAfter(strings.Repeat("", 0)+numbered(4000), "\n")
			sh := append([]string(nil), ls...)
			r.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
			return [2]string{strings.Join(ls, ""), strings.Join(sh, "")}
		}(),
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := checkDelta(t, []byte(c[0]), []byte(c[1]))
			require.Less(t, len(d), len(c[1])+len(c[1])/8+64)
			u := diff.Unified("a", "b", c[0], c[1], 3)
			got, err := patch(c[0], u)
			require.NoError(t, err)
			require.Equal(t, c[1], got)
		})
	}
}

// TestBeyondTheQuickSearch: changes of more than the quick search's edits
// are still found exactly, through the lines the two texts share.
func TestBeyondTheQuickSearch(t *testing.T) {
	var a, b, c, d, e strings.Builder
	for i := range 100 {
		fmt.Fprintf(&d, "old %d\n", i)
		fmt.Fprintf(&e, "shared %d\n", i)
	}
	for i := range 100 {
		fmt.Fprintf(&d, "shared %d\n", i)
		fmt.Fprintf(&e, "added %d\n", i)
	}
	for i := range 300 {
		fmt.Fprintf(&a, "line %d\n", i)
		if i%2 == 0 {
			fmt.Fprintf(&b, "line %d\n", i) // every other line removed
		}
		fmt.Fprintf(&c, "line %d\nnew %d\n", i, i) // a new line after each
	}
	for _, tc := range []struct {
		name           string
		a, b           string
		removed, added int
	}{
		{"every other line removed", a.String(), b.String(), 150, 0},
		{"a line added after each", a.String(), c.String(), 0, 300},
		{"both", b.String(), c.String(), 0, 450},
		{"shared lines between others", d.String(), e.String(), 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := diff.Unified("a", "b", tc.a, tc.b, 0)
			got, err := patch(tc.a, u)
			require.NoError(t, err)
			require.Equal(t, tc.b, got)
			var removed, added int
			for _, l := range strings.Split(u, "\n")[2:] {
				if strings.HasPrefix(l, "-") {
					removed++
				} else if strings.HasPrefix(l, "+") {
					added++
				}
			}
			require.Equal(t, tc.removed, removed)
			require.Equal(t, tc.added, added)
			checkDelta(t, []byte(tc.a), []byte(tc.b))
		})
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestApplyRejects(t *testing.T) {
	old := []byte("hello world\n")
	for _, tc := range []struct{ name, delta string }{
		{"empty", ""},
		{"another version", "d2;0"},
		{"no size", "d1;"},
		{"leading zero", "d1;05+5:hello"},
		{"huge size", "d1;99999999999999999999"},
		{"size beyond what it could make", "d1;100=0,5"},
		{"short", "d1;6+5:hello"},
		{"long", "d1;4+5:hello"},
		{"cut text", "d1;5+5:hel"},
		{"unknown op", "d1;5*5"},
		{"copy without length", "d1;5=0"},
		{"copy out of bounds", "d1;5=10,5"},
		{"copy past the end", "d1;20=0,20"},
		{"empty copy", "d1;0=0,0"},
		{"copies out of order", "d1;10=6,5=0,5"},
		{"copies overlapping", "d1;10=0,6=5,4"},
		{"insert without colon", "d1;5+5hello"},
		{"empty insert", "d1;0+0:"},
		{"control character", "d1;2+2:a\x01"},
		{"carriage return", "d1;2+2:a\r"},
		{"bad escape", "d1;1+1:%zz"},
		{"lower-case escape", "d1;1+1:%ff"},
		{"cut escape", "d1;1+1:%F"},
		{"broken UTF-8", "d1;2+2:\xc3("},
		{"a character straddling the end", "d1;2+1:é"},
		{"trailing bytes", "d1;5=0,5,"},
		{"number without digits", "d1;5=,5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := diff.Apply(old, []byte(tc.delta))
			require.ErrorIs(t, err, diff.ErrDelta)
		})
	}
	got, err := diff.Apply(old, []byte("d1;11=0,5+1:,=6,5"))
	require.NoError(t, err)
	require.Equal(t, "hello,world", string(got))
	got, err = diff.Apply(nil, []byte("d1;3+3:%25é"))
	require.NoError(t, err)
	require.Equal(t, "%é", string(got))
}

func FuzzDelta(f *testing.F) {
	old, new := appendCase()
	f.Add(old[:2000], new[:2100])
	f.Add([]byte("a\nb\nc"), []byte("a\nB\nc\n"))
	f.Add([]byte(""), []byte("x"))
	f.Add([]byte("é\xff\n%"), []byte("\x00é\n%\r\n"))
	f.Fuzz(func(t *testing.T, old, new []byte) {
		checkDelta(t, old, new)
		u := diff.Unified("a", "b", string(old), string(new), 3)
		got, err := patch(string(old), u)
		if err != nil || got != string(new) {
			t.Fatalf("the unified diff %q does not patch %q into %q: %v", u, old, new, err)
		}
	})
}

func FuzzApply(f *testing.F) {
	f.Add([]byte("hello world\n"), []byte("d1;11=0,5+1:,=6,5"))
	f.Add([]byte(""), []byte("d1;3+3:%25é"))
	f.Add([]byte("a\nb\n"), []byte("d1;4=0,2+2:c\n"))
	f.Fuzz(func(t *testing.T, old, delta []byte) {
		got, err := diff.Apply(old, delta)
		if err != nil {
			require.ErrorIs(t, err, diff.ErrDelta)
			return
		}
		require.LessOrEqual(t, len(got), len(old)+len(delta))
		// A delta Apply takes makes the same text from a delta Delta writes.
		again, err := diff.Apply(old, diff.Delta(old, got))
		require.NoError(t, err)
		require.True(t, bytes.Equal(got, again))
	})
}

func BenchmarkDeltaAppend(b *testing.B) {
	old, new := appendCase()
	var d []byte
	for b.Loop() {
		d = diff.Delta(old, new)
	}
	b.ReportMetric(float64(len(d)), "delta-bytes")
}

func BenchmarkApplyAppend(b *testing.B) {
	old, new := appendCase()
	d := diff.Delta(old, new)
	for b.Loop() {
		if _, err := diff.Apply(old, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUnified: two 15 KB fact files, a fifth of their lines changed.
func BenchmarkUnified(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	var a strings.Builder
	for i := 0; a.Len() < 15<<10; i++ {
		fmt.Fprintf(&a, "- Fact %d: the user prefers option %d for the %d-th kind of thing\n", i, r.IntN(100), i)
	}
	ls := strings.SplitAfter(a.String(), "\n")
	for i := range ls {
		if r.IntN(5) == 0 && ls[i] != "" {
			ls[i] = "- A changed fact " + strconv.Itoa(i) + "\n"
		}
	}
	x, y := a.String(), strings.Join(ls, "")
	for b.Loop() {
		diff.Unified("facts/user.md", "facts/user.md", x, y, 3)
	}
}

// BenchmarkHostile: two 1 MiB texts with no line in common, and one of
// many repeated lines against a reordering of them.
func BenchmarkHostile(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	var x, y strings.Builder
	for x.Len() < 1<<20 {
		fmt.Fprintf(&x, "first %d\n", r.Int64())
		fmt.Fprintf(&y, "second %d\n", r.Int64())
	}
	b.Run("nothing-in-common", func(b *testing.B) {
		xb, yb := []byte(x.String()), []byte(y.String())
		for b.Loop() {
			diff.Delta(xb, yb)
		}
	})
	b.Run("repeated-lines", func(b *testing.B) {
		xb, yb := []byte(strings.Repeat("x\ny\n", 1<<17)), []byte(strings.Repeat("y\nx\nx\n", 1<<17))
		for b.Loop() {
			diff.Delta(xb, yb)
		}
	})
}
