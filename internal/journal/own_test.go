package journal

import (
	"encoding/json"
	"testing"
)

// FuzzParseOwn: the fast reader of lines agrees with encoding/json on
// every line it takes.
func FuzzParseOwn(f *testing.F) {
	f.Add([]byte(`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"a \"b\"\\ \/ \n\r\t é","old":"","new":"0123456789abcdef01234567","full":true,"body":"d1;2+2:a\n"}`))
	f.Add([]byte(`{"t":"2026-11-01T09:30:00Z","op":"remove","actor":"x","old":"0123456789abcdef01234567","new":""}`))
	f.Add([]byte(`{"t":"x","op":"w","actor":"\u00e9\ud800","old":"","new":"","extra":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		own, ok := parseOwn(b)
		if !ok {
			return
		}
		var std line
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("%q: taken, but encoding/json: %v", b, err)
		}
		if own != std {
			t.Fatalf("%q: read as %+v, encoding/json reads %+v", b, own, std)
		}
	})
}

func TestParseOwnFallsBack(t *testing.T) {
	for _, l := range []string{
		`{"op":"write","t":"2026-11-01T09:30:00Z","actor":"","old":"","new":""}`,       // another order
		`{"t": "2026-11-01T09:30:00Z","op":"write","actor":"","old":"","new":""}`,      // a space
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"\u0001","old":"","new":""}`, // an escape Append writes, but not read fast
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"` + "\xff" + `","old":"","new":""}`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"a` + "\t" + `","old":"","new":""}`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"abcdefghij` + "\x01" + `","old":"","new":""}`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"abc\` + "\x01" + `","old":"","new":""}`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"abc\`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"abc\"`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"","old":"","new":"","body":1}`,
		`{"t":"2026-11-01T09:30:00Z","op":"write","actor":"","old":"","new":"","x":1}`,
		`{"t":2026}`,
	} {
		if _, ok := parseOwn([]byte(l)); ok {
			t.Errorf("%q read fast", l)
		}
	}
}
