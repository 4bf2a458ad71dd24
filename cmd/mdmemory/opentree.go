package main

import (
	"fmt"
	"io/fs"
)

// treeError is what openBeneath found where a folder or a file of an
// import's tree belongs, and did not open.
type treeError struct {
	Path string      // the path beneath the tree's root
	Mode fs.FileMode // what stands there: its type bits
	Dir  bool        // a folder was wanted
	Err  error
}

func (e *treeError) Error() string {
	p := e.Path
	if e.Dir {
		p += "/"
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
