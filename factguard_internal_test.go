package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mdmemory/memory/internal/search"
	"github.com/stretchr/testify/require"
)

// TestListWordsAreTerms: every English word of listWords is the search
// term of a noun, singular and plural, as keyOf makes keys; a word the
// tokenizer would never give is a list entry that never matches.
func TestListWordsAreTerms(t *testing.T) {
	nouns := []string{
		"colleague", "coworker", "worker", "teammate", "friend", "child", "children", "kid", "son", "daughter",
		"sibling", "brother", "sister", "cousin", "relative", "grandchild", "grandchildren", "contact", "client", "customer",
		"report", "pet", "dog", "cat", "hobby", "interest", "project", "allergy", "dislike", "like", "habit",
		"preference", "lesson", "insight", "pattern", "tip", "note", "rule", "idea", "goal", "tool", "skill",
		"book", "event", "meeting", "deadline", "anniversary", "reminder", "favorite", "favourite",
	}
	var terms []string
	for _, n := range nouns {
		term := search.Tokenize(n)
		require.Len(t, term, 1, n)
		terms = append(terms, term[0])
		if n != "children" && n != "grandchildren" {
			require.Equal(t, term, search.Tokenize(n + "s")[:1], "%s and its plural are one key", n)
		}
	}
	require.ElementsMatch(t, listWords, terms)

	for _, c := range []struct {
		first string
		list  bool
	}{
		{"Colleague: Li Wei", true},
		{"Former colleagues: Li Wei, Zhang Min", true},
		{"Co-worker: Li Wei", true},
		{"前同事：李伟", true},
		{"联系人：王芳", true},
		{"Language: Chinese", false},
		{"Wife's birthday: March 15", false},
		{"Favorite color: blue", false},
		{"语言：中文", false},
	} {
		l := describeAll(factLines([]byte("- " + c.first + "\n")))[0]
		require.Equal(t, c.list, listKey(l), c.first)
	}
}

// TestFactLines: the facts of a file are its top-level list items (nested
// and wrapped lines included) and the lines of its paragraphs, with their
// line numbers, list markers and task boxes dropped; headings, code,
// HTML, blockquotes and the head are not facts.
func TestFactLines(t *testing.T) {
	src := "# User\n\n> Summary: who\n\n" + // 1-3
		"- Name: A\n" + // 5
		"- Language: zh\n  - nested detail\n" + // 6-7
		"\nPara one: x\nPara two\n" + // 9-10
		"\n## Work\n" + // 12
		"\n```\ncode: x\n```\n" + // 14-16
		"\n* Other list\n1. Num: y\n2) [x] Done: z\n" + // 18-20
		"\n<div>html: no</div>\n" + // 22
		"\n> quote: no\n" + // 24
		"\n---\n" + // 26
		"\n    indented: code\n" + // 28
		"\n+ [ ] Todo: w\n" // 30
	type line struct {
		Line       int
		First, Key string
	}
	var got []line
	for _, l := range describeAll(factLines([]byte(src))) {
		got = append(got, line{l.line, l.first, l.key})
	}
	require.Equal(t, []line{
		{5, "Name: A", "name"},
		{6, "Language: zh", "languag"},
		{9, "Para one: x", "para on"},
		{10, "Para two", ""},
		{18, "Other list", ""},
		{19, "Num: y", "num"},
		{20, "Done: z", "done"},
		{30, "Todo: w", "todo"},
	}, got)
	require.Equal(t, "language: zh nested detail", describeAll(factLines([]byte(src)))[1].norm)
	l := factLine{src: "-  Likes\tgreen\u3000tea\n  and  Jasmine"}
	l.describe()
	require.Equal(t, "likes green tea and jasmine", l.norm)
	require.Nil(t, factLines(nil))
	require.Empty(t, factLines([]byte("# User\n\n> Summary: none\n")))
}

// TestFactKey: a key is one to three words before a colon that ends a
// word, or a full-width colon; its search terms, so that case and number
// do not matter; a key of stopwords alone is itself.
func TestFactKey(t *testing.T) {
	for in, want := range map[string]string{
		"Language: Chinese":              "languag",
		"LANGUAGES: Chinese, English":    "languag",
		"**Language**: Chinese":          "languag",
		"Wife's birthday: March 15":      "wife birthdai",
		"姓名：张三":                          "姓名",
		"Me: the user":                   "me",
		"Meets at 10:30 on Mondays":      "",
		"See https://example.com":        "",
		"The user always asks first: ok": "",
		": nothing before":               "",
		"No colon at all":                "",
		"Hobbies:":                       "hobbi",
	} {
		require.Equal(t, want, keyOf(in), in)
	}
}

func TestNumbersAndJaccard(t *testing.T) {
	require.Equal(t, "0 1", numbers("counter 0: 1"))
	require.Equal(t, "101 3 2", numbers("room 101, floor 3: 2 projectors"))
	require.Equal(t, "", numbers("no numbers"))
	require.Equal(t, 0.0, jaccard(nil, nil))
	require.Equal(t, 1.0, jaccard([]string{"a", "b"}, []string{"a", "b"}))
	require.InDelta(t, 0.5, jaccard([]string{"a", "b", "c"}, []string{"b", "c", "d"}), 1e-9)
	require.Equal(t, 0.0, jaccard([]string{"a"}, []string{"b"}))
}

// TestFactGuardBound: the near-repeat comparison of one change stops after
// maxFactPairs pairs of lines, so that a change of a person's oversized
// fact file costs a bounded time under the lock; the checks that cost one
// look-up a line (the same text, a key) still apply to every line.
func TestFactGuardBound(t *testing.T) {
	s := &Store{opts: Options{FactFiles: []FactFile{{Name: "user.md"}}}}
	tgt := target{path: "facts/user.md", fact: 0}
	n := 600 // 600 × 600 pairs is more than maxFactPairs
	require.Greater(t, n*n, maxFactPairs)
	var old, data strings.Builder
	old.WriteString("# User\n\n> Summary: many\n\n")
	for i := range n {
		fmt.Fprintf(&old, "- alpha%d beta%d gamma%d delta\n", i, i, i)
	}
	data.WriteString(old.String())
	for i := range n - 1 {
		fmt.Fprintf(&data, "- omega%d psi%d chi%d\n", i, i, i)
	}
	// The last new line nearly repeats an old one, past the bound.
	data.WriteString("- alpha7 beta7 gamma7 delta epsilon\n")
	require.NoError(t, s.vetFacts(context.Background(), "write", tgt, []byte(old.String()), []byte(data.String()), noFiles))
	// Within the bound it is caught.
	lines := strings.SplitAfter(data.String(), "\n")
	small := strings.Join(slices.Concat(lines[:4+n], lines[len(lines)-2:]), "")
	err := s.vetFacts(context.Background(), "write", tgt, []byte(old.String()), []byte(small), noFiles)
	require.ErrorIs(t, err, ErrDuplicateFact)
	require.Contains(t, err.Error(), "nearly repeats facts/user.md line 12")
	// An identical line past the bound is caught too.
	exact := strings.Replace(data.String(), "alpha7 beta7 gamma7 delta epsilon", "alpha7 beta7 gamma7 delta", 1)
	require.ErrorIs(t, s.vetFacts(context.Background(), "write", tgt, []byte(old.String()), []byte(exact), noFiles), ErrDuplicateFact)
}

// BenchmarkVetFacts measures the guard on an append of one line to a fact
// file of about 15 KB (the default budget), the other fact file empty.
func BenchmarkVetFacts(b *testing.B) {
	s := &Store{opts: Options{FactFiles: []FactFile{{Name: "user.md"}}}}
	tgt := target{path: "facts/user.md", fact: 0}
	var old strings.Builder
	old.WriteString("# User\n\n> Summary: many facts\n\n")
	for i := 0; old.Len() < defaultFactsBudget; i++ {
		fmt.Fprintf(&old, "- Fact %d: prefers option %d over the others, in meetings and reviews\n", i, i)
	}
	data := old.String() + "- Colleague: Li Wei, designer, sits by the window\n"
	ctx := context.Background()
	for b.Loop() {
		if err := s.vetFacts(ctx, "append", tgt, []byte(old.String()), []byte(data), noFiles); err != nil {
			b.Fatal(err)
		}
	}
}

// noFiles is the listing of a folder that holds no other file.
func noFiles() ([]Entry, error) { return nil, nil }
