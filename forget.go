package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/journal"
	"github.com/mdmemory/memory/internal/paths"
)

// Forgetting. Forget takes a text out of every memory file, through the
// change path as a change of its own (operation "forget", held to no rule
// of content: it only takes text away), and then out of every version the
// history keeps, each segment of a log that held it replaced whole; then
// it removes the caches of vectors, and on a Dir the temporary files a
// crash left. In that order, so that a kill at any moment leaves the text
// either gone or still where Locate finds it, for a second Forget to
// finish, and every log readable.

// opForget is the operation of a change Forget makes, as the history
// names it.
const opForget = "forget"

// minForget is the fewest bytes, less white space at its ends, a text to
// forget has: a shorter one would take letters out of every word.
const minForget = 4

// Place is where [Store.Locate] finds a text: a memory file as it is now,
// or a version its history keeps.
type Place struct {
	Path    string    // the memory file: "facts/user.md"
	Version string    // a version the history keeps; "" for the file as it is now
	Time    time.Time // when the history recorded Version; zero for the file now
	Lines   []int     // the lines (from 1) the text starts on, in the file now or in Version
}

// Forget takes every occurrence of text out of memory, and returns the
// number of places it took it out of: each memory file that held it
// (however many times) and each other version kept in the history that
// held it, as [Store.Locate] lists them.
//
// Text is matched byte for byte, and taken out as [Store.Locate] shows:
// the bytes go, and a line they leave with nothing but white space or a
// list or quote marker ("- ", "1. ", "> ") goes whole, so that forgetting
// a fact's value leaves no empty bullet. Text may span lines (a key
// block), and is found only where its lines are as given. Every memory
// file is searched: the fact files, the months with their parts and
// compaction's archived originals, procedures.md, the shared world topics
// (Options.World: a topic any agent sharing it may have written, forgotten
// for all of them), and persona.md, which no tool may change but whose
// owner may ask to forget. Each file that held text is changed as a change of its own,
// operation "forget", recorded without the text and held to none of the
// rules of what a change may add (the budgets, the fact guard, the secret
// guard): it only takes text away. A file in facts/, episodes/ or world/
// that is no memory file of this store (a fact file its options no longer
// name, a file a person put there) loses the text too, without a record:
// no history keeps it; unless it is no text a memory file could be (not
// UTF-8, over 1 MiB), which is the person's and left as it is.
//
// Then every version the history keeps is rewritten without it: a
// version keeps its name in [Store.History], so that the chain of versions
// stays as it was, with Redacted set, and [Store.ReadVersion] reads it back
// without the text (as does [Store.Restore], which restores it so). Last,
// the caches of vectors (.cache/) are removed, for the next search to make
// again, and on a [Dir] the temporary files a crash left behind.
//
// Afterwards no byte of text is left under the store's directory or
// prefix, on its backend and on the World backend, but in such a file of
// a person's. A kill at any moment
// leaves the text either gone or still where Locate finds it, so that a
// second Forget finishes the work, and every version the history names
// readable. What Forget cannot reach: copies the backend keeps of its own
// (an S3 bucket's object versions), text in a file's or topic's name, a
// segment of a log too large to read, a git repository or backup the
// folder was copied to, and what a model provider kept of the prompts
// memory was sent in.
//
// Forget returns an error wrapping [ErrInvalidContent] for a text with
// fewer than 4 bytes less white space at its ends (a short text would
// take letters out of every word), over 1 MiB, not UTF-8 or with a NUL
// byte; and a host error when the backend fails, having taken the text
// out of the places before. A segment of a log larger than the library
// reads (which Check reports) is left as it is, the text in it too: the
// rest of the history is worked on, and the error returned at the end
// names it.
func (s *Store) Forget(ctx context.Context, text string) (int, error) {
	end, err := s.begin(ctx, opForget, "")
	if err != nil {
		return 0, err
	}
	defer end()
	if err := forgettable(text); err != nil {
		return 0, err
	}
	t := []byte(text)
	n := 0
	files, err := s.memoryFiles(ctx)
	if err != nil {
		return 0, err
	}
	// The version each file had: the history's record of it is the
	// same place as the file.
	was := map[string]string{}
	for _, f := range files {
		v, err := s.forgetFile(ctx, f, t)
		if err != nil {
			return n, err
		}
		if v != "" {
			was[f.path] = v
			n++
		}
	}
	logs, err := s.allLogs(ctx)
	if err != nil {
		return n, hostErr(opForget, paths.HistoryDir, err)
	}
	var tooLarge error // logs with a segment too large to read: said at the end
	for _, p := range logs {
		k, err := s.forgetHistory(ctx, p, t, was[p], nil)
		n += k
		switch {
		case errors.Is(err, errLogTooLarge):
			tooLarge = errors.Join(tooLarge, err)
		case err != nil:
			return n, err
		}
	}
	if err := s.dropVectors(ctx); err != nil {
		return n, err
	}
	// The temporary files, of the segments' rewrites too.
	own, world := s.backends()
	ownDirs, worldDirs := storeFolders(), worldFolders()
	for _, p := range logs {
		if paths.InWorld(p) {
			worldDirs = append(worldDirs, segDir(p))
		} else {
			ownDirs = append(ownDirs, segDir(p))
		}
	}
	if err := sweep(own, s.opts.LockTimeout, ownDirs...); err != nil {
		return n, err
	}
	if world != nil {
		if err := sweep(world, s.opts.LockTimeout, worldDirs...); err != nil {
			return n, err
		}
	}
	return n, tooLarge
}

// Locate returns the places [Store.Forget] would take text out of, and
// changes nothing: each memory file that holds it now, with the lines it
// starts on, then each version in the history that holds it, by file and
// oldest first (but the version a file is at now, whose place is the
// file's). Forget returns as many. Its errors are Forget's; with the
// error naming a segment too large to read, it returns the places found
// in the rest.
func (s *Store) Locate(ctx context.Context, text string) ([]Place, error) {
	end, err := s.begin(ctx, opForget, "")
	if err != nil {
		return nil, err
	}
	defer end()
	if err := forgettable(text); err != nil {
		return nil, err
	}
	t := []byte(text)
	files, err := s.memoryFiles(ctx)
	if err != nil {
		return nil, err
	}
	var out []Place
	was := map[string]string{} // as in Forget
	for _, f := range files {
		data, err := s.readForget(ctx, f)
		if err != nil {
			return nil, err
		}
		if lines := linesOf(data, t); lines != nil {
			out = append(out, Place{Path: f.path, Lines: lines})
			was[f.path] = versionOf(data)
		}
	}
	logs, err := s.allLogs(ctx)
	if err != nil {
		return nil, hostErr(opForget, paths.HistoryDir, err)
	}
	var tooLarge error // as in Forget
	for _, p := range logs {
		_, err := s.forgetHistory(ctx, p, t, was[p], &out)
		switch {
		case errors.Is(err, errLogTooLarge):
			tooLarge = errors.Join(tooLarge, err)
		case err != nil:
			return nil, err
		}
	}
	return out, tooLarge
}

// forgettable refuses a text Forget does not take.
func forgettable(text string) error {
	const todo = "; give the whole value to forget, as it is written in memory"
	switch {
	case len(strings.TrimSpace(text)) < minForget:
		return modelErr(opForget, "", ErrInvalidContent, fmt.Sprintf("the text to forget has %d bytes besides white space at its ends, fewer than %d: it would be taken out of every word that holds it", len(strings.TrimSpace(text)), minForget), todo)
	case len(text) > maxFileSize:
		return modelErr(opForget, "", ErrInvalidContent, fmt.Sprintf("the text to forget is %s bytes, more than a memory file holds", thousands(len(text))), todo)
	case !utf8.ValidString(text):
		return modelErr(opForget, "", ErrInvalidContent, "the text to forget is not valid UTF-8, as memory files are", todo)
	case strings.IndexByte(text, 0) >= 0:
		return modelErr(opForget, "", ErrInvalidContent, "the text to forget contains a NUL byte, which no memory file holds", todo)
	}
	return nil
}

// linesOf returns the lines (from 1) on which text starts in data; nil
// when it is not there.
func linesOf(data, text []byte) []int {
	var lines []int
	line, at := 1, 0
	for {
		i := bytes.Index(data[at:], text)
		if i < 0 {
			return lines
		}
		line += bytes.Count(data[at:at+i], []byte{'\n'})
		lines = append(lines, line)
		line += bytes.Count(text, []byte{'\n'})
		at += i + len(text)
	}
}

// memoryFiles returns every memory file of the store, on each backend:
// those a listing shows, the archived originals and parts included, and
// the root's files. A file in one of the memory's folders that is no
// memory file of this store (a fact file its options no longer name, a
// file a person put there) is a target of its own, stray: it has no
// history, and is changed without a record.
func (s *Store) memoryFiles(ctx context.Context) ([]target, error) {
	entries, err := s.b.List(ctx, "")
	if err != nil {
		return nil, hostErr(opForget, "", err)
	}
	var out []target
	for _, e := range entries {
		if t, err := s.resolve("read", e.Name); err == nil {
			out = append(out, t)
		} else if folder, _, _ := strings.Cut(e.Name, "/"); folder == paths.FactsDir || folder == paths.EpisodesDir || folder == paths.WorldDir {
			out = append(out, target{path: e.Name, fact: -1, stray: true})
		}
	}
	return out, nil
}

// readForget reads the file t for Forget and Locate: nothing of a link
// that leads out, which is no file of the memory, nor of a stray file that
// is not text a memory file could be (too large, not UTF-8): a person's,
// which Forget leaves as it is.
func (s *Store) readForget(ctx context.Context, t target) ([]byte, error) {
	data, _, err := s.readFile(ctx, opForget, t)
	switch {
	case errors.Is(err, ErrInvalidPath):
		return nil, nil
	case t.stray && (errors.Is(err, ErrInvalidContent) || err == nil && !utf8.Valid(data)):
		return nil, nil
	}
	return data, err
}

// errNothing ends a forget of a file that no longer holds the text.
var errNothing = errors.New("nothing to forget")

// forgetFile takes text out of the memory file t through the change
// path, and returns the version it had, "" when it did not hold text.
func (s *Store) forgetFile(ctx context.Context, t target, text []byte) (string, error) {
	data, err := s.readForget(ctx, t)
	if err != nil || !bytes.Contains(data, text) {
		return "", err
	}
	if t.stray {
		return s.forgetStray(ctx, t, text)
	}
	var was string
	_, err = s.update(ctx, opForget, t, nil, func(_ context.Context, _ Held, old []byte) ([]byte, error) {
		out, n := journal.Scrub(old, text)
		if n == 0 {
			return nil, errNothing
		}
		was = versionOf(old)
		return out, nil
	})
	if errors.Is(err, errNothing) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return was, nil
}

// forgetStray takes text out of the stray file t, a text file no history
// keeps, by a write through the lock only if it is unchanged since read;
// it returns the version it had.
func (s *Store) forgetStray(ctx context.Context, t target, text []byte) (string, error) {
	var was string
	err := s.locked(ctx, opForget, t.path, t.path, func(ctx context.Context, h Held) error {
		data, v, err := s.readFile(ctx, opForget, t)
		if err != nil {
			return err
		}
		out, n := journal.Scrub(data, text)
		if n == 0 {
			return nil
		}
		if _, err := h.Write(ctx, t.path, out, v); err != nil {
			return hostErr(opForget, t.path, err)
		}
		was = versionOf(data)
		return nil
	})
	return was, err
}

// allLogs returns the memory files that have a history, on every backend:
// those of files that no longer exist, or that this store's options do
// not name (a fact file dropped from Options.FactFiles), too.
func (s *Store) allLogs(ctx context.Context) ([]string, error) {
	dirs := []string{paths.HistoryDir}
	if s.opts.World != nil {
		dirs = append(dirs, paths.HistoryDir+"/"+paths.WorldDir)
	}
	var out []string
	for _, dir := range dirs {
		entries, err := s.b.List(ctx, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if p, ok := logPath(e.Name); ok && paths.InWorld(p) == (dir != paths.HistoryDir) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// forgetHistory takes text out of every version the history of the file
// at p keeps, and returns how many versions held it, but was: the version
// the file had, which is counted as the file. With found set, it changes
// nothing, and adds to *found the versions that hold text, but was.
//
// The log's files are read, redacted together (a version's content may be
// rebuilt from records in an earlier one), and each that held text is
// replaced whole, the last first, under the lock the file's changes take
// and only if unchanged since it was read: a reader sees each as it was or
// without the text, a crash leaves one or the other, and every mix of them
// reads (journal.Redact). A line that is not a record goes too, from a
// file that holds text; one that holds it, as it is or as a record
// escapes it (journal.Damaged), is a place of its own, and its file is
// rewritten.
func (s *Store) forgetHistory(ctx context.Context, p string, text []byte, was string, found *[]Place) (int, error) {
	lock := p
	if t, err := s.resolve("read", p); err == nil {
		lock = t.lockName()
	}
	n := 0
	var tooLarge error // segments that cannot be read, said once the others are done
	err := s.locked(ctx, opForget, p, lock, func(ctx context.Context, h Held) error {
		for lost := 0; ; lost++ {
			files, large, err := s.logFiles(ctx, p)
			if err != nil {
				return hostErr(opForget, p, fmt.Errorf("history: %w", err))
			}
			tooLarge = large
			var records []journal.Record
			starts := make([]int, len(files))
			for i, f := range files {
				starts[i] = len(records)
				records = append(records, f.records...)
			}
			out, held := journal.Redact(records, text, starts)
			// The lines that are not records and hold text (a record
			// a kill cut short, kept by the appends after it): places
			// too, which the rewrite drops.
			damaged := make([][]journal.Damage, len(files))
			var cut []Place
			for i, f := range files {
				damaged[i] = journal.Damaged(f.data, text)
				for _, d := range damaged[i] {
					cut = append(cut, Place{Path: p, Version: d.New, Time: d.Time})
				}
			}
			if found != nil {
				*found = append(*found, places(p, records, held, text, was, true)...)
				*found = append(*found, cut...)
				return nil
			}
			err = nil
			closed := false // a segment before the last rewritten
			for i := len(files) - 1; i >= 0 && err == nil; i-- {
				end := len(records)
				if i+1 < len(files) {
					end = starts[i+1]
				}
				f := files[i]
				if bytes.Contains(f.data, text) || len(damaged[i]) > 0 || slices.ContainsFunc(held, func(k int) bool { return k >= starts[i] && k < end }) {
					_, err = h.Write(ctx, f.name, journal.Encode(out[starts[i]:end]), f.version)
					closed = closed || i < len(files)-1
				}
			}
			s.hist.put(p, nil)
			if closed {
				// The log's summary gives the segments' sizes as they
				// were: without it, the next change lists them.
				if c, err := s.b.Read(ctx, lastName(p), 256); err == nil && c.Version != "" {
					_ = h.Remove(ctx, lastName(p), c.Version)
				}
			}
			if err == nil {
				n = len(places(p, records, held, nil, was, false)) + len(cut)
				return nil
			}
			if !errors.Is(err, ErrChanged) || lost == maxLost {
				return hostErr(opForget, p, fmt.Errorf("history: %w", err))
			}
			if err := backoff(ctx, lost); err != nil {
				return hostErr(opForget, p, err)
			}
		}
	})
	if err == nil && tooLarge != nil {
		err = hostErr(opForget, p, fmt.Errorf("history: %w", tooLarge))
	}
	return n, err
}

// A logPart is one file of a log, as read.
type logPart struct {
	name    string
	data    []byte
	version string
	records []journal.Record
}

// logFiles reads the segments of the log of the memory file at p, oldest
// first; none when it has no log. A segment larger than the library reads
// is left out, and said in tooLarge (wrapping errLogTooLarge): the text it
// may hold cannot be taken out, but no segment depends on one before it,
// so the others are worked on.
func (s *Store) logFiles(ctx context.Context, p string) (parts []logPart, tooLarge, err error) {
	segs, err := s.segments(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	parts = make([]logPart, 0, len(segs))
	for _, seg := range segs {
		records, c, err := s.readSegmentData(ctx, seg, s.logLimit())
		if errors.Is(err, errLogTooLarge) {
			tooLarge = errors.Join(tooLarge, err)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if c.Version != "" {
			parts = append(parts, logPart{name: seg.name, data: c.Data, version: c.Version, records: records})
		}
	}
	return parts, tooLarge, nil
}

// places are the versions of the records held of the log of p that held
// text, once each but was, with the lines it starts on in each when lines
// is set.
func places(p string, records []journal.Record, held []int, text []byte, was string, lines bool) []Place {
	var out []Place
	seen := map[string]bool{was: was != ""}
	for _, i := range held {
		r := records[i]
		if r.New != "" && seen[r.New] {
			continue
		}
		seen[r.New] = true
		pl := Place{Path: p, Version: r.New, Time: r.Time}
		if r.New == "" {
			pl.Version = r.Old // a removal whose actor held the text
		} else if data, err := journal.Content(records[:i+1], r.New); lines && err == nil {
			pl.Lines = linesOf(data, text)
		}
		out = append(out, pl)
	}
	return out
}

// dropVectors removes the caches of vectors on the store's own backend,
// and what the Store holds of them: a vector is made from a document's
// text, and the next search makes them again.
func (s *Store) dropVectors(ctx context.Context) error {
	own, _ := s.backends()
	entries, err := own.List(ctx, cacheDir)
	if err != nil {
		return hostErr(opForget, cacheDir, err)
	}
	s.ReleaseIndex()
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, cacheDir+"/vectors-") {
			continue
		}
		err := s.locked(ctx, opForget, e.Name, e.Name, func(ctx context.Context, h Held) error {
			c, err := s.b.Read(ctx, e.Name, -1)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err == nil {
				_, err = s.commit(ctx, h, &change{op: opForget, t: target{path: e.Name, fact: -1, cache: true}, ver: c.Version})
			}
			return err
		})
		if err != nil && !errors.Is(err, ErrChanged) {
			return err
		}
	}
	return nil
}

// backends returns the store's own backend and the World backend (nil
// when there is none).
func (s *Store) backends() (own, world Backend) {
	if sp, ok := s.b.(split); ok {
		return sp.own, sp.world
	}
	return s.b, nil
}
