//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel, a slash-separated path beneath the folder root
// (which the person named, and which is followed if it is a link), one
// name at a time with openat: without following a symbolic link at any
// step, and without blocking (O_NONBLOCK: a named pipe where a folder or a
// file belongs is refused, not waited on). What it opens is then checked
// on the open file (fstat): a folder when dir is set, else a regular
// file. Its error is a *treeError that says what stood there.
func openBeneath(root, rel string, dir bool) (*os.File, error) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	fd, err := unix.Open(root, flags|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	var names []string
	if rel != "" {
		names = strings.Split(rel, "/")
	}
	for i, name := range names {
		f := flags | unix.O_NOFOLLOW
		if i < len(names)-1 || dir {
			f |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, name, f, 0)
		if err != nil {
			// Say what stands there: a link, a pipe, a file where a
			// folder belongs.
			var st unix.Stat_t
			if serr := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil {
				err = kindError(rel, fileMode(uint32(st.Mode)), i < len(names)-1 || dir, err)
			} else {
				err = &os.PathError{Op: "open", Path: rel, Err: err}
			}
			unix.Close(fd)
			return nil, err
		}
		unix.Close(fd)
		fd = next
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: rel, Err: err}
	}
	m := fileMode(uint32(st.Mode))
	if (dir && !m.IsDir()) || (!dir && !m.IsRegular()) {
		unix.Close(fd)
		return nil, kindError(rel, m, dir, errors.New("not opened"))
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, filepath.FromSlash(rel))), nil
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
