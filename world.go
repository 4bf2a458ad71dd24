package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mdmemory/memory/internal/paths"
)

// Shared world facts. Several agents, each with a memory of its own, may
// share the facts of the world they work in: Options.World is a second
// backend, shared by their stores, whose world/<topic>.md files every one of
// them reads and changes with the same tools as its fact files. A topic's
// name is lower-case letters and digits in dash-separated words
// ("project-apollo", "office-2"), at most 64 characters.
//
// A topic is held to the rules of a fact file: "- " lines, the fact guard
// (a new line worded as temporary, or repeating a line of any topic, or
// restating a key of its own topic, is refused), a title and a summary.
// The topics share a budget of their own, Options.WorldBudget, checked
// under the shared backend's lock on "world/", so that two agents adding
// facts at once cannot take the topics over it together. They are not
// loaded into every prompt, as the fact files are: the index message and
// the reflector's prompt name each topic with its summary, memory_search
// finds their lines, and memory_read loads one.
//
// Every guarantee of the store holds across the two backends: the sandbox
// admits only world/<topic>.md there, every change is the same
// read-check-write loop with versions, the conversation guard refuses to
// overwrite a topic another agent changed since this conversation read it,
// and every read goes to the shared backend, so a change by another agent,
// or a person's edit, is seen by the next call.

// defaultWorldBudget is the size, in bytes, the world topics may have
// together when Options.WorldBudget is 0: as much as the fact files.
const defaultWorldBudget = 15360

// topicExample is the topic the model-facing texts name.
const topicExample = "world/project-apollo.md"

// split is the backend of a store with shared world facts: the names under
// world/ are the shared backend's, every other the store's own.
type split struct {
	own, world Backend
}

var _ Backend = split{}

func (b split) route(name string) Backend {
	if paths.InWorld(name) {
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
	return splitHeld{Held: h, world: paths.InWorld(name)}, nil
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
	if paths.InWorld(name) != h.world {
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
	world, err := b.world.List(ctx, worldDir)
	if err != nil {
		return nil, err
	}
	own = slices.DeleteFunc(own, func(e Entry) bool { return paths.InWorld(e.Name) })
	all := append(own, world...)
	slices.SortFunc(all, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return all, nil
}

// worldSizes lists the topics in world/ with their sizes, in name order.
func (s *Store) worldSizes(ctx context.Context) ([]Entry, error) {
	entries, err := s.b.List(ctx, worldDir)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(entries, func(e Entry) bool { return !paths.IsTopic(e.Name) }), nil
}

// topics describes the world topics as List lists them, by name: each with
// its summary, or the reason it cannot be read; and, when world/ cannot be
// listed because of a person's mistake, an entry "world/" saying why. It
// returns nil when the store shares no world.
func (s *Store) topics(ctx context.Context, op string) ([]FileInfo, error) {
	if s.opts.World == nil {
		return nil, nil
	}
	entries, listErr := s.worldSizes(ctx)
	if listErr != nil && classify(listErr) != faultPerson {
		return nil, hostErr(op, worldDir, listErr)
	}
	var out []FileInfo
	for _, e := range entries {
		info, ok, err := s.head(ctx, e.Name)
		if info, ok, err = listed(e.Name, info, ok, err); err != nil {
			return nil, hostErr(op, e.Name, err)
		}
		if ok {
			out = append(out, info)
		}
	}
	if listErr != nil {
		out = append(out, FileInfo{Path: worldDir + "/", Error: unreadable(worldDir+"/", listErr)})
	}
	return out, nil
}
