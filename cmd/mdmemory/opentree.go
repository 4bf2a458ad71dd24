package main

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// treeError is what a treeDir found where a folder or a file of an
// import's tree belongs, and did not open.
type treeError struct {
	Path  string      // the path beneath the tree's root
	Mode  fs.FileMode // what stands there: its type bits
	Dir   bool        // a folder was wanted
	Mount bool        // a folder on another file system than the tree's root
	Err   error
}

func (e *treeError) Error() string {
	p := e.Path
	if e.Dir {
		p += "/"
	}
	if e.Mount {
		return fmt.Sprintf("%s is on another file system than the folder imported (a mount): not read, so that import stays on the tree's own and waits on none that does not answer", p)
	}
	what := "a file"
	switch m := e.Mode; {
	case m&fs.ModeSymlink != 0:
		return fmt.Sprintf("%s is a symbolic link: not followed, so that nothing outside the tree is read", p)
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m.IsDir():
		what = "a folder"
	}
	want := "a regular file"
	if e.Dir {
		want = "a folder"
	}
	return fmt.Sprintf("%s is %s, not %s: not read", p, what, want)
}

func (e *treeError) Unwrap() error { return e.Err }

// kindError is the error of finding mode at path where dir says what was
// wanted.
func kindError(path string, mode fs.FileMode, dir bool, err error) error {
	return &treeError{Path: path, Mode: mode, Dir: dir, Err: err}
}

// wanted reports whether mode is what import opens: a folder when dir
// is set, else a regular file.
func wanted(mode fs.FileMode, dir bool) bool {
	if dir {
		return mode.IsDir()
	}
	return mode.IsRegular()
}

// oneName reports whether name is one name of a folder's entries: not
// empty, without a slash (or on Windows a backslash), not "." or "..",
// which name no entry beneath.
func oneName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`)
}

// errNotOpened is the error beneath a treeError: what stood there was
// looked at, and not opened.
var errNotOpened = errors.New("not opened")

// errReplaced is the error of a file or folder replaced between being
// looked at and opened.
var errReplaced = errors.New("replaced while it was opened: not read")

// splitRel is rel's names; none for "".
func splitRel(rel string) []string {
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// nameError is the error of rel, whose name is no one name (oneName).
func nameError(rel string) error {
	return &fs.PathError{Op: "open", Path: rel, Err: errors.New("a name of the path is empty, . or ..: not beneath the folder")}
}
