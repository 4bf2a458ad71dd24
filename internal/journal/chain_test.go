package journal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/journal"
)

// rec returns a record from version a to version b, named by their
// contents ("" for none); its body is whole content.
func rec(a, b string) journal.Record {
	r := journal.Record{Time: t0, Op: "write"}
	if a != "" {
		r.Old = v(a)
	}
	if b != "" {
		r = full("write", a, b)
	}
	if b == "-" { // a removal
		r.New, r.Full, r.Body, r.Op = "", false, "", "remove"
	}
	return r
}

func TestLanded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records []journal.Record
		current string // content, "" for no file
		want    []int
		end     string // content End returns; current when "="
	}{
		{"empty log", nil, "", nil, "="},
		{"empty log, a file", nil, "A", nil, ""},
		{"a chain", []journal.Record{rec("", "A"), rec("A", "B"), rec("B", "C")}, "C", []int{0, 1, 2}, "="},
		{"a crash: a record not followed by its change", []journal.Record{rec("", "A"), rec("A", "B")}, "A", []int{0}, "="},
		{"a crash, then a change", []journal.Record{rec("", "A"), rec("A", "B"), rec("A", "C")}, "C", []int{0, 2}, "="},
		{"a crash of the first change", []journal.Record{rec("", "A")}, "", nil, "="},
		{"a crash of the first change, then one", []journal.Record{rec("", "A"), rec("", "B")}, "B", []int{1}, "="},
		{"a lost race, the loser's record first", []journal.Record{rec("", "V"), rec("V", "X"), rec("V", "Y"), rec("Y", "Z")}, "Z", []int{0, 2, 3}, "="},
		{"a lost race, the loser's record last", []journal.Record{rec("", "V"), rec("V", "Y"), rec("V", "X")}, "Y", []int{0, 1}, "="},
		{"a crash retried: the latest record", []journal.Record{rec("", "A"), rec("A", "B"), rec("A", "B")}, "B", []int{0, 2}, "="},
		{"an outside change not yet recorded", []journal.Record{rec("", "A"), rec("A", "B")}, "Q", []int{0, 1}, "B"},
		{"an outside change recorded", []journal.Record{rec("", "A"), rec("A", "Q"), rec("Q", "R")}, "R", []int{0, 1, 2}, "="},
		{"an outside revert to an earlier version", []journal.Record{rec("", "A"), rec("A", "B"), rec("B", "C")}, "A", []int{0, 1, 2}, "C"},
		{"removed and made again", []journal.Record{rec("", "A"), rec("A", "-"), rec("", "B")}, "B", []int{0, 1, 2}, "="},
		{"removed", []journal.Record{rec("", "A"), rec("A", "-")}, "", []int{0, 1}, "="},
		{"a pruned log starts where it starts", []journal.Record{rec("P", "A"), rec("A", "B")}, "B", []int{0, 1}, "="},
		{"a pruned log, its first record at the current version", []journal.Record{rec("P", "A"), rec("A", "B")}, "A", []int{0}, "="},
		{"nothing landed, the file changed outside", []journal.Record{rec("", "A")}, "Q", []int{0}, "A"},
		{"a cycle of versions", []journal.Record{rec("", "A"), rec("A", "B"), rec("B", "A"), rec("A", "B"), rec("B", "C")}, "C", []int{0, 1, 2, 3, 4}, "="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := ""
			if tc.current != "" {
				cur = v(tc.current)
			}
			got := journal.Landed(tc.records, cur)
			require.Equal(t, tc.want, got)
			want := cur
			if tc.end != "=" {
				want = ""
				if tc.end != "" {
					want = v(tc.end)
				}
			}
			require.Equal(t, want, journal.End(tc.records, got))
		})
	}
}

func TestContent(t *testing.T) {
	a, b, c := "# T\n- one\n", "# T\n- one\n- two\n", "# T\n- one\n- two\n- three\n"
	recs := []journal.Record{full("write", "", a), delta("append", a, b), delta("append", b, c)}
	for _, s := range []string{a, b, c} {
		got, err := journal.Content(recs, v(s))
		require.NoError(t, err)
		require.Equal(t, s, string(got))
	}
	_, err := journal.Content(recs, "")
	require.ErrorIs(t, err, journal.ErrNoContent)
	_, err = journal.Content(recs, v("never"))
	require.ErrorIs(t, err, journal.ErrNoContent)
	// A delta whose base the log does not make.
	_, err = journal.Content(recs[1:], v(b))
	require.ErrorIs(t, err, journal.ErrNoContent)
	// A body that does not apply.
	bad := append([]journal.Record(nil), recs...)
	bad[1].Body = "d1;5+5:hello"
	_, err = journal.Content(bad, v(c))
	require.ErrorIs(t, err, journal.ErrNoContent)
	// A body that makes other content than its version.
	bad[1].Body = recs[2].Body
	bad[1].Full = true
	bad[1].Body = full("write", "", "other").Body
	_, err = journal.Content(bad, v(b))
	require.ErrorIs(t, err, journal.ErrNoContent)
	// When the latest record of a version fails, an earlier one is tried.
	bad = append(append([]journal.Record(nil), recs...), bad[1])
	got, err := journal.Content(bad, v(b))
	require.NoError(t, err)
	require.Equal(t, b, string(got))
}

// facts returns a fact file of n lines.
func facts(n int) string {
	var s strings.Builder
	s.WriteString("# User\n- Summary: what the user told us\n\n")
	for i := range n {
		s.WriteString("- The user mentioned fact number " + itoa(i) + " about their work and their garden.\n")
	}
	return s.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestNewRecord(t *testing.T) {
	now := t0.Add(time.Hour)
	t.Run("a creation is whole", func(t *testing.T) {
		r := journal.NewRecord(nil, "write", "conv-1", "", nil, v("a\n"), []byte("a\n"), now)
		require.Equal(t, journal.Record{Time: now, Op: "write", Actor: "conv-1", New: v("a\n"), Full: true, Body: "d1;2+2:a\n"}, r)
	})
	t.Run("a removal has no body", func(t *testing.T) {
		r := journal.NewRecord([]journal.Record{rec("", "a\n")}, "remove", "x", v("a\n"), []byte("a\n"), "", nil, now)
		require.Equal(t, journal.Record{Time: now, Op: "remove", Actor: "x", Old: v("a\n")}, r)
	})
	t.Run("an append is a delta", func(t *testing.T) {
		old, new := facts(100), facts(101)
		recs := []journal.Record{rec("", old)}
		r := journal.NewRecord(recs, "append", "x", v(old), []byte(old), v(new), []byte(new), now)
		require.False(t, r.Full)
		require.Less(t, len(r.Body), 120)
		got, err := journal.Content(append(recs, r), v(new))
		require.NoError(t, err)
		require.Equal(t, new, string(got))
	})
	t.Run("a rewrite is whole", func(t *testing.T) {
		old, new := facts(3), "# Other\n- all new\n"
		r := journal.NewRecord([]journal.Record{rec("", old)}, "write", "x", v(old), []byte(old), v(new), []byte(new), now)
		require.True(t, r.Full)
	})
	t.Run("old content not in the log", func(t *testing.T) {
		old, new := facts(100), facts(101)
		r := journal.NewRecord([]journal.Record{rec("", "other")}, "append", "x", v(old), []byte(old), v(new), []byte(new), now)
		require.True(t, r.Full)
	})
	t.Run("old content not old's", func(t *testing.T) {
		old, new := facts(100), facts(101)
		r := journal.NewRecord([]journal.Record{rec("", old)}, "append", "x", v(old), []byte(facts(99)), v(new), []byte(new), now)
		require.True(t, r.Full)
	})
	t.Run("old content read from the log", func(t *testing.T) {
		old, new := facts(100), facts(101)
		recs := []journal.Record{rec("", old)}
		r := journal.NewRecord(recs, journal.Outside, "", v(old), nil, v(new), []byte(new), now)
		require.False(t, r.Full)
		bad := recs[0]
		bad.Body = "d1;1+1:x"
		r = journal.NewRecord([]journal.Record{bad}, journal.Outside, "", v(old), nil, v(new), []byte(new), now)
		require.True(t, r.Full, "when the log cannot rebuild it")
	})
	t.Run("whole every K versions", func(t *testing.T) {
		var recs []journal.Record
		old := ""
		var kinds []bool
		for i := range 2*journal.FullEvery + 1 {
			new := facts(100 + i)
			var oc []byte
			if old != "" {
				oc = []byte(old)
			}
			ov := ""
			if old != "" {
				ov = v(old)
			}
			r := journal.NewRecord(recs, "append", "x", ov, oc, v(new), []byte(new), now)
			recs = append(recs, r)
			kinds = append(kinds, r.Full)
			old = new
		}
		for i, f := range kinds {
			require.Equal(t, i%journal.FullEvery == 0, f, "record %d", i)
		}
	})
	t.Run("whole when the deltas would outgrow the content", func(t *testing.T) {
		// Small content, each change most of it: the chain's deltas add up.
		var recs []journal.Record
		old := ""
		fulls := 0
		for i := range 12 {
			new := "# T\n" + strings.Repeat("- line "+itoa(i)+"\n", 1) + "- a long line that stays the same for a while, long enough\n"
			var oc []byte
			ov := ""
			if old != "" {
				oc, ov = []byte(old), v(old)
			}
			r := journal.NewRecord(recs, "write", "x", ov, oc, v(new), []byte(new), now)
			if r.Full {
				fulls++
			}
			recs = append(recs, r)
			old = new
		}
		require.Greater(t, fulls, 2)
		for _, r := range recs {
			got, err := journal.Content(recs, r.New)
			require.NoError(t, err)
			require.Equal(t, r.New, journal.Version(got))
		}
	})
	t.Run("a delta chain broken in the log", func(t *testing.T) {
		a, b, c := facts(100), facts(101), facts(102)
		recs := []journal.Record{rec("", a), delta("append", a, b)}
		recs[1].Old = v("gone") // b's base is not in the log
		r := journal.NewRecord(recs, "append", "x", v(b), []byte(b), v(c), []byte(c), now)
		require.True(t, r.Full)
	})
}

// TestListed: a log whose start pruning cut leaves out its base record,
// whose version before it no longer holds; a log from the file's creation,
// or whose first record's version before an earlier record makes, keeps
// them all.
func TestListed(t *testing.T) {
	chain := []journal.Record{rec("", "A"), rec("A", "B"), rec("B", "C")}
	require.Equal(t, []int{0, 1, 2}, journal.Listed(chain, journal.Landed(chain, v("C"))))
	pruned := journal.Prune(chain, v("C"), t0.Add(time.Hour), journal.Policy{MinVersions: 2, MaxAge: time.Nanosecond})
	require.Len(t, pruned, 2)
	require.Equal(t, []int{1}, journal.Listed(pruned, journal.Landed(pruned, v("C"))))
	notLanded := []journal.Record{rec("", "A"), rec("A", "X"), rec("A", "B")}
	require.Equal(t, []int{0, 2}, journal.Listed(notLanded, journal.Landed(notLanded, v("B"))))
	require.Equal(t, []int{2}, journal.Listed(notLanded, []int{2}), "a version before that an earlier record makes")
	require.Empty(t, journal.Listed(nil, nil))
}

// TestFirstTime: the time of a log's first record, from the first bytes
// of its line alone.
func TestFirstTime(t *testing.T) {
	line := journal.Append(nil, rec("", "A"))
	got, ok := journal.FirstTime(line[:40])
	require.True(t, ok)
	require.Equal(t, t0, got)
	for _, bad := range []string{"", `{"op":"write"}`, `{"t":"2026-`, `{"t":"yesterday","op":"x"}`} {
		_, ok := journal.FirstTime([]byte(bad))
		require.False(t, ok, bad)
	}
}
