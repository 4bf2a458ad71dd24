//go:build !linux

package memory

import "io/fs"

// stamp is "" where the time of a file's last change of any kind is not at
// hand: the Dir reads a file again to compare its version.
func stamp(fs.FileInfo) string { return "" }

// openNoatime is 0 where files cannot be opened without updating their
// access time.
const openNoatime = 0
