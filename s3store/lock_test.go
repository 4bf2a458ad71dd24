package s3store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory/s3store"
)

// patience bounds the waits that must end: a test that would hang fails
// instead. Nothing is timed with it.
const patience = time.Minute

// blocked asserts that Lock(name) on b does not return before its
// deadline, as while someone else holds name.
func blocked(t *testing.T, b *s3store.Backend, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	unlock, err := b.Lock(ctx, name)
	if err == nil {
		unlock()
		t.Fatalf("Lock(%q) was granted while another holder has it", name)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock(%q): %v, want the context's deadline", name, err)
	}
}

// lock takes name on b, failing t if it is not granted in patience.
func lock(t *testing.T, b *s3store.Backend, name string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	unlock, err := b.Lock(ctx, name)
	if err != nil {
		t.Fatalf("Lock(%q): %v", name, err)
	}
	return unlock
}

func TestLockFile(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	unlockA := lock(t, a, "facts/user.md")
	unlockB := lock(t, b, "facts/user.md") // a file's lock is the conditional write
	unlockA()
	unlockB()
	unlockA()
	if _, exists := rawGet(e, ".lease/facts/user.md"); exists {
		t.Error("a file's lock left a lease")
	}
}

func TestLockFolderExcludes(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	unlockA := lock(t, a, "facts/")
	body, exists := rawGet(e, ".lease/facts")
	if !exists || !strings.Contains(body, "holder: ") || !strings.Contains(body, "ttl: 30s") {
		t.Fatalf("lease: %q, %v", body, exists)
	}
	blocked(t, b, "facts/")
	blocked(t, a, "facts/") // another goroutine of the same Backend too
	// Another folder is another lease.
	lock(t, b, "episodes/")()

	got := make(chan func())
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		unlock, err := b.Lock(ctx, "facts/")
		if err != nil {
			t.Error(err)
			unlock = func() {}
		}
		got <- unlock
	}()
	select {
	case unlock := <-got:
		unlock()
		t.Fatal("B was granted the lock A holds")
	default:
	}
	unlockA()
	unlockB := <-got
	blocked(t, a, "facts/")
	unlockB()
	if _, exists := rawGet(e, ".lease/facts"); exists {
		t.Error("unlock left the lease")
	}
	lock(t, a, "facts/")()
}

// TestLockSameBackend: goroutines of one Backend take turns.
func TestLockSameBackend(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	const workers, each = 4, 5
	done := make(chan error)
	for range workers {
		go func() {
			for range each {
				unlock, err := b.Lock(ctx, "facts/")
				if err != nil {
					done <- err
					return
				}
				// Under the lock, a read and a write never conflict.
				c, err := b.Read(ctx, "facts/n.md", -1)
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					_, err = b.Write(ctx, "facts/n.md", append(c.Data, 'x'), c.Version)
				}
				unlock()
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range workers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := rawGet(e, "facts/n.md"); len(n) != workers*each {
		t.Fatalf("%d changes, want %d", len(n), workers*each)
	}
}

// TestLockExpiredTakenOver: a lease older than its duration is taken over,
// and its first holder's unlock does not delete the new holder's lease.
func TestLockExpiredTakenOver(t *testing.T) {
	e := newEnv(t)
	a, b, c := e.backend(nil), e.backend(nil), e.backend(nil)
	unlockA := lock(t, a, "facts/")
	blocked(t, b, "facts/")
	leaseA, _ := rawGet(e, ".lease/facts")

	// A has held it for an hour, as the server sees it.
	age(t, e, ".lease/facts", time.Hour)
	unlockB := lock(t, b, "facts/")
	leaseB, _ := rawGet(e, ".lease/facts")
	if leaseB == leaseA {
		t.Fatal("the lease was not taken over")
	}
	unlockA() // late: the lease is B's now
	if lease, exists := rawGet(e, ".lease/facts"); !exists || lease != leaseB {
		t.Fatalf("A's unlock touched B's lease: %q, %v", lease, exists)
	}
	blocked(t, c, "facts/")
	unlockB()
	lock(t, c, "facts/")()
}

// TestLockHolderTTL: a waiter goes by the duration the lease states, but
// never longer than LeaseTTL.
func TestLockHolderTTL(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	a.SetLeaseTTL(2562047 * time.Hour) // as a lease put by hand could say
	unlockA := lock(t, a, "episodes/")
	defer unlockA()
	if lease, _ := rawGet(e, ".lease/episodes"); !strings.Contains(lease, "ttl: 2562047h0m0s") {
		t.Fatalf("lease %q", lease)
	}
	age(t, e, ".lease/episodes", 10*time.Second)
	blocked(t, b, "episodes/")
	age(t, e, ".lease/episodes", time.Minute) // older than LeaseTTL: a longer ttl is not believed
	lock(t, b, "episodes/")()
}

// TestLockDeletedByHand: a lease deleted by hand lets a second holder in;
// the first one's unlock leaves the second one's lease.
func TestLockDeletedByHand(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	unlockA := lock(t, a, "facts/")
	rawDelete(e, ".lease/facts")
	unlockB := lock(t, b, "facts/")
	leaseB, _ := rawGet(e, ".lease/facts")
	unlockA()
	if lease, exists := rawGet(e, ".lease/facts"); !exists || lease != leaseB {
		t.Fatalf("A's unlock touched B's lease: %q, %v", lease, exists)
	}
	unlockB()
}

// TestLockCanceledWhileWaiting: a waiter whose context ends (before or
// while it waits) gives up, and
// the lock is free again once the holder releases it.
func TestLockCanceledWhileWaiting(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	unlockA := lock(t, a, "facts/")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := b.Lock(ctx, "facts/")
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock: %v, want context.Canceled", err)
	}
	unlockA()
	lock(t, b, "facts/")()
}

func TestLeaseDecisions(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		body string
		age  time.Duration
		ttl  time.Duration
		exp  bool
	}{
		{"holder: x\nttl: 30s\n", 10 * time.Second, 30 * time.Second, false},
		{"holder: x\nttl: 30s\n", 31 * time.Second, 30 * time.Second, false}, // within the second of slack
		{"holder: x\nttl: 30s\n", 32 * time.Second, 30 * time.Second, true},
		{"holder: x\nttl: 10s\n", 5 * time.Second, 10 * time.Second, false},
		{"holder: x\nttl: 2h0m0s\n", time.Hour, s3store.LeaseTTL, true},     // clamped to LeaseTTL
		{"holder: x\nttl: 2562047h\n", time.Minute, s3store.LeaseTTL, true}, // a lease put by hand
		{"holder: x\nttl: 2562047h\n", 10 * time.Second, s3store.LeaseTTL, false},
		{"holder: x\nttl: 1ms\n", 2 * time.Second, time.Millisecond, true},
		{"written by hand", 10 * time.Second, s3store.LeaseTTL, false},
		{"written by hand", time.Minute, s3store.LeaseTTL, true},
		{"ttl: -5s\n", time.Minute, s3store.LeaseTTL, true},
		{"ttl: soon\n", 10 * time.Second, s3store.LeaseTTL, false},
		{"", 10 * time.Second, s3store.LeaseTTL, false},
	} {
		if got := s3store.LeaseTTLOf([]byte(tc.body)); got != tc.ttl {
			t.Errorf("ttl of %q: %v, want %v", tc.body, got, tc.ttl)
		}
		if got := s3store.LeaseExpired([]byte(tc.body), now.Add(-tc.age), now); got != tc.exp {
			t.Errorf("%q, %v old: expired %v, want %v", tc.body, tc.age, got, tc.exp)
		}
	}
}

// age makes the object of name look d old to the server: versitygw's
// LastModified is its file's modification time.
func age(t *testing.T, e *env, name string, d time.Duration) {
	t.Helper()
	then := time.Now().Add(-d)
	if err := os.Chtimes(e.path(name), then, then); err != nil {
		t.Fatal(err)
	}
}

// TestLockCanceledDuringTake: a Lock whose context ends while its lease's
// PUT is under way returns the context's error, and leaves no lease if
// the PUT was made.
func TestLockCanceledDuringTake(t *testing.T) {
	e := newEnv(t)
	fc := newFaultClient()
	a := e.backend(newClient(e.gw.endpoint, fc))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fault{match: isPut("/.lease/facts"), then: cancel}
	fc.fault.Store(f)
	if _, err := a.Lock(ctx, "facts/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock: %v, want context.Canceled", err)
	}
	if f.hits.Load() != 1 {
		t.Fatal("the fault did not happen")
	}
	if lease, exists := rawGet(e, ".lease/facts"); exists {
		t.Fatalf("a lease is left: %q", lease)
	}
	lock(t, e.backend(nil), "facts/")()
}
