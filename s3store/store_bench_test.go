package s3store_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	memory "github.com/mdmemory/memory"
)

// BenchmarkStore is the Store on the S3 Backend (memory.OpenBackend), each
// operation timed beside its bare SDK counterpart in the same iteration,
// so that the ratio compares the two in the same moments of the gateway
// and the disk under it:
//
//   - append: an episode entry (~330 bytes) appended to the current month,
//     against a GetObject and a conditional PutObject of the month's size
//     (the month's file grows to 16 KiB and is then sealed as a part, so
//     the sizes go round from 0 to 16 KiB, and one append in ~50 seals);
//   - write: a 2 KB fact file replaced, against a GetObject and a
//     conditional PutObject of 2 KB;
//   - read: a month's file of ~8 KiB, against a GetObject of the same;
//   - list: two fact files and twelve months, against one ListObjectsV2 of
//     the prefix; list-cold the same with the summaries List remembers
//     forgotten first (ReleaseIndex), so that it reads every head;
//   - search: a query of that memory, its index built, against one
//     ListObjectsV2 of the prefix (the freshness check is one listing).
//
// Each reports µs for both and their ratio. Compare with BenchmarkBare
// and BenchmarkBackend in the same run.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()

	b.Run("append", func(b *testing.B) {
		st, be, bare := newStoreEnv(b)
		n := 0
		var store, floor time.Duration
		for b.Loop() {
			start := time.Now()
			if err := st.Append(ctx, "episodes/2026-11.md", episode(n, "2026-11"), ""); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			bare.get()
			bare.put(int(be.written.Load()))
			store, floor = store+mid.Sub(start), floor+time.Since(mid)
			n++
		}
		report(b, store, floor, "append", "get+put")
	})

	b.Run("write", func(b *testing.B) {
		st, _, bare := newStoreEnv(b)
		facts := [2]string{factFile(1000), factFile(2000)} // a change each time
		if err := st.Write(ctx, "facts/user.md", facts[1]); err != nil {
			b.Fatal(err)
		}
		size := sizeOf(b, st, "facts/user.md") // both the same
		n := 0
		var store, floor time.Duration
		for b.Loop() {
			start := time.Now()
			if err := st.Write(ctx, "facts/user.md", facts[n%2]); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			bare.get()
			bare.put(size)
			store, floor = store+mid.Sub(start), floor+time.Since(mid)
			n++
		}
		report(b, store, floor, "write", "get+put")
	})

	b.Run("read", func(b *testing.B) {
		st, _, bare := newStoreEnv(b)
		fillMemory(b, st)
		bare.put(sizeOf(b, st, "episodes/2026-10.md"))
		var store, floor time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := st.Read(ctx, "episodes/2026-10.md"); err != nil {
				b.Fatal(err)
			}
			mid := time.Now()
			bare.get()
			store, floor = store+mid.Sub(start), floor+time.Since(mid)
		}
		report(b, store, floor, "read", "get")
	})

	for _, op := range []string{"list", "list-cold", "search"} {
		b.Run(op, func(b *testing.B) {
			st, _, bare := newStoreEnv(b)
			fillMemory(b, st)
			if _, err := st.Search(ctx, "warm up", nil); err != nil {
				b.Fatal(err)
			}
			var store, floor time.Duration
			for b.Loop() {
				if op == "list-cold" {
					st.ReleaseIndex()
				}
				start := time.Now()
				if op != "search" {
					if files, err := st.List(ctx); err != nil || len(files) != 14 {
						b.Fatal(len(files), err)
					}
				} else if hits, err := st.Search(ctx, "Tokyo flights family", nil); err != nil || len(hits) == 0 {
					b.Fatal(len(hits), err)
				}
				mid := time.Now()
				bare.list()
				store, floor = store+mid.Sub(start), floor+time.Since(mid)
			}
			report(b, store, floor, op, "list-objects")
		})
	}
}

// report adds the per-iteration times of the Store's operation and of its
// bare counterpart, and their ratio.
func report(b *testing.B, store, floor time.Duration, op, bare string) {
	b.ReportMetric(float64(store.Microseconds())/float64(b.N), "µs/"+op)
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N), "µs/"+bare)
	b.ReportMetric(float64(store)/float64(floor), op+"/"+bare)
}

// sizing is the Backend that records the size of the last file written.
type sizing struct {
	memory.Backend
	written atomic.Int64
}

// Lock returns the lock of name, whose writes record their size.
func (s *sizing) Lock(ctx context.Context, name string) (memory.Held, error) {
	h, err := s.Backend.Lock(ctx, name)
	return hook(h, err, func(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
		s.written.Store(int64(len(data)))
		return h.Write(ctx, name, data, match)
	})
}

// newStoreEnv opens a Store on a Backend of a fresh prefix, and a bare
// object beside it, both with one client.
func newStoreEnv(b *testing.B) (*memory.Store, *sizing, *bareObject) {
	e := newEnv(b)
	c := newClient(e.gw.endpoint, nil)
	be := &sizing{Backend: e.backend(c)}
	st, err := memory.OpenBackend(be, &memory.Options{Now: func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st, be, &bareObject{b: b, client: c, key: e.key("bare/2026-11.md"), prefix: e.prefix}
}

// sizeOf returns the size of the file name, read outside the timed parts.
func sizeOf(b *testing.B, st *memory.Store, name string) int {
	text, err := st.Read(context.Background(), name)
	if err != nil {
		b.Fatal(err)
	}
	return len(text)
}

// episode is an entry of about 330 bytes dated in month.
func episode(i int, month string) string {
	return fmt.Sprintf("## Task %d: compare flights to Tokyo in April\n- Summary: Spring Airlines cheapest for the April trip\n- Date: %s-%02d\n"+
		"- Task: user asked to compare flights and prices for a family of three\n- Lesson: search results had stale prices; cross-check airline sites\n", i, month, i%28+1)
}

// factFile is a fact file of about 2 KB whose lines are numbered from
// first, so that no line repeats a line of another fact file (the fact
// guard refuses a repeat).
func factFile(first int) string {
	var b strings.Builder
	b.WriteString("# User\n\n> Summary: Zhang San, Chinese\n\n")
	for i := range 34 {
		fmt.Fprintf(&b, "- Note %d: Zhang San; prefers Chinese; standup Wed 10:00\n", first+i)
	}
	return b.String()
}

// fillMemory writes two fact files and twelve months of ~8 KiB.
func fillMemory(b *testing.B, st *memory.Store) {
	ctx := context.Background()
	for i, p := range []string{"facts/user.md", "facts/memory.md"} {
		if err := st.Write(ctx, p, factFile(100*i)); err != nil {
			b.Fatal(err)
		}
	}
	for m := 1; m <= 12; m++ {
		month := fmt.Sprintf("2025-%02d", m)
		if m <= 11 {
			month = fmt.Sprintf("2026-%02d", m)
		}
		var f strings.Builder
		f.WriteString("# " + month + " Episodes\n\n> Summary: flights, gifts, bugs\n\n")
		for i := range 24 {
			f.WriteString(episode(i, month) + "\n")
		}
		if err := st.Write(ctx, "episodes/"+month+".md", f.String()); err != nil {
			b.Fatal(err)
		}
	}
}

// bareObject is the SDK alone: a GetObject, a conditional PutObject, a
// ListObjectsV2.
type bareObject struct {
	b      *testing.B
	client *s3.Client
	key    string
	prefix string  // what list lists
	etag   *string // nil until the first put
	data   []byte
}

func (o *bareObject) get() {
	if o.etag == nil {
		o.put(0)
	}
	out, err := o.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: &o.key})
	if err != nil {
		o.b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, out.Body); err != nil {
		o.b.Fatal(err)
	}
	out.Body.Close()
}

// put replaces the object with size bytes, if it is still as last put
// (created only if it does not exist, the first time).
func (o *bareObject) put(size int) {
	for len(o.data) < size {
		o.data = append(o.data, benchData()...)
	}
	in := &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: &o.key, Body: bytes.NewReader(o.data[:size]), ContentLength: aws.Int64(int64(size))}
	if o.etag == nil {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = o.etag
	}
	out, err := o.client.PutObject(context.Background(), in)
	if err != nil {
		o.b.Fatal(err)
	}
	o.etag = out.ETag
}

func (o *bareObject) list() {
	if _, err := o.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(testBucket), Prefix: &o.prefix}); err != nil {
		o.b.Fatal(err)
	}
}
