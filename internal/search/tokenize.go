package search

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes bounds a word token. Longer words (base64 blobs, minified
// code) are cut at a rune boundary; documents and queries are cut the same
// way, so a long word still matches itself.
const maxTokenBytes = 64

// Tokenize returns the index terms of text, in order, with repeats: the
// tokens [Index.Search] matches a query against. An empty or token-free text
// gives nil.
//
// Text is lower-cased and split into words at every rune that is not a
// Unicode letter, decimal digit or combining mark. Each word that is not an
// English stopword ("the", "and", "did", …) is stemmed: the light
// Porter-style stemmer in stem.go strips inflections, so "reviews",
// "reviewed" and "reviewing" all give "review". Runs of CJK characters (Han,
// Hiragana, Katakana, Hangul) are not words: they give their overlapping
// character bigrams ("老王昨天" gives 老王, 王昨, 昨天), or the lone character
// for a one-character run, so that a CJK query finds text that contains it
// anywhere, without a dictionary.
func Tokenize(text string) []string {
	var out []string
	var t tokenizer
	t.each(text, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// TermSet appends to dst the distinct terms of text, as Tokenize gives
// them, each as a 64-bit hash (FNV-1a), sorted, and returns it: a set of
// terms that costs no string. Two different terms share a hash with odds
// of about one in 2^64 per pair.
func TermSet(dst []uint64, text string) []uint64 {
	start := len(dst)
	var t tokenizer
	t.each(text, func(tok []byte) {
		h := uint64(14695981039346656037)
		for _, c := range tok {
			h ^= uint64(c)
			h *= 1099511628211
		}
		dst = append(dst, h)
	})
	set := dst[start:]
	slices.Sort(set)
	return append(dst[:start], slices.Compact(set)...)
}

// tokenizer holds the buffers of one tokenizing pass so that repeated calls
// do not allocate. Its zero value is ready to use.
type tokenizer struct {
	word []byte // the current word, lower-cased
	gram []byte // the CJK token being emitted
	prev rune   // last CJK rune of the current run
	run  int    // length of the current CJK run, in runes
}

// each calls emit with every token of s. The slice passed to emit is only
// valid during the call.
func (t *tokenizer) each(s string, emit func(tok []byte)) {
	t.scan(s, func(tok []byte, word bool) {
		if !word {
			emit(tok)
		} else if tok, ok := term(tok); ok {
			emit(tok)
		}
	})
}

// term returns the term of word, a lower-cased word from scan, and false
// for a stopword. It may modify word in place and append to it.
func term(word []byte) ([]byte, bool) {
	if isStopword(word) {
		return nil, false
	}
	return stem(word), true
}

// scan calls emit with every CJK token of s (word false) and every other
// word, lower-cased but not yet filtered or stemmed by term (word true).
// Callers that see the same words again can so remember their terms. The
// slice passed to emit is only valid during the call, and emit may modify
// it.
func (t *tokenizer) scan(s string, emit func(tok []byte, word bool)) {
	t.word, t.run = t.word[:0], 0
	for i := 0; i < len(s); {
		// Fast path: a whole ASCII word, which ends the string or is
		// followed by an ASCII separator.
		if len(t.word) == 0 && lowerASCII(s[i]) != 0 {
			if cap(t.word) < maxTokenBytes {
				t.word = make([]byte, 0, 2*maxTokenBytes)
			}
			w, j, k := t.word[:maxTokenBytes], i, 0
			for ; j < len(s); j++ {
				c := lowerASCII(s[j])
				if c == 0 {
					break
				}
				if k < len(w) {
					w[k] = c
					k++
				}
			}
			if j == len(s) || s[j] < utf8.RuneSelf {
				t.endCJK(emit)
				t.word = w[:k]
				t.endWord(emit)
				i = j
				continue
			}
		}
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		i += size
		switch {
		case r < utf8.RuneSelf:
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				t.endCJK(emit)
				t.add(r, 1)
			case 'A' <= r && r <= 'Z':
				t.endCJK(emit)
				t.add(r+'a'-'A', 1)
			default:
				t.endWord(emit)
				t.endCJK(emit)
			}
		case isCJK(r):
			t.endWord(emit)
			if t.run > 0 {
				t.emitCJK(emit, t.prev, r)
			}
			t.prev = r
			t.run++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			t.endCJK(emit)
			r = unicode.ToLower(r)
			t.add(r, utf8.RuneLen(r))
		case unicode.IsMark(r):
			// A combining mark belongs to the word it follows; inside a CJK
			// run (a variation selector) it neither joins nor breaks it.
			if len(t.word) > 0 {
				t.add(r, utf8.RuneLen(r))
			}
		default:
			t.endWord(emit)
			t.endCJK(emit)
		}
	}
	t.endWord(emit)
	t.endCJK(emit)
}

// lowerASCII returns c lower-cased if it is an ASCII letter or digit, and 0
// otherwise.
func lowerASCII(c byte) byte {
	// Setting bit 5 lower-cases an ASCII letter and maps no other byte
	// into a–z; the unsigned subtractions are range checks.
	if l := c | 0x20; l-'a' < 26 {
		return l
	}
	if c-'0' < 10 {
		return c
	}
	return 0
}

// add appends r, n bytes long once encoded, to the current word unless that
// would make it longer than maxTokenBytes.
func (t *tokenizer) add(r rune, n int) {
	if len(t.word)+n > maxTokenBytes {
		return
	}
	if n == 1 {
		t.word = append(t.word, byte(r))
		return
	}
	t.word = utf8.AppendRune(t.word, r)
}

// endWord emits the current word, if any.
func (t *tokenizer) endWord(emit func([]byte, bool)) {
	if len(t.word) > 0 {
		emit(t.word, true)
		t.word = t.word[:0]
	}
}

// endCJK ends the current CJK run; a run of one character is emitted alone
// (longer runs were emitted bigram by bigram as they were read).
func (t *tokenizer) endCJK(emit func([]byte, bool)) {
	if t.run == 1 {
		t.emitCJK(emit, t.prev, -1)
	}
	t.run = 0
}

// emitCJK emits a followed by b, or a alone when b is negative.
func (t *tokenizer) emitCJK(emit func([]byte, bool), a, b rune) {
	// CJK scripts have no case: nothing to lower.
	t.gram = utf8.AppendRune(t.gram[:0], a)
	if b >= 0 {
		t.gram = utf8.AppendRune(t.gram, b)
	}
	emit(t.gram, false)
}

// isCJK reports whether r belongs to a script written without spaces between
// words, or (Hangul) usually indexed as such: Han, Hiragana, Katakana and
// Hangul, plus the prolonged sound mark ー (script Common) that only occurs
// inside Japanese words.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー'
}

// isStopword reports whether w, a lower-cased word, is on the small list of
// English function words that carry no meaning for search. Contraction
// fragments ("don't" gives "don" and "t") are on it too.
func isStopword(w []byte) bool {
	switch string(w) {
	case "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at",
		"be", "been", "before", "being", "but", "by",
		"can", "could", "d", "did", "do", "does", "doing", "during",
		"each", "for", "from",
		"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how",
		"i", "if", "in", "into", "is", "it", "its", "itself",
		"just", "ll", "m", "me", "my", "myself",
		"of", "on", "or", "our", "ours", "ourselves",
		"re", "s", "shall", "she", "should", "so", "some", "such",
		"t", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there",
		"these", "they", "this", "those", "to", "too",
		"us", "ve", "very",
		"was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
		"will", "with", "would", "you", "your", "yours", "yourself", "yourselves":
		return true
	}
	return false
}
