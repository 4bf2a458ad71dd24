package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// Sentinel errors returned, wrapped, by the methods of [Store]. Test for them
// with [errors.Is]. The tools report the same conditions to the model as a
// [ToolResult] with IsError set and a text that says what to do instead.
var (
	// ErrClosed is returned when a method is called on a closed Store.
	ErrClosed = errors.New("store is closed")

	// ErrInvalidPath is returned when a path is not one of the store's
	// files: not facts/<configured name> or episodes/YYYY-MM.md (or a
	// month's part, episodes/YYYY-MM.NNN.md, or an archived original, for
	// the operations those allow) in
	// canonical form, or procedures.md or persona.md), or a symbolic link
	// that leads out of the root; and for any change of persona.md, the
	// person's file. It is also returned by Open for an invalid FactFile
	// name.
	ErrInvalidPath = errors.New("invalid path")

	// ErrNotFound is returned when a file to read or patch does not exist.
	ErrNotFound = errors.New("not found")

	// ErrBudgetExceeded is returned when a change would make the fact files
	// larger than the facts budget (Options.FactsBudget), the shared world
	// topics larger than theirs (Options.WorldBudget), or procedures.md
	// larger than its own (Options.ProceduresBudget).
	ErrBudgetExceeded = errors.New("facts budget exceeded")

	// ErrPatchFailed is returned when a patch's old text is empty, is not
	// in the file, or is in it more than once at its turn. Nothing is written.
	ErrPatchFailed = errors.New("patch failed")

	// ErrInvalidContent is returned when content, an entry, a summary or a
	// list of patches is malformed: not UTF-8, a NUL byte, too large, an
	// episode entry without its "## " heading, a summary with a line break,
	// a line of procedures.md not in the form "- When <situation>: <action>".
	ErrInvalidContent = errors.New("invalid content")

	// ErrConflict is returned when a file changed since it was read (by a
	// person's edit or another agent), so a change that would overwrite it
	// was not made: by [Store.WriteIf], and by the tools' memory_write and
	// memory_patch. Read the file again and redo the change.
	ErrConflict = errors.New("changed since read")

	// ErrTemporaryFact is returned when a change of a fact file adds a line
	// worded as temporary ("this time", "for now", "这次", "暂时", …): an
	// instruction for one task, not a lasting fact. Nothing is written.
	ErrTemporaryFact = errors.New("temporary fact")

	// ErrDuplicateFact is returned when a change of a fact file adds a line
	// that says again what a line of the fact files says (the same words,
	// or nearly), or that restates the key of a line of the same file
	// ("- Language: …" when one is there): the error names that line, to
	// patch instead. Nothing is written.
	ErrDuplicateFact = errors.New("fact already recorded")

	// ErrSecret is returned when a change adds text that holds a
	// credential's value: an API key or token, a private key, a JSON Web
	// Token, a bearer token, a password alone or in a connection string
	// (see Options.Secrets for the kinds). Memory goes into prompts, syncs
	// and backups, so it never keeps one. The error names the kind and the
	// line, never the value, and says what to keep instead: that the
	// credential exists, what it is for and where it is kept. Nothing is
	// written. Text a file held before is not judged again.
	ErrSecret = errors.New("secret in memory")

	// ErrLocked is returned, as a host error, when another Store (in this
	// process or another) held the lock a change needs (the directory's
	// lock, or on S3 the lease of facts/ or episodes/) for longer than
	// Options.LockTimeout.
	ErrLocked = errors.New("memory directory is locked by another store")
)

// Error is the error of a [Store] method for a request that the model, or
// the program, can fix: a bad path, content or patch, a budget exceeded, a
// conflict with a change made since the file was read. Host failures (the
// disk, a cancelled context, a closed store) are never an *Error, so
// errors.As tells the two apart:
//
//	var me *memory.Error
//	if errors.As(err, &me) {
//		// the request was wrong: me.Hint says what and how to fix it
//	}
//
// The tools give the model Hint as the text of a [ToolResult] with IsError
// set. For the errors the library makes, Error() names the operation, the
// path, the sentinel and what was wrong, but not the instructions meant for
// the model; for an Error made elsewhere it shows Hint.
type Error struct {
	Op   string // the operation: "read", "write", "patch", "append", "search", ...
	Path string // the path as given (quoted when it holds odd characters); "" when none
	Err  error  // the sentinel: ErrInvalidPath, ErrNotFound, ErrConflict, ...
	Hint string // the model-facing text: what was wrong and what to do next

	what string // the part of Hint that says what was wrong, for Error
	link bool   // the path is a symbolic link that leads out of the memory, which adapters word in their own terms
}

// Error returns "memory: OP PATH: SENTINEL: WHAT WAS WRONG".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("memory: " + e.Op)
	if e.Path != "" {
		b.WriteString(" " + e.Path)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if what := cmp.Or(e.what, e.Hint); what != "" {
		b.WriteString(": " + what)
	}
	return b.String()
}

// Unwrap returns the sentinel, so errors.Is(err, ErrNotFound) works.
func (e *Error) Unwrap() error { return e.Err }

// modelErr makes an *Error. what says what was wrong; todo, appended to it
// as it is (its own punctuation first), says what to do next and is shown
// to the model only.
func modelErr(op, path string, sentinel error, what, todo string) error {
	return &Error{Op: op, Path: path, Err: sentinel, Hint: what + todo, what: what}
}

// hostErr wraps a failure of the host (disk, context, closed store).
func hostErr(op, path string, err error) error {
	if path == "" {
		return fmt.Errorf("memory: %s: %w", op, err)
	}
	return fmt.Errorf("memory: %s %s: %w", op, path, err)
}

// A fault is what went wrong, as every place that must decide what to do
// about an error sees it: [classify] is the one judge.
type fault int

const (
	faultNone    fault = iota // no error
	faultStopped              // the caller stopped: its context ended, or the store is closed
	faultHost                 // the host failed: the network, the server, the disk; the operation fails
	faultMissing              // the file or folder does not exist
	faultPerson               // a person must fix a file or folder (its permissions, a file where a folder belongs or a folder where a file does, a link out of the memory); the rest stays usable
)

// errNotRegular is the error of a Dir for a name that is no regular file:
// a folder, a FIFO or a device a person put where a memory file belongs.
var errNotRegular = errors.New("not a regular file")

// classify says what went wrong in err. A file or folder a person made
// unusable is theirs to fix: the operation goes on without it, and says
// so; any other failure (a full or failing disk, too many open files, the
// network) is the host's, and fails the operation.
func classify(err error) fault {
	switch {
	case err == nil:
		return faultNone
	case errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return faultStopped
	case errors.Is(err, fs.ErrNotExist):
		return faultMissing
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, errOutside) || errors.Is(err, errLinkedFolder) || errors.Is(err, errNotRegular):
		return faultPerson
	}
	return faultHost
}

// gone reports an error that leaves one file out and the rest usable: a
// file that does not exist, or one a person must fix.
func (f fault) gone() bool { return f == faultMissing || f == faultPerson }

// errOutside marks a name whose folder or file is a symbolic link that
// Dir does not follow: one that leads outside the memory directory, or
// (errLeaves) one that stays inside it but leads out of its folder or
// into another memory directory.
var errOutside = fmt.Errorf("a symbolic link that leads outside the memory directory: %w", ErrInvalidPath)

// errLeaves marks a link inside the directory that Dir does not follow:
// see resolve.
var errLeaves = fmt.Errorf("%w (or out of its folder, or into another memory directory)", errOutside)

// errLinkedFolder marks a folder to list that is a symbolic link: Dir lists
// no files through one.
var errLinkedFolder = errors.New("the folder is a symbolic link")
