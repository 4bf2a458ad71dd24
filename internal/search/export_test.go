package search

// Stem exposes the stemmer to the word-table test.
func Stem(w string) string { return string(stem([]byte(w))) }

// MaxTokenBytes is the longest word token, in bytes.
const MaxTokenBytes = maxTokenBytes
