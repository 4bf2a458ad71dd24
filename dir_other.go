//go:build !unix

package memory

import "io/fs"

// fileID is "" where the file's number is not at hand: the size and the
// modification time tag the file alone.
func fileID(fs.FileInfo) string { return "" }

// openNonblock is 0 where opening a file cannot wait for a writer.
const openNonblock = 0
