package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/paths"
)

// The logs in segments. The log of a memory file is a run of segments in
// the folder of its own under .history/ (".history/facts/user.md/"),
// numbered from 1: "00000001.log", "00000002.log", each one JSON lines of
// records (internal/journal). A change appends its record to the last
// segment, or starts the next one, whose first record is written whole so
// that no segment depends on one before it. So a change reads and writes
// at most one segment, however long the file's history (on S3, which
// cannot append, the last segment is read and written back whole), the
// segments before it are never written again, and pruning removes the
// oldest segments whole. A log of the earlier layout, one file beside the
// folder (".history/facts/user.md.log"), is read as the segment before
// the first, and is never appended to. Each segment is replaced or
// removed whole, atomically: a segment rewritten without some of its
// records is one Write.

// segMin is the size from which a record that is written whole anyway
// (every journal.FullEvery versions, or when a delta would be larger)
// starts the next segment where the lock appends; a quarter of it where a
// change rewrites its segment whole (S3), up to about that and the
// records of one chain (closeAt).
const segMin = 64 << 10

// segDigits is the width of a segment's number in its name.
const segDigits = 8

// segCeiling bounds a segment's number, below the first of more digits:
// a name with a number from it is no segment (a file a person or a bug
// put there), so that the next number of a log's last segment is always
// one its listing sees. A log whose last segment is numbered just below
// it takes no further change (record): a change is never made
// unrecorded. Pruning leaves a log a few segments, so only such a file
// can bring a log there.
const segCeiling = 99_999_999

// segDir is the folder of the segments of the log of the memory file at
// p.
func segDir(p string) string { return paths.HistoryDir + "/" + p }

// segName is the segment numbered n of the log of the memory file at p;
// 0 names the log of the earlier layout.
func segName(p string, n int) string {
	if n == 0 {
		return paths.HistoryDir + "/" + p + ".log"
	}
	return fmt.Sprintf("%s/%0*d.log", segDir(p), segDigits, n)
}

// logPath is the memory file whose log the file at name (under
// .history/) is a segment of, or false for a name that is none.
func logPath(name string) (string, bool) {
	p, ok := strings.CutPrefix(name, paths.HistoryDir+"/")
	if !ok {
		return "", false
	}
	if p, ok = strings.CutSuffix(p, ".log"); !ok {
		return "", false
	}
	if dir, base := path.Split(p); dir != "" {
		if _, ok := segNumber(base); ok {
			return strings.TrimSuffix(dir, "/"), true
		}
		if strings.Trim(base, "0123456789") == "" {
			return "", false // a number of another width, or past the ceiling: no segment, and no file's log
		}
	}
	return p, true
}

// segNumber is the number of a segment's name without ".log".
func segNumber(base string) (int, bool) {
	if len(base) != segDigits {
		return 0, false
	}
	n, err := strconv.Atoi(base)
	return n, err == nil && n > 0 && n < segCeiling
}

// A segment is one file of a log.
type segment struct {
	name string
	n    int // 0 for the log of the earlier layout
	size int64
}

// segments lists the log of the memory file at p, oldest first: the log
// of the earlier layout when there is one, then the segments.
func (s *Store) segments(ctx context.Context, p string) ([]segment, error) {
	var segs []segment
	c, err := s.b.Read(ctx, segName(p, 0), 0)
	switch {
	case err == nil:
		segs = append(segs, segment{name: segName(p, 0), size: c.Size})
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	entries, err := s.b.List(ctx, segDir(p))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		dir, base := path.Split(e.Name)
		n, ok := segNumber(strings.TrimSuffix(base, ".log"))
		if ok && dir == segDir(p)+"/" && strings.HasSuffix(base, ".log") {
			segs = append(segs, segment{name: e.Name, n: n, size: e.Size})
		}
	}
	slices.SortFunc(segs, func(a, b segment) int { return a.n - b.n })
	return segs, nil
}

// readSegment reads and decodes one segment: its records and version.
// One larger than the library reads (limit) is skipped, its records left
// out: a log is never unreadable for its size; Check reports it.
func (s *Store) readSegment(ctx context.Context, seg segment, limit int64) ([]journal.Record, string, error) {
	records, c, err := s.readSegmentData(ctx, seg, limit)
	return records, c.Version, err
}

// readSegmentData is readSegment, with the segment's content.
func (s *Store) readSegmentData(ctx context.Context, seg segment, limit int64) ([]journal.Record, Content, error) {
	c, err := s.b.Read(ctx, seg.name, limit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, Content{}, nil // pruned meanwhile
	case err != nil:
		return nil, Content{}, err
	case cutShort(c):
		return nil, Content{}, fmt.Errorf("%w: %s is %s bytes, more than the %s the library reads of a log", errLogTooLarge, seg.name, thousands64(c.Size), thousands64(limit))
	}
	records, _ := journal.Decode(c.Data) // a line that does not parse is skipped; Check reports it
	return records, c, nil
}

// readLog reads the whole log of the memory file at p, segment after
// segment: its records, oldest first. A segment too large to read is left
// out.
func (s *Store) readLog(ctx context.Context, p string) ([]journal.Record, error) {
	segs, err := s.segments(ctx, p)
	if err != nil {
		return nil, err
	}
	var records []journal.Record
	for _, seg := range segs {
		rs, _, err := s.readSegment(ctx, seg, s.logLimit())
		if err != nil && !errors.Is(err, errLogTooLarge) {
			return nil, err
		}
		records = append(records, rs...)
	}
	return records, nil
}

// segmentContent returns the content the memory file at p had at
// version, from the newest segment that records it: each segment starts
// with content whole, so one rebuilds every version it records, and a
// recent version is read from the last segments alone. It returns an
// error wrapping journal.ErrNoContent when no segment can.
func (s *Store) segmentContent(ctx context.Context, p, version string) ([]byte, error) {
	segs, err := s.segments(ctx, p)
	if err != nil {
		return nil, err
	}
	last := fmt.Errorf("%w: %s", journal.ErrNoContent, version)
	for _, seg := range slices.Backward(segs) {
		records, _, err := s.readSegment(ctx, seg, s.logLimit())
		switch {
		case errors.Is(err, errLogTooLarge):
			continue
		case err != nil:
			return nil, err
		}
		b, err := journal.Content(records, version)
		if err == nil {
			return b, nil
		}
		if slices.ContainsFunc(records, func(r journal.Record) bool { return r.New == version && !journal.IsMark(r) }) {
			last = err // a record of it that does not rebuild: said, unless an older one does
		}
	}
	return nil, last
}

// loadLog reads what a change needs of the log of the memory file at p:
// its segments' sizes, and the records of the last one (and its content,
// when the lock cannot append: appends rewrite it).
func (s *Store) loadLog(ctx context.Context, p string, appends bool) (*logState, error) {
	if !appends {
		if st, err := s.loadLast(ctx, p); st != nil || err != nil {
			return st, err
		}
	}
	segs, err := s.segments(ctx, p)
	if err != nil || len(segs) == 0 {
		return &logState{}, err
	}
	last := segs[len(segs)-1]
	st := &logState{seg: last, segs: len(segs)}
	for _, seg := range segs[:len(segs)-1] {
		st.closed += seg.size
	}
	limit := segMax(s.historyBytes(), true) + journal.MaxLine
	if last.n == 0 {
		limit = s.logLimit() // a log of the earlier layout, read for where it ends
	}
	records, c, err := s.readSegmentData(ctx, last, limit)
	switch {
	case errors.Is(err, errLogTooLarge):
		st.unread = true // not appended to: the next record starts a segment
	case err != nil:
		return nil, err
	case !appends && last.n > 0 && c.Version != "":
		st.known = &segData{data: c.Data, version: c.Version}
	}
	st.records = records
	st.changes = changes(st.records)
	switch {
	case len(segs) == 2 && len(st.records) > 0:
		st.oldestEnd = st.records[0].Time
	case len(segs) > 2:
		// The first record's time starts the second segment's first line.
		if c, err := s.b.Read(ctx, segs[1].name, 64); err == nil {
			st.oldestEnd, _ = journal.FirstTime(c.Data)
		}
	}
	return st, nil
}

// closeAt is the size from which a record written whole starts the next
// segment, given a log's share of the size all logs may take and whether
// the lock appends: segMin, or a quarter of it where each change rewrites
// the segment (S3), or a quarter of a small share, so that pruning, which
// removes segments whole, can keep a log within it.
func closeAt(share int64, appends bool) int64 {
	at := int64(segMin)
	if !appends {
		at /= 4
	}
	return max(min(at, share/4), 1)
}

// segMax is the size past which the last segment is closed even though
// the next record is a delta: a quarter of the share, never under
// closeAt. Closing at a record written whole comes first, within
// journal.FullEvery records.
func segMax(share int64, appends bool) int64 { return max(closeAt(share, appends), share/4) }

// pruneSegments removes the oldest segments of the log of the memory file
// at p, never the last: while the log is larger than its share (to three
// quarters of it), and while a segment holds only versions past the age
// kept and the segments after it hold the versions always kept. Each
// segment starts with content whole, so the ones kept rebuild every
// version they record. cur is the file's version as it is now (the one a
// change being recorded starts from): the newest segment that records it
// is never removed. By age, a segment is removed only when the ones after
// it hold the versions always kept (MinVersions); by size, the share
// comes first, so that all the logs together stay within the bound. A
// log's share is worked out from a count of the logs, a summary's taken
// only as a hint within 4,096. Pruning is housekeeping:
// a failure leaves the log as it was, for the next time.
func (s *Store) pruneSegments(ctx context.Context, h Held, p, cur string) {
	segs, err := s.segments(ctx, p)
	if err != nil || len(segs) < 2 {
		return
	}
	pol := s.policy(1)
	pol.MaxBytes = s.share(ctx)
	share := int64(pol.MaxBytes - pol.MaxBytes/4)
	minV := pol.MinVersions
	if minV <= 0 {
		minV = journal.DefaultMinVersions
	}
	age := pol.MaxAge
	if age <= 0 {
		age = journal.DefaultMaxAge
	}
	cutoff := s.now().UTC().Add(-age)
	var total int64
	for _, seg := range segs {
		total += seg.size
	}
	// The segments' records, newest first: counted for the versions
	// always kept, and searched for the file's version.
	type read struct {
		first, last time.Time
		changes     int
		version     string
		ok          bool
	}
	info := make([]read, len(segs))
	later := make([]int, len(segs)) // changes in the segments after each
	keep := len(segs) - 1           // the oldest segment never removed
	found := false                  // the file's version found at keep
	for i := len(segs) - 1; i >= 0; i-- {
		if i < len(segs)-1 {
			later[i] = later[i+1] + info[i+1].changes
		}
		rs, v, err := s.readSegment(ctx, segs[i], 4*s.logLimit())
		if err != nil && !errors.Is(err, errLogTooLarge) {
			keep = 0 // one that cannot be read now: none is removed
			break
		}
		info[i] = read{changes: changes(rs), version: v, ok: err == nil}
		if len(rs) > 0 {
			info[i].first, info[i].last = rs[0].Time, rs[len(rs)-1].Time
		}
		if !found && slices.ContainsFunc(rs, func(r journal.Record) bool { return r.New == cur && !journal.IsMark(r) }) {
			keep, found = i, true
		}
	}
	// By size first, oldest first. The versions always kept give way to
	// the bound here: they are kept by age, not past the size all the
	// logs together may take.
	dropped := 0
	for i, seg := range segs[:keep] {
		if total <= share {
			break
		}
		if !info[i].ok || h.Remove(ctx, seg.name, info[i].version) != nil {
			break // one too large to read has no version: Check reports it
		}
		total -= seg.size
		dropped++
	}
	// Then by age.
	aged := dropped
	for i := dropped; i < keep; i++ {
		if !info[i].ok || !info[i].last.Before(cutoff) || later[i] < minV {
			break
		}
		if err := h.Remove(ctx, segs[i].name, info[i].version); err != nil {
			break
		}
		total -= segs[i].size
		aged++
	}
	s.hist.put(p, nil)
	if kept := segs[aged:]; aged > 0 && kept[len(kept)-1].n > 0 {
		last := kept[len(kept)-1]
		sum := &logState{seg: last, segs: len(kept), closed: total - last.size}
		if len(kept) > 1 {
			sum.oldestEnd = info[aged+1].first
		}
		s.writeLast(ctx, h, p, sum)
	}
}

// The summary of a log. Where the lock cannot append (S3), a change
// rewrites the last segment, and listing the segments to find it would
// cost a fresh Store (a command) bytes that grow with the history: the
// log's folder holds a hidden summary, ".last", of one line ("<last
// segment's number> <segments> <size of the others> <time the oldest
// ends, or -> <logs sharing the bound, as last counted>"), written when a
// segment is started and when the log is pruned. A fresh Store reads it and the last segment, and checks that
// no segment follows; a summary that is missing, malformed or behind
// (a crash between a segment's start and the summary's write) sends it
// to the listing, as without one. The summary only says where to look:
// the segments are the log.

// lastName is the summary of the log of the memory file at p.
func lastName(p string) string { return segDir(p) + "/.last" }

// loadLast is loadLog from the log's summary: nil, with no error, when
// the summary cannot be used.
func (s *Store) loadLast(ctx context.Context, p string) (*logState, error) {
	c, err := s.b.Read(ctx, lastName(p), 256)
	if err != nil || cutShort(c) {
		return nil, nil
	}
	var n, segs int
	var closed, logs int64
	var end string
	if k, _ := fmt.Sscanf(string(c.Data), "%d %d %d %s %d\n", &n, &segs, &closed, &end, &logs); k != 5 || n < 1 || n >= segCeiling || segs < 1 || closed < 0 || logs < 1 {
		return nil, nil
	}
	st := &logState{seg: segment{name: segName(p, n), n: n}, segs: segs, closed: closed}
	if end != "-" {
		if st.oldestEnd, err = time.Parse(time.RFC3339Nano, end); err != nil {
			return nil, nil
		}
	}
	if _, err := s.b.Read(ctx, segName(p, n+1), 0); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil // behind: a segment follows, or the backend failed
	}
	records, data, err := s.readSegmentData(ctx, st.seg, segMax(s.historyBytes(), true)+journal.MaxLine)
	if err != nil || data.Version == "" {
		return nil, nil
	}
	st.seg.size = data.Size
	st.records, st.changes = records, changes(records)
	st.known = &segData{data: data.Data, version: data.Version}
	if logs <= maxHintLogs {
		// How many logs share the bound, as last counted: no listing
		// of them all. It is a hint, taken from a summary found sound
		// and only when it is not past what a store holds; else the
		// Store counts them (share).
		s.logCount.CompareAndSwap(0, logs)
	}
	return st, nil
}

// maxHintLogs is the most logs a log's summary is believed to count: a
// count past it (a summary damaged or edited) is counted again instead,
// so that it cannot make the logs' shares of the bound next to nothing.
// Pruning keeps the versions always kept whatever the share.
const maxHintLogs = 4096

// writeLast writes the summary of the log st of the memory file at p,
// where the lock cannot append. It is a hint: a failure leaves the next
// fresh Store to list the segments.
func (s *Store) writeLast(ctx context.Context, h Held, p string, st *logState) {
	if _, appends := h.(appender); appends {
		return
	}
	end := "-"
	if !st.oldestEnd.IsZero() {
		end = st.oldestEnd.UTC().Format(time.RFC3339Nano)
	}
	line := fmt.Sprintf("%d %d %d %s %d\n", st.seg.n, st.segs, st.closed, end, max(s.logCount.Load(), 1))
	name := lastName(p)
	c, err := s.b.Read(ctx, name, 256)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil || c.Version == "":
		return
	}
	h.Write(ctx, name, []byte(line), c.Version)
}
