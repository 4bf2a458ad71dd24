package memory

import (
	"io/fs"
	"strconv"
	"syscall"
)

// stamp identifies the state of a file as the system keeps it: its number,
// size, and the times of its last modification and of its last change of
// any kind (ctime, which no program can set back). A write in place, a
// rename over it, a chmod all change it; see [Dir.version] for the one
// edit it can miss.
func stamp(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(st.Ino, 36) + "-" + strconv.FormatInt(st.Size, 36) + "-" +
		strconv.FormatInt(st.Mtim.Nano(), 36) + "-" + strconv.FormatInt(st.Ctim.Nano(), 36)
}

// openNoatime opens a file to read it without updating its access time:
// a read then dirties nothing the next change's fsync must write. The
// system allows it only to the file's owner; openRead falls back.
const openNoatime = syscall.O_NOATIME
