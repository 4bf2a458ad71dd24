package journal_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/diff"
	"github.com/mdmemory/memory/internal/journal"
)

var t0 = time.Date(2026, 11, 1, 9, 30, 0, 123456789, time.UTC)

// v returns the version of s.
func v(s string) string { return journal.Version([]byte(s)) }

// full returns a record of a change from old to new content, new whole.
func full(op, old, new string) journal.Record {
	r := journal.Record{Time: t0, Op: op, Actor: "conv-1", New: v(new), Full: true, Body: string(diff.Delta(nil, []byte(new)))}
	if old != "" {
		r.Old = v(old)
	}
	return r
}

// delta returns a record of a change from old to new content, as a delta.
func delta(op, old, new string) journal.Record {
	return journal.Record{Time: t0, Op: op, Actor: "conv-1", Old: v(old), New: v(new), Body: string(diff.Delta([]byte(old), []byte(new)))}
}

func TestVersion(t *testing.T) {
	// memory.Version of the same content.
	require.Equal(t, "e3b0c44298fc1c149afbf4c8", journal.Version(nil))
	require.Len(t, v("x"), 24)
}

func TestEncodeDecode(t *testing.T) {
	recs := []journal.Record{
		full("write", "", "# Facts\n- likes tea\n"),
		delta("append", "# Facts\n- likes tea\n", "# Facts\n- likes tea\n- \"quoted\" <b>&\\ é\r\x00\n"),
		{Time: t0.Add(time.Hour), Op: "remove", Actor: "a \"host\"\n\tname\x01 🙂", Old: v("# Facts\n- likes tea\n- \"quoted\" <b>&\\ é\r\x00\n")},
	}
	log := journal.Encode(recs)
	require.Equal(t, 3, strings.Count(string(log), "\n"))
	require.NotContains(t, string(log), `\u003c`, "no HTML escapes")
	got, errs := journal.Decode(log)
	require.Empty(t, errs)
	require.Equal(t, recs, got)
	// Each line is JSON as encoding/json reads it.
	for _, l := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		require.Regexp(t, `^2026-11-01T\d\d:30:00.123456789Z$`, m["t"])
	}
	// A time in another zone is written in UTC.
	r := recs[0]
	r.Time = t0.In(time.FixedZone("x", 3600))
	require.Contains(t, string(journal.Append(nil, r)), `"t":"2026-11-01T09:30:00.123456789Z"`)
	// Text that is not UTF-8 is written as encoding/json writes it.
	r.Actor = "bad \xff byte"
	got, errs = journal.Decode(journal.Append(nil, r))
	require.Empty(t, errs)
	require.Equal(t, "bad \ufffd byte", got[0].Actor)
}

func TestDecodeDamage(t *testing.T) {
	good := journal.Encode([]journal.Record{full("write", "", "a\n"), delta("append", "a\n", "a\nb\n")})
	lines := strings.SplitAfter(string(good), "\n")
	t.Run("a cut last line is left out", func(t *testing.T) {
		for cut := 1; cut < len(lines[1]); cut++ {
			recs, errs := journal.Decode([]byte(lines[0] + lines[1][:cut]))
			require.Empty(t, errs)
			require.Len(t, recs, 1)
		}
	})
	t.Run("a cut line followed by others is reported", func(t *testing.T) {
		log := lines[0] + lines[1][:20] + "\n" + lines[1] + "\n"
		recs, errs := journal.Decode([]byte(log))
		require.Len(t, recs, 2)
		require.Len(t, errs, 1)
		var le *journal.LineError
		require.True(t, errors.As(errs[0], &le))
		require.Equal(t, 2, le.Line)
		require.ErrorIs(t, errs[0], journal.ErrRecord)
		require.Contains(t, errs[0].Error(), "line 2:")
	})
	t.Run("a line too long", func(t *testing.T) {
		long := `{"t":"` + strings.Repeat("x", journal.MaxLine) + "\"}\n"
		recs, errs := journal.Decode([]byte(lines[0] + long + lines[1]))
		require.Len(t, recs, 2)
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], journal.ErrRecord)
	})
}

func TestDecodeRejects(t *testing.T) {
	ok := full("write", "", "a\n")
	for _, tc := range []struct {
		name string
		line string
		edit func(r *journal.Record)
	}{
		{name: "not JSON", line: "not json"},
		{name: "a bad time", line: `{"t":"yesterday","op":"write","actor":"","old":"","new":""}`},
		{name: "no operation", edit: func(r *journal.Record) { r.Op = "" }},
		{name: "an operation not a word", edit: func(r *journal.Record) { r.Op = "Write!" }},
		{name: "a long operation", edit: func(r *journal.Record) { r.Op = strings.Repeat("w", 17) }},
		{name: "a short version", edit: func(r *journal.Record) { r.New = "abc" }},
		{name: "an upper-case version", edit: func(r *journal.Record) { r.Old = strings.ToUpper(v("x")) }},
		{name: "a removal with a body", edit: func(r *journal.Record) { r.New = "" }},
		{name: "a change without a body", edit: func(r *journal.Record) { r.Body, r.Full = "", false }},
		{name: "a delta against no content", edit: func(r *journal.Record) { r.Full = false }},
		{name: "a body that is no delta", edit: func(r *journal.Record) { r.Body = "a\n" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.line
			if tc.edit != nil {
				r := ok
				tc.edit(&r)
				l = string(journal.Append(nil, r))
			}
			recs, errs := journal.Decode([]byte(strings.TrimSuffix(l, "\n") + "\n"))
			require.Empty(t, recs)
			require.Len(t, errs, 1)
			require.ErrorIs(t, errs[0], journal.ErrRecord)
		})
	}
	recs, errs := journal.Decode([]byte("\n\n" + string(journal.Append(nil, ok))))
	require.Empty(t, errs, "empty lines are skipped")
	require.Len(t, recs, 1)
}
