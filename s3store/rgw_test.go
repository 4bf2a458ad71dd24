package s3store_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	memory "github.com/mdmemory/memory"
)

// fussyProxy stands before versitygw on loopback and refuses, as a server
// that compares If-Match with one form of ETags only would, the other
// form: the quoted one when bareOnly (Ceph RGW), the bare one otherwise.
type fussyProxy struct {
	*httptest.Server
	bareOnly atomic.Bool
	refused  atomic.Int64
}

func newFussyProxy(t *testing.T, e *env) *fussyProxy {
	target, err := url.Parse(e.gw.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &fussyProxy{}
	p.bareOnly.Store(true)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := r.Header.Get("If-Match"); m != "" && strings.HasPrefix(m, `"`) == p.bareOnly.Load() {
			p.refused.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusPreconditionFailed)
			if r.Method != http.MethodHead {
				w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`))
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// TestBareETags: against a server that compares bare ETags only, the
// first refusal of an ETag the object has makes the backend send the bare
// form, once more and from then on; a server that changes its mind is
// followed.
func TestBareETags(t *testing.T) {
	e := newEnv(t)
	p := newFussyProxy(t, e)
	b := e.backend(newClient(p.URL, nil))
	ctx := context.Background()

	v1, err := put(ctx, b, "f.md", []byte("one"), "")
	if err != nil || b.Bare() {
		t.Fatalf("create: %v, bare %v", err, b.Bare())
	}
	v2, err := put(ctx, b, "f.md", []byte("two"), v1)
	if err != nil {
		t.Fatalf("replace: %v", err)
	}
	if !b.Bare() || p.refused.Load() != 1 {
		t.Fatalf("bare %v after %d refusals, want true after 1", b.Bare(), p.refused.Load())
	}
	if !strings.HasPrefix(v2, `"`) {
		t.Errorf("version %s: not as the server returned it", v2)
	}
	v3, err := put(ctx, b, "f.md", []byte("three"), v2)
	if err != nil || p.refused.Load() != 1 {
		t.Fatalf("second replace: %v, %d refusals", err, p.refused.Load())
	}
	// A stale version is still refused: by versitygw, in the bare form.
	if _, err := put(ctx, b, "f.md", []byte("four"), v1); !errors.Is(err, memory.ErrChanged) {
		t.Fatalf("stale replace: %v, want ErrChanged", err)
	}
	if got, _ := rawGet(e, "f.md"); got != "three" {
		t.Fatalf("object %q", got)
	}
	if err := del(ctx, b, "f.md", v3); err != nil || p.refused.Load() != 1 {
		t.Fatalf("Remove: %v, %d refusals", err, p.refused.Load())
	}

	// A Backend whose first If-Match is a DELETE learns it there.
	b2 := e.backend(newClient(p.URL, nil))
	v, err := put(ctx, b2, "g.md", []byte("g"), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := del(ctx, b2, "g.md", v); err != nil || !b2.Bare() {
		t.Fatalf("Remove: %v, bare %v", err, b2.Bare())
	}
	if _, exists := rawGet(e, "g.md"); exists {
		t.Fatal("not removed")
	}

	// The server now wants quotes: the backend goes back to them.
	p.bareOnly.Store(false)
	v, err = put(ctx, b, "h.md", []byte("h"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put(ctx, b, "h.md", []byte("h2"), v); err != nil || b.Bare() {
		t.Fatalf("replace: %v, bare %v", err, b.Bare())
	}

	// The folder lease, taken over and released, works through it too.
	lock(t, b, "facts/").Unlock()
}

// TestQuotedETags: versitygw, like AWS S3, takes the ETag as it returned
// it; a real change is not mistaken for a form the server wants.
func TestQuotedETags(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	v1, err := put(ctx, b, "f.md", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	v2, err := put(ctx, b, "f.md", []byte("two"), v1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put(ctx, b, "f.md", []byte("three"), v1); !errors.Is(err, memory.ErrChanged) {
		t.Fatalf("stale: %v", err)
	}
	if err := del(ctx, b, "f.md", v1); !errors.Is(err, memory.ErrChanged) {
		t.Fatalf("stale remove: %v", err)
	}
	if b.Bare() {
		t.Fatal("a real change made the backend send bare ETags")
	}
	if err := del(ctx, b, "f.md", v2); err != nil {
		t.Fatal(err)
	}
}

// TestServerConditionalDelete records what versitygw does with If-Match
// on DELETE, which Remove and unlock rely on where they can: it refuses
// a stale ETag with 412, takes the ETag quoted or bare, and answers 204 for
// a key that does not exist (hence Remove's HEAD, to say ErrChanged).
func TestServerConditionalDelete(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	del := func(name, match string) error {
		_, err := e.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(testBucket), Key: aws.String(e.key(name)), IfMatch: aws.String(match)})
		return err
	}
	put := func(name, data string) string {
		out, err := e.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: aws.String(e.key(name)), Body: strings.NewReader(data)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.ETag)
	}
	v1 := put("f.md", "one")
	put("f.md", "two")
	var re interface{ HTTPStatusCode() int }
	if err := del("f.md", v1); !errors.As(err, &re) || re.HTTPStatusCode() != 412 {
		t.Fatalf("DELETE with a stale ETag: %v, want 412", err)
	}
	if _, exists := rawGet(e, "f.md"); !exists {
		t.Fatal("a DELETE with a stale ETag deleted")
	}
	for _, form := range []func(string) string{
		func(v string) string { return v },
		func(v string) string { return strings.Trim(v, `"`) },
	} {
		v := put("f.md", "three")
		if err := del("f.md", form(v)); err != nil {
			t.Fatalf("DELETE with If-Match %s: %v", form(v), err)
		}
		if _, exists := rawGet(e, "f.md"); exists {
			t.Fatalf("DELETE with If-Match %s did not delete", form(v))
		}
	}
	if err := del("f.md", v1); err != nil {
		t.Fatalf("DELETE with If-Match of a missing key: %v, want 204", err)
	}
}
