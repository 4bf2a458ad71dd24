//go:build !unix

package main

import (
	"io/fs"
	"os"
	"path"
)

// treeDir is an open folder of an import's tree, an os.Root: what import
// reads is opened beneath it, which never leaves it, a link swapped in
// meanwhile (a junction) included. Each name is looked at first (Lstat
// beneath the root), so that a link, or anything but a folder or a regular
// file where one belongs, is refused, and what was opened is checked to be
// what was looked at. (On Unix each name is opened without following
// anything; this system has no named pipes to block on, and a folder on
// another drive is not told apart.)
type treeDir struct {
	r   *os.Root
	f   *os.File // the folder opened for ReadDir, when read
	rel string   // this folder beneath the tree's root, slash-separated
}

// openTree opens the folder root, which the person named.
func openTree(root string) (*treeDir, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	return &treeDir{r: r}, nil
}

// Close closes the folder.
func (d *treeDir) Close() error {
	if d.f != nil {
		d.f.Close()
	}
	return d.r.Close()
}

// ReadDir reads the folder's entries as os.File.ReadDir does.
func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.f == nil {
		f, err := d.r.Open(".")
		if err != nil {
			return nil, err
		}
		d.f = f
	}
	return d.f.ReadDir(n)
}

// openDir opens the folder rel beneath d; "" opens d again.
func (d *treeDir) openDir(rel string) (*treeDir, error) {
	if _, err := d.look(rel, true); err != nil {
		return nil, err
	}
	r, err := d.r.OpenRoot(cmpDot(rel))
	if err != nil {
		return nil, err
	}
	return &treeDir{r: r, rel: path.Join(d.rel, rel)}, nil
}

// openFile opens the regular file rel beneath d.
func (d *treeDir) openFile(rel string) (*os.File, error) {
	last, err := d.look(rel, false)
	if err != nil {
		return nil, err
	}
	f, err := d.r.Open(rel)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !wanted(fi.Mode(), false):
		err = kindError(path.Join(d.rel, rel), fi.Mode(), false, errNotOpened)
	case !os.SameFile(last, fi):
		err = &fs.PathError{Op: "open", Path: path.Join(d.rel, rel), Err: errReplaced}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// look looks at each name of rel beneath d without following a link:
// each a folder but the last, which is a folder when dir is set, else a
// regular file. It returns what the last is.
func (d *treeDir) look(rel string, dir bool) (fs.FileInfo, error) {
	full := path.Join(d.rel, rel)
	names := splitRel(rel)
	var last fs.FileInfo
	for i, name := range names {
		if !oneName(name) {
			return nil, nameError(full)
		}
		wantDir := i < len(names)-1 || dir
		fi, err := d.r.Lstat(path.Join(names[:i+1]...))
		if err != nil {
			return nil, err
		}
		if !wanted(fi.Mode(), wantDir) {
			return nil, kindError(full, fi.Mode(), wantDir, errNotOpened)
		}
		last = fi
	}
	return last, nil
}

// cmpDot is rel, or "." for "".
func cmpDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
