package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/paths"
)

// The history. Every change of a memory file is recorded by the change path
// (commit) before it is made: when, what, who, the version before and after,
// and the content after (whole, or as a delta of the content before), in a
// log of the file's own under the hidden folder .history/ of the backend
// that holds the file, in segments (segments.go:
// ".history/facts/user.md/00000001.log"). A crash between the
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
	Op       string // "write", "patch", "append", "seal", "compact", "restore", "forget", "outside"
	Actor    string // who: a conversation's id or a host-given name ("reflector (id)", "compaction" when they made it); "" for outside changes
	Old, New string // versions (memory.Version of the content); Old "" when created, New "" when removed

	// Redacted reports a version [Store.Forget] took text out of: it
	// keeps its name, and reads back without the text.
	Redacted bool `json:",omitempty"`

	// Pending reports a change made outside the library that no record
	// holds yet: the file is not at the last version recorded. It is
	// recorded, its content kept, at the library's next change of the
	// file.
	Pending bool `json:",omitempty"`
}

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
		return hostErr(op, paths.HistoryDir, err)
	}
	s.logCount.Store(sharing(files)) // counted again, for the logs' shares
	for _, p := range files {
		t, err := s.resolve("read", p)
		if err != nil {
			continue
		}
		err = s.locked(ctx, op, p, t.lockName(), func(ctx context.Context, h Held) error {
			c, err := s.b.Read(ctx, p, readLimit)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				s.pruneSegments(ctx, h, p, "") // removed: its removal's record is kept
			case err == nil && !cutShort(c):
				s.pruneSegments(ctx, h, p, version(c.Data))
			}
			return nil // a file that cannot be read now is pruned at its next change
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

// sharing counts the logs among those of files that share the size all
// logs may take (at least 1): all but the logs of the months' sealed parts.
// A part's log is the one record of its seal, written once and never
// pruned (a log's last segment never is): a share of its own would only
// make every other log's smaller, so that a month of many parts had its
// own log pruned every few dozen appends.
func sharing(files []string) int64 {
	n := int64(0)
	for _, p := range files {
		if !paths.IsPart(p) {
			n++
		}
	}
	return max(n, 1)
}

// logged lists the memory files that have a log, on every backend.
func (s *Store) logged(ctx context.Context) ([]string, error) {
	dirs := []string{paths.HistoryDir}
	if s.opts.World != nil {
		dirs = append(dirs, paths.HistoryDir+"/"+paths.WorldDir)
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
			if !ok || seen[p] || (paths.InWorld(p) != (dir != paths.HistoryDir)) {
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
	records, err := s.readLog(ctx, p)
	if err != nil {
		return nil, hostErr(op, p, fmt.Errorf("history: %w", err))
	}
	current, err := s.currentVersion(ctx, p)
	if err != nil {
		return nil, err
	}
	landed := journal.Landed(records, current)
	out := make([]Change, 0, len(landed)+1)
	for _, i := range journal.Listed(records, landed) {
		r := records[i]
		out = append(out, Change{Time: r.Time, Path: p, Op: r.Op, Actor: r.Actor, Old: r.Old, New: r.New, Redacted: r.Redacted != ""})
	}
	if end := journal.End(records, landed); end != current && len(records) > 0 {
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
	b, err := s.segmentContent(ctx, t.path, version)
	if err == nil {
		return b, nil
	}
	if !errors.Is(err, journal.ErrNoContent) {
		return nil, hostErr(op, t.path, fmt.Errorf("history: %w", err))
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
