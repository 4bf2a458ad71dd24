package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/paths"
)

// The record of each change: the change path (commit, change.go) writes
// it to the file's log before it makes the change, and marks it after;
// who made it travels in the context (WithActor). The logs are read,
// restored from and pruned by history.go.

// logName is the log of the memory file at p: ".history/facts/user.md.log".
func logName(p string) string { return paths.HistoryDir + "/" + p + ".log" }

// logPath is the memory file a log is of, or false for a name that is no
// log.
func logPath(name string) (string, bool) {
	p, ok := strings.CutPrefix(name, paths.HistoryDir+"/")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(p, ".log")
}

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

// readLog reads and decodes the log at name, up to limit bytes: its
// records, size and version; none when it does not exist.
func (s *Store) readLog(ctx context.Context, name string, limit int64) (*logState, string, error) {
	c, err := s.b.Read(ctx, name, limit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &logState{}, "", nil
	case err != nil:
		return nil, "", err
	case cutShort(c):
		return nil, "", fmt.Errorf("%w: %s is %s bytes, more than the %s the library reads of a log", errLogTooLarge, name, thousands64(c.Size), thousands64(limit))
	}
	records, _ := journal.Decode(c.Data) // a line that does not parse is skipped; Check reports it
	return &logState{size: c.Size, records: records, changes: changes(records)}, c.Version, nil
}

// logOf returns the records of the log at name, from what the Store knows
// when the log is still the size it left it, else read again. h is the
// lock held for the change to be recorded.
func (s *Store) logOf(ctx context.Context, h Held, name string) (*logState, error) {
	if st := s.hist.get(name); st != nil {
		size, err := s.logSize(ctx, h, name)
		if err == nil && size == st.size || errors.Is(err, fs.ErrNotExist) && st.size == 0 {
			return st, nil
		}
	}
	st, _, err := s.readLog(ctx, name, s.logLimit())
	if err != nil {
		return nil, err
	}
	s.hist.put(name, st)
	return st, nil
}

// record writes the record of the change c to its file's log, before c is
// made, through the lock h: first, when the file is not at the version
// the log ends at, the record of the change made outside the library that
// brought it there, with its content. It returns the record, for mark.
func (s *Store) record(ctx context.Context, h Held, c *change) (*journal.Record, error) {
	if s.opts.History.Off || c.t.cache {
		return nil, nil
	}
	name := logName(c.t.path)
	st, err := s.logOf(ctx, h, name)
	if errors.Is(err, errLogTooLarge) {
		// A log someone (or a bug) made larger than the library reads:
		// pruned first, so that the change is recorded, not made without
		// its record. One still too large refuses the change; Check
		// reports it.
		s.prune(ctx, h, c.t.path, version(c.old))
		st, err = s.logOf(ctx, h, name)
	}
	if err != nil {
		return nil, hostErr(c.op, c.t.path, fmt.Errorf("history: %w", err))
	}
	if c.old == nil && c.ver != "" {
		// A removal by the backend's version alone (compaction's of a
		// part): the content it removes, for the record.
		if got, err := s.b.Read(ctx, c.t.path, readLimit); err == nil && got.Version == c.ver && !cutShort(got) {
			c.old = got.Data
		}
	}
	now := s.now().UTC()
	oldVer, newVer := version(c.old), version(c.data)
	// The records are appended to in place: the Store's changes take
	// turns, and a state once put is read only up to its length.
	records := st.records
	var add []journal.Record
	end := st.end
	if !st.endKnown || end != oldVer {
		end = journal.End(records, journal.Landed(records, oldVer))
	}
	if end != oldVer {
		r := journal.NewRecord(records, journal.Outside, "", end, nil, oldVer, c.old, now)
		add, records = append(add, r), append(records, r)
	}
	r := journal.NewRecord(records, histOp(c), actorOf(ctx), oldVer, c.old, newVer, c.data, now)
	add, records = append(add, r), append(records, r)
	line := journal.Encode(add)
	if err := s.appendLog(ctx, h, name, line, true); err != nil {
		s.hist.put(name, nil)
		return nil, hostErr(c.op, c.t.path, fmt.Errorf("history: %w", err))
	}
	// A log whose last line a crash cut gets a newline first, and is then
	// not this size: the next change reads it again.
	next := &logState{size: st.size + int64(len(line)), records: records, changes: st.changes + len(add)}
	if st.size == 0 {
		s.logCount.Add(1) // a new log: the others' share is smaller
	}
	due := s.due(ctx, next, h, now)
	s.hist.put(name, next)
	if due {
		s.prune(ctx, h, c.t.path, newVer)
	}
	return &r, nil
}

// mark adds to the log of the change c the mark that says whether its
// record r landed (err nil) or not (err wraps ErrChanged: the write lost a
// race); it adds none for another failure, whose outcome the chain of
// versions tells. A mark is not made durable: a crash that loses it
// leaves the chain to tell, as without it.
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
	name := logName(c.t.path)
	line := journal.Encode([]journal.Record{m})
	if s.appendLog(ctx, h, name, line, false) != nil {
		s.hist.put(name, nil)
		return
	}
	if st := s.hist.get(name); st != nil {
		next := &logState{size: st.size + int64(len(line)), records: append(st.records, m), changes: st.changes}
		next.end, next.endKnown = r.New, op == journal.MarkLanded
		s.hist.put(name, next)
	}
}

// pruneEvery is how many changes more than the versions always kept a
// log holds before its age is looked at.
const pruneEvery = 32

// due reports whether the log st, with the record just appended, is to be
// pruned now. Its size is judged at each record, as the record is made,
// so that no log passes its share of the size all logs may take by more
// than the record; its age only once enough of it can go, since pruning
// reads and rewrites the whole log:
//
//   - it is larger than its share of the size all logs may take;
//   - it holds pruneEvery more changes than the versions always kept, and
//     its first record and a quarter of its records (at least pruneEvery)
//     are past the age kept, whatever Store wrote them (a command that
//     makes one change and exits);
//   - it is larger than a log the backend rewrites at each change (S3)
//     should be.
func (s *Store) due(ctx context.Context, st *logState, h Held, now time.Time) bool {
	p := s.policy(1)
	minV, age := cmp.Or(p.MinVersions, journal.DefaultMinVersions), cmp.Or(p.MaxAge, journal.DefaultMaxAge)
	_, appends := h.(appender)
	switch {
	case !appends && st.size > rewriteMax:
		return true
	case st.size > int64(s.share(ctx)):
		return true
	case st.changes > minV+pruneEvery && st.records[0].Time.Before(now.Add(-age)) && st.records[max(pruneEvery, len(st.records)/4)-1].Time.Before(now.Add(-age)):
		// The first record too: pruning keeps every version from the
		// first within the age on, and records made while the clock was
		// ahead would otherwise have every change read the log to keep
		// it as it is.
		return true
	}
	return false
}

// share is a log's share of the size all logs may take, from the number
// of logs this Store last counted (once, then at each prune), and those
// it made since.
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
	n := 1
	if all, err := s.b.List(ctx, paths.HistoryDir); err == nil {
		n = max(len(all), 1)
		s.logCount.Store(int64(n))
	}
	return s.policy(n)
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

// rewriteMax is the size past which a log that a change rewrites whole
// (on S3) is pruned at each change: each change reads and writes it.
const rewriteMax = 1 << 20

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

// appendLog adds line to the log at name: appended (durably when sync is
// set) where the lock can, else read, added to and written back only if
// unchanged meanwhile.
func (s *Store) appendLog(ctx context.Context, h Held, name string, line []byte, sync bool) error {
	if a, ok := h.(appender); ok {
		if err := a.Append(ctx, name, line, sync); !errors.Is(err, errNoAppend) {
			return err
		}
	}
	for lost := 0; ; lost++ {
		c, err := s.b.Read(ctx, name, s.logLimit())
		var log []byte
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		case cutShort(c):
			return fmt.Errorf("%s is over %s bytes", name, thousands64(s.logLimit()))
		default:
			log = c.Data
		}
		if len(log) > 0 && log[len(log)-1] != '\n' {
			log = append(log, '\n')
		}
		_, err = h.Write(ctx, name, append(log, line...), c.Version)
		if !errors.Is(err, ErrChanged) || lost == maxLost {
			return err
		}
		if err := backoff(ctx, lost); err != nil {
			return err
		}
	}
}

// policy is the journal's policy for one of n logs.
func (s *Store) policy(n int) journal.Policy {
	p := s.opts.History
	return journal.Policy{MaxAge: p.MaxAge, MinVersions: p.MinVersions, MaxBytes: int(s.historyBytes() / int64(max(n, 1)))}
}

// prune rewrites the log of the file at p without the records the policy
// lets go, when there are some; current is the file's version once the
// change under way lands. Pruning is housekeeping: a failure leaves the
// log as it was, for the next time.
func (s *Store) prune(ctx context.Context, h Held, p, current string) {
	name := logName(p)
	st, v, err := s.readLog(ctx, name, 4*s.logLimit())
	if err != nil || st.size == 0 {
		return
	}
	// To three quarters of its share, so that a log that grows past it
	// is not pruned again at its next change.
	pol := s.logPolicy(ctx)
	pol.MaxBytes -= pol.MaxBytes / 4
	kept := journal.Prune(st.records, current, s.now().UTC(), pol)
	if len(kept) == len(st.records) {
		s.hist.put(name, &logState{size: st.size, records: st.records, changes: st.changes})
		return
	}
	data := journal.Encode(kept)
	if _, err := h.Write(ctx, name, data, v); err != nil {
		s.hist.put(name, nil)
		return
	}
	s.hist.put(name, &logState{size: int64(len(data)), records: kept, changes: changes(kept)})
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
}

// grows reports whether the change makes the file larger. A change that
// does not is allowed by every limit, so that a file a person made too
// large, or a folder over its budget, can be condensed in steps.
func (c *change) grows() bool { return c.data != nil && len(c.data) > len(c.old) }
