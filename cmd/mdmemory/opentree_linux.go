package main

import (
	"errors"
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// lookAndOpen opens name beneath the folder dirfd for reading, a folder
// when dir is set, else a regular file, without opening anything else: it
// is first opened as a path only (O_PATH|O_NOFOLLOW, which opens no
// device, pipe or link, and so has none of their side effects: a named
// pipe's blocked writer is not released), looked at (fstat), and only
// then, when it is what was wanted, opened for reading through that very
// handle ("." beneath a folder, /proc/self/fd for a file). It returns the
// descriptor and the type found (fs.ModeIrregular when it could not be
// looked at); a folder on another device than dev (a mount) is refused
// before it is opened (errOtherFS).
func lookAndOpen(dirfd int, name string, dir bool, dev uint64) (int, fs.FileMode, error) {
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC
	pfd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fs.ModeIrregular, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, fs.ModeIrregular, err
	}
	mode := fileMode(st.Mode)
	if !wanted(mode, dir) {
		return -1, mode, errNotOpened
	}
	if mode.IsDir() && uint64(st.Dev) != dev {
		return -1, mode, errOtherFS
	}
	var fd int
	if dir {
		fd, err = unix.Openat(pfd, ".", flags|unix.O_DIRECTORY, 0)
	} else {
		fd, err = unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), flags, 0)
		if errors.Is(err, unix.ENOENT) {
			// No /proc: by name again, checked to be the same file.
			fd, err = unix.Openat(dirfd, name, flags|unix.O_NOFOLLOW, 0)
		}
	}
	if err != nil {
		return -1, mode, err
	}
	if err := sameFile(fd, &st); err != nil {
		unix.Close(fd)
		return -1, mode, err
	}
	return fd, mode, nil
}
