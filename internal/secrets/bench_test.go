package secrets

import (
	"strings"
	"testing"
)

// BenchmarkFindFactLine: the guard's cost for one fact line, the usual
// change (an append of a fact).
func BenchmarkFindFactLine(b *testing.B) {
	line := "- The Tavily API key has a 1,000/day limit; the key is kept in 1Password\n"
	for b.Loop() {
		Find(line)
	}
}

// BenchmarkFindFactFile: the guard's cost for a whole fact file of 15 KB,
// the facts budget (a memory_write of every fact file at once, or Check).
func BenchmarkFindFactFile(b *testing.B) {
	text := factFile(15 << 10)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Find(text)
	}
}

// factFile makes a fact file of about size bytes from the ordinary lines
// of the tests.
func factFile(size int) string {
	lines := generated(400)
	var b strings.Builder
	b.WriteString("# User\n\n> Summary: about the person\n\n")
	for i := 0; b.Len() < size; i++ {
		b.WriteString(lines[i%len(lines)] + "\n")
	}
	return b.String()
}

// BenchmarkFindDense: the detector on 1 MiB of text dense with one
// keyword, repeated: the worst cases of the expressions' work, each place
// near a keyword tried once, and tried only where a value is in reach.
func BenchmarkFindDense(b *testing.B) {
	for _, u := range []string{"secret ", "aws secret ", "pw ", "x://", "://a:b", "pwd is ", "token: ", "key ", "curl ", "datadog key ",
		"password: ", "password for a ", "eyJabcdefghijk.", "authorization: basic ", "-----BEGIN PRIVATE KEY-----\n"} {
		text := strings.Repeat(u, (1<<20)/len(u))
		b.Run(strings.TrimSpace(strings.ReplaceAll(u, "/", "_")), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Find(text)
			}
		})
	}
}
