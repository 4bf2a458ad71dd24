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
// returns the descriptor, the type found (fs.ModeIrregular when it could
// not be looked at) and its device.
func lookAndOpen(dirfd int, name string, dir bool) (int, fs.FileMode, uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, fs.ModeIrregular, 0, err
	}
	mode := fileMode(uint32(st.Mode))
	if !wanted(mode, dir) {
		return -1, mode, 0, errNotOpened
	}
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW
	if dir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if err != nil {
		return -1, mode, 0, err
	}
	if err := sameFile(fd, &st); err != nil {
		unix.Close(fd)
		return -1, mode, 0, err
	}
	return fd, mode, uint64(st.Dev), nil
}
