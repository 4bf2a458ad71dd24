package memory

import (
	"container/list"
	"context"
	"slices"
)

// A Session is one conversation's view of a [Store]: the version of each
// file as the conversation last read or wrote it. It is what lets the tools
// refuse to overwrite a change the model has not seen (a person's edit,
// another conversation's change) without ever refusing the conversation's
// own changes.
//
// memory_write and memory_patch of an existing file go ahead when the call
// carries the file's version (the "version" argument, as memory_read gave
// it), or, with a null version, when this session read or wrote the file
// and it has not changed since. memory_append needs neither: it never
// rewrites what is there.
//
// A Session is safe for concurrent use: an agent may run a model's parallel
// tool calls at once. Its calls take effect one at a time, so whatever the
// interleaving the outcome is that of some sequential order of them, and
// what a call reads or writes is recorded in the same step that did it.
//
// Get one from [Store.NewSession] for a conversation the program holds
// itself, or from [Store.Session] for a conversation a host names by id (a
// tool registry built once, an MCP server). A conversation's tools are
// [Session.Tools], and the index message that starts its task is
// [Session.IndexMessage].
type Session struct {
	s  *Store
	id string

	turn chan struct{}        // one slot: the session's calls take effect one at a time
	seen map[string]*fileView // path → what the conversation knows of the file; guarded by turn
}

// fileView is what a conversation knows of one file: the version it last
// read or wrote, and the versions it read or wrote before that from which
// only its own changes lead to the current one. A patch carrying a version
// token from any of those is the conversation's own past, not a change it
// has not seen, so parallel patches carrying the token of one read all go
// through.
type fileView struct {
	current string
	lineage []string // oldest first, current last; at most maxLineage
}

// maxLineage bounds the versions a conversation keeps of one file.
const maxLineage = 64

// NewSession returns a new conversation on s, with nothing read yet. The
// store does not keep it: it lives as long as the caller holds it.
func (s *Store) NewSession() *Session { return s.newSession("") }

func (s *Store) newSession(id string) *Session {
	return &Session{s: s, id: id, turn: make(chan struct{}, 1), seen: map[string]*fileView{}}
}

// Session returns the conversation that the host names id, such as an MCP
// session id or an agent framework's session id, creating it on first use.
// Calls with the same id get the same Session, so a tool registry built once
// can serve many conversations: it looks up the conversation of each call
// and runs the call with [Session.Call].
//
// The store keeps the Options.MaxSessions conversations used most recently
// (by Session, [Session.Call] or their tools) and forgets older ones, but
// never one with a call under way; a
// forgotten conversation comes back empty, with nothing read, so its next
// memory_write or memory_patch must read the file again or carry its
// version. [Session.End] forgets one at once. An empty id names no
// conversation: Session("") returns a new, unkept Session, as NewSession
// does, which suits stateless clients that carry version tokens.
func (s *Store) Session(id string) *Session {
	if id == "" {
		return s.NewSession()
	}
	r := &s.sessions
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byID[id]; ok {
		r.lru.MoveToFront(e)
		return e.Value.(*Session)
	}
	if r.byID == nil {
		r.byID = map[string]*list.Element{}
	}
	c := s.newSession(id)
	r.byID[id] = r.lru.PushFront(c)
	// Forget the least recently used, passing over any with a call under
	// way: forgetting one would split its conversation in two.
	for e := r.lru.Back(); r.lru.Len() > s.opts.MaxSessions && e != nil && e.Value != c; {
		prev := e.Prev()
		if old := e.Value.(*Session); len(old.turn) == 0 {
			r.lru.Remove(e)
			delete(r.byID, old.id)
		}
		e = prev
	}
	return c
}

// touch marks c as used now, so that the store keeps it longest.
func (c *Session) touch() {
	c.inTable(func(r *sessions, e *list.Element) { r.lru.MoveToFront(e) })
}

// inTable runs f, under the table's lock, on c's element of the store's
// table of conversations, if c is still there.
func (c *Session) inTable(f func(r *sessions, e *list.Element)) {
	if c.id == "" {
		return
	}
	r := &c.s.sessions
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.byID[c.id]; ok && e.Value == c {
		f(r, e)
	}
}

// ID returns the id the session was made with by [Store.Session]; "" for a
// session made by [Store.NewSession].
func (c *Session) ID() string { return c.id }

// End forgets the conversation: [Store.Session] with its id returns a new,
// empty Session from then on. The Session itself keeps working for a caller
// that still holds it. End is for a host whose conversation is over, such as
// a closed MCP session; it does nothing for a session without an id.
func (c *Session) End() {
	c.inTable(func(r *sessions, e *list.Element) {
		r.lru.Remove(e)
		delete(r.byID, c.id)
	})
}

// saw records that the conversation has seen path with this content, by
// memory_read or as the reflector's prompt shows it. The caller holds the
// session's turn.
func (c *Session) saw(path string, content []byte) {
	v := version(content)
	if view, ok := c.seen[path]; ok && view.current == v {
		return // nothing new: the lineage still leads here
	}
	c.seen[path] = &fileView{current: v, lineage: []string{v}}
}

// changed records the conversation's own change of path from old to data,
// made with the guard's consent or by an append to a file it knew. The
// caller holds the session's turn.
func (c *Session) changed(path string, old, data []byte) {
	from, to := version(old), version(data)
	view, ok := c.seen[path]
	if !ok || view.current != from || from == "" {
		// The change starts from a version the conversation knew (the
		// guard checked it) but had not recorded as its current one.
		view = &fileView{}
		if from != "" {
			view.lineage = []string{from}
		}
		c.seen[path] = view
	}
	view.current = to
	view.lineage = append(view.lineage, to)
	if n := len(view.lineage); n > maxLineage {
		view.lineage = slices.Delete(view.lineage, 0, n-maxLineage)
	}
}

// knows reports whether the conversation's view of path is the file's
// current content, old.
func (c *Session) knows(path string, old []byte) bool {
	view, ok := c.seen[path]
	return ok && old != nil && view.current == version(old)
}

// guard returns the check of memory_write and memory_patch for a call that
// carries want (nil for a null version): the current content must be the
// version the call names, or one of the conversation's own earlier
// versions of it when nothing but the conversation changed it since; with
// no version, the conversation must know the current content. The caller
// holds the session's turn; the check runs under the store's lock, just
// before the change.
//
// The guard keeps the content it vetted in *before, for the record of the
// change.
func (c *Session) guard(want *string, before *[]byte) guard {
	return func(op string, t target, old []byte) error {
		*before = old
		if want != nil {
			return c.checkVersion(op, t, old, *want)
		}
		view, ok := c.seen[t.path]
		switch {
		case old == nil && ok:
			// Deleted since it was read, by a person or another agent: say
			// so once; a second call creates the file anew.
			delete(c.seen, t.path)
			return modelErr(op, t.path, ErrConflict, t.path+" was deleted since you last read it", "; nothing was changed. "+recreate(op))
		case old == nil:
			return nil // nothing to overwrite
		case !ok:
			return modelErr(op, t.path, ErrConflict, t.path+" already exists and was not read in this conversation",
				"; nothing was changed. Call memory_read first so nothing in it is lost, then memory_"+op+" again")
		case view.current != version(old):
			return modelErr(op, t.path, ErrConflict, t.path+" changed since you last read it (edited by a person or another agent)",
				"; nothing was changed. Call memory_read to see the current text, then redo the change on it")
		}
		return nil
	}
}

// checkVersion is the guard for a call that carries a version token: want
// must be the version of old, or, for a patch when the conversation knows
// old, a version from which only its own changes led to old. An empty
// token means the file must not exist, as for [Store.WriteIf].
func (c *Session) checkVersion(op string, t target, old []byte, want string) error {
	switch {
	case want == "" && old == nil:
		return nil
	case want == "":
		return modelErr(op, t.path, ErrConflict, t.path+` exists, and version "" is for a file that does not`,
			"; nothing was changed. Call memory_read to see the current text and its version, then redo the change on it")
	case old == nil:
		delete(c.seen, t.path)
		return modelErr(op, t.path, ErrConflict, t.path+" does not exist: it was deleted since that version was read", "; nothing was changed. "+recreate(op))
	case want == version(old):
		return nil
	case c.knows(t.path, old) && slices.Contains(c.seen[t.path].lineage, want):
		// A patch's oldText must still match, so a version from before the
		// conversation's own changes loses none of them; a write with it
		// would.
		if op == "patch" {
			return nil
		}
		return modelErr(op, t.path, ErrConflict, t.path+" is not at the version given: you changed it since that version was read",
			"; nothing was changed. Pass version null to replace it as you last left it, or memory_read it again")
	}
	return modelErr(op, t.path, ErrConflict, t.path+" is not at the version given: it changed since that version was read (edited by a person or another agent)",
		"; nothing was changed. Call memory_read to see the current text and its version, then redo the change on it")
}

// recreate says how to bring back a file deleted since it was read.
func recreate(op string) string {
	if op == "patch" {
		return "If it should exist again, create it with memory_write or memory_append"
	}
	return "If it should exist again, call memory_write again with version null"
}

// acting returns ctx with the conversation's id as the actor of the
// changes its calls make, when the host named it ([Store.Session]);
// otherwise ctx, whose actor ([WithActor]) the host may have set.
func (c *Session) acting(ctx context.Context) context.Context {
	if c.id == "" {
		return ctx
	}
	return WithActor(ctx, c.id)
}
