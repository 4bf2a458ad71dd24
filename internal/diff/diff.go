// Package diff compares two texts line by line: [Unified] prints the
// difference as diff -u does, for people; [Delta] writes the new text as a
// compact delta against the old one, and [Apply] rebuilds it, for the
// history of memory files.
//
// The comparison finds a shortest edit script (Myers' algorithm) between
// the lines the two texts do not share at their start and end: first
// among few edits, the common case, then leaving out the lines that only
// one of the texts has, which cannot match. It is bounded: past maxCost
// edits or maxWork steps it gives up on the lines between and treats them
// as replaced whole, which is coarser but still correct. Two 1 MiB texts
// with no line in common cost about one pass over their lines.
//
// Nothing here does I/O.
package diff

import "strings"

// The bounds of the search for a shortest edit script. The first search,
// on the lines as they are, gives up past quickCost edits. A memory file is
// at most a few hundred lines, so a rewrite of one is well within maxCost;
// the trace the search keeps for maxCost edits is (maxCost+1)(maxCost+2)/2
// int32s, 2 MiB. maxWork bounds the steps along long runs of equal lines
// (many repeated lines), a few milliseconds.
const (
	quickCost = 64
	maxCost   = 1024
	maxWork   = 1 << 21
)

// A match is a run of n lines the texts share: a[a:a+n] == b[b:b+n].
type match struct{ a, b, n int }

// lines splits s into its lines, each with its "\n" but perhaps the last.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	out := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// compare returns the runs of lines a and b share, in order, ending with
// the empty run {len(a), len(b), 0}.
func compare(a, b []string) []match {
	var runs []match
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if p > 0 {
		runs = append(runs, match{0, 0, p})
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	runs = appendMiddle(runs, a[p:len(a)-s], b[p:len(b)-s], p)
	if s > 0 {
		runs = appendRun(runs, match{len(a) - s, len(b) - s, s})
	}
	return append(runs, match{len(a), len(b), 0})
}

// appendRun appends r to runs, joining it to the last run when it
// continues it.
func appendRun(runs []match, r match) []match {
	if k := len(runs) - 1; k >= 0 && runs[k].a+runs[k].n == r.a && runs[k].b+runs[k].n == r.b {
		runs[k].n += r.n
		return runs
	}
	return append(runs, r)
}

// appendMiddle appends the runs a and b share, lines numbered from off, to
// runs. A search with few edits is tried first, on the lines themselves:
// most changes are a few lines. Then only the lines found in both texts
// take part, as numbers; when that search gives up too, the two are left
// as replaced whole.
func appendMiddle(runs []match, a, b []string, off int) []match {
	if len(a) == 0 || len(b) == 0 {
		return runs
	}
	if found, ok := myers(a, b, quickCost); ok {
		for _, r := range found {
			runs = appendRun(runs, match{off + r.a, off + r.b, r.n})
		}
		return runs
	}
	// Lines as numbers, with where they are: of b those a has, of a those
	// b has.
	ids := make(map[string]int32)
	for _, l := range a {
		if _, ok := ids[l]; !ok {
			ids[l] = int32(len(ids))
		}
	}
	inB := make([]bool, len(ids))
	rb, ib := make([]int32, 0, len(b)), make([]int32, 0, len(b))
	for j, l := range b {
		if id, ok := ids[l]; ok {
			inB[id] = true
			rb = append(rb, id)
			ib = append(ib, int32(j))
		}
	}
	ra, ia := make([]int32, 0, len(a)), make([]int32, 0, len(a))
	for i, l := range a {
		if id := ids[l]; inB[id] {
			ra = append(ra, id)
			ia = append(ia, int32(i))
		}
	}
	found, ok := myers(ra, rb, maxCost)
	if !ok {
		return runs
	}
	for _, r := range found {
		for t := range r.n {
			runs = appendRun(runs, match{off + int(ia[r.a+t]), off + int(ib[r.b+t]), 1})
		}
	}
	return runs
}

// myers returns the runs of a longest common subsequence of a and b, in
// order, or false when it would take more than maxD ≤ maxCost edits or
// maxWork steps to find.
func myers[T comparable](a, b []T, maxD int) ([]match, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return nil, true
	}
	// v[off+k] is the furthest x reached on diagonal k (x-y = k), -1 for
	// none in the grid; trace keeps row d's values, for k = -d, -d+2, …, d,
	// at d(d+1)/2.
	const off = maxCost + 1
	var v [2*maxCost + 3]int32
	var trace []int32
	work := 0
	end := -1
	for d := 0; d <= maxD && end < 0; d++ {
		for k := -d; k <= d; k += 2 {
			x := int32(-1)
			if d == 0 {
				x = 0
			} else {
				x = step(v[off+k-1], v[off+k+1], k, d, n, m)
			}
			if x >= 0 {
				x0, y := x, int(x)-k
				for int(x) < n && y < m && a[x] == b[y] {
					x++
					y++
				}
				work += int(x - x0)
				if int(x) == n && y == m {
					end = d
				}
			}
			v[off+k] = x
			work++
			if work > maxWork {
				return nil, false
			}
		}
		for k := -d; k <= d; k += 2 {
			trace = append(trace, v[off+k])
		}
	}
	if end < 0 {
		return nil, false
	}
	var rev []match
	x, y := n, m
	for d := end; d > 0; d-- {
		row := trace[(d-1)*d/2:]
		k := x - y
		get := func(k int) int32 {
			if k < -(d-1) || k > d-1 {
				return -1
			}
			return row[(k+d-1)/2]
		}
		xr, xd := get(k-1), get(k+1)
		x0 := int(step(xr, xd, k, d, n, m))
		if x0 < x {
			rev = append(rev, match{x0, x0 - k, x - x0})
		}
		if k < d && validDown(xd, k, m) && int(xd) == x0 {
			x, y = int(xd), int(xd)-(k+1)
		} else {
			x, y = int(xr), int(xr)-(k-1)
		}
	}
	if x > 0 {
		rev = append(rev, match{0, 0, x})
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}

// validDown reports whether xd, the furthest x on diagonal k+1, has a step
// down to diagonal k in an n×m grid: an insertion of b's next line.
func validDown(xd int32, k, m int) bool {
	return xd >= 0 && int(xd)-(k+1) < m
}

// step returns where d edits first reach diagonal k, from xr on diagonal
// k-1 (a deletion: x+1) or xd on diagonal k+1 (an insertion: y+1), the
// further of the two, the insertion on a tie; -1 when neither is in the
// grid. Both the search and the walk back use it, so they agree.
func step(xr, xd int32, k, d, n, m int) int32 {
	x := int32(-1)
	if k < d && validDown(xd, k, m) {
		x = xd
	}
	if k > -d && xr >= 0 && int(xr) < n && xr+1 > x {
		x = xr + 1
	}
	return x
}
