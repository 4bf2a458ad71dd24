package s3store_test

import (
	"context"
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
