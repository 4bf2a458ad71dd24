//go:build unix

package memory

import (
	"io/fs"
	"strconv"
	"syscall"
)

// fileID is the file's number on its device, which a rename changes.
func fileID(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(st.Ino), 36)
	}
	return ""
}

// openNonblock opens a file without waiting for a writer, should a FIFO be
// put in its place between the look and the open.
const openNonblock = syscall.O_NONBLOCK
