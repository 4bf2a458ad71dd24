package memory

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// The place of a folder, on Linux: statx(2) gives the mount a file is
// reached through (STATX_MNT_ID, Linux 5.8), which Lstat does not. A bind
// mount of a folder over itself ("mount --bind -o ro facts facts") keeps
// the folder's device and number; only the mount tells the folder the path
// names now from the one kept open before.

// sysStatx is statx's number on the architectures whose number is known;
// elsewhere no place is known, and no folder kept.
var sysStatx = map[string]uintptr{
	"amd64": 332, "386": 383, "arm": 397, "arm64": 291, "riscv64": 291,
	"loong64": 291, "ppc64": 383, "ppc64le": 383, "s390x": 379,
}[runtime.GOARCH]

const (
	atSymlinkNofollow = 0x100
	atEmptyPath       = 0x1000
	statxType         = 0x1
	statxIno          = 0x100
	statxMntID        = 0x1000
	sIFMT             = 0xf000
	sIFDIR            = 0x4000
)

// statxBuf is struct statx, 256 bytes.
type statxBuf struct {
	mask           uint32
	blksize        uint32
	attributes     uint64
	nlink          uint32
	uid            uint32
	gid            uint32
	mode           uint16
	_              uint16
	ino            uint64
	size           uint64
	blocks         uint64
	attributesMask uint64
	times          [4][2]uint64 // atime, btime, ctime, mtime: seconds, then nanoseconds
	rdevMajor      uint32
	rdevMinor      uint32
	devMajor       uint32
	devMinor       uint32
	mntID          uint64
	_              [13]uint64
}

var _ [256 - unsafe.Sizeof(statxBuf{})]struct{} // no larger than the kernel's
var _ [unsafe.Sizeof(statxBuf{}) - 256]struct{} // nor smaller

// placeAt returns the place of the folder name (no link) in the folder
// open as parent, or of parent itself when name is ""; false when it is
// no folder, cannot be looked at, or the system does not say its mount.
func placeAt(parent *os.File, name string) (place, bool) {
	if sysStatx == 0 {
		return place{}, false
	}
	flags := atSymlinkNofollow
	if name == "" {
		flags |= atEmptyPath
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return place{}, false
	}
	rc, err := parent.SyscallConn()
	if err != nil {
		return place{}, false
	}
	var st statxBuf
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(sysStatx, fd, uintptr(unsafe.Pointer(p)), uintptr(flags), statxType|statxIno|statxMntID, uintptr(unsafe.Pointer(&st)), 0)
	}); err != nil {
		return place{}, false
	}
	return st.place(errno)
}

// place returns the place st holds, when statx succeeded (errno 0), said
// the mount, and found a folder.
func (st *statxBuf) place(errno syscall.Errno) (place, bool) {
	const need = statxType | statxIno | statxMntID
	if errno != 0 || st.mask&need != need || st.mode&sIFMT != sIFDIR {
		return place{}, false
	}
	return place{dev: uint64(st.devMajor)<<32 | uint64(st.devMinor), ino: st.ino, mnt: st.mntID}, true
}

// placeOfPath returns the place of the folder at path, following links;
// false when it is no folder, cannot be looked at, or the system does not
// say its mount.
func placeOfPath(path string) (place, bool) {
	if sysStatx == 0 {
		return place{}, false
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return place{}, false
	}
	const atFDCWD = ^uintptr(99) // -100
	var st statxBuf
	_, _, errno := syscall.Syscall6(sysStatx, atFDCWD, uintptr(unsafe.Pointer(p)), 0, statxType|statxIno|statxMntID, uintptr(unsafe.Pointer(&st)), 0)
	return st.place(errno)
}
