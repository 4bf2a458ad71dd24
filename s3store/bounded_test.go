package s3store_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mdmemory/memory/s3store"
)

// TestDeclaredLengthBounded: a server that declares a length it does not
// send (4.6e18 bytes) makes a read fail, or read its limit, without
// allocating from the declared length; a GET ignoring Range reads only the
// limit.
func TestDeclaredLengthBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "4611686018427387904")
		w.Header().Set("ETag", `"abc"`)
		w.WriteHeader(http.StatusOK) // Range ignored
		if r.Method != http.MethodHead {
			io.WriteString(w, strings.Repeat("# x\n", 1000))
		}
	}))
	t.Cleanup(srv.Close)
	b, err := s3store.New(newClient(srv.URL, nil), "bucket", "memory")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := b.Read(ctx, "facts/user.md", 100)
	if err != nil {
		t.Fatalf("limited read: %v", err)
	}
	if len(c.Data) != 100 || c.Size != 4611686018427387904 || c.Version != "" {
		t.Errorf("limited read: %d bytes of %d, version %q", len(c.Data), c.Size, c.Version)
	}
	if _, err := b.Read(ctx, "facts/user.md", -1); err == nil {
		t.Error("a whole read of a body shorter than declared succeeded")
	}
}

// TestListBounded: a prefix with more files than a Backend's List holds
// fails the List, rather than hold a listing without end.
func TestListBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><Prefix>memory/</Prefix><KeyCount>5</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>`)
		for i := range 5 {
			fmt.Fprintf(&b, `<Contents><Key>memory/episodes/2026-0%d.md</Key><ETag>"e%d"</ETag><Size>10</Size></Contents>`, i+1, i)
		}
		b.WriteString(`</ListBucketResult>`)
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	b, err := s3store.New(newClient(srv.URL, nil), "bucket", "memory")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	entries, err := b.List(ctx, "")
	if err != nil || len(entries) != 5 {
		t.Fatalf("List: %d entries, %v", len(entries), err)
	}
	b.SetMaxList(3)
	if _, err := b.List(ctx, ""); err == nil || !strings.Contains(err.Error(), "more than 3 files") {
		t.Errorf("List of 5 files with room for 3: %v", err)
	}
}
