package memory

import (
	"context"
	"errors"
)

// A Backend is where a [Store] keeps its files: a local directory (the
// default, [Open]), or S3-compatible object storage (the s3store module).
// The Store keeps everything that makes them memory (the path grammar, the
// facts budget, the summaries, the conversations' guard); a Backend only
// stores bytes under names, and compares versions.
//
// Names are relative, slash-separated paths such as "facts/user.md" or
// "episodes/2026-11.md"; folders are the parts before a slash, and exist as
// long as a file is in them (a Backend creates them as needed). A Backend
// knows nothing of what the names mean: the Store asks only for names of
// its grammar, and for its own files under dot-folders (the history's
// logs, .history/…, and the cache of vectors, .cache/…), which List leaves
// out like every other dot-name unless asked for that folder.
//
// Every change the Store makes is one loop: read the file with its version,
// check, edit, and write only if the file is still at that version, reading
// again on [ErrChanged]. The writes are made through the lock: Lock returns
// a [Held] lock, and only a Held writes or removes, so that no change is
// made without one. Writes compare versions, so that a change made since the
// read (by another Store, a person's editor, `aws s3 cp`) is never
// overwritten.
//
// A Backend must be safe for concurrent use. Its methods return an error
// wrapping [fs.ErrNotExist] for a file that does not exist, [ErrChanged] for
// a version that does not match, and the context's error when ctx ends.
type Backend interface {
	// Read returns the file at name: its first limit bytes, or all of it
	// when limit is negative, with its whole size and, when Data is the
	// whole file, its version.
	Read(ctx context.Context, name string, limit int64) (Content, error)

	// List returns the files in the folder dir ("facts", "episodes") and
	// in the folders under it, or every file when dir is "", sorted by
	// name, with their sizes and tags: one request where the backend can
	// (a search lists everything once). A folder that does not exist holds
	// no files. Names with a part starting with "." below dir (the
	// backend's own files, such as a lock) are left out; dir itself may be
	// a dot-folder (".history"), whose files are then listed.
	List(ctx context.Context, dir string) ([]Entry, error)

	// Lock serialises changes. name is a file, for a change to that file
	// alone, or a folder ending in "/", for a change that spans its files
	// (the facts budget spans "facts/", compaction "episodes/"). Lock
	// waits until no other holder of name remains, in any Store on the
	// backend and in any process, and returns the lock, held; it returns
	// ctx's error when ctx ends first. A backend may lock more than name
	// (the directory has one lock for everything), and may return at once
	// for a file, since writes compare versions anyway: for a file, Lock
	// spares the Store lost races, for a folder it is what keeps a change
	// that spans files whole.
	Lock(ctx context.Context, name string) (Held, error)
}

// Held is a lock a [Backend] gave, and the only way to change its files,
// as a bbolt Tx is the only way to change a bolt database: a Store writes
// and removes files while it holds the lock their change needs, then
// unlocks. The lock serialises holders of the same name; the versions are
// compared whatever the name held, so a write to a file outside the name
// is still never made over a change it did not see.
type Held interface {
	// Write stores data as the file at name, atomically (a reader sees the
	// old content or the new, never a mix, and a crash leaves one or the
	// other), and only if the file is at version match; match "" means
	// the file must not exist. It returns the new version, or an error
	// wrapping ErrChanged when the file is not at match, having changed
	// nothing.
	Write(ctx context.Context, name string, data []byte, match string) (version string, err error)

	// Remove deletes the file at name, only if it is at version match,
	// and returns an error wrapping ErrChanged otherwise. A file that does
	// not exist is not at any version: Remove returns ErrChanged.
	Remove(ctx context.Context, name, match string) error

	// Unlock releases the lock. Write and Remove must not be called after
	// it; calls after the first do nothing.
	Unlock()
}

// Content is a file as [Backend.Read] returns it.
type Content struct {
	// Data is the file's bytes, or their first limit bytes.
	Data []byte
	// Size is the size of the whole file.
	Size int64
	// Version changes whenever the file's content does; [Held.Write]
	// and [Held.Remove] compare it. It is "" when Data is only the
	// file's start.
	Version string
}

// Entry is a file as [Backend.List] lists it.
type Entry struct {
	// Name is the file's path from the root: "episodes/2026-11.md".
	Name string
	// Size is the file's size in bytes.
	Size int64
	// Tag changes whenever the file's content does, so that the Store
	// reads again only the files whose tag changed since it last read them.
	// It need not be the Version Read gives. "" means the backend cannot
	// tell cheaply (a file changed too recently for its time to say): the
	// Store then reads the file.
	Tag string
}

// ErrChanged is returned, wrapped, by the Write and Remove of a [Held] lock when the
// file is not at the version given: another writer changed it since it was
// read. The Store reads it again and redoes its change; only a change the
// conversation has not seen reaches the model, as [ErrConflict].
var ErrChanged = errors.New("file changed since it was read")

// appender is a held lock that appends to a file: a Dir's, for the logs.
// Size gives the size of the file (fs.ErrNotExist when there is none);
// Append appends, durably when sync is set: at the latest before the
// lock's next Write or Remove makes its change. One that wraps another's
// returns errNoAppend when that one cannot.
type appender interface {
	Size(ctx context.Context, name string) (int64, error)
	Append(ctx context.Context, name string, data []byte, sync bool) error
}

var errNoAppend = errors.New("the lock cannot append")

// A stamper is a backend that can tell, without reading a file, that it is
// still at a version it read or wrote: a Dir, by the file's stamp.
type stamper interface {
	unchanged(name, version string) bool
}
