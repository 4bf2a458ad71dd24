//go:build unix

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSecondInterruptEnds: the first Ctrl-C ends the command's context;
// a second one ends the process, where it was caught and dropped. The
// test runs itself as a child that interrupts itself once, waits for its
// context to end, and then interrupts itself until it is gone.
func TestSecondInterruptEnds(t *testing.T) {
	if os.Getenv("MDMEMORY_TEST_INTERRUPT") == "1" {
		ctx, stop := interruptible()
		defer stop()
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		<-ctx.Done()
		for {
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			runtime.Gosched()
		}
	}
	if raceEnabled {
		// The race detector's runtime takes the default action of a
		// signal itself, and a SIGINT repeated once the handler is gone
		// has been seen to end the child with SIGSEGV instead: make test
		// runs this without it.
		t.Skip("the race detector handles signals of its own: make test runs this test without it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against the hang, not a wait
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSecondInterruptEnds$")
	cmd.Env = append(os.Environ(), "MDMEMORY_TEST_INTERRUPT=1")
	err := cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "%v", err)
	ws := exit.Sys().(syscall.WaitStatus)
	require.True(t, ws.Signaled(), "%v", err)
	require.Equal(t, syscall.SIGINT, ws.Signal(), "the second Ctrl-C ends the process")
}
