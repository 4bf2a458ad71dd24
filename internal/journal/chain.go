package journal

import (
	"fmt"
	"time"

	"github.com/mdmemory/memory/internal/diff"
)

// Landed returns the indexes of the records whose changes landed, in
// order, given the file's current version ("" when it does not exist).
//
// The change path records a change before it makes it, so a crash, or a
// lost race on a bucket, leaves records of changes that never landed.
// Landed tells them by the chain of versions: from the log's start (the
// first record's old version), each landed record's old version is the
// previous one's new version, and the last one's new version is the
// current version. Of the chains the log holds it takes the one with the
// most records so linked (the last one counts when it ends at the current
// version), the one ending at the current version on a tie, then the
// latest records.
//
// When the file was changed outside the library since its last record,
// no chain ends at the current version: the longest chain is returned, and
// [End] of it differs from the current version, which the change path then
// records as an outside change. Of a crashed change followed by an outside
// change, the chain cannot tell: the record is taken as landed.
//
// Landed takes time linear in the number of records.
func Landed(records []Record, current string) []int {
	if len(records) == 0 {
		return nil
	}
	start := records[0].Old
	type best struct{ n, at int } // the longest chain ending at a version: its length and last record
	ending := make(map[string]best, len(records))
	length := make([]int, len(records)) // of the longest chain ending with record i, 0 for none
	prev := make([]int, len(records))
	for i, r := range records {
		n, p := 0, -1
		if b, ok := ending[r.Old]; ok {
			n, p = b.n, b.at
		} else if r.Old != start {
			continue
		}
		length[i], prev[i] = n+1, p
		if b, ok := ending[r.New]; !ok || n+1 >= b.n {
			ending[r.New] = best{n + 1, i}
		}
	}
	score := func(n int, end string) int {
		s := 2 * n // even: a chain at the current version wins a tie
		if end != current {
			s -= 3
		}
		return s
	}
	last, top := -1, score(0, start)
	for i, n := range length {
		if n > 0 && score(n, records[i].New) >= top {
			last, top = i, score(n, records[i].New)
		}
	}
	if last < 0 {
		return nil
	}
	out := make([]int, length[last])
	for i, at := len(out)-1, last; i >= 0; i, at = i-1, prev[at] {
		out[i] = at
	}
	return out
}

// End returns the version the landed records end at: the last one's new
// version, or the log's start when none landed ("" for an empty log).
func End(records []Record, landed []int) string {
	if len(landed) > 0 {
		return records[landed[len(landed)-1]].New
	}
	if len(records) > 0 {
		return records[0].Old
	}
	return ""
}

// base returns the index of the record a delta of record i is applied
// to: the latest before it whose new version is i's old one, or -1.
func base(records []Record, i int) int {
	for j := i - 1; j >= 0; j-- {
		if records[j].New == records[i].Old {
			return j
		}
	}
	return -1
}

// maxTries bounds the records Content tries for one version.
const maxTries = 4

// Content returns the content of version, rebuilt from the records: from
// the latest record that made it, through the deltas back to whole
// content, checked against the version. It returns an error wrapping
// [ErrNoContent] when no record makes the version, or when the ones it
// tries (the latest few) cannot rebuild it.
func Content(records []Record, version string) ([]byte, error) {
	if version == "" {
		return nil, fmt.Errorf("%w: the empty version is no content", ErrNoContent)
	}
	var last error
	tries := 0
	for i := len(records) - 1; i >= 0 && tries < maxTries; i-- {
		if records[i].New != version {
			continue
		}
		tries++
		content, err := rebuild(records, i)
		if err == nil {
			return content, nil
		}
		last = err
	}
	if last == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoContent, version)
	}
	return nil, last
}

// rebuild returns the content of record i's new version.
func rebuild(records []Record, i int) ([]byte, error) {
	chain := []int{i}
	for at := i; !records[at].Full; {
		if at = base(records, at); at < 0 {
			return nil, fmt.Errorf("%w: %s: a delta against %s, which the log does not make", ErrNoContent, records[i].New, records[chain[len(chain)-1]].Old)
		}
		chain = append(chain, at)
	}
	var content []byte
	for k := len(chain) - 1; k >= 0; k-- {
		r := &records[chain[k]]
		next, err := diff.Apply(content, []byte(r.Body))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoContent, r.New, err)
		}
		content = next
	}
	if v := Version(content); v != records[i].New {
		return nil, fmt.Errorf("%w: %s: rebuilt as %s", ErrNoContent, records[i].New, v)
	}
	return content, nil
}

// FullEvery is K: a version in every K of a chain of deltas is written
// whole, so that rebuilding one applies fewer than K deltas.
const FullEvery = 20

// NewRecord returns the record of a change from old (with its content) to
// new (with its content; new is "" for a removal), to append to the log of
// prev, made by actor at now. Its body is a delta against old's content
// when that content is the one prev rebuilds for old, the delta is
// smaller than the content, the chain of deltas it extends is shorter
// than FullEvery, and the deltas of that chain with this one would not
// exceed the content's size; else the content whole. An oldContent of nil
// with an old version is read from prev, for an outside change, whose
// content before is no longer on disk.
func NewRecord(prev []Record, op, actor, old string, oldContent []byte, new string, newContent []byte, now time.Time) Record {
	r := Record{Time: now.UTC(), Op: op, Actor: actor, Old: old, New: new}
	if new == "" {
		return r
	}
	if d := deltaFor(prev, old, oldContent, newContent); d != nil {
		r.Body = string(d)
		return r
	}
	r.Full, r.Body = true, string(diff.Delta(nil, newContent))
	return r
}

// deltaFor returns the delta NewRecord writes, or nil for content whole.
func deltaFor(prev []Record, old string, oldContent, newContent []byte) []byte {
	if old == "" {
		return nil
	}
	// The record prev rebuilds old from, and the deltas back to whole
	// content.
	at := -1
	for i := len(prev) - 1; i >= 0; i-- {
		if prev[i].New == old {
			at = i
			break
		}
	}
	if at < 0 {
		return nil
	}
	deltas, size := 0, 0
	for !prev[at].Full {
		deltas++
		size += len(prev[at].Body)
		if at = base(prev, at); at < 0 || deltas+1 >= FullEvery {
			return nil
		}
	}
	if oldContent == nil {
		var err error
		if oldContent, err = Content(prev, old); err != nil {
			return nil
		}
	} else if Version(oldContent) != old {
		return nil
	}
	// Whole content takes its size, a little more for escapes.
	d := diff.Delta(oldContent, newContent)
	if len(d) >= len(newContent) || size+len(d) > len(newContent) {
		return nil
	}
	return d
}
