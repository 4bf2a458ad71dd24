//go:build !race && unix

package main

// raceEnabled reports a test binary built with the race detector, whose
// runtime handles signals of its own.
const raceEnabled = false
