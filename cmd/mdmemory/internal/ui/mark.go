package ui

import (
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/search"
)

// mark returns text as HTML with the words that match query marked
// (<mark>), matched as the library's search matches them (internal/search's
// Tokenize): a word is marked when one of its terms is one of the query's
// ("flights" for "flight"); in a run of Chinese, Japanese or Korean
// characters, each pair of characters that is a pair of the query's, and
// a lone character the query is.
func mark(text, query string) template.HTML {
	terms := map[string]bool{}
	for _, t := range search.Tokenize(query) {
		terms[t] = true
	}
	var b strings.Builder
	open := false
	emit := func(s string, marked bool) {
		if marked != open {
			if marked {
				b.WriteString("<mark>")
			} else {
				b.WriteString("</mark>")
			}
			open = marked
		}
		b.WriteString(template.HTMLEscapeString(s))
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			j := i
			for j < len(text) {
				r, n := utf8.DecodeRuneInString(text[j:])
				if !isCJK(r) {
					break
				}
				j += n
			}
			markCJK(text[i:j], terms, emit)
			i = j
		case isWord(r):
			j := i
			for j < len(text) {
				r, n := utf8.DecodeRuneInString(text[j:])
				if !isWord(r) || isCJK(r) {
					break
				}
				j += n
			}
			word := text[i:j]
			hit := false
			for _, t := range search.Tokenize(word) {
				hit = hit || terms[t]
			}
			emit(word, hit)
			i = j
		default:
			emit(text[i:i+n], false)
			i += n
		}
	}
	emit("", false)
	return template.HTML(b.String())
}

// markCJK marks the characters of a CJK run that the query's bigrams (or
// lone character) cover.
func markCJK(run string, terms map[string]bool, emit func(string, bool)) {
	rs := []rune(run)
	hit := make([]bool, len(rs))
	if len(rs) == 1 {
		hit[0] = terms[run]
	}
	for k := 0; k+1 < len(rs); k++ {
		if terms[string(rs[k:k+2])] {
			hit[k], hit[k+1] = true, true
		}
	}
	// A query of one character matches it inside a longer run too.
	for k, r := range rs {
		if terms[string(r)] {
			hit[k] = true
		}
	}
	for k, r := range rs {
		emit(string(r), hit[k])
	}
}

// isWord and isCJK split text as internal/search's tokenizer does.
func isWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー')
}
