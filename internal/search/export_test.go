package search

// Stem exposes the stemmer to the word-table test.
func Stem(w string) string { return string(stem([]byte(w))) }

// Stats returns the corpus statistics BM25 uses: the number of documents,
// their total length, and each live term's document frequency.
func (x *Index) Stats() (docs, length int, df map[string]int) {
	df = make(map[string]int)
	for t, id := range x.terms {
		df[t] = int(x.df[id])
	}
	return x.docs, x.length, df
}

// FreeTerms returns how many term IDs wait for reuse.
func (x *Index) FreeTerms() int { return len(x.free) }

// MaxTokenBytes is the longest word token, in bytes.
const MaxTokenBytes = maxTokenBytes

// Tokenizer counts tokens without allocating, for the tokenizer benchmark.
type Tokenizer struct{ t tokenizer }

// Count returns the number of tokens in s.
func (t *Tokenizer) Count(s string) int {
	n := 0
	t.t.each(s, func([]byte) { n++ })
	return n
}
