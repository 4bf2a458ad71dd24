package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// interruptible is the context a command runs in: the first Ctrl-C (or
// SIGTERM) ends it, for the command to stop between two steps; the
// signals are then given back, so that a second Ctrl-C ends the process
// at once, where it was caught and dropped for as long as the command ran
// on.
func interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}
