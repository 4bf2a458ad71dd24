package journal_test

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/journal"
)

func TestScrub(t *testing.T) {
	for _, c := range []struct{ name, in, text, want string }{
		{"none", "# Facts\n- likes tea\n", "coffee", "# Facts\n- likes tea\n"},
		{"inside a line", "- key sk-123 for x\n", "sk-123", "- key  for x\n"},
		{"a bullet's value", "# F\n- sk-123\n- tea\n", "sk-123", "# F\n- tea\n"},
		{"a whole line", "a\nsecret line\nb\n", "secret line", "a\nb\n"},
		{"a line with its newline", "a\nsecret line\nb\n", "secret line\n", "a\nb\n"},
		{"the last line, no newline", "a\n- secret", "secret", "a\n"},
		{"a numbered item", "1. secret\n2. tea\n", "secret", "2. tea\n"},
		{"a quote", "> secret\nx\n", "secret", "x\n"},
		{"a task", "- [ ] secret\n", "secret", ""},
		{"several on a line", "secret and secret\n", "secret", " and \n"},
		{"several lines", "- aaaa\n- aaaa\n- b\n", "aaaa", "- b\n"},
		{"spanning lines", "x\nsec\nret\ny\n", "sec\nret", "x\ny\n"},
		{"an empty line untouched", "a\n\nsecret\n", "secret", "a\n\n"},
		{"empty text", "abc", "", "abc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, n := journal.Scrub([]byte(c.in), []byte(c.text))
			require.Equal(t, c.want, string(got))
			if c.text != "" {
				require.Equal(t, strings.Count(c.in, c.text), n)
			}
		})
	}
}

// redactCheck redacts the log of s and checks what Redact promises: the
// chain as it was, no record holding text, every version that could be
// read still read (without text), in every state a rewrite of the
// segments from the last to the first passes through, and nothing more
// to redact after.
func redactCheck(t testing.TB, s *sim, text string, every int) {
	recs := s.records(t)
	var starts []int
	if every > 0 {
		for i := 0; i < len(recs); i += every {
			starts = append(starts, i)
		}
	}
	out, held := journal.Redact(recs, []byte(text), starts)
	require.Len(t, out, len(recs))
	cur := s.version()
	require.Equal(t, journal.Landed(recs, cur), journal.Landed(out, cur))
	for i, r := range out {
		require.Equal(t, recs[i].Old, r.Old)
		require.Equal(t, recs[i].New, r.New)
		require.Equal(t, recs[i].Op, r.Op)
		require.True(t, recs[i].Time.Equal(r.Time))
		if !syntax(text) {
			require.NotContains(t, r.Body, text)
			plain, _ := url.PathUnescape(r.Body)
			require.NotContains(t, plain, text)
		}
		require.NotContains(t, r.Actor, text)
	}
	for _, i := range held {
		require.True(t, strings.Contains(recs[i].Actor, text) || out[i].Redacted != "", "record %d", i)
	}
	if every == 0 {
		starts = []int{0}
	}
	for k := len(starts) - 1; k >= -1; k-- {
		// Segments k+1 on redacted (all when k is -1), the others not.
		from := len(recs)
		if k+1 < len(starts) {
			from = starts[k+1]
		}
		mixed := append(append([]journal.Record(nil), recs[:from]...), out[from:]...)
		if k == -1 {
			mixed = out
		}
		for _, r := range recs {
			if r.New == "" || journal.IsMark(r) {
				continue
			}
			was, err := journal.Content(recs, r.New)
			if err != nil {
				continue
			}
			got, err := journal.Content(mixed, r.New)
			require.NoError(t, err, "version %s with segments from %d redacted", r.New, from)
			scrubbed, _ := journal.Scrub(was, []byte(text))
			if k == -1 {
				require.Equal(t, string(scrubbed), string(got))
			} else {
				require.True(t, bytes.Equal(got, was) || bytes.Equal(got, scrubbed))
			}
		}
	}
	// Pruned after, the versions kept still read without it.
	pruned := journal.Prune(out, cur, s.now, journal.Policy{MinVersions: 2, MaxAge: time.Hour})
	for _, i := range journal.Landed(pruned, cur) {
		if r := pruned[i]; r.New != "" {
			got, err := journal.Content(pruned, r.New)
			require.NoError(t, err, "pruned, %s", r.New)
			require.NotContains(t, string(got), text)
		}
	}
	again, held := journal.Redact(out, []byte(text), starts)
	require.Empty(t, held)
	require.Equal(t, out, again)
	decoded, errs := journal.Decode(journal.Encode(out))
	require.Empty(t, errs)
	require.Equal(t, out, decoded)
}

// syntax reports a text that a delta's own syntax ("d1;12=0,5+3:") may
// hold, not only its content.
func syntax(text string) bool {
	return strings.ContainsAny(text, ";=,+:") || strings.Trim(text, "d0123456789") == ""
}

func TestRedact(t *testing.T) {
	for _, steps := range [][]byte{
		{0, 0, 0, 3, 0, 3, 3, 0, 7},
		{0, 1, 4, 0, 4, 4, 7 | 8, 0},
		{0, 5, 5, 0, 5 | 8, 0, 5 | 24, 0},
		{0, 6, 0, 6 | 80, 6 | 40, 0, 7 | 248},
		{0, 2, 2 | 8, 2, 0, 7 | 24},
	} {
		s := run(t, steps)
		for _, text := range []string{"fact 1", "fact 2\n", "(an editor)", "Summary", "not there"} {
			for _, every := range []int{0, 1, 3} {
				redactCheck(t, s, text, every)
			}
		}
	}
	var long []byte
	for i := range 200 {
		long = append(long, byte(i*37+i/7))
	}
	s := run(t, long)
	redactCheck(t, s, "fact 1", 0)
	redactCheck(t, s, "fact 3", 7)
}

// A record whose content cannot be rebuilt, but whose body holds the
// text, is made a redacted record of empty content; an actor's name
// loses the text too.
func TestRedactUnreadable(t *testing.T) {
	secret := "sk-proj-%abc"
	orphan := delta("write", "# A\n", "# A\n- key "+secret+"\n") // its base is not in the log
	r := full("write", "", "# B\n")
	r.Actor = "conv " + secret
	out, held := journal.Redact([]journal.Record{orphan, r}, []byte(secret), nil)
	require.Equal(t, []int{0, 1}, held)
	require.NotContains(t, out[0].Body, "abc")
	require.Equal(t, journal.Version(nil), out[0].Redacted)
	got, err := journal.Content(out, orphan.New)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Equal(t, "conv ", out[1].Actor)
	require.Equal(t, r.Body, out[1].Body)
	require.Empty(t, out[1].Redacted)
}

// After a redaction, a change from a redacted version is recorded whole:
// the file's content (the text put back by hand) is not what the log
// rebuilds for that version's name.
func TestNewRecordAfterRedact(t *testing.T) {
	a, b := "# F\n- key secret\n", "# F\n- key secret\n- tea\n"
	recs := []journal.Record{full("write", "", a), delta("append", a, b)}
	out, _ := journal.Redact(recs, []byte("secret"), nil)
	c := b + "- coffee\n"
	r := journal.NewRecord(out, "append", "conv", v(b), []byte(b), v(c), []byte(c), t0.Add(time.Hour))
	require.True(t, r.Full)
	got, err := journal.Content(append(out, r), v(c))
	require.NoError(t, err)
	require.Equal(t, c, string(got))
}

func TestRedactedRecordsDecode(t *testing.T) {
	r := full("write", "", "# F\n")
	r.Redacted = v("# G\n")
	line := journal.Append(nil, r)
	require.Contains(t, string(line), `"redacted":"`+v("# G\n")+`"`)
	got, errs := journal.Decode(line)
	require.Empty(t, errs)
	require.Equal(t, []journal.Record{r}, got)
	// Reordered, by encoding/json.
	got, errs = journal.Decode([]byte(`{"op":"write","t":"2026-11-01T09:30:00Z","actor":"","old":"","redacted":"` + v("x") + `","new":"` + v("y") + `","full":true,"body":"d1;1+1:x"}` + "\n"))
	require.Empty(t, errs)
	require.Equal(t, v("x"), got[0].Redacted)
	for _, bad := range []string{
		`{"t":"2026-11-01T09:30:00Z","op":"remove","actor":"","old":"` + v("x") + `","new":"","redacted":"` + v("y") + `"}`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"","old":"","new":"` + v("y") + `","redacted":"xyz","full":true,"body":"d1;0"}`,
	} {
		_, errs := journal.Decode([]byte(bad + "\n"))
		require.Len(t, errs, 1, bad)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0, 3, 3, 0, 7}, "fact 1", uint8(2))
	f.Add([]byte{0, 1, 4, 0, 4, 4, 7 | 8, 0}, "editor", uint8(0))
	f.Add([]byte{0, 5, 5, 0, 5 | 8, 0, 5 | 24, 0, 6, 0, 7 | 248}, "- fact", uint8(1))
	f.Fuzz(func(t *testing.T, steps []byte, text string, every uint8) {
		if len(steps) > 200 {
			steps = steps[:200]
		}
		if text == "" {
			return
		}
		redactCheck(t, run(t, steps), text, int(every%8))
	})
}

// TestDamaged: the lines that are not records and hold a text, as it is or
// escaped as a record writes it, with what they name; records and lines
// that do not hold it are left alone.
func TestDamaged(t *testing.T) {
	now := time.Date(2026, 2, 26, 9, 30, 0, 0, time.UTC)
	r := journal.NewRecord(nil, "write", "", "", nil, journal.Version([]byte("Bob \"quit\"\n")), []byte("Bob \"quit\"\n"), now)
	log := journal.Encode([]journal.Record{r})
	log = append(log, `{"t":"2026-02-26T09:31:00Z","new":"v1","body":"Bob \"quit\" \u00e9\u20ac\x \u12"}`+"\n"...)
	log = append(log, "no text here\n\n"...)
	log = append(log, `{"new":"a\"b","body":"d1;5+5:Bob \"quit\"%0A and 100%25`...)
	got := journal.Damaged(log, []byte(`Bob "quit"`))
	require.Equal(t, []journal.Damage{{Line: 2, New: "v1", Time: now.Add(time.Minute)}, {Line: 5}}, got, "the record holds it too, but is a record")
	require.Len(t, journal.Damaged(log, []byte("é€\\x \\u12")), 1, "escapes undone as far as they go")
	require.Len(t, journal.Damaged(log, []byte("\"\n and 100%")), 1)
	require.Empty(t, journal.Damaged(log, []byte("nowhere")))
	require.Len(t, journal.Damaged(log, []byte("text here")), 1, "a line that is no JSON at all")
}
