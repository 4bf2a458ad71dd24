package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/paths"
)

// The history. Every change of a memory file is recorded by the change path
// (commit) before it is made: when, what, who, the version before and after,
// and the content after (whole, or as a delta of the content before), in a
// log of the file's own under the hidden folder .history/ of the backend
// that holds the file (".history/facts/user.md.log"). A crash between the
// record and the change leaves a record of a change that did not land,
// which the chain of versions tells apart (internal/journal); a change made
// outside the library (an editor, `aws s3 cp`) is recorded, with the content
// it made, when the library next changes the file. Every recorded version
// can be read back byte for byte and restored.

// Change is one recorded change of a memory file, as [Store.History] gives
// it. The history of the shared world topics (Options.World) is kept on
// the shared backend, actors included: every agent sharing it reads who
// changed a topic.
type Change struct {
	Time     time.Time
	Path     string // "facts/user.md"
	Op       string // "write", "patch", "append", "seal", "compact", "restore", "outside"
	Actor    string // who: a conversation's id or a host-given name ("reflector (id)", "compaction" when they made it); "" for outside changes
	Old, New string // versions (memory.Version of the content); Old "" when created, New "" when removed

	// Pending reports a change made outside the library that no record
	// holds yet: the file is not at the last version recorded. It is
	// recorded, its content kept, at the library's next change of the
	// file.
	Pending bool `json:",omitempty"`
}

// HistoryPolicy bounds the history a Store keeps. The zero value keeps it
// on: every version of the last 90 days, at least the last 20 of each file
// whatever their age, and at most 64 MiB of logs in all.
type HistoryPolicy struct {
	// Off records nothing: the logs there are stay as they are.
	Off bool
	// MaxAge keeps every version younger. 0 means 90 days.
	MaxAge time.Duration
	// MinVersions keeps at least the last so many versions of each file,
	// whatever their age. 0 means 20.
	MinVersions int
	// MaxBytes bounds the size of all the logs of a backend together: each
	// log gets its share, its oldest versions going first, never the
	// current one. 0 means 64 MiB.
	MaxBytes int64
}

// defaultHistoryBytes is HistoryPolicy.MaxBytes when 0.
const defaultHistoryBytes = 64 << 20

// HistoryOptions narrow [Store.History]. A nil *HistoryOptions gives every
// change.
type HistoryOptions struct {
	// Limit is the most changes returned, the newest; 0 means all.
	Limit int
	// Actor keeps the changes whose actor is this one, or names it in
	// parentheses ("reflector (conv-7)" for "conv-7"); "" keeps all.
	Actor string
	// Since and Until keep the changes recorded in [Since, Until); a zero
	// time bounds nothing.
	Since, Until time.Time
}

// historyDir is the hidden folder of the logs, on each backend.
const historyDir = ".history"

// logName is the log of the memory file at p: ".history/facts/user.md.log".
func logName(p string) string { return historyDir + "/" + p + ".log" }

// logPath is the memory file a log is of, or false for a name that is no
// log.
func logPath(name string) (string, bool) {
	p, ok := strings.CutPrefix(name, historyDir+"/")
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
	case "write", "patch", "append", "seal", "compact", "restore":
		return c.op
	}
	if c.data == nil {
		return "remove"
	}
	return "write"
}

// logs is what a Store knows of the logs it wrote: their records, while
// the log is the size it was.
type logs struct {
	mu sync.Mutex
	by map[string]*logState // by log name
}

// maxLogs bounds the logs a Store remembers; it forgets them all past it.
const maxLogs = 64

type logState struct {
	size    int64
	records []journal.Record
	pruned  int // len(records) when the log was last pruned or read
}

func (l *logs) get(name string) *logState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.by[name]
}

func (l *logs) put(name string, st *logState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil || len(l.by) >= maxLogs {
		l.by = map[string]*logState{}
	}
	l.by[name] = st
}

func (l *logs) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.by = nil
}

// maxLog bounds how much of a log the library reads: a log a person (or a
// bug) made larger is history that cannot be read, which Check reports,
// and a change of its file prunes it first.
const maxLog = 64 << 20

// errLogTooLarge is the error of a log larger than maxLog.
var errLogTooLarge = errors.New("log too large")

// readLog reads and decodes the log at name: its records, size and
// version; none when it does not exist.
func (s *Store) readLog(ctx context.Context, name string) (*logState, string, error) {
	c, err := s.b.Read(ctx, name, maxLog)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &logState{}, "", nil
	case err != nil:
		return nil, "", err
	case cutShort(c):
		return nil, "", fmt.Errorf("%w: %s is %s bytes, more than the %s the library reads of a log", errLogTooLarge, name, thousands64(c.Size), thousands(maxLog))
	}
	records, _ := journal.Decode(c.Data) // a line that does not parse is skipped; Check reports it
	return &logState{size: c.Size, records: records, pruned: len(records)}, c.Version, nil
}

// logOf returns the records of the log at name, from what the Store knows
// when the log is still the size it left it, else read again.
func (s *Store) logOf(ctx context.Context, name string) (*logState, error) {
	if st := s.hist.get(name); st != nil {
		c, err := s.b.Read(ctx, name, 0)
		if err == nil && c.Size == st.size || errors.Is(err, fs.ErrNotExist) && st.size == 0 {
			return st, nil
		}
	}
	st, _, err := s.readLog(ctx, name)
	if err != nil {
		return nil, err
	}
	s.hist.put(name, st)
	return st, nil
}

// appender is a held lock that appends to a file, durably when sync is
// set: a Dir's, for the logs. One that wraps another's returns errNoAppend
// when that one cannot.
type appender interface {
	Append(ctx context.Context, name string, data []byte, sync bool) error
}

var errNoAppend = errors.New("the lock cannot append")

// record writes the record of the change c to its file's log, before c is
// made, through the lock h: first, when the file is not at the version
// the log ends at, the record of the change made outside the library that
// brought it there, with its content. It returns the record, for mark.
func (s *Store) record(ctx context.Context, h Held, c *change) (*journal.Record, error) {
	if s.opts.History.Off || c.t.cache {
		return nil, nil
	}
	name := logName(c.t.path)
	st, err := s.logOf(ctx, name)
	if errors.Is(err, errLogTooLarge) {
		// A log someone made larger than the library reads: its file's
		// changes go unrecorded, rather than fail, and Check reports it.
		return nil, nil
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
	records := slices.Clip(st.records)
	var add []journal.Record
	if end := journal.End(records, journal.Landed(records, oldVer)); end != oldVer {
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
	s.hist.put(name, &logState{size: st.size + int64(len(line)), records: records, pruned: st.pruned})
	if s.due(records, st, h, now) {
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
		s.hist.put(name, &logState{size: st.size + int64(len(line)), records: append(slices.Clip(st.records), m), pruned: st.pruned})
	}
}

// pruneEvery is how many records a log gains in one Store between two
// prunings.
const pruneEvery = 32

// due reports whether the log of records, as st read it, is to be pruned
// now: it gained pruneEvery records since this Store read or pruned it;
// or, whatever Store wrote them (a command that makes one change and
// exits), it holds pruneEvery more than the versions always kept, the
// oldest past the age kept; or it is larger than a log the backend
// rewrites at each change (S3) should be.
func (s *Store) due(records []journal.Record, st *logState, h Held, now time.Time) bool {
	p := s.policy(1)
	minV, age := cmp.Or(p.MinVersions, journal.DefaultMinVersions), cmp.Or(p.MaxAge, journal.DefaultMaxAge)
	_, appends := h.(appender)
	switch {
	case changes(records)-changes(records[:min(st.pruned, len(records))]) >= pruneEvery:
		return true
	case changes(records) > minV+pruneEvery && records[0].Time.Before(now.Add(-age)):
		return true
	case !appends && st.size > rewriteMax:
		return true
	}
	return false
}

// changes counts the records of changes, not their marks.
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
		c, err := s.b.Read(ctx, name, maxLog)
		var log []byte
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		case cutShort(c):
			return fmt.Errorf("%s is over %s bytes", name, thousands(maxLog))
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
	total := p.MaxBytes
	if total == 0 {
		total = defaultHistoryBytes
	}
	return journal.Policy{MaxAge: p.MaxAge, MinVersions: p.MinVersions, MaxBytes: int(total / int64(max(n, 1)))}
}

// prune rewrites the log of the file at p without the records the policy
// lets go, when there are some; current is the file's version once the
// change under way lands. Pruning is housekeeping: a failure leaves the
// log as it was, for the next time.
func (s *Store) prune(ctx context.Context, h Held, p, current string) {
	name := logName(p)
	st, v, err := s.readLog(ctx, name)
	if err != nil || st.size == 0 {
		return
	}
	n := 1
	if all, err := s.b.List(ctx, historyDir); err == nil {
		n = len(all)
	}
	kept := journal.Prune(st.records, current, s.now().UTC(), s.policy(n))
	if len(kept) == len(st.records) {
		s.hist.put(name, &logState{size: st.size, records: st.records, pruned: len(st.records)})
		return
	}
	data := journal.Encode(kept)
	if _, err := h.Write(ctx, name, data, v); err != nil {
		s.hist.put(name, nil)
		return
	}
	s.hist.put(name, &logState{size: int64(len(data)), records: kept, pruned: len(kept)})
}

// pruneAll prunes the log of every file, under the lock its changes take.
func (s *Store) pruneAll(ctx context.Context) error {
	const op = "compact"
	if s.opts.History.Off {
		return nil
	}
	end, err := s.begin(ctx, op, "")
	if err != nil {
		return err
	}
	defer end()
	files, err := s.logged(ctx)
	if err != nil {
		return hostErr(op, historyDir, err)
	}
	for _, p := range files {
		t, err := s.resolve("read", p)
		if err != nil {
			continue
		}
		err = s.locked(ctx, op, p, t.lockName(), func(ctx context.Context, h Held) error {
			current, err := s.currentVersion(ctx, p)
			if err == nil {
				s.prune(ctx, h, p, current)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// History returns the recorded changes of the memory file at path, or of
// every file when path is "", newest first, narrowed by opts. A file whose
// content is not the last version recorded (a person's edit since) starts
// with a Pending change made outside the library. With the history off
// ([HistoryPolicy]), the changes recorded before are still given.
func (s *Store) History(ctx context.Context, path string, opts *HistoryOptions) ([]Change, error) {
	const op = "history"
	end, err := s.begin(ctx, op, path)
	if err != nil {
		return nil, err
	}
	defer end()
	var o HistoryOptions
	if opts != nil {
		o = *opts
	}
	var files []string
	if path != "" {
		t, err := s.resolve("read", path)
		if err != nil {
			return nil, err
		}
		files = []string{t.path}
	} else if files, err = s.logged(ctx); err != nil {
		return nil, hostErr(op, "", err)
	}
	var out []Change
	for _, p := range files {
		changes, err := s.changesOf(ctx, p)
		if err != nil {
			return nil, err
		}
		// Newest first: a file's own in the order of its chain, whatever
		// the times (one clock tick, or clocks of several writers).
		for _, c := range slices.Backward(changes) {
			if o.keeps(c) {
				out = append(out, c)
			}
		}
	}
	if len(files) > 1 {
		slices.SortStableFunc(out, func(a, b Change) int { return b.Time.Compare(a.Time) })
	}
	if o.Limit > 0 && len(out) > o.Limit {
		out = out[:o.Limit]
	}
	return out, nil
}

// keeps reports whether o keeps the change c.
func (o HistoryOptions) keeps(c Change) bool {
	switch {
	case o.Actor != "" && c.Actor != o.Actor && !strings.HasSuffix(c.Actor, "("+o.Actor+")"):
		return false
	case !o.Since.IsZero() && c.Time.Before(o.Since):
		return false
	case !o.Until.IsZero() && !c.Time.Before(o.Until):
		return false
	}
	return true
}

// logged lists the memory files that have a log, on every backend.
func (s *Store) logged(ctx context.Context) ([]string, error) {
	dirs := []string{historyDir}
	if s.opts.World != nil {
		dirs = append(dirs, historyDir+"/"+paths.WorldDir)
	}
	seen := map[string]bool{}
	var files []string
	for _, dir := range dirs {
		entries, err := s.b.List(ctx, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p, ok := logPath(e.Name)
			if !ok || seen[p] || (paths.InWorld(p) != (dir != historyDir)) {
				continue
			}
			if _, err := s.resolve("read", p); err != nil {
				continue // no memory file of this store: another's, or a person's
			}
			seen[p] = true
			files = append(files, p)
		}
	}
	slices.Sort(files)
	return files, nil
}

// changesOf returns the landed changes of the file at p, oldest first, and
// the pending outside change when the file is not at the last version
// recorded.
func (s *Store) changesOf(ctx context.Context, p string) ([]Change, error) {
	const op = "history"
	st, _, err := s.readLog(ctx, logName(p))
	if err != nil {
		return nil, hostErr(op, p, fmt.Errorf("history: %w", err))
	}
	current, err := s.currentVersion(ctx, p)
	if err != nil {
		return nil, err
	}
	landed := journal.Landed(st.records, current)
	out := make([]Change, 0, len(landed)+1)
	for _, i := range landed {
		r := st.records[i]
		out = append(out, Change{Time: r.Time, Path: p, Op: r.Op, Actor: r.Actor, Old: r.Old, New: r.New})
	}
	if end := journal.End(st.records, landed); end != current && len(st.records) > 0 {
		out = append(out, Change{Time: s.now().UTC(), Path: p, Op: journal.Outside, Old: end, New: current, Pending: true})
	}
	return out, nil
}

// currentVersion is the version of the file at p now: "" when it does not
// exist.
func (s *Store) currentVersion(ctx context.Context, p string) (string, error) {
	c, err := s.b.Read(ctx, p, readLimit)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", hostErr("history", p, err)
	case cutShort(c):
		// Larger than the library writes: no recorded version is it.
		return "oversized", nil
	}
	return versionOf(c.Data), nil
}

// ReadVersion returns the content the memory file at path had at version,
// one of the versions its history records (or its current one), byte for
// byte. It returns an error wrapping [ErrNotFound] for a version the
// history does not hold.
func (s *Store) ReadVersion(ctx context.Context, path, version string) (string, error) {
	const op = "history"
	t, end, err := s.start(ctx, "read", path)
	if err != nil {
		return "", err
	}
	defer end()
	b, err := s.versionContent(ctx, op, t, version)
	return string(b), err
}

func (s *Store) versionContent(ctx context.Context, op string, t target, version string) ([]byte, error) {
	if version == "" {
		return nil, modelErr(op, t.path, ErrNotFound, "the version is empty: a file that does not exist has no content", "; give one of the versions History lists")
	}
	st, _, err := s.readLog(ctx, logName(t.path))
	if err != nil {
		return nil, hostErr(op, t.path, fmt.Errorf("history: %w", err))
	}
	b, err := journal.Content(st.records, version)
	if err == nil {
		return b, nil
	}
	// The current content, recorded or not yet.
	c, rerr := s.b.Read(ctx, t.path, readLimit)
	if rerr == nil && !cutShort(c) && versionOf(c.Data) == version {
		return c.Data, nil
	}
	if errors.Is(err, journal.ErrNoContent) {
		return nil, modelErr(op, t.path, ErrNotFound, fmt.Sprintf("the history of %s holds no version %q", t.path, version), "; give one of the versions History lists")
	}
	return nil, hostErr(op, t.path, fmt.Errorf("history: version %s: %w", version, err))
}

// Restore makes the memory file at path hold again the content it had at
// version, as a change of its own (operation "restore"), held to the rules
// of any change of the file (the budgets, the fact guard). The file's
// current content stays in the history.
func (s *Store) Restore(ctx context.Context, path, version string) error {
	return s.restore(ctx, path, version, nil)
}

// RestoreIf is [Store.Restore] for a caller that showed the file first:
// it restores only when the file is still at version want (Version of
// what it showed; "" when it did not exist), and otherwise changes nothing
// and returns an error wrapping [ErrConflict], so that a change made
// meanwhile is never undone unseen.
func (s *Store) RestoreIf(ctx context.Context, path, version, want string) error {
	g := versionIs(want)
	return s.restore(ctx, path, version, &g)
}

func (s *Store) restore(ctx context.Context, path, version string, check *guard) error {
	const op = "restore"
	t, end, err := s.start(ctx, "read", path)
	if err != nil {
		return err
	}
	defer end()
	if t.archived {
		return modelErr(op, t.path, ErrInvalidPath, t.path+" is an original kept by compaction, and read only", "")
	}
	data, err := s.versionContent(ctx, op, t, version)
	if err != nil {
		return err
	}
	var g guard
	if check != nil {
		g = *check
	}
	_, err = s.update(ctx, op, t, g, func(context.Context, Held, []byte) ([]byte, error) { return data, nil })
	return err
}
