//go:build unix

package s3store_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"syscall"
	"testing"

	"github.com/mdmemory/memory/s3store"
)

func init() { childModes["bigwrites"] = bigWritesChild }

const bigName = "episodes/big.md"

// The two contents a killed writer alternates between: 4 MiB each, every
// line of one differing from every line of the other, so that a mix of
// the two is neither.
var (
	bigA = bytes.Repeat([]byte("aaaaaaaaaaaaaaa\n"), 4<<20/16)
	bigB = bytes.Repeat([]byte("bbbbbbbbbbbbbbb\n"), 4<<20/16)
)

// bigWritesChild replaces bigName with the other of bigA and bigB, again
// and again, saying "write N" on stdout as each write begins, until it is
// killed (or has made 1,000).
func bigWritesChild(t *testing.T, b *s3store.Backend, _ int) {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	c, err := b.Read(ctx, bigName, -1)
	if err != nil {
		t.Fatal(err)
	}
	v, next := c.Version, other(c.Data)
	for i := range 1000 {
		fmt.Printf("write %d\n", i)
		if v, err = put(ctx, b, bigName, next, v); err != nil {
			t.Fatal(err)
		}
		next = other(next)
	}
}

// other is the other of bigA and bigB.
func other(data []byte) []byte {
	if bytes.Equal(data, bigA) {
		return bigB
	}
	return bigA
}

// TestKillDuringWrite: a writer killed with SIGKILL once it said it began
// a write of 4 MiB leaves the object whole, old or new, never a mix; the
// next write, by version, goes through.
func TestKillDuringWrite(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	if _, err := put(ctx, b, bigName, bigA, ""); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	cur := bigA
	for round := range 4 {
		cmd := child(e, "bigwrites", round)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it once it began its (round+1)th write.
		sc := bufio.NewScanner(out)
		for k := 0; k <= round; k++ {
			if !sc.Scan() {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the writer ended before its write %d: %s", k, stderr.String())
			}
			if want := fmt.Sprintf("write %d", k); sc.Text() != want {
				t.Fatalf("the writer said %q, want %q", sc.Text(), want)
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()

		c, err := b.Read(ctx, bigName, -1)
		if err != nil {
			t.Fatal(err)
		}
		// Before its write k, the writer had made k writes from cur.
		old, nu := cur, other(cur)
		if round%2 == 1 {
			old, nu = nu, old
		}
		switch {
		case bytes.Equal(c.Data, old):
			seen["old (the write was cut)"]++
		case bytes.Equal(c.Data, nu):
			seen["new (the write was made)"]++
		default:
			t.Fatalf("round %d: the object is neither A nor B: %d bytes, starting %q", round, len(c.Data), c.Data[:min(len(c.Data), 32)])
		}
		cur = c.Data
		entries, err := b.List(ctx, "episodes")
		if err != nil || len(entries) != 1 || entries[0].Size != int64(len(bigA)) || entries[0].Tag != c.Version {
			t.Fatalf("round %d: List: %+v, %v", round, entries, err)
		}
	}
	t.Logf("after the kills: %v", seen)
}
