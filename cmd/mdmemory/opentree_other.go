//go:build !unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// openBeneath opens rel, a slash-separated path beneath the folder root
// (which the person named), without following a link at any step: each
// name is looked at (Lstat) before it is opened, and what was opened is
// checked to be the same file, a folder when dir is set, else a regular
// file. (On Unix, openat does it without a gap between the two; this
// system has no named pipes to block on.) Its error is a *treeError that
// says what stood there.
func openBeneath(root, rel string, dir bool) (*os.File, error) {
	at := root
	var last os.FileInfo
	var names []string
	if rel != "" {
		names = strings.Split(rel, "/")
	}
	for i, name := range names {
		at = filepath.Join(at, name)
		fi, err := os.Lstat(at)
		if err != nil {
			return nil, err
		}
		wantDir := i < len(names)-1 || dir
		if m := fi.Mode(); (wantDir && !m.IsDir()) || (!wantDir && !m.IsRegular()) {
			return nil, kindError(rel, m, wantDir, errors.New("not opened"))
		}
		last = fi
	}
	f, err := os.Open(at)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		if m := fi.Mode(); (dir && !m.IsDir()) || (!dir && !m.IsRegular()) || (last != nil && !os.SameFile(last, fi)) {
			err = kindError(rel, m, dir, errors.New("not opened"))
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
