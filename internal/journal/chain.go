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
	marked := marks(records)
	start := ""
	for i, r := range records {
		if marked[i] >= 0 && !IsMark(r) {
			start = r.Old
			break
		}
	}
	type best struct{ w, at int } // the heaviest chain ending at a version: its weight and last record
	ending := make(map[string]best, len(records))
	weight := make([]int, len(records)) // of the heaviest chain ending with record i, 0 for none
	count := make([]int, len(records))  // its records
	prev := make([]int, len(records))
	for i, r := range records {
		if IsMark(r) || marked[i] < 0 {
			continue // a mark, or a change that did not land
		}
		w, c, p := 0, 0, -1
		if b, ok := ending[r.Old]; ok {
			w, c, p = b.w, count[b.at], b.at
		} else if r.Old != start {
			continue
		}
		own := 2 // even: a chain at the current version wins a tie
		if marked[i] > 0 {
			own = confirmed // a mark says it landed: no unmarked chain outweighs it
		}
		weight[i], count[i], prev[i] = w+own, c+1, p
		if b, ok := ending[r.New]; !ok || w+own >= b.w {
			ending[r.New] = best{w + own, i}
		}
	}
	score := func(w int, end string) int {
		if end != current {
			w -= 3
		}
		return w
	}
	last, top := -1, score(0, start)
	for i, w := range weight {
		if w > 0 && score(w, records[i].New) >= top {
			last, top = i, score(w, records[i].New)
		}
	}
	if last < 0 {
		return nil
	}
	out := make([]int, count[last])
	for i, at := len(out)-1, last; i >= 0; i, at = i-1, prev[at] {
		out[i] = at
	}
	return out
}

// Listed returns the landed records (as [Landed] gives them) whose
// changes a history lists: each one's version before and after can be
// read back. A log that [Prune] cut starts with the oldest version it
// keeps, made by a record whose version before went with the records cut:
// that record is the log's base, whose version after the next change
// names as its version before, and is left out.
func Listed(records []Record, landed []int) []int {
	if len(landed) == 0 {
		return landed
	}
	first := records[landed[0]]
	if first.Old == "" {
		return landed
	}
	for _, r := range records[:landed[0]] {
		if r.New == first.Old && !IsMark(r) {
			return landed
		}
	}
	return landed[1:]
}

// confirmed is the weight in a chain of a record a mark says landed.
const confirmed = 1 << 20

// The marks. After a change, the change path adds a mark to the log that
// says its record landed (the write was made) or not (the write lost a
// race): what the chain of versions alone cannot tell when a person undid
// the change by hand, or an editor's save won the race. A mark names the
// record by its versions, holds no content, and is kept apart from the
// records by [IsMark]. A mark that a crash or a power cut lost leaves the
// chain to tell.
const (
	MarkLanded  = "landed"
	MarkAborted = "aborted"
)

// Mark returns the mark of op (MarkLanded or MarkAborted) for the record
// r, made at now.
func Mark(op string, r Record, now time.Time) Record {
	return Record{Time: now.UTC(), Op: op, Old: r.Old, New: r.New}
}

// IsMark reports whether r is a mark, not the record of a change.
func IsMark(r Record) bool { return r.Op == MarkLanded || r.Op == MarkAborted }

// marks returns, for each record of a change, 1 when a later mark says
// it landed, -1 when one says it did not, and 0 when none says: a mark
// marks the latest record before it of the same versions that no mark
// marked yet.
func marks(records []Record) []int8 {
	m := make([]int8, len(records))
	open := map[[2]string][]int{}
	for i, r := range records {
		k := [2]string{r.Old, r.New}
		if !IsMark(r) {
			open[k] = append(open[k], i)
			continue
		}
		if l := open[k]; len(l) > 0 {
			j := l[len(l)-1]
			open[k] = l[:len(l)-1]
			m[j] = 1
			if r.Op == MarkAborted {
				m[j] = -1
			}
		}
	}
	return m
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
		if records[j].New == records[i].Old && !IsMark(records[j]) {
			return j
		}
	}
	return -1
}

// maxChain bounds the deltas rebuilding a version applies: NewRecord
// writes content whole at least every FullEvery versions of a chain, so a
// longer one is a log someone else wrote, which is not followed.
const maxChain = 4 * FullEvery

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
		if records[i].New != version || IsMark(records[i]) {
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
		if len(chain) > maxChain {
			return nil, fmt.Errorf("%w: %s: more than %d deltas from whole content: the log was not written by NewRecord", ErrNoContent, records[i].New, maxChain)
		}
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
	if v := Version(content); v != records[i].want() {
		return nil, fmt.Errorf("%w: %s: rebuilt as %s", ErrNoContent, records[i].New, v)
	}
	return content, nil
}

// want is the version of the content r rebuilds: New's, or the
// redacted one.
func (r *Record) want() string {
	if r.Redacted != "" {
		return r.Redacted
	}
	return r.New
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
		if prev[i].New == old && !IsMark(prev[i]) {
			at = i
			break
		}
	}
	if at < 0 || prev[at].Redacted != "" {
		// A redacted version's content is no longer the one its name
		// says: a delta against the file's content would not rebuild.
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
