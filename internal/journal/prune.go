package journal

import (
	"time"

	"github.com/mdmemory/memory/internal/diff"
)

// Policy bounds a log. The zero value is the default: every version of
// the last 90 days, at least the last 20 whatever their age, no bound on
// size.
type Policy struct {
	// MaxAge keeps every version younger; 0 means 90 days.
	MaxAge time.Duration
	// MinVersions keeps at least the last so many versions, whatever
	// their age; 0 means 20.
	MinVersions int
	// MaxBytes bounds the log's size, before the other two: the oldest
	// versions go first, never the last one; 0 means no bound. The
	// library's bound is on all logs together: it gives each its share.
	MaxBytes int
}

// The default policy.
const (
	DefaultMaxAge      = 90 * 24 * time.Hour
	DefaultMinVersions = 20
)

// inFlight is how long a record after the last landed one, of a change
// from the current version, is kept: on a bucket another client may still
// be making the change it records.
const inFlight = 10 * time.Minute

// Prune returns the records of a log to keep under the policy, given the
// file's current version and the time. It keeps the landed records (see
// [Landed]) from the oldest that the policy keeps, the one whose change
// made the current version always; the first kept one is rebased, its
// content written whole, so that no kept record depends on one removed.
// Records that did not land are removed, but for the ones after the last
// landed record, from its version and younger than a few minutes, whose
// change may still be on its way. A version the log cannot rebuild is
// not kept as the first: the next one is.
func Prune(records []Record, current string, now time.Time, p Policy) []Record {
	if p.MaxAge <= 0 {
		p.MaxAge = DefaultMaxAge
	}
	if p.MinVersions <= 0 {
		p.MinVersions = DefaultMinVersions
	}
	landed := Landed(records, current)
	end := End(records, landed)
	from := 0 // of records, where the tail after the landed ones starts
	if len(landed) > 0 {
		from = landed[len(landed)-1] + 1
	}
	var tail []Record
	marked := marks(records)
	for i, r := range records[from:] {
		if r.Old == end && !IsMark(r) && marked[from+i] == 0 && !r.Time.Before(now.Add(-inFlight)) {
			tail = append(tail, r)
		}
	}
	if len(landed) == 0 {
		return tail
	}
	last := len(landed) - 1
	s := max(len(landed)-p.MinVersions, 0)
	cutoff := now.Add(-p.MaxAge)
	for t := range s {
		if !records[landed[t]].Time.Before(cutoff) {
			s = t
			break
		}
	}
	s = min(s, last)
	var sizes []int // of the kept landed records' lines, then the tail's
	if p.MaxBytes > 0 {
		var buf []byte
		sizes = make([]int, len(landed)+1)
		for _, r := range tail {
			buf = Append(buf[:0], r)
			sizes[len(landed)] += len(buf)
		}
		for k := len(landed) - 1; k >= 0; k-- {
			buf = Append(buf[:0], records[landed[k]])
			sizes[k] = len(buf) + sizes[k+1] // with those after it
		}
		// An estimate: the first one whole is its content's size more.
		for s < last && sizes[s]+wholeMore(records[landed[s]]) > p.MaxBytes {
			s++
		}
	}
	for {
		first := records[landed[s]]
		if !first.Full && first.New != "" { // a removal depends on nothing
			content, err := Content(records, first.New)
			if err != nil && s < last {
				s++
				continue
			}
			if err == nil {
				first.Full, first.Body = true, string(diff.Delta(nil, content))
			}
		}
		if p.MaxBytes > 0 && s < last && len(Append(nil, first))+sizes[s+1] > p.MaxBytes {
			s++
			continue
		}
		// The marks go: the kept records are one chain, to the current
		// version, which the chain alone tells.
		out := make([]Record, 0, len(landed)-s+len(tail))
		out = append(out, first)
		for _, i := range landed[s+1:] {
			out = append(out, records[i])
		}
		return append(out, tail...)
	}
}

// wholeMore estimates how many more bytes r's line takes with its content
// whole than with its body.
func wholeMore(r Record) int {
	if r.Full {
		return 0
	}
	size, err := diff.Size([]byte(r.Body[:min(len(r.Body), 32)]))
	if err != nil {
		return 0
	}
	return max(size+16-len(r.Body), 0)
}
