package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mdmemory/memory/internal/factguard"
	"github.com/stretchr/testify/require"
)

// TestFactGuardBound: the near-repeat comparison of one change stops after
// factguard.MaxPairs pairs of lines, so that a change of a person's oversized
// fact file costs a bounded time under the lock; the checks that cost one
// look-up a line (the same text, a key) still apply to every line.
func TestFactGuardBound(t *testing.T) {
	s := &Store{opts: Options{FactFiles: []FactFile{{Name: "user.md"}}}}
	tgt := target{path: "facts/user.md", fact: 0}
	n := 600 // 600 × 600 pairs is more than factguard.MaxPairs
	require.Greater(t, n*n, factguard.MaxPairs)
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
// file of about 15 KB (the default budget), the other fact file empty:
// "unchanged", the same change each time, both versions of the file
// already parsed and indexed (the guard alone, as internal/factguard's
// BenchmarkCheck measures it); "append", a chain of appends, each one's
// content the next one's start, so that each parses and indexes the
// version it writes, taking the lines it keeps from the one before;
// "cold", a new Store each time, which parses and indexes both.
func BenchmarkVetFacts(b *testing.B) {
	opts := Options{FactFiles: []FactFile{{Name: "user.md"}}}
	tgt := target{path: "facts/user.md", fact: 0}
	var old strings.Builder
	old.WriteString("# User\n\n> Summary: many facts\n\n")
	for i := 0; old.Len() < defaultFactsBudget; i++ {
		fmt.Fprintf(&old, "- Fact %d: prefers option %d over the others, in meetings and reviews\n", i, i)
	}
	line := func(n int) string {
		return fmt.Sprintf("- Colleague %d: Li Wei %d, designer, sits by window %d\n", n, n, n)
	}
	ctx := context.Background()
	b.Run("unchanged", func(b *testing.B) {
		s := &Store{opts: opts}
		before, data := []byte(old.String()), []byte(old.String()+line(0))
		for b.Loop() {
			if err := s.vetFacts(ctx, "append", tgt, before, data, noFiles); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append", func(b *testing.B) {
		// The file keeps its size: each append's line takes the place of
		// the one before.
		s := &Store{opts: opts}
		prev, n := []byte(old.String()+line(0)), 1
		for b.Loop() {
			data := []byte(old.String() + line(n))
			if err := s.vetFacts(ctx, "append", tgt, prev, data, noFiles); err != nil {
				b.Fatal(err)
			}
			prev, n = data, n+1
		}
	})
	b.Run("cold", func(b *testing.B) {
		before, data := []byte(old.String()), []byte(old.String()+line(0))
		for b.Loop() {
			s := &Store{opts: opts}
			if err := s.vetFacts(ctx, "append", tgt, before, data, noFiles); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// noFiles is the listing of a folder that holds no other file.
func noFiles() ([]Entry, error) { return nil, nil }
