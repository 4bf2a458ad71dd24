package memory

import (
	"context"
	"runtime"
)

// Resolve exposes the sandbox to the black-box tests: the canonical path a
// model-supplied path maps to, or the error that refuses it.
func Resolve(s *Store, p string) (string, error) {
	t, err := s.resolve("resolve", p)
	return t.path, err
}

// Unlocked makes s skip the directory's lock file, so that benchmarks can
// measure what the lock costs. Never in tests of behaviour.
func Unlocked(s *Store) { s.b.(*Dir).unlocked = true }

// OnIndexIdle sets the function called when Options.IndexIdle released s's
// index.
func OnIndexIdle(s *Store, f func()) {
	s.search.mu.Lock()
	defer s.search.mu.Unlock()
	s.idleHook = f
}

// IndexHeld reports whether s holds a search index.
func IndexHeld(s *Store) bool {
	s.search.mu.Lock()
	defer s.search.mu.Unlock()
	return s.search.idx != nil
}

// SearchReads returns how many times s's search index has read a file.
func SearchReads(s *Store) int {
	s.search.mu.Lock()
	defer s.search.mu.Unlock()
	return s.search.reads
}

// Busy reports whether a change of s holds its turn.
func Busy(s *Store) bool { return len(s.turn) == 1 }

// Split returns the backend a store with Options.World uses: world/ from
// world, everything else from own.
func Split(own, world Backend) Backend { return split{own: own, world: world} }

// AwaitWaiters returns once no Lock call of s's Dir waits in the system's
// queue any more: one whose caller gave up (its context or LockTimeout
// ended) lets go of the lock, and of the process's turn, as soon as it
// gets them, which on a loaded machine may take longer than a short
// LockTimeout.
func AwaitWaiters(s *Store) {
	d := s.b.(*Dir)
	for {
		d.mu.Lock()
		n := d.waiting
		d.mu.Unlock()
		if n == 0 {
			return
		}
		runtime.Gosched()
	}
}

// The defaults of the options' zero values, for the tests whose point is
// the default.
const (
	DefaultContextWindow    = defaultContextWindow
	DefaultFactsBudget      = defaultFactsBudget
	DefaultIndexBudget      = defaultIndexBudget
	DefaultMaxRounds        = defaultMaxRounds
	DefaultProceduresBudget = defaultProceduresBudget
	DefaultSearchLimit      = defaultSearchLimit
	DefaultWorldBudget      = defaultWorldBudget
	PersonaMax              = personaMax
)

// RemoveTemps has d remove the temporary files in folders, as a Store's
// Open does.
func RemoveTemps(d *Dir, folders ...string) error {
	return d.removeTemps(context.Background(), folders)
}
