package search_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mdmemory/memory/internal/search"
)

// TestRecall runs the planted queries of a synthetic corpus and checks that
// the planted entry is among the first five hits: English questions use the
// base form of a verb the entry holds in the past tense, Chinese ones are
// unsegmented sentences or keywords.
func TestRecall(t *testing.T) {
	n := 10_000
	if testing.Short() {
		n = 2_000
	}
	c := genCorpus(n, 1)
	r := recall(c, c.index())
	for _, k := range slices.Sorted(maps.Keys(r)) {
		t.Logf("recall@5 %-8s %.3f", k, r[k])
	}
	assert.GreaterOrEqual(t, r["en"], 0.95, "English recall@5")
	assert.GreaterOrEqual(t, r["zh"], 0.9, "Chinese recall@5")
}

// recall returns, by language and by language-style, the share of c's
// queries whose planted answer x ranks in the top five.
func recall(c *corpus, x *search.Index) map[string]float64 {
	found, total := map[string]int{}, map[string]int{}
	for _, q := range c.queries {
		hit := 0
		for _, h := range x.Search(q.text, 5, nil) {
			if h.File == q.file && h.Pos == q.pos {
				hit = 1
				break
			}
		}
		for _, k := range []string{q.lang, q.lang + "-" + q.style} {
			total[k]++
			found[k] += hit
		}
	}
	r := make(map[string]float64, len(total))
	for k, n := range total {
		r[k] = float64(found[k]) / float64(n)
	}
	return r
}
