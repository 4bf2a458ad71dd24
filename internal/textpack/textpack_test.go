package textpack_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/textpack"
)

func TestRoundTrip(t *testing.T) {
	var d textpack.Dict
	texts := []string{
		"",
		"## Tokyo flight research\n- Summary: Spring Airlines cheapest for April\n- Date: 2026-02-26\n",
		"- Name: 建军 (Jianjun)\n- 老王昨天在杭州买了龙井茶。",
		strings.Repeat("a", 100) + " " + strings.Repeat("-", 60) + "\n\n",
		"tabs\tand  two  spaces, trailing space ",
		"\x00\x01 control \x7f bytes \xff\xfe broken utf-8",
	}
	var encs [][]byte
	for _, s := range texts {
		encs = append(encs, d.Append(nil, []byte(s)))
	}
	for i, s := range texts {
		require.Equal(t, s, string(d.Decode(nil, encs[i])), "text %d", i)
	}
	require.Positive(t, d.Words())
}

func TestCompact(t *testing.T) {
	var d textpack.Dict
	entry := "## Reviewed the quarterly roadmap with Marcus\n- Summary: Marcus and I reviewed the quarterly roadmap at the garage.\n- Date: 2026-03-01\n- Details: Nobody had the latest numbers, so I promised to send them by email.\n\n"
	var enc []byte
	for range 100 {
		enc = d.Append(enc, []byte(entry))
	}
	require.Less(t, len(enc), 100*len(entry)/3, "English prose takes under a third of its size")
	require.Equal(t, strings.Repeat(entry, 100), string(d.Decode(nil, enc)))
}

// TestManyWords: past the first 192 and 12,288 tokens the codes grow, and
// once the dictionary is full new tokens are kept as they are.
func TestManyWords(t *testing.T) {
	var d textpack.Dict
	var b strings.Builder
	for i := range 20000 {
		b.WriteString("w")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(strings.ToUpper(string(rune('a' + i%26))))
		for n := i; n > 0; n /= 10 {
			b.WriteByte(byte('0' + n%10))
		}
		b.WriteString(" ")
	}
	text := b.String()
	enc := d.Append(nil, []byte(text))
	require.Equal(t, text, string(d.Decode(nil, enc)))

	var full textpack.Dict
	full.SetLimit(3)
	enc = full.Append(nil, []byte("one two three four five two"))
	require.Equal(t, 3, full.Words())
	require.Equal(t, "one two three four five two", string(full.Decode(nil, enc)))
}

func TestDecodeMalformed(t *testing.T) {
	var d textpack.Dict
	d.Append(nil, []byte("hello world"))
	for _, enc := range [][]byte{
		{0xC0},             // a two-byte code cut short
		{0xF0, 0},          // a three-byte code cut short
		{0xFF},             // a literal without its length
		{0xFF, 10, 'a'},    // a literal longer than what is left
		{0xFE, 0xFF, 0xFF}, // a token the dictionary does not have
		{0x05},
	} {
		require.NotPanics(t, func() { d.Decode(nil, enc) })
	}
	require.Equal(t, "hello ", string(d.Decode(nil, []byte{0, 0xFF, 10, 'a'})))
}

func FuzzPack(f *testing.F) {
	f.Add("## Title\n- Date: 2026-02-26\n", "老王 tea")
	f.Fuzz(func(t *testing.T, a, b string) {
		var d textpack.Dict
		ea := d.Append(nil, []byte(a))
		eb := d.Append(nil, []byte(b))
		if got := string(d.Decode(nil, ea)); got != a {
			t.Fatalf("got %q, want %q", got, a)
		}
		if got := string(d.Decode(nil, eb)); got != b {
			t.Fatalf("got %q, want %q", got, b)
		}
		d.Decode(nil, []byte(b)) // anything: never panics
	})
}
