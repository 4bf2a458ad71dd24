//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// treeDir is an open folder of an import's tree: what import reads is
// opened beneath it, one name at a time (openat), so that a folder renamed
// or replaced meanwhile, the tree's root included, is not read in its
// place. Nothing is followed: a link, a named pipe, a device or a socket
// where a folder or a file belongs is looked at without being opened
// (lookAndOpen), and refused; so is a folder on another file system than
// the root's (a mount, which may not answer).
type treeDir struct {
	f    *os.File
	dev  uint64 // the device of the tree's root
	root string // the tree's root, as named
	rel  string // this folder beneath it, slash-separated; "" for the root
}

// openTree opens the folder root, which the person named (and which is
// followed if it is a link).
func openTree(root string) (*treeDir, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: root, Err: err}
	}
	return &treeDir{f: os.NewFile(uintptr(fd), root), dev: uint64(st.Dev), root: root}, nil
}

// Close closes the folder.
func (d *treeDir) Close() error { return d.f.Close() }

// ReadDir reads the folder's entries as os.File.ReadDir does.
func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) { return d.f.ReadDir(n) }

// openDir opens the folder rel beneath d; "" opens d again.
func (d *treeDir) openDir(rel string) (*treeDir, error) {
	fd, err := d.open(rel, true)
	if err != nil {
		return nil, err
	}
	full := path.Join(d.rel, rel)
	return &treeDir{f: os.NewFile(uintptr(fd), filepath.Join(d.root, filepath.FromSlash(full))), dev: d.dev, root: d.root, rel: full}, nil
}

// openFile opens the regular file rel beneath d.
func (d *treeDir) openFile(rel string) (*os.File, error) {
	fd, err := d.open(rel, false)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.root, filepath.FromSlash(path.Join(d.rel, rel)))), nil
}

// open opens rel beneath d a name at a time, each a folder but the last,
// which is a folder when dir is set, else a regular file. Its error is a
// *treeError that says what stood there, or the open's own.
func (d *treeDir) open(rel string, dir bool) (int, error) {
	full := path.Join(d.rel, rel)
	names := splitRel(rel)
	if len(names) == 0 {
		names = []string{"."} // d itself, opened again
	}
	cur, own := int(d.f.Fd()), false
	defer func() {
		if own {
			unix.Close(cur)
		}
	}()
	for i, name := range names {
		if !oneName(name) && (name != "." || rel != "") {
			return -1, nameError(full)
		}
		wantDir := i < len(names)-1 || dir
		fd, mode, err := lookAndOpen(cur, name, wantDir, d.dev)
		if errors.Is(err, errOtherFS) {
			return -1, &treeError{Path: path.Join(d.rel, path.Join(names[:i+1]...)), Mode: mode, Dir: true, Mount: true, Err: err}
		}
		if err != nil {
			return -1, openError(full, mode, wantDir, err)
		}
		if own {
			unix.Close(cur)
		}
		cur, own = fd, true
	}
	own = false
	return cur, nil
}

// errOtherFS is the error of a folder on another file system than the
// tree's root: not opened.
var errOtherFS = errors.New("on another file system: not opened")

// openError is the error of failing to open rel (err), where mode was
// found standing (fs.ModeIrregular when it could not be looked at): what
// stands there when it is not what was wanted (a link, a pipe, a file
// where a folder belongs), else the open's own error (permission denied,
// say), which is the cause.
func openError(rel string, mode fs.FileMode, dir bool, err error) error {
	if mode&fs.ModeIrregular == 0 && !wanted(mode, dir) {
		return kindError(rel, mode, dir, err)
	}
	return &fs.PathError{Op: "open", Path: rel, Err: err}
}

// sameFile checks that fd is the file st was of: not replaced between
// being looked at and opened.
func sameFile(fd int, st *unix.Stat_t) error {
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		return errReplaced
	}
	return nil
}

// fileMode is the type bits of a stat's mode as an fs.FileMode.
func fileMode(mode uint32) os.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return os.ModeDir
	case unix.S_IFLNK:
		return os.ModeSymlink
	case unix.S_IFIFO:
		return os.ModeNamedPipe
	case unix.S_IFSOCK:
		return os.ModeSocket
	case unix.S_IFCHR:
		return os.ModeDevice | os.ModeCharDevice
	case unix.S_IFBLK:
		return os.ModeDevice
	}
	return 0
}
