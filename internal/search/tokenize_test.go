package search_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/mdmemory/memory/internal/search"
)

func TestTokenize(t *testing.T) {
	long := strings.Repeat("x", search.MaxTokenBytes)
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"only separators", " \t\n-–,.!?", nil},
		{"only stopwords", "The and of, I did it", nil},
		{"lower-cased and stemmed", "Priya REVIEWED the Quarterly Budgets", []string{"priya", "review", "quarterli", "budget"}},
		{"inflections meet", "review reviews reviewed reviewing", []string{"review", "review", "review", "review"}},
		{"punctuation splits", "e-mail, don't; foo_bar/baz", []string{"e", "mail", "don", "foo", "bar", "baz"}},
		{"digits", "2016-01-05 at 10:30, v2 B2B", []string{"2016", "01", "05", "10", "30", "v2", "b2b"}},
		{"unicode letters", "Straße CAFÉ naïve Ελλάδα Москва", []string{"straße", "café", "naïve", "ελλάδα", "москва"}},
		{"ascii after non-ascii", "éA1b", []string{"éa1b"}},
		{"combining mark joins its word", "cafe\u0301 x", []string{"cafe\u0301", "x"}},
		{"leading mark is a separator", "\u0301abc", []string{"abc"}},
		{"chinese bigrams", "老王昨天在杭州", []string{"老王", "王昨", "昨天", "天在", "在杭", "杭州"}},
		{"one-character run", "茶 ok 我", []string{"茶", "ok", "我"}},
		{"punctuation ends a run", "老王，杭州。", []string{"老王", "杭州"}},
		{"mixed scripts split", "Met老王at杭州Office", []string{"met", "老王", "杭州", "offic"}},
		{"word then cjk then word", "café老王", []string{"café", "老王"}},
		{"japanese", "コーヒーを飲む", []string{"コー", "ーヒ", "ヒー", "ーを", "を飲", "飲む"}},
		{"korean", "서울 회의", []string{"서울", "회의"}},
		{"variation selector inside a run", "葛\U000E0100城", []string{"葛城"}},
		{"fullwidth latin is a word", "ＡＢＣ", []string{"ａｂｃ"}},
		{"long ascii word is cut", long + "yyyy rest", []string{long, "rest"}},
		{"long word is cut at a rune", strings.Repeat("é", 40), []string{strings.Repeat("é", search.MaxTokenBytes/2)}},
		{"invalid utf-8 separates", "ab\xffcd", []string{"ab", "cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, search.Tokenize(tt.text))
		})
	}
}

// TestTokenizeSubstring checks the promise CJK bigrams make: a CJK query of
// two or more characters has all its tokens in any text that contains it.
func TestTokenizeSubstring(t *testing.T) {
	text := search.Tokenize("老王昨天在杭州买了龙井茶")
	for _, q := range []string{"老王", "杭州", "龙井茶", "昨天在杭州"} {
		for _, tok := range search.Tokenize(q) {
			assert.Contains(t, text, tok, q)
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "Priya reviewed the budget", "老王昨天在杭州买了龙井茶。", "Met 老王 at 杭州",
		"cafe\u0301", "ＡＢＣ", "ǅ İ ẞ", "\xff\xfe", strings.Repeat("é", 70), "コーヒー", "葛\U000E0100城"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range search.Tokenize(s) {
			if tok == "" {
				t.Fatalf("empty token from %q", s)
			}
			if !utf8.ValidString(tok) {
				t.Fatalf("invalid UTF-8 token %q from %q", tok, s)
			}
			if strings.ToLower(tok) != tok {
				t.Fatalf("token %q from %q is not lower-case", tok, s)
			}
			if len(tok) > search.MaxTokenBytes+1 { // +1: stemming may add an e
				t.Fatalf("token %q from %q is too long", tok, s)
			}
		}
	})
}
