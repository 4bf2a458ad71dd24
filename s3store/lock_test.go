package s3store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	memory "github.com/mdmemory/memory"
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
	h, err := b.Lock(ctx, name)
	if err == nil {
		h.Unlock()
		t.Fatalf("Lock(%q) was granted while another holder has it", name)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock(%q): %v, want the context's deadline", name, err)
	}
}

// lock takes name on b, failing t if it is not granted in patience.
func lock(t *testing.T, b *s3store.Backend, name string) memory.Held {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	h, err := b.Lock(ctx, name)
	if err != nil {
		t.Fatalf("Lock(%q): %v", name, err)
	}
	return h
}

func TestLockFile(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	hA := lock(t, a, "facts/user.md")
	hB := lock(t, b, "facts/user.md") // a file's lock is the conditional write
	hA.Unlock()
	hB.Unlock()
	hA.Unlock() // a second Unlock does nothing
	if _, exists := rawGet(e, ".lease/facts/user.md"); exists {
		t.Error("a file's lock left a lease")
	}
}

func TestLockFolderExcludes(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	hA := lock(t, a, "facts/")
	body, exists := rawGet(e, ".lease/facts")
	if !exists || !strings.Contains(body, "holder: ") || !strings.Contains(body, "ttl: 30s") {
		t.Fatalf("lease: %q, %v", body, exists)
	}
	blocked(t, b, "facts/")
	blocked(t, a, "facts/") // another goroutine of the same Backend too
	// Another folder is another lease.
	lock(t, b, "episodes/").Unlock()

	got := make(chan memory.Held) // nil when B's Lock failed
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		h, err := b.Lock(ctx, "facts/")
		if err != nil {
			t.Error(err)
			h = nil
		}
		got <- h
	}()
	select {
	case h := <-got:
		if h != nil {
			h.Unlock()
		}
		t.Fatal("B was granted the lock A holds")
	default:
	}
	hA.Unlock()
	hB := <-got
	if hB == nil {
		t.FailNow()
	}
	blocked(t, a, "facts/")
	hB.Unlock()
	if _, exists := rawGet(e, ".lease/facts"); exists {
		t.Error("unlock left the lease")
	}
	lock(t, a, "facts/").Unlock()
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
				h, err := b.Lock(ctx, "facts/")
				if err != nil {
					done <- err
					return
				}
				// Under the lock, a read and a write never conflict.
				c, err := b.Read(ctx, "facts/n.md", -1)
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					_, err = h.Write(ctx, "facts/n.md", append(c.Data, 'x'), c.Version)
				}
				h.Unlock()
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
	hA := lock(t, a, "facts/")
	blocked(t, b, "facts/")
	leaseA, _ := rawGet(e, ".lease/facts")

	// A has held it for an hour, as the server sees it.
	age(t, e, ".lease/facts", time.Hour)
	hB := lock(t, b, "facts/")
	leaseB, _ := rawGet(e, ".lease/facts")
	if leaseB == leaseA {
		t.Fatal("the lease was not taken over")
	}
	hA.Unlock() // late: the lease is B's now
	if lease, exists := rawGet(e, ".lease/facts"); !exists || lease != leaseB {
		t.Fatalf("A's unlock touched B's lease: %q, %v", lease, exists)
	}
	blocked(t, c, "facts/")
	hB.Unlock()
	lock(t, c, "facts/").Unlock()
}

// TestLockHolderTTL: a waiter goes by the duration the lease states, but
// never longer than LeaseTTL.
func TestLockHolderTTL(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	a.SetLeaseTTL(2562047 * time.Hour) // as a lease put by hand could say
	hA := lock(t, a, "episodes/")
	defer hA.Unlock()
	if lease, _ := rawGet(e, ".lease/episodes"); !strings.Contains(lease, "ttl: 2562047h0m0s") {
		t.Fatalf("lease %q", lease)
	}
	age(t, e, ".lease/episodes", 10*time.Second)
	blocked(t, b, "episodes/")
	age(t, e, ".lease/episodes", time.Minute) // older than LeaseTTL: a longer ttl is not believed
	lock(t, b, "episodes/").Unlock()
}

// TestLockDeletedByHand: a lease deleted by hand lets a second holder in;
// the first one's unlock leaves the second one's lease.
func TestLockDeletedByHand(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	hA := lock(t, a, "facts/")
	rawDelete(e, ".lease/facts")
	hB := lock(t, b, "facts/")
	leaseB, _ := rawGet(e, ".lease/facts")
	hA.Unlock()
	if lease, exists := rawGet(e, ".lease/facts"); !exists || lease != leaseB {
		t.Fatalf("A's unlock touched B's lease: %q, %v", lease, exists)
	}
	hB.Unlock()
}

// TestLockCanceledWhileWaiting: a waiter whose context ends (before or
// while it waits) gives up, and
// the lock is free again once the holder releases it.
func TestLockCanceledWhileWaiting(t *testing.T) {
	e := newEnv(t)
	a, b := e.backend(nil), e.backend(nil)
	hA := lock(t, a, "facts/")
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
	hA.Unlock()
	lock(t, b, "facts/").Unlock()
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
	lock(t, e.backend(nil), "facts/").Unlock()
}

// TestHeldAfterUnlock: a lock's Write and Remove after its Unlock, of a
// file or of a folder, return an error (not ErrChanged: the change is
// the caller's bug, not a race to go round again) and change nothing: no
// request is sent. A second Unlock does nothing, not even to the lease of
// the folder's next holder.
func TestHeldAfterUnlock(t *testing.T) {
	needGateway(t)
	ctx := context.Background()
	for _, name := range []string{"facts/user.md", "facts/"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			fc := newFaultClient()
			b := e.backend(newClient(e.gw.endpoint, fc))
			h := lock(t, b, name)
			v, err := h.Write(ctx, "facts/user.md", []byte("one"), "")
			if err != nil {
				t.Fatal(err)
			}
			h.Unlock()
			if _, exists := rawGet(e, ".lease/facts"); exists {
				t.Fatal("Unlock left the lease")
			}

			sent, puts := fc.sent.Load(), fc.puts.Load()
			if _, err := h.Write(ctx, "facts/user.md", []byte("two"), v); err == nil || errors.Is(err, memory.ErrChanged) {
				t.Errorf("Write after Unlock: %v, want an error other than ErrChanged", err)
			}
			if _, err := h.Write(ctx, "facts/new.md", []byte("new"), ""); err == nil || errors.Is(err, memory.ErrChanged) {
				t.Errorf("create-only Write after Unlock: %v, want an error other than ErrChanged", err)
			}
			if err := h.Remove(ctx, "facts/user.md", v); err == nil || errors.Is(err, memory.ErrChanged) {
				t.Errorf("Remove after Unlock: %v, want an error other than ErrChanged", err)
			}
			if n, p := fc.sent.Load()-sent, fc.puts.Load()-puts; n != 0 || p != 0 {
				t.Errorf("after Unlock, %d requests sent (%d PUTs), want none", n, p)
			}
			if got, exists := rawGet(e, "facts/user.md"); got != "one" || !exists {
				t.Errorf("facts/user.md: %q (exists %v), want the content written under the lock", got, exists)
			}
			if _, exists := rawGet(e, "facts/new.md"); exists {
				t.Error("a create-only Write after Unlock created the file")
			}
			if c, err := b.Read(ctx, "facts/user.md", -1); err != nil || c.Version != v {
				t.Errorf("facts/user.md: %+v, %v; want it at %s", c, err, v)
			}

			// The next holder's lease outlives the first holder's second
			// Unlock.
			h2 := lock(t, e.backend(nil), name)
			lease, held := rawGet(e, ".lease/facts")
			h.Unlock()
			if got, exists := rawGet(e, ".lease/facts"); got != lease || exists != held {
				t.Errorf("a second Unlock touched the next holder's lease: %q (exists %v), was %q (exists %v)", got, exists, lease, held)
			}
			h2.Unlock()
		})
	}
}

// TestHeldFolderWritesAsFile: the lock of a folder writes and removes as
// the lock of a file does (the same conditional requests: the same
// outcomes, versions and objects), for a file in the folder and one
// outside it, and leaves its lease as it took it.
func TestHeldFolderWritesAsFile(t *testing.T) {
	needGateway(t)
	ctx := context.Background()
	// run makes the same changes through the lock of name, on a fresh
	// prefix, and returns what each did.
	run := func(t *testing.T, name string) []string {
		e := newEnv(t)
		b := e.backend(nil)
		h := lock(t, b, name)
		defer h.Unlock()
		lease, leased := rawGet(e, ".lease/facts")
		if leased != strings.HasSuffix(name, "/") {
			t.Fatalf("lock of %s: lease %q (exists %v)", name, lease, leased)
		}
		var log []string
		say := func(step, v string, err error) {
			t.Helper()
			outcome := "ok"
			switch {
			case errors.Is(err, memory.ErrChanged):
				outcome = "changed"
			case errors.Is(err, fs.ErrInvalid):
				outcome = "invalid"
			case err != nil:
				t.Fatalf("lock of %s, %s: %v", name, step, err)
			}
			if (err == nil) != (v != "") && !strings.HasPrefix(step, "remove") {
				t.Errorf("lock of %s, %s: version %q with error %v", name, step, v, err)
			}
			got, exists := rawGet(e, "facts/user.md")
			other, _ := rawGet(e, "episodes/2026-11.md")
			log = append(log, fmt.Sprintf("%s: %s %s; facts/user.md %q (exists %v); episodes/2026-11.md %q", step, outcome, v, got, exists, other))
		}
		const f = "facts/user.md"
		v1, err := h.Write(ctx, f, []byte("one"), "")
		say("create", v1, err)
		if c, err := b.Read(ctx, f, -1); err != nil || c.Version != v1 || !strings.HasPrefix(v1, `"`) {
			t.Errorf("lock of %s: Write returned %s; Read: %+v, %v", name, v1, c, err)
		}
		v, err := h.Write(ctx, f, []byte("again"), "")
		say("create over it", v, err)
		v2, err := h.Write(ctx, f, []byte("two"), v1)
		say("replace", v2, err)
		v, err = h.Write(ctx, f, []byte("three"), v1)
		say("replace at a stale version", v, err)
		v, err = h.Write(ctx, f, []byte("three"), strings.Trim(v2, `"`))
		say("replace at the bare version", v, err)
		rawPut(e, f, "by hand")
		v3, err := h.Write(ctx, f, []byte("four"), v)
		say("replace over a person's edit", v3, err)
		c, err := b.Read(ctx, f, -1)
		if err != nil {
			t.Fatal(err)
		}
		say("remove at a stale version", "", h.Remove(ctx, f, v))
		say("remove with no version", "", h.Remove(ctx, f, ""))
		say("remove", "", h.Remove(ctx, f, c.Version))
		say("remove a missing file", "", h.Remove(ctx, f, c.Version))
		v, err = h.Write(ctx, f, []byte("one"), c.Version)
		say("replace a missing file", v, err)
		v, err = h.Write(ctx, "facts/../x.md", []byte("x"), "")
		say("an invalid name", v, err)
		v, err = h.Write(ctx, "episodes/2026-11.md", []byte("# November\n"), "")
		say("create outside the lock's name", v, err)
		v, err = h.Write(ctx, "episodes/2026-11.md", []byte("# Nov\n"), v1)
		say("replace outside the lock's name, at another file's version", v, err)
		if got, exists := rawGet(e, ".lease/facts"); got != lease || exists != leased {
			t.Errorf("lock of %s: the writes changed the lease: %q (exists %v), was %q", name, got, exists, lease)
		}
		return log
	}
	file := run(t, "facts/user.md")
	folder := run(t, "facts/")
	if !slices.Equal(file, folder) {
		t.Errorf("the lock of a file and of its folder differ:\nfile:\n%s\nfolder:\n%s", strings.Join(file, "\n"), strings.Join(folder, "\n"))
	}
	t.Logf("both:\n%s", strings.Join(file, "\n"))
}
