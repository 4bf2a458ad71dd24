package factguard

import (
	"slices"
	"strings"
)

// The reference guard: the comparison as the memory package made it before
// the index, every added line with every line in order, for the tests to
// hold Check to.

// refCheck returns the refusal of the change of the file at path from
// before to after, compared with others, as Diff and Check should.
func refCheck(path string, before, after []byte, others ...*File) *Refusal {
	old := Lines(before)
	added, keptAt := refDiff(old, Lines(after))
	for _, a := range added {
		if phrase := temporary(a.norm); phrase != "" {
			return &Refusal{Kind: Temporary, Line: a, Phrase: phrase}
		}
	}
	kept := make([]Line, len(keptAt))
	for i, k := range keptAt {
		kept[i] = old[k]
	}
	type file struct {
		path  string
		lines []Line
	}
	files := []file{{path, kept}}
	for _, f := range others {
		files = append(files, file{f.Path, f.Lines})
	}
	type at struct {
		file string
		line Line
	}
	texts := map[string]at{}
	for _, f := range files {
		for _, b := range f.lines {
			if _, ok := texts[b.norm]; !ok {
				texts[b.norm] = at{f.path, b}
			}
		}
	}
	keys, held := map[string]Line{}, map[string]int{}
	for _, b := range old {
		held[b.key]++
	}
	for _, b := range kept {
		if _, ok := keys[b.key]; !ok && b.key != "" {
			keys[b.key] = b
		}
	}
	pairs := 0
	for _, a := range added {
		if len(a.terms) == 0 {
			continue
		}
		if same, ok := texts[a.norm]; ok {
			return &Refusal{Kind: Repeat, Line: a, Path: same.file, Other: same.line}
		}
		if b, ok := keys[a.key]; ok && held[a.key] == 1 && !listKey(a) {
			return &Refusal{Kind: KeyRestated, Line: a, Path: path, Other: b}
		}
		for _, f := range files {
			for _, b := range f.lines {
				if pairs++; pairs > MaxPairs {
					break
				}
				if a.nums == b.nums && a.small == b.small && nested(a.terms, b.terms) && jaccard(a.terms, b.terms) > nearRepeat {
					return &Refusal{Kind: NearRepeat, Line: a, Path: f.path, Other: b}
				}
			}
		}
	}
	return nil
}

// refDiff is Diff on lines: those of after added, and the places in
// before of those kept.
func refDiff(before, after []Line) (added []Line, kept []int) {
	old := map[string][]int{}
	for i, b := range before {
		old[b.Src] = append(old[b.Src], i)
	}
	for _, a := range after {
		if same := old[a.Src]; len(same) > 0 {
			kept = append(kept, same[0])
			old[a.Src] = same[1:]
			continue
		}
		added = append(added, a)
	}
	return added, kept
}

// nested reports whether one of two sorted sets holds the other.
func nested(a, b []string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for _, w := range a {
		if _, found := slices.BinarySearch(b, w); !found {
			return false
		}
	}
	return true
}

// jaccard returns |a ∩ b| / |a ∪ b| for sorted sets; 0 when both are empty.
func jaccard(a, b []string) float64 {
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	union := len(a) + len(b) - common
	if union == 0 {
		return 0
	}
	return float64(common) / float64(union)
}
