package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mdmemory/memory/internal/paths"
)

// split is the backend of a store with shared world facts: the names under
// world/ are the shared backend's, every other the store's own.
type split struct {
	own, world Backend
}

func (b split) route(name string) Backend {
	if inWorld(name) {
		return b.world
	}
	return b.own
}

func (b split) Read(ctx context.Context, name string, limit int64) (Content, error) {
	return b.route(name).Read(ctx, name, limit)
}

// Lock locks name on the backend that holds it; the lock changes only the
// files of that backend.
func (b split) Lock(ctx context.Context, name string) (Held, error) {
	h, err := b.route(name).Lock(ctx, name)
	if err != nil {
		return nil, err
	}
	return splitHeld{Held: h, world: inWorld(name)}, nil
}

// splitHeld is a lock of one of a split's backends.
type splitHeld struct {
	Held
	world bool // the shared backend's lock
}

func (h splitHeld) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	if err := h.mine(name); err != nil {
		return "", err
	}
	return h.Held.Write(ctx, name, data, match)
}

func (h splitHeld) Remove(ctx context.Context, name, match string) error {
	if err := h.mine(name); err != nil {
		return err
	}
	return h.Held.Remove(ctx, name, match)
}

// mine refuses a change of a file on the other backend than the lock's.
func (h splitHeld) mine(name string) error {
	if inWorld(name) != h.world {
		return fmt.Errorf("%s: the lock held is on the other backend: lock a name of the file's own", name)
	}
	return nil
}

// List lists world/ from the shared backend, any other folder from the
// store's own, and everything from both: the own backend's files but those
// under world/, which it does not hold, and the shared world/.
func (b split) List(ctx context.Context, dir string) ([]Entry, error) {
	if dir != "" {
		return b.route(dir).List(ctx, dir)
	}
	own, err := b.own.List(ctx, "")
	if err != nil {
		return nil, err
	}
	world, err := b.world.List(ctx, paths.WorldDir)
	if err != nil {
		return nil, err
	}
	own = slices.DeleteFunc(own, func(e Entry) bool { return paths.InWorld(e.Name) })
	all := append(own, world...)
	slices.SortFunc(all, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return all, nil
}

// unchanged asks the backend that holds name, where it can tell.
func (b split) unchanged(name, version string) bool {
	st, ok := b.route(name).(stamper)
	return ok && st.unchanged(name, version)
}

// inWorld reports a name of the shared backend: a world topic, and its
// history's log.
func inWorld(name string) bool {
	return paths.InWorld(name) || paths.InWorld(strings.TrimPrefix(name, paths.HistoryDir+"/"))
}

// Size is the size of the file at name, through the lock of the backend
// that holds it, where that lock can append.
func (h splitHeld) Size(ctx context.Context, name string) (int64, error) {
	if err := h.mine(name); err != nil {
		return 0, err
	}
	a, ok := h.Held.(appender)
	if !ok {
		return 0, errNoAppend
	}
	return a.Size(ctx, name)
}

// Append appends through the lock of the backend that holds name, where
// that lock can.
func (h splitHeld) Append(ctx context.Context, name string, data []byte, sync bool) error {
	if err := h.mine(name); err != nil {
		return err
	}
	a, ok := h.Held.(appender)
	if !ok {
		return errNoAppend
	}
	return a.Append(ctx, name, data, sync)
}
