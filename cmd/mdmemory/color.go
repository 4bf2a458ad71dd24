package main

import (
	"os"

	"golang.org/x/term"
)

// Colour, on a terminal only and never with $NO_COLOR set (no-color.org):
// check's findings (a problem red, a warning yellow), the budget bars
// (green, yellow from 80%, red over the budget), what add, edit and
// import could not do, and diffs as git colours them. Everything else is plain, so that the output reads
// the same in a pipe.

const (
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
	bold   = "1"
)

// paint wraps s in the colour code when on is set.
func paint(on bool, code, s string) string {
	if !on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// isTerminal reports whether v, a standard stream, is a terminal. A writer
// or reader that says itself whether it is one (IsTerminal() bool) is
// believed, which is how the tests stand in for a terminal.
func isTerminal(v any) bool {
	switch f := v.(type) {
	case interface{ IsTerminal() bool }:
		return f.IsTerminal()
	case *os.File:
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}
