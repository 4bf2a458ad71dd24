package memory

import (
	"context"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mdmemory/memory/internal/paths"
)

// listWorkers bounds the heads List reads at once.
const listWorkers = 8

// cachedHead is what List read of a file with a given tag.
type cachedHead struct {
	tag  string
	info FileInfo
}

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
