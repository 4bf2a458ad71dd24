package memory

import (
	"context"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mdmemory/memory/internal/paths"
)

// listWorkers bounds the heads List reads at once.
const listWorkers = 8

// listJob is one line of List: a file whose head is read, or a month whose
// newest file's head is, or a line already known.
type listJob struct {
	path  string // the file whose head to read; "" when info is known
	tag   string
	month *monthFiles // for a month: the month, its newest file at path

	info   FileInfo
	ok     bool
	err    error
	cached bool
}

// listAll is List from one listing of everything, all: the files in the
// order List gives them, their heads read in parallel unless remembered. A
// folder with no file in all (missing, empty, or on a directory one that
// cannot be read, which the whole listing skips) is listed on its own, so
// that List says why it cannot be read.
func (s *Store) listAll(ctx context.Context, all []Entry) ([]FileInfo, error) {
	const op = "list"
	has := make(map[string]Entry, len(all))
	folders := map[string]bool{}
	for _, e := range all {
		has[e.Name] = e
		if dir, _, ok := strings.Cut(e.Name, "/"); ok {
			folders[dir] = true
		}
	}
	var jobs []*listJob
	file := func(p string) {
		if e, ok := has[p]; ok {
			jobs = append(jobs, &listJob{path: p, tag: e.Tag})
		}
	}
	// A directory's listing leaves out a root file that is a folder or a
	// link out of the root, which List shows as unreadable: on a
	// directory, where a read costs little, the root files are tried
	// whether listed or not.
	root := file
	if s.localRoot() {
		root = func(p string) { jobs = append(jobs, &listJob{path: p, tag: has[p].Tag}) }
	}
	known := func(infos []FileInfo) {
		for _, info := range infos {
			jobs = append(jobs, &listJob{info: info, ok: true})
		}
	}

	root(personaFile)
	if folders[factsDir] {
		for _, f := range s.opts.FactFiles {
			file(factPath(f.Name))
		}
	} else {
		facts, err := s.listFacts(ctx)
		if err != nil {
			return nil, err
		}
		known(facts)
	}
	if s.opts.World != nil {
		if folders[worldDir] {
			for _, e := range all {
				if paths.IsTopic(e.Name) {
					file(e.Name)
				}
			}
		} else {
			topics, err := s.topics(ctx, op)
			if err != nil {
				return nil, err
			}
			known(topics)
		}
	}
	root(proceduresFile)
	if folders[episodesDir] {
		var direct []Entry
		for _, e := range all {
			if path.Dir(e.Name) == episodesDir {
				direct = append(direct, e)
			}
		}
		for _, m := range monthsFrom(direct, episodesDir) {
			paths := m.paths()
			newest := paths[len(paths)-1]
			jobs = append(jobs, &listJob{path: newest, tag: has[newest].Tag, month: &m})
		}
	} else {
		months, err := s.listMonths(ctx)
		if err != nil {
			return nil, err
		}
		known(months)
	}

	// The heads: remembered when the tag is the same, else read.
	s.headsMu.Lock()
	var todo []*listJob
	for _, j := range jobs {
		if j.path == "" {
			continue
		}
		if c, ok := s.heads[j.path]; ok && j.tag != "" && c.tag == j.tag {
			j.info, j.ok, j.cached = c.info, true, true
			continue
		}
		todo = append(todo, j)
	}
	s.headsMu.Unlock()
	parallelN(len(todo), listWorkers, func(i int) {
		j := todo[i]
		j.info, j.ok, j.err = s.head(ctx, j.path)
	})

	files := []FileInfo{}
	heads := make(map[string]cachedHead, len(jobs))
	for _, j := range jobs {
		if j.path != "" && j.err == nil && j.ok && j.tag != "" {
			heads[j.path] = cachedHead{tag: j.tag, info: j.info}
		}
		info, ok, err := j.info, j.ok, j.err
		p := j.path
		if j.month != nil {
			p = monthPath(j.month.month)
			if err == nil && !ok {
				// Its newest file went since the listing: the month as
				// List made it before, file by file.
				info, ok, err = s.monthInfo(ctx, *j.month)
			} else if err == nil {
				info.Path, info.Size, info.Parts = p, j.month.size, len(j.month.parts)
			}
		}
		if j.path == "" {
			files = append(files, info)
			continue
		}
		info, ok, err = listed(p, info, ok, err)
		if err != nil {
			return nil, hostErr(op, p, err)
		}
		if ok {
			files = append(files, info)
		}
	}
	s.headsMu.Lock()
	s.heads = heads
	s.headsMu.Unlock()
	return files, nil
}

// listFacts is what List shows of the fact files when a listing of
// everything had none: facts/ listed on its own; when it cannot be, each
// fact file is tried.
func (s *Store) listFacts(ctx context.Context) ([]FileInfo, error) {
	const op = "list"
	facts, factsErr := s.b.List(ctx, factsDir)
	if factsErr != nil && classify(factsErr) != faultPerson {
		return nil, hostErr(op, factsDir, factsErr)
	}
	var out []FileInfo
	for _, f := range s.opts.FactFiles {
		p := factPath(f.Name)
		if factsErr == nil && !hasEntry(facts, p) {
			continue
		}
		info, ok, err := s.head(ctx, p)
		if info, ok, err = listed(p, info, ok, err); err != nil {
			return nil, hostErr(op, p, err)
		}
		if ok {
			out = append(out, info)
		}
	}
	return out, nil
}

// listMonths is what List shows of the months when a listing of
// everything had no file in episodes/: the folder listed on its own.
func (s *Store) listMonths(ctx context.Context) ([]FileInfo, error) {
	const op = "list"
	var out []FileInfo
	months, listErr := s.monthsIn(ctx, episodesDir)
	for _, m := range months {
		info, ok, err := s.monthInfo(ctx, m)
		if info, ok, err = listed(monthPath(m.month), info, ok, err); err != nil {
			return nil, hostErr(op, monthPath(m.month), err)
		}
		if ok {
			out = append(out, info)
		}
	}
	if listErr != nil {
		if classify(listErr) != faultPerson {
			return nil, hostErr(op, episodesDir, listErr)
		}
		out = append(out, FileInfo{Path: episodesDir + "/", Error: unreadable(episodesDir+"/", listErr)})
	}
	return out, nil
}

// localRoot reports whether the store's own files are in a directory.
func (s *Store) localRoot() bool {
	b := s.b
	if sp, ok := b.(split); ok {
		b = sp.own
	}
	_, ok := b.(*Dir)
	return ok
}

// hasEntry reports whether entries has one named name.
func hasEntry(entries []Entry, name string) bool {
	for _, e := range entries {
		if e.Name == name {
			return true
		}
	}
	return false
}

// forgetHeads lets go of what List remembers.
func (s *Store) forgetHeads() {
	s.headsMu.Lock()
	s.heads = nil
	s.headsMu.Unlock()
}

// parallelN runs f(0) … f(n-1) on up to workers goroutines and waits for
// them all.
func parallelN(n, workers int, f func(i int)) {
	if n <= 1 {
		if n == 1 {
			f(0)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

// List returns the memory files: persona.md when it exists, the fact files
// that exist, in the configured order, the shared world topics (when
// Options.World is set) by name, procedures.md when it exists, then the
// months, newest first, one entry a month
// whatever parts it has (its size is theirs together, its summary that of
// its newest file). Only the head of each file is read, for its summary.
// Files in the root that are not memory files, and the originals Compact
// archived, are not listed. An empty store gives an empty, non-nil slice.
//
// A file that cannot be read (its permissions, a person's mistake) is
// listed with FileInfo.Error saying so, and the others as usual; when
// episodes/ or world/ itself cannot be listed, an entry with the path
// "episodes/" or "world/" says why. A done context, a closed store, or a
// backend that cannot list or read for another reason (the network, the
// server) fail List.
//
// List lists the backend once (on S3 one ListObjectsV2 a thousand files)
// and reads the heads of the files it found in parallel, at most
// listWorkers at a time; a file whose tag (its ETag on S3) is the one it
// had at the last List is not read again: its summary is remembered, until
// the index is released (ReleaseIndex, Options.IndexIdle). When the whole
// cannot be listed because of a person's mistake, each folder is listed on
// its own.
func (s *Store) List(ctx context.Context) ([]FileInfo, error) {
	const op = "list"
	end, err := s.begin(ctx, op, "")
	if err != nil {
		return nil, err
	}
	defer end()

	all, err := s.b.List(ctx, "")
	switch {
	case err == nil:
		return s.listAll(ctx, all)
	case classify(err) != faultPerson:
		return nil, hostErr(op, "", err)
	}
	return s.listEach(ctx)
}

// listEach is List, one folder at a time.
func (s *Store) listEach(ctx context.Context) ([]FileInfo, error) {
	const op = "list"
	files := []FileInfo{}
	add := func(p string, info FileInfo, ok bool, err error) error {
		info, ok, err = listed(p, info, ok, err)
		if ok {
			files = append(files, info)
		}
		return err
	}
	root := func(p string) error {
		info, ok, err := s.head(ctx, p)
		if err := add(p, info, ok, err); err != nil {
			return hostErr(op, p, err)
		}
		return nil
	}
	if err := root(personaFile); err != nil {
		return nil, err
	}
	// The fact files listed are read; when facts/ cannot be listed, each
	// is tried.
	facts, factsErr := s.b.List(ctx, factsDir)
	if factsErr != nil && classify(factsErr) != faultPerson {
		return nil, hostErr(op, factsDir, factsErr)
	}
	for _, f := range s.opts.FactFiles {
		p := factPath(f.Name)
		if factsErr == nil && !slices.ContainsFunc(facts, func(e Entry) bool { return e.Name == p }) {
			continue
		}
		info, ok, err := s.head(ctx, p)
		if err := add(p, info, ok, err); err != nil {
			return nil, hostErr(op, p, err)
		}
	}
	topics, err := s.topics(ctx, op)
	if err != nil {
		return nil, err
	}
	files = append(files, topics...)
	if err := root(proceduresFile); err != nil {
		return nil, err
	}
	months, listErr := s.monthsIn(ctx, episodesDir)
	for _, m := range months {
		info, ok, err := s.monthInfo(ctx, m)
		if err := add(monthPath(m.month), info, ok, err); err != nil {
			return nil, hostErr(op, monthPath(m.month), err)
		}
	}
	if listErr != nil {
		if classify(listErr) != faultPerson {
			return nil, hostErr(op, episodesDir, listErr)
		}
		files = append(files, FileInfo{Path: episodesDir + "/", Error: unreadable(episodesDir+"/", listErr)})
	}
	return files, nil
}

// monthInfo describes a month as List shows it: the summary of its newest
// file, the size of all its files.
func (s *Store) monthInfo(ctx context.Context, m monthFiles) (info FileInfo, ok bool, err error) {
	paths := m.paths()
	for i := len(paths) - 1; i >= 0 && !ok; i-- {
		if info, ok, err = s.head(ctx, paths[i]); err != nil {
			return FileInfo{}, false, err
		}
	}
	if !ok {
		return FileInfo{}, false, nil
	}
	info.Path, info.Size, info.Parts = monthPath(m.month), m.size, len(m.parts)
	return info, true, nil
}
