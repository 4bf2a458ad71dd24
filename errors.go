package memory

import (
	"errors"
	"fmt"
)

// Sentinel errors returned, wrapped, by the methods of [Store]. Test for them
// with [errors.Is]. The tools report the same conditions to the model as a
// [ToolResult] with IsError set and a text that says what to do instead.
var (
	// ErrClosed is returned when a method is called on a closed Store.
	ErrClosed = errors.New("store is closed")

	// ErrInvalidPath is returned when a path is not one of the store's
	// files: not facts/<configured name>.md or episodes/YYYY-MM.md in
	// canonical form, or a symbolic link that leads out of the root. It is
	// also returned by Open for an invalid FactFile name.
	ErrInvalidPath = errors.New("invalid path")

	// ErrNotFound is returned when a file to read or patch does not exist.
	ErrNotFound = errors.New("not found")

	// ErrBudgetExceeded is returned when a change would make the fact files
	// larger than the facts budget (Options.FactsBudget).
	ErrBudgetExceeded = errors.New("facts budget exceeded")

	// ErrPatchFailed is returned when a patch's old text is empty, is not
	// in the file, or is in it more than once at its turn. Nothing is written.
	ErrPatchFailed = errors.New("patch failed")

	// ErrInvalidContent is returned when content, an entry, a summary or a
	// list of patches is malformed: not UTF-8, a NUL byte, too large, an
	// episode entry without its "## " heading, a summary with a line break.
	ErrInvalidContent = errors.New("invalid content")

	// ErrConflict is returned when a file changed since it was read (by a
	// person's edit or another agent), so a change that would overwrite it
	// was not made: by [Store.WriteIf], and by the tools' memory_write and
	// memory_patch. Read the file again and redo the change.
	ErrConflict = errors.New("changed since read")

	// ErrLocked is returned, as a host error, when another Store (in this
	// process or another) held the memory directory's lock file for longer
	// than Options.LockTimeout.
	ErrLocked = errors.New("memory directory is locked by another store")
)

// modelError is a mistake in a request that the model (or program) can fix.
// Unwrap gives the sentinel; msg is the model-facing text: what was wrong and
// what to do next, with no host paths or Go type names.
type modelError struct {
	op, path string
	err      error
	msg      string
}

func (e *modelError) Error() string {
	return fmt.Sprintf("memory: %s %s: %v: %s", e.op, e.path, e.err, e.msg)
}

func (e *modelError) Unwrap() error { return e.err }

func modelErr(op, path string, sentinel error, format string, args ...any) error {
	return &modelError{op: op, path: path, err: sentinel, msg: fmt.Sprintf(format, args...)}
}

// hostErr wraps a failure of the host (disk, context, closed store).
func hostErr(op, path string, err error) error {
	if path == "" {
		return fmt.Errorf("memory: %s: %w", op, err)
	}
	return fmt.Errorf("memory: %s %s: %w", op, path, err)
}
