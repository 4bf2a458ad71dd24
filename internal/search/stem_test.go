package search_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mdmemory/memory/internal/search"
)

func TestStem(t *testing.T) {
	// Words that must share a stem, and that stem.
	groups := []struct {
		stem  string
		words []string
	}{
		{"review", []string{"review", "reviews", "reviewed", "reviewing"}},
		{"plan", []string{"plan", "plans", "planned", "planning"}},
		{"fix", []string{"fix", "fixed", "fixing"}},
		{"discuss", []string{"discuss", "discussed", "discusses", "discussing"}},
		{"schedul", []string{"schedule", "scheduled", "schedules", "scheduling"}},
		{"cancel", []string{"cancel", "cancelled", "cancels", "cancelling", "canceled"}},
		{"updat", []string{"update", "updated", "updates", "updating"}},
		{"finish", []string{"finish", "finished", "finishes"}},
		{"organiz", []string{"organize", "organized", "organizing", "organizes"}},
		{"revis", []string{"revise", "revised", "revising"}},
		{"agre", []string{"agree", "agreed", "agreeing", "agrees"}},
		{"studi", []string{"study", "studies", "studied"}},
		{"hope", []string{"hope", "hoped", "hoping", "hopes"}},
		{"size", []string{"size", "sized", "sizes"}},
		{"file", []string{"file", "filed", "filing", "files"}},
		{"meet", []string{"meet", "meets", "meeting", "meetings"}},
		{"run", []string{"run", "runs", "running"}},
		{"fall", []string{"fall", "falls", "falling"}},
		{"bui", []string{"buy", "buys", "buying"}},
		{"caress", []string{"caress", "caresses"}},
		{"poni", []string{"pony", "ponies"}},
		{"budget", []string{"budget", "budgets", "budgeted"}},
		{"control", []string{"control", "controlled", "controlling"}},
		{"travel", []string{"travel", "travelled", "travelling"}},
		{"write", []string{"write", "writes", "writing"}},
		{"feed", []string{"feed", "feeds"}},
		{"ss", []string{"sses"}},
	}
	for _, g := range groups {
		for _, w := range g.words {
			assert.Equal(t, g.stem, search.Stem(w), w)
		}
	}

	// Words left as they are: too short, plurals in "us", "is" and "ss",
	// three-letter words in s, words with digits or non-ASCII letters, and
	// words no rule applies to.
	for _, w := range []string{"a", "is", "go", "gas", "bus", "yes", "status", "analysis", "iris",
		"glass", "mp3s", "café", "naïve", "sing", "thing", "bed", "eed", "sky", "ing", "organization"} {
		assert.Equal(t, w, search.Stem(w), w)
	}
}
