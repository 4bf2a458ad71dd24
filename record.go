package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/paths"
)

// The record of each change: the change path (commit, change.go) writes
// it to the file's log before it makes the change, and marks it after;
// who made it travels in the context (WithActor). The logs are read,
// restored from and pruned by history.go.

// An actor travels in the context of a change.
type actorKey struct{}

type actor struct{ name, via string }

// WithActor returns ctx with name as the actor of the changes made with
// it: a host's name for the person or program behind a [Store] method or a
// [Store.NewSession] conversation ("cli", "ui", "nightly-import"). A
// conversation the host named ([Store.Session]) records its id instead.
func WithActor(ctx context.Context, name string) context.Context {
	a, _ := ctx.Value(actorKey{}).(actor)
	a.name = name
	return context.WithValue(ctx, actorKey{}, a)
}

// withVia marks the changes made with ctx as made by via ("reflector",
// "compaction") on the actor's behalf.
func withVia(ctx context.Context, via string) context.Context {
	a, _ := ctx.Value(actorKey{}).(actor)
	a.via = via
	return context.WithValue(ctx, actorKey{}, a)
}

// actorOf is who makes the changes made with ctx, as the history records
// it.
func actorOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(actor)
	switch {
	case a.via == "":
		return a.name
	case a.name == "":
		return a.via
	}
	return a.via + " (" + a.name + ")"
}

// histOp is the history's name of a change's operation.
func histOp(c *change) string {
	if c.as != "" {
		return c.as
	}
	switch c.op {
	case "write", "patch", "append", "seal", "compact", "restore", opForget:
		return c.op
	}
	if c.data == nil {
		return "remove"
	}
	return "write"
}

// maxLog is the least of a log the library reads: a log a person (or a
// bug) made larger than logLimit is history that cannot be read, which
// Check reports; pruning reads up to four times as much, to bring a log
// over its bound back within it.
const maxLog = 64 << 20

// errLogTooLarge is the error of a log larger than the library reads.
var errLogTooLarge = errors.New("log too large")

// logLimit is how much of a log a change, History and ReadVersion read: a
// log the library keeps within the size all logs may take always fits,
// with a record more, however large the records (a record is bounded by
// journal.MaxLine).
func (s *Store) logLimit() int64 {
	return max(maxLog, s.historyBytes()+journal.MaxLine)
}

// historyBytes is the size all logs together may take.
func (s *Store) historyBytes() int64 { return cmp.Or(s.opts.History.MaxBytes, defaultHistoryBytes) }

// logOf returns what a change needs of the log of the memory file at p,
// from what the Store knows when the log's last segment is still the size
// it left it and none followed it, else read again. h is the lock held
// for the change to be recorded.
func (s *Store) logOf(ctx context.Context, h Held, p string) (*logState, error) {
	if st := s.hist.get(p); st != nil && st.seg.n > 0 {
		size, err := s.logSize(ctx, h, st.seg.name)
		if err == nil && size == st.seg.size {
			if _, err := s.logSize(ctx, h, segName(p, st.seg.n+1)); errors.Is(err, fs.ErrNotExist) {
				return st, nil
			}
		}
	}
	_, appends := h.(appender)
	st, err := s.loadLog(ctx, p, appends)
	if err != nil {
		return nil, err
	}
	s.hist.put(p, st)
	return st, nil
}

// record writes the record of the change c to its file's log, before c is
// made, through the lock h: first, when the file is not at the version
// the log ends at, the record of the change made outside the library that
// brought it there, with its content. It appends to the log's last
// segment, or starts the next one (segments.go). It returns the record,
// for mark.
func (s *Store) record(ctx context.Context, h Held, c *change) (*journal.Record, error) {
	if s.opts.History.Off || c.t.cache {
		return nil, nil
	}
	p := c.t.path
	st, err := s.logOf(ctx, h, p)
	if err != nil {
		return nil, hostErr(c.op, p, fmt.Errorf("history: %w", err))
	}
	if c.old == nil && c.ver != "" {
		// A removal by the backend's version alone (compaction's of a
		// part): the content it removes, for the record.
		if got, err := s.b.Read(ctx, p, readLimit); err == nil && got.Version == c.ver && !cutShort(got) {
			c.old = got.Data
		}
	}
	now := s.now().UTC()
	oldVer, newVer := version(c.old), version(c.data)
	end := st.end
	switch {
	case st.unread:
		end = oldVer // a last segment too large to read: where it ends is not known
	case !st.endKnown || end != oldVer:
		end = journal.End(st.records, journal.Landed(st.records, oldVer))
	}
	// The records of the change, made against the records before them in
	// the segment they go to: nothing, in a new one, so that its first
	// record is content whole.
	build := func(prev []journal.Record) []journal.Record {
		var add []journal.Record
		if end != oldVer {
			r := journal.NewRecord(prev, journal.Outside, "", end, nil, oldVer, c.old, now)
			add, prev = append(add, r), append(prev, r)
		}
		return append(add, journal.NewRecord(prev, histOp(c), actorOf(ctx), oldVer, c.old, newVer, c.data, now))
	}
	roll := st.seg.n == 0 || st.unread
	var add []journal.Record
	if !roll {
		// The records are appended to in place: the Store's changes
		// take turns, and a state once put is read only up to its
		// length.
		add = build(st.records)
		whole := slices.ContainsFunc(add, func(r journal.Record) bool { return r.Full })
		share := int64(s.share(ctx))
		_, appends := h.(appender)
		roll = st.seg.size >= closeAt(share, appends) && whole || st.seg.size >= segMax(share, appends)
	}
	next := &logState{seg: st.seg, records: st.records, closed: st.closed, segs: st.segs, oldestEnd: st.oldestEnd, changes: st.changes}
	if roll && st.seg.n+1 >= segCeiling {
		return nil, hostErr(c.op, p, fmt.Errorf("history: %s is the last segment a log may have: the change is not made, as it could not be recorded; move that segment's file away (it is no segment of the library's: pruning leaves a log a few)", st.seg.name))
	}
	if roll {
		add = build(nil)
		next.seg = segment{name: segName(p, st.seg.n+1), n: st.seg.n + 1}
		next.records, next.closed, next.segs, next.changes = nil, st.closed+st.seg.size, st.segs+1, 0
		switch st.segs {
		case 0:
			if !paths.IsPart(p) {
				s.logCount.Add(1) // a new log: the others' share is smaller
			}
		case 1:
			next.oldestEnd = now
		}
	}
	line := journal.Encode(add)
	known := st.known
	if roll {
		known = &segData{} // a segment to start: it does not exist
	}
	got, err := s.appendLog(ctx, h, next.seg.name, line, true, known)
	if err != nil {
		s.hist.put(p, nil)
		return nil, hostErr(c.op, p, fmt.Errorf("history: %w", err))
	}
	next.known = got
	// A segment whose last line a crash cut gets a newline first, and is
	// then not this size: the next change reads it again.
	next.seg.size += int64(len(line))
	next.records = append(next.records, add...)
	next.changes += len(add)
	c.seg = next.seg.name
	r := add[len(add)-1]
	if roll {
		s.writeLast(ctx, h, p, next)
	}
	due := s.due(ctx, next, now)
	s.hist.put(p, next)
	if due {
		s.pruneSegments(ctx, h, p, oldVer) // the file's version until the change lands
	}
	return &r, nil
}

// mark adds to the log of the change c, in the segment of its record r,
// the mark that says whether r landed (err nil) or not (err wraps
// ErrChanged: the write lost a race); it adds none for another failure,
// whose outcome the chain of versions tells. A mark is not made durable:
// a crash that loses it leaves the chain to tell, as without it.
func (s *Store) mark(ctx context.Context, h Held, c *change, r *journal.Record, err error) {
	op := journal.MarkLanded
	switch {
	case r == nil:
		return
	case errors.Is(err, ErrChanged):
		op = journal.MarkAborted
	case err != nil:
		return
	}
	m := journal.Mark(op, *r, r.Time)
	p := c.t.path
	line := journal.Encode([]journal.Record{m})
	st := s.hist.get(p)
	var known *segData
	if st != nil && st.seg.name == c.seg {
		known = st.known
	}
	got, err := s.appendLog(ctx, h, c.seg, line, false, known)
	if err != nil {
		s.hist.put(p, nil)
		return
	}
	if st != nil && st.seg.name == c.seg {
		next := *st
		next.known = got
		next.seg.size += int64(len(line))
		next.records = append(st.records, m)
		next.end, next.endKnown = r.New, op == journal.MarkLanded
		s.hist.put(p, &next)
	}
}

// due reports whether the log st, with the record just appended, is to be
// pruned now. Its size is judged at each record, as the record is made,
// so that no log passes its share of the size all logs may take by more
// than its last segment; its age only once some of it can go:
//
//   - it is larger than its share of the size all logs may take;
//   - its oldest segment's records are all past the age kept, and the
//     segments after it may hold the versions always kept: the last holds
//     them, or there is another between (whatever Store wrote them: a
//     command that makes one change and exits). The last segment is never
//     pruned; it is closed at closeAt.
func (s *Store) due(ctx context.Context, st *logState, now time.Time) bool {
	p := s.policy(1)
	minV, age := cmp.Or(p.MinVersions, journal.DefaultMinVersions), cmp.Or(p.MaxAge, journal.DefaultMaxAge)
	switch {
	case st.segs > 1 && st.closed+st.seg.size > int64(s.share(ctx)):
		return true
	case st.segs > 1 && !st.oldestEnd.IsZero() && st.oldestEnd.Before(now.Add(-age)):
		return st.segs > 2 || st.changes >= minV // else the last segment alone cannot hold the versions always kept
	}
	return false
}

// share is a log's share of the size all logs may take, from the number
// of logs this Store last counted (once, then at each Compact; or as a
// log's summary says), and those it made since.
func (s *Store) share(ctx context.Context) int {
	n := s.logCount.Load()
	if n == 0 {
		return s.logPolicy(ctx).MaxBytes
	}
	return s.policy(int(n)).MaxBytes
}

// logPolicy is the journal's policy for one log, its share of the size
// all logs may take worked out from how many there are now.
func (s *Store) logPolicy(ctx context.Context) journal.Policy {
	n := int64(1)
	if files, err := s.logged(ctx); err == nil {
		n = sharing(files)
		s.logCount.Store(n)
	}
	return s.policy(int(n))
}

// changes counts the records of changes, not their marks: once when a log
// is read or pruned, then kept up to date in its logState.
func changes(records []journal.Record) int {
	n := 0
	for _, r := range records {
		if !journal.IsMark(r) {
			n++
		}
	}
	return n
}

// logSize is the size of the log at name, through the lock h where it
// appends (which then keeps the log open for the record), else read.
func (s *Store) logSize(ctx context.Context, h Held, name string) (int64, error) {
	if a, ok := h.(appender); ok {
		if size, err := a.Size(ctx, name); !errors.Is(err, errNoAppend) {
			return size, err
		}
	}
	c, err := s.b.Read(ctx, name, 0)
	return c.Size, err
}

// appendLog adds line to the segment at name: appended (durably when sync
// is set) where the lock can, else read, added to and written back only
// if unchanged meanwhile. known is the segment's content and version as
// this Store last wrote or read them, when it keeps them (nil when not:
// the segment is read; an empty one, for a segment to be started). It
// returns the segment's content and version once written, where it
// rewrote it; nil where it appended.
func (s *Store) appendLog(ctx context.Context, h Held, name string, line []byte, sync bool, known *segData) (*segData, error) {
	if a, ok := h.(appender); ok {
		if err := a.Append(ctx, name, line, sync); !errors.Is(err, errNoAppend) {
			return nil, err
		}
	}
	for lost := 0; ; lost++ {
		var log []byte
		var version string
		if lost == 0 && known != nil {
			log, version = known.data, known.version
		} else {
			c, err := s.b.Read(ctx, name, s.logLimit())
			switch {
			case errors.Is(err, fs.ErrNotExist):
			case err != nil:
				return nil, err
			case cutShort(c):
				return nil, fmt.Errorf("%s is over %s bytes", name, thousands64(s.logLimit()))
			default:
				log, version = c.Data, c.Version
			}
		}
		if len(log) > 0 && log[len(log)-1] != '\n' {
			log = append(log, '\n')
		}
		data := append(log[:len(log):len(log)], line...)
		v, err := h.Write(ctx, name, data, version)
		if err == nil {
			return &segData{data: data, version: v}, nil
		}
		if !errors.Is(err, ErrChanged) || lost == maxLost {
			return nil, err
		}
		if err := backoff(ctx, lost); err != nil {
			return nil, err
		}
	}
}

// segData is a segment's content and version, as a Store that rewrites
// its segments (on a backend that cannot append) keeps the last one, so
// that a change writes it without reading it first.
type segData struct {
	data    []byte
	version string
}

// policy is the journal's policy for one of n logs.
func (s *Store) policy(n int) journal.Policy {
	p := s.opts.History
	return journal.Policy{MaxAge: p.MaxAge, MinVersions: p.MinVersions, MaxBytes: int(s.historyBytes() / int64(max(n, 1)))}
}

// maxLost bounds the races a change may lose in a row before it gives up:
// with a lock that holds, it loses only to a person's editor or to a writer
// on a backend without locks, and a few rounds settle it.
const maxLost = 50

// backoff waits before the next round of a change that lost a race: not at
// all after the first loss, then a random time up to 1 ms, 2 ms, … 64 ms,
// so that writers who collided do not collide again.
func backoff(ctx context.Context, lost int) error {
	if lost == 0 {
		return ctx.Err()
	}
	t := time.NewTimer(rand.N(time.Millisecond << min(lost-1, 6)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// A change is one write or removal of a file.
type change struct {
	op   string // the operation, for errors: "write", "append", "compact", …
	as   string // the operation as the history names it, when not op: "seal"
	t    target
	old  []byte // the content read; nil when the file did not exist
	ver  string // the version read; "" when the file did not exist
	data []byte // the new content; nil removes the file
	seg  string // the segment of the log its record went to (record), for its mark
}

// grows reports whether the change makes the file larger. A change that
// does not is allowed by every limit, so that a file a person made too
// large, or a folder over its budget, can be condensed in steps.
func (c *change) grows() bool { return c.data != nil && len(c.data) > len(c.old) }
