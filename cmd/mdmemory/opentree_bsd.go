//go:build unix && !linux

package main

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// lookAndOpen opens name beneath the folder dirfd for reading, a folder
// when dir is set, else a regular file: it is looked at first (fstatat,
// not following a link), opened only when it is what was wanted (openat
// with O_NOFOLLOW|O_NONBLOCK), and checked to be the file looked at. It
// returns the descriptor and the type found (fs.ModeIrregular when it
// could not be looked at); a folder on another device than dev (a mount)
// is refused before it is opened (errOtherFS).
func lookAndOpen(dirfd int, name string, dir bool, dev uint64) (int, fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, fs.ModeIrregular, err
	}
	mode := fileMode(uint32(st.Mode))
	if !wanted(mode, dir) {
		return -1, mode, errNotOpened
	}
	if mode.IsDir() && uint64(st.Dev) != dev {
		return -1, mode, errOtherFS
	}
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW
	if dir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		return -1, mode, err
	}
	if err := sameFile(fd, &st); err != nil {
		unix.Close(fd)
		return -1, mode, err
	}
	return fd, mode, nil
}
