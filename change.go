package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// The change path. Every write or removal of a file of the store (by the
// tools, the Store's methods, compaction, a month's seal, the cache of
// vectors) is made by commit, under a lock held (locked), and most through
// update, the one read-modify-write loop. commit holds the change to the
// rules of its kind of file, each written once in the table below, and
// records it in the file's history (history.go) before it makes it.

// A rule is one rule a change of some kind of file must keep.
type rule struct {
	of    func(t target) bool // the kinds of file it applies to
	limit bool                // a limit on size: it applies only to a change that grows the file
	check func(s *Store, ctx context.Context, c *change, folder *listing) error
}

// rules are the rules of the change path, in the order they are checked:
// the cheap ones first, the secret guard (secrets.go) before the others (a
// credential is refused whatever else the change does), the fact guard
// before the budget (its refusal says more), and the ones that list a
// folder share one listing.
var rules = [...]rule{
	{of: memoryFile, limit: true, check: (*Store).sizeLimit},
	{of: memoryFile, check: func(s *Store, _ context.Context, c *change, _ *listing) error { return s.secretGuard(c) }},
	{of: target.factual, check: (*Store).factGuard},
	{of: target.factual, limit: true, check: (*Store).folderBudget},
	{of: target.isProcedures, limit: true, check: func(s *Store, _ context.Context, c *change, _ *listing) error {
		return s.proceduresBudget(c.op, c.t, c.data)
	}},
	{of: target.isProcedures, check: func(_ *Store, _ context.Context, c *change, _ *listing) error {
		return procedureLines(c.op, c.t, c.old, c.data)
	}},
}

// memoryFile reports a file of the grammar: any but the store's own
// files, such as the cache of vectors.
func memoryFile(t target) bool { return !t.cache }

// listing is the listing of the folder a change's budget spans, made once
// when a rule first needs it.
type listing struct {
	once  sync.Once
	files []Entry
	err   error
}

func (l *listing) get(s *Store, ctx context.Context, t target) ([]Entry, error) {
	l.once.Do(func() { l.files, l.err = s.budgetOf(t).files(s, ctx) })
	return l.files, l.err
}

// commit makes the change c through the lock h, if the rules of its kind
// of file allow it, and returns the file's new version ("" for a removal).
// A refusal is a model error; a failure of the backend a host error that
// wraps [ErrChanged] when the file was not at c.ver.
func (s *Store) commit(ctx context.Context, h Held, c *change) (string, error) {
	if c.data != nil && c.op != opForget { // a forget only takes text away
		var folder listing
		grows := c.grows()
		for _, r := range rules {
			if r.of(c.t) && (grows || !r.limit) {
				if err := r.check(s, ctx, c, &folder); err != nil {
					return "", err
				}
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return "", hostErr(c.op, c.t.path, err)
	}
	// The record first, then the change: a crash between the two leaves
	// a record of a change that did not land, which the history tells.
	r, err := s.record(ctx, h, c)
	if err != nil {
		return "", err
	}
	var v string
	if c.data == nil {
		err = h.Remove(ctx, c.t.path, c.ver)
	} else {
		v, err = h.Write(ctx, c.t.path, c.data, c.ver)
	}
	s.mark(ctx, h, c, r, err)
	if err != nil {
		return "", hostErr(c.op, c.t.path, err)
	}
	if c.data != nil {
		s.docs.landed(c.t.path, c.data, v)
	}
	return v, nil
}

// sizeLimit refuses a memory file over maxFileSize.
func (s *Store) sizeLimit(_ context.Context, c *change, _ *listing) error {
	if len(c.data) <= maxFileSize {
		return nil
	}
	return modelErr(c.op, c.t.path, ErrInvalidContent, fmt.Sprintf("%s would be %s bytes, over the %s-byte limit for one memory file", c.t.path, thousands(len(c.data)), thousands(maxFileSize)), "; start a new file or condense this one")
}

// factGuard holds a change of a fact file or topic to the fact guard.
func (s *Store) factGuard(ctx context.Context, c *change, folder *listing) error {
	return s.vetFacts(ctx, c.op, c.t, c.old, c.data, func() ([]Entry, error) { return folder.get(s, ctx, c.t) })
}

// folderBudget holds a change of a fact file or topic to its folder's
// budget.
func (s *Store) folderBudget(ctx context.Context, c *change, folder *listing) error {
	return s.checkBudget(c.op, c.t, s.budgetOf(c.t), func() ([]Entry, error) { return folder.get(s, ctx, c.t) }, len(c.old), len(c.data))
}

// guard vets the current content of a file before a change, under the
// backend's lock. It returns a model error to refuse the change.
type guard func(op string, t target, old []byte) error

// An edit makes a file's new content from its current one (nil when it
// does not exist). It may make other changes of its own through h, such as
// a month's seal, which pass through commit.
type edit func(ctx context.Context, h Held, old []byte) ([]byte, error)

// update is the one read-modify-write of the store. In the Store's turn and
// under the backend's lock for t, it reads t with its version (nil when it
// does not exist), lets check vet it, lets edit make the new content, and
// commits it: the rules of its kind, then the write, only if the file is
// still at the version read. When another writer changed it in between (a
// backend without a lock, such as S3, or a person's editor), it reads it
// again and goes round once more. It returns the content written.
func (s *Store) update(ctx context.Context, op string, t target, check guard, f edit) (data []byte, err error) {
	err = s.locked(ctx, op, t.path, t.lockName(), func(ctx context.Context, h Held) error {
		for lost := 0; ; lost++ {
			old, ver, err := s.readFile(ctx, op, t)
			if err != nil {
				return err
			}
			if old != nil && ver == "" {
				return hostErr(op, t.path, errors.New("the backend gave no version for the file, so a change cannot be made only if it is unchanged"))
			}
			if check != nil {
				if err := check(op, t, old); err != nil {
					return err
				}
			}
			if data, err = f(ctx, h, old); err == nil {
				_, err = s.commit(ctx, h, &change{op: op, t: t, old: old, ver: ver, data: data})
			}
			if !errors.Is(err, ErrChanged) {
				return err
			}
			if lost == maxLost {
				return hostErr(op, t.path, fmt.Errorf("%w %d times in a row: another writer changes it all the time, or the backend's versions do not hold", ErrChanged, maxLost+1))
			}
			if err := backoff(ctx, lost); err != nil {
				return hostErr(op, t.path, err)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// lockName is what a change of t locks: the facts/ folder for a fact file
// and world/ for a world topic, whose budgets span the folder; the file
// itself otherwise.
func (t target) lockName() string {
	switch {
	case t.isFact():
		return factsDir + "/"
	case t.topic != "":
		return worldDir + "/"
	}
	return t.path
}

// locked runs f in the Store's turn and under the backend's lock on name
// (a file, or a folder ending in "/"): the critical section of every
// change. It waits for both as long as ctx allows, and for the lock at most
// LockTimeout; p names the file in the error when it does not get them. f
// makes its changes through the lock it is given.
func (s *Store) locked(ctx context.Context, op, p, name string, f func(ctx context.Context, h Held) error) error {
	select {
	case s.turn <- struct{}{}:
		defer func() { <-s.turn }()
	case <-ctx.Done():
		return hostErr(op, p, ctx.Err())
	}
	lctx, cancel := context.WithTimeout(ctx, s.opts.LockTimeout)
	h, err := s.b.Lock(lctx, name)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (waited %v)", ErrLocked, s.opts.LockTimeout)
		}
		return hostErr(op, p, err)
	}
	defer h.Unlock()
	return f(ctx, h)
}
