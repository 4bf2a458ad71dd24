package memory

import (
	"context"
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

var _ Backend = split{}

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
