//go:build !linux

package memory

import "os"

// placeAt knows no folder's mount where statx(2) is not at hand: a mount of
// a folder over itself could keep its device and number, so no folder is
// kept (see dirfolders.go).
func placeAt(*os.File, string) (place, bool) { return place{}, false }

// placeOfPath knows no folder's mount where statx(2) is not at hand.
func placeOfPath(string) (place, bool) { return place{}, false }
