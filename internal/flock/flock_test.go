package flock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTryLockExcludesOtherOpenFiles(t *testing.T) {
	if !Supported {
		t.Skip("no locks here")
	}
	p := filepath.Join(t.TempDir(), ".lock")
	a, err := os.Create(p)
	require.NoError(t, err)
	defer a.Close()
	b, err := os.Open(p)
	require.NoError(t, err)
	defer b.Close()

	ok, err := TryLock(a)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = TryLock(b)
	require.NoError(t, err)
	require.False(t, ok, "a second open file may not take the lock")

	require.NoError(t, Unlock(a))
	ok, err = TryLock(b)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, b.Close())

	ok, err = TryLock(a)
	require.NoError(t, err)
	require.True(t, ok, "closing the file released its lock")
	require.NoError(t, Unlock(a))
}

func TestErrorsOnClosedFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), ".lock"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = TryLock(f)
	require.Error(t, err)
	require.Error(t, Unlock(f))
}

func TestLockWaitsForTheHolder(t *testing.T) {
	if !Supported {
		t.Skip("no locks here")
	}
	p := filepath.Join(t.TempDir(), ".lock")
	a, err := os.Create(p)
	require.NoError(t, err)
	defer a.Close()
	b, err := os.Open(p)
	require.NoError(t, err)
	defer b.Close()

	require.NoError(t, Lock(a))
	done := make(chan error)
	go func() { done <- Lock(b) }()
	select {
	case err := <-done:
		t.Fatalf("Lock returned (%v) while another open file held the lock", err)
	default:
	}
	require.NoError(t, Unlock(a))
	require.NoError(t, <-done)
	ok, err := TryLock(a)
	require.NoError(t, err)
	require.False(t, ok, "the waiter holds the lock now")
	require.NoError(t, Unlock(b))
	_, err = os.Stat(p)
	require.NoError(t, err)
}
