package s3store_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	memory "github.com/mdmemory/memory"
)

// countingClient passes requests to the SDK's HTTP client and counts the
// bytes of their bodies and of the responses' bodies: what a change
// moves.
type countingClient struct {
	next     *awshttp.BuildableClient
	sent     atomic.Int64
	received atomic.Int64
	requests atomic.Int64
}

func (c *countingClient) Do(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	if req.ContentLength > 0 {
		c.sent.Add(req.ContentLength)
	}
	resp, err := c.next.Do(req)
	if err == nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.received}
	}
	return resp, err
}

// bytes is what the client sent and received so far.
func (c *countingClient) bytes() int64 { return c.sent.Load() + c.received.Load() }

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// shortEntry is an entry of about 100 bytes, as `mdmemory add` appends.
func shortEntry(i int) string {
	return fmt.Sprintf("## Note %d\n- Date: 2026-02-26\n- Summary: a short entry appended by the command line, number %d\n", i, i)
}

// appendBytes appends n entries to one month, then returns the bytes the
// next k appends moved each, on average, through one Store, or through a
// fresh Store for each (its opening not counted) when fresh.
func appendBytes(t testing.TB, n, k int, fresh bool) float64 {
	e := newEnv(t)
	cc := &countingClient{next: awshttp.NewBuildableClient()}
	b := e.backend(newClient(e.gw.endpoint, cc))
	ctx := context.Background()
	s := openStore(t, b)
	for i := range n {
		if err := s.Append(ctx, storeMonth, shortEntry(i), ""); err != nil {
			t.Fatal(err)
		}
	}
	var moved int64
	for i := range k {
		if fresh {
			s = openStore(t, b)
		}
		before := cc.bytes()
		if err := s.Append(ctx, storeMonth, shortEntry(n+i), ""); err != nil {
			t.Fatal(err)
		}
		moved += cc.bytes() - before
	}
	return float64(moved) / float64(k)
}

// TestHistoryBytesDoNotGrow: the bytes an append moves on S3 (requests'
// and responses' bodies) do not grow with the history of its file: the
// log is kept in segments, and a change reads and writes only the last,
// which a fresh Store finds by the log's summary, without listing them.
// Averaged over 20 appends after 100 and after 600 appends of ~100-byte
// entries, through one Store and through a fresh Store each: the log of
// the month is then about 25 KB and 150 KB, which a change that rewrote
// its whole log would move four times over (read and written, for the
// record and for its mark).
func TestHistoryBytesDoNotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("1,400 appends on the gateway")
	}
	for _, fresh := range []bool{false, true} {
		early, late := appendBytes(t, 100, 20, fresh), appendBytes(t, 600, 20, fresh)
		t.Logf("bytes moved by one append (fresh Store: %v): %.0f after 100 appends, %.0f after 600", fresh, early, late)
		if late > early+64<<10 {
			t.Errorf("an append moved %.0f bytes after 600 appends, %.0f after 100 (fresh Store: %v): it grows with the history", late, early, fresh)
		}
	}
}

// BenchmarkHistoryBytes reports the bytes one append of a ~100-byte entry
// moves on S3 (bytes/change: requests' and responses' bodies, through a
// counting HTTP client) and its requests, after 10 and 5,000 recorded
// changes of the month: through one Store ("store"), and through a fresh
// Store for each append, as `mdmemory add` makes them ("fresh": the Store
// lists the log's segments and reads the last one first; the Store's
// opening is not counted).
func BenchmarkHistoryBytes(b *testing.B) {
	for _, n := range []int{10, 5000} {
		for _, mode := range []string{"store", "fresh"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				e := newEnv(b)
				cc := &countingClient{next: awshttp.NewBuildableClient()}
				be := e.backend(newClient(e.gw.endpoint, cc))
				ctx := context.Background()
				open := func() *memory.Store {
					s, err := memory.OpenBackend(be, &memory.Options{Now: feb26})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { s.Close() })
					return s
				}
				s := open()
				for i := range n {
					if err := s.Append(ctx, storeMonth, shortEntry(i), ""); err != nil {
						b.Fatal(err)
					}
				}
				var moved, requests int64
				k := 0
				for b.Loop() {
					if mode == "fresh" {
						s.Close()
						s = open()
					}
					before, reqs := cc.bytes(), cc.requests.Load()
					if err := s.Append(ctx, storeMonth, shortEntry(n+k), ""); err != nil {
						b.Fatal(err)
					}
					moved, requests = moved+cc.bytes()-before, requests+cc.requests.Load()-reqs
					k++
				}
				b.ReportMetric(float64(moved)/float64(k), "bytes/change")
				b.ReportMetric(float64(requests)/float64(k), "requests/change")
			})
		}
	}
}

// TestHistorySummaryBehind: a log's summary that is behind its segments
// (a writer killed between starting a segment and writing the summary),
// malformed or missing sends a fresh Store to the listing: every change
// is still recorded after the one before, in the last segment.
func TestHistorySummaryBehind(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	s := openStore(t, b)
	const last = ".history/" + storeMonth + "/.last"
	n := 0
	appendOne := func() {
		t.Helper()
		if err := openStore(t, b).Append(ctx, storeMonth, shortEntry(n), ""); err != nil {
			t.Fatal(err)
		}
		n++
	}
	for range 300 { // several segments
		if err := s.Append(ctx, storeMonth, shortEntry(n), ""); err != nil {
			t.Fatal(err)
		}
		n++
	}
	summary, ok := rawGet(e, last)
	if !ok || strings.HasPrefix(summary, "1 ") {
		t.Fatalf("no summary of a log of several segments: %q", summary)
	}
	for _, bad := range []string{"1 1 0 - 1\n", "not a summary\n", ""} {
		if bad == "" {
			rawDelete(e, last)
		} else {
			rawPut(e, last, bad)
		}
		appendOne()
		requireHistory(t, openStore(t, b), "summary "+strings.TrimSpace(bad), true)
	}
	appendOne()
	requireHistory(t, openStore(t, b), "after", true)
}
