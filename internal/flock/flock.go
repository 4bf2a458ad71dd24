// Package flock takes advisory, exclusive, whole-file locks that exclude
// other processes (and other open files in this one) for as long as they
// are held. The lock belongs to the open file: closing it releases it.
//
// On Linux, macOS and the BSDs it is flock(2); on Windows, LockFileEx. On
// other systems TryLock and Lock always succeed and Supported is false.
package flock

import "os"

// TryLock takes the lock on f without waiting. It reports false, with a nil
// error, when another open file holds it.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// Lock takes the lock on f, waiting as long as another open file holds it.
// The system queues the waiters: a lock released is taken by one of those
// already waiting, not by whoever polls first.
func Lock(f *os.File) error { return lock(f) }

// Unlock releases a lock taken by TryLock or Lock.
func Unlock(f *os.File) error { return unlock(f) }
