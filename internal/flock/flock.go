// Package flock takes advisory, exclusive, whole-file locks that exclude
// other processes (and other open files in this one) for as long as they
// are held. The lock belongs to the open file: closing it releases it.
//
// On Linux, macOS and the BSDs it is flock(2); on Windows, LockFileEx. On
// other systems TryLock always succeeds and Supported is false.
package flock

import "os"

// TryLock takes the lock on f without waiting. It reports false, with a nil
// error, when another open file holds it.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// Unlock releases a lock taken by TryLock.
func Unlock(f *os.File) error { return unlock(f) }
