package s3store

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	memory "github.com/mdmemory/memory"
)

// LeaseTTL is how long a folder's lease lasts after it was taken: a lease
// older than that is taken over by the next Store that wants the folder.
// It is far longer than any change the Store makes under a folder's lock
// (a few requests).
const LeaseTTL = 30 * time.Second

// leaseFolder holds the folders' leases, beside the folders the Store
// lists: ".lease/facts" is the lease of "facts/".
const leaseFolder = ".lease"

// maxLeaseRead is how much of a lease is read to learn its duration.
const maxLeaseRead = 4096

// The waits between two attempts to take a lease someone holds: jittered,
// from minWait doubling to maxWait.
const (
	minWait = time.Millisecond
	maxWait = 50 * time.Millisecond
)

// Lock serialises changes to name. For a file (no trailing "/") it returns
// at once: Write's conditional PUT is the compare-and-swap.
//
// For a folder ("facts/", "episodes/"), Lock takes a lease: the object
// ".lease/<folder>" under the prefix (".lease/facts"), created with a
// create-only conditional PUT (If-None-Match: *) whose body names the
// holder, a random id, and the lease's duration, [LeaseTTL]. The random id
// makes every lease's ETag its own. While another holder's lease exists
// and is younger than the duration it states, Lock waits, with jittered
// waits from 1 ms doubling to 50 ms between attempts, until the lease is
// gone or ctx ends (it then returns an error wrapping ctx's). A lease
// older than that is taken over with a PUT conditional on its ETag, so
// that of several Stores that find it expired, one takes it. Waiters in
// one Backend queue in order, and only the first of them polls. Unlock
// deletes the lease only if it is still the one taken (a conditional
// DELETE on its ETag, after a HEAD that compares it).
//
// What can go wrong:
//
//   - A holder that keeps the lease past its duration (a process paused,
//     or cut off from the server, for 30 s in the middle of a change)
//     loses it: another Store takes it over and changes the folder while
//     the first finishes. Each write still compares versions, so no
//     file's change is lost; what the lock protects across files can
//     break, by at most the late holder's one change: the facts budget
//     can be exceeded by at most one fact change.
//   - A lease's age is the server's Date less its LastModified, both the
//     server's clocks and to the second (a second is added to be safe).
//     Behind a load balancer, clock skew between the servers shortens or
//     lengthens the duration by as much.
//   - A Store that dies holding a lease holds its folder up to the lease's
//     duration: the next Lock of that folder waits that long.
//   - A lease someone deletes by hand lets a second holder in.
func (b *Backend) Lock(ctx context.Context, name string) (memory.Held, error) {
	folder, isFolder := strings.CutSuffix(name, "/")
	if err := checkName(folder); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, opErr(ctx, "lock", b.prefix+name, err)
	}
	if !isFolder {
		return &held{b: b, release: func() {}}, nil
	}
	key := b.prefix + leaseFolder + "/" + folder
	turn := b.turn(folder)
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, opErr(ctx, "lock", key, ctx.Err())
	}
	body := leaseBody(name, newHolder(), b.ttl)
	etag, err := b.takeLease(ctx, key, body)
	if err != nil {
		b.dropLease(ctx, key, body)
		<-turn
		return nil, opErr(ctx, "lock", key, err)
	}
	return &held{b: b, release: func() {
		b.releaseLease(ctx, key, etag)
		<-turn
	}}, nil
}

// held is a lock the Backend gave: for a file, nothing but the way to
// write; for a folder, its lease.
type held struct {
	b       *Backend
	once    sync.Once
	gone    atomic.Bool
	release func()
}

// errUnlocked is returned by a change made through a lock already
// released: a bug of the caller's.
var errUnlocked = errors.New("s3store: the lock was released: a change must be made while it is held")

// Write stores data as the object at name with a conditional PUT:
// If-None-Match: * when match is "", If-Match: match otherwise. It returns
// the new ETag, or an error wrapping [memory.ErrChanged] when the server
// refuses the condition. See [Backend] for a PUT whose response is lost.
func (h *held) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	if h.gone.Load() {
		return "", errUnlocked
	}
	return h.b.write(ctx, name, data, match)
}

// Remove deletes the object at name if its ETag is match: a HEAD compares
// it (a missing object is [memory.ErrChanged], as is an empty match), then
// a DELETE with If-Match: match makes the server compare it again. A
// server that ignores If-Match on DELETE leaves the window between the
// two, in which a change made by someone else would be deleted.
func (h *held) Remove(ctx context.Context, name, match string) error {
	if h.gone.Load() {
		return errUnlocked
	}
	return h.b.removeName(ctx, name, match)
}

// Unlock releases the lock: a folder's lease is deleted if it is still
// the one taken.
func (h *held) Unlock() {
	h.once.Do(func() {
		h.gone.Store(true)
		h.release()
	})
}

// turn is this Backend's queue for the lease of folder: a channel of one
// slot, held from before the lease is taken until after it is released.
func (b *Backend) turn(folder string) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.turns[folder]
	if !ok {
		t = make(chan struct{}, 1)
		b.turns[folder] = t
	}
	return t
}

// takeLease takes the lease at key with body, and returns its ETag.
func (b *Backend) takeLease(ctx context.Context, key string, body []byte) (string, error) {
	wait := minWait
	for {
		etag, err := b.put(ctx, key, body, "")
		if !errors.Is(err, memory.ErrChanged) && !contended(err) {
			return etag, err // taken, or failed
		}
		held, err := b.get(ctx, key, maxLeaseRead)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released since: try again now
		}
		if err != nil {
			return "", err
		}
		if leaseExpired(held) {
			etag, err := b.put(ctx, key, body, held.etag)
			if !errors.Is(err, memory.ErrChanged) && !contended(err) {
				return etag, err
			}
			continue // someone else took it over, or released it
		}
		if err := pause(ctx, jitter(wait)); err != nil {
			return "", err
		}
		wait = min(2*wait, maxWait)
	}
}

// contended reports a 409 of any code on a lease's PUT: the server saw
// another request on the key at the same moment (versitygw answers so when
// a release's DELETE and a take's PUT meet), so the lease is read again.
func contended(err error) bool {
	return err != nil && statusOf(err) == 409
}

// releaseLease deletes the lease at key if it is still at etag. It runs
// even when the Lock's ctx ended, for at most the lease's duration; a
// lease it fails to delete expires.
func (b *Backend) releaseLease(ctx context.Context, key, etag string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.ttl)
	defer cancel()
	b.remove(ctx, key, etag) //nolint:errcheck // ErrChanged: taken over; anything else: it expires
}

// dropLease deletes the lease at key if it is the one with body: a Lock
// that failed (its context ended) may have taken it all the same, with
// the PUT whose outcome it could not learn.
func (b *Backend) dropLease(ctx context.Context, key string, body []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.ttl)
	defer cancel()
	if held, err := b.get(ctx, key, maxLeaseRead); err == nil && bytes.Equal(held.data, body) {
		b.remove(ctx, key, held.etag) //nolint:errcheck // it expires
	}
}

// leaseBody is a lease's content: what it is, who holds it, for how long.
func leaseBody(name, holder string, ttl time.Duration) []byte {
	host, _ := os.Hostname()
	return fmt.Appendf(nil, "mdmemory lease of %s\nholder: %s\nttl: %s\nhost: %s pid %d\n", name, holder, ttl, host, os.Getpid())
}

// leaseTTL is the duration a lease states, at most LeaseTTL (a lease put
// by hand with a longer one would block the folder as long), or LeaseTTL
// when it states none (someone else wrote it).
func leaseTTL(body []byte) time.Duration {
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ttl: "); ok {
			if d, err := time.ParseDuration(v); err == nil && d > 0 {
				return min(d, LeaseTTL)
			}
		}
	}
	return LeaseTTL
}

// leaseExpired tells whether the lease read as o is older than the
// duration it states, by the server's clock. LastModified and Date are
// both to the second: one more second makes sure.
func leaseExpired(o object) bool {
	return o.now.Sub(o.modified) > leaseTTL(o.data)+time.Second
}

// newHolder is a random id for one Lock.
func newHolder() string {
	var id [16]byte
	rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// jitter is a random duration between d/2 and d.
func jitter(d time.Duration) time.Duration {
	return d/2 + mrand.N(d/2+1)
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
