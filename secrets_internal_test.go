package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAddedLines: the lines of a new content that the old one did not
// hold, for the forms a change takes.
func TestAddedLines(t *testing.T) {
	head := "# User\n\n> Summary: a\n\n"
	body := "- one\n- two\n- three\n"
	for _, c := range []struct {
		name, old, data string
		want            []string
		nilOld          bool
	}{
		{name: "new file", nilOld: true, data: head + body, want: []string{head + body}},
		{name: "empty file", old: "", data: "- x\n", want: []string{"- x\n"}},
		{name: "unchanged", old: head + body, data: head + body},
		{name: "appended", old: head + body, data: head + body + "- four\n", want: []string{"- four\n"}},
		{name: "summary and appended", old: head + body, data: "# User\n\n> Summary: b\n\n" + body + "- four\n", want: []string{"> Summary: b\n", "- four\n"}},
		{name: "last line continued", old: head + "- one", data: head + "- one more\n- two\n", want: []string{"- one more\n- two\n"}},
		{name: "inserted in the middle", old: head + body, data: head + "- one\n- new\n- two\n- three\n", want: []string{"- new\n"}},
		{name: "line changed in the middle", old: head + body, data: head + "- one\n- TWO\n- three\n", want: []string{"- TWO\n"}},
		{name: "reordered", old: head + body, data: head + "- three\n- one\n- two\n"},
		{name: "removed", old: head + body, data: head + "- one\n- three\n"},
		{name: "reordered with one new", old: head + body, data: head + "- three\n- new\n- one\n- two\n", want: []string{"- new\n"}},
		{name: "CRLF kept", old: "a\r\nb\r\n", data: "b\r\nx\r\na\r\n", want: []string{"x\r\n"}},
		{name: "no final newline", old: "a\nb", data: "a\nc", want: []string{"c"}},
		{name: "many lines replaced", old: "1\n2\n3\n4\n5\n6\n7\n", data: "1\nA\n3\nB\n5\nC\n7\nD\n", want: []string{"A\n", "B\n", "C\n", "D\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var old []byte
			if !c.nilOld {
				old = []byte(c.old)
			}
			var got []string
			for _, sp := range addedLines(old, []byte(c.data)) {
				got = append(got, c.data[sp[0]:sp[1]])
			}
			assert.Equal(t, c.want, got)
		})
	}
}

// factFileOf makes a fact file of about size bytes.
func factFileOf(size int) string {
	var b strings.Builder
	b.WriteString("# User\n\n> Summary: Fact 0; Fact 1\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "- Fact %d: prefers option %d over the others, in meetings and reviews\n", i, i)
	}
	return b.String()
}

// BenchmarkSecretGuardFactLine: the secret guard's own cost in the change
// path for a fact line appended to 15 KB of facts, the summary line
// refreshed as Append does: the lines it adds found, and judged.
func BenchmarkSecretGuardFactLine(b *testing.B) {
	s := &Store{}
	old := []byte(factFileOf(15 << 10))
	data := []byte(strings.Replace(string(old), "Fact 0; Fact 1", "Fact 0; Fact 1; Colleague", 1) + "- Colleague 7: Li Wei, designer, sits by window 7; his API key is kept in 1Password\n")
	c := &change{op: "append", t: target{path: "facts/user.md"}, old: old, data: data}
	for b.Loop() {
		if err := s.secretGuard(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSecretGuardFactFile: a whole 15 KB fact file written anew, all
// of it judged (a file that did not exist).
func BenchmarkSecretGuardFactFile(b *testing.B) {
	s := &Store{}
	c := &change{op: "write", t: target{path: "facts/user.md"}, data: []byte(factFileOf(15 << 10))}
	b.SetBytes(int64(len(c.data)))
	for b.Loop() {
		if err := s.secretGuard(c); err != nil {
			b.Fatal(err)
		}
	}
}
