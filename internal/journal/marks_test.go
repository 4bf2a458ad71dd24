package journal

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMarks: a mark tells what the chain alone cannot: a change undone by
// hand stays in the history, and a change whose write lost a race to an
// editor is not taken as made.
func TestMarks(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	v0, v1, v2, y := []byte("a\n"), []byte("a\nb\n"), []byte("a\nb\nbad\n"), []byte("a\nperson\n")
	rec := func(prev []Record, op string, old, new []byte) Record {
		ov := ""
		if old != nil {
			ov = Version(old)
		}
		return NewRecord(prev, op, "conv", ov, old, Version(new), new, now)
	}

	t.Run("undone by hand", func(t *testing.T) {
		var log []Record
		r := rec(log, "write", nil, v1)
		log = append(log, r, Mark(MarkLanded, r, now))
		r = rec(log, "write", v1, v2)
		log = append(log, r, Mark(MarkLanded, r, now))
		// The person reverts to v1: the chain alone would end at v1.
		landed := Landed(log, Version(v1))
		require.Equal(t, []int{0, 2}, landed, "both writes landed")
		require.Equal(t, Version(v2), End(log, landed), "the revert is an outside change from v2")
		got, err := Content(log, Version(v2))
		require.NoError(t, err)
		require.Equal(t, v2, got)

		// Without marks the chain takes the revert for a crash.
		require.Equal(t, []int{0}, Landed([]Record{log[0], log[2]}, Version(v1)))
	})

	t.Run("lost race", func(t *testing.T) {
		var log []Record
		r := rec(log, "write", nil, v0)
		log = append(log, r, Mark(MarkLanded, r, now))
		lost := rec(log, "write", v0, v1) // an editor saved y before the write
		log = append(log, lost, Mark(MarkAborted, lost, now))
		out := NewRecord(log, Outside, "", Version(v0), nil, Version(y), y, now)
		log = append(log, out)
		again := rec(log, "write", y, v2)
		log = append(log, again, Mark(MarkLanded, again, now))
		landed := Landed(log, Version(v2))
		require.Equal(t, []int{0, 4, 5}, landed, "the lost write is not a change")
		for _, i := range landed {
			require.False(t, IsMark(log[i]))
		}
	})

	t.Run("a mark marks its own record", func(t *testing.T) {
		r := rec(nil, "write", nil, v0)
		m := marks([]Record{r, r, Mark(MarkAborted, r, now)})
		require.Equal(t, []int8{0, -1, 0}, m, "the latest unmarked record of the same versions")
		require.Equal(t, []int8{0}, marks([]Record{Mark(MarkLanded, r, now)}), "a mark of nothing marks nothing")
	})
}

// TestCut: a record a kill cut short is told from a line someone edited.
func TestCut(t *testing.T) {
	whole := Append(nil, Record{Time: time.Now(), Op: "write", New: Version([]byte("x")), Full: true, Body: "d1;1+1:x"})
	for n := 6; n < len(whole)-1; n++ {
		require.True(t, Cut(whole[:n]), "cut at %d", n)
	}
	require.False(t, Cut([]byte("hello\n")))
	require.False(t, Cut([]byte(`{"t":"x"} trailing`)))
	require.False(t, Cut(whole), "whole")
}
