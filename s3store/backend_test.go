package s3store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	memory "github.com/mdmemory/memory"
	"github.com/mdmemory/memory/s3store"
)

func TestNew(t *testing.T) {
	c := newClient("http://127.0.0.1:1", nil)
	for _, tc := range []struct {
		bucket, prefix string
		want           string // the prefix, or "error"
	}{
		{"b", "", ""},
		{"b", "alice", "alice/"},
		{"b", "alice/", "alice/"},
		{"b", "memory/alice", "memory/alice/"},
		{"b", "memory/alice/", "memory/alice/"},
		{"", "alice", "error"},
		{"b", "/alice", "error"},
		{"b", "/", "error"},
		{"b", "a//b", "error"},
		{"b", "a/../b", "error"},
		{"b", "..", "error"},
		{"b", "./a", "error"},
	} {
		b, err := s3store.New(c, tc.bucket, tc.prefix)
		switch {
		case tc.want == "error" && err == nil:
			t.Errorf("New(%q, %q): no error", tc.bucket, tc.prefix)
		case tc.want != "error" && err != nil:
			t.Errorf("New(%q, %q): %v", tc.bucket, tc.prefix, err)
		case err == nil && (b.Prefix() != tc.want || b.Bucket() != tc.bucket || b.Key("facts/user.md") != tc.want+"facts/user.md"):
			t.Errorf("New(%q, %q): prefix %q, key %q", tc.bucket, tc.prefix, b.Prefix(), b.Key("facts/user.md"))
		}
	}
	if _, err := s3store.New(nil, "b", ""); err == nil {
		t.Error("New with a nil client: no error")
	}
}

func TestInvalidNames(t *testing.T) {
	b, err := s3store.New(newClient("http://127.0.0.1:1", nil), "b", "p")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A lock of a valid file, which makes no request, writes and removes
	// any name: the name is checked by the Write and the Remove.
	h, err := b.Lock(ctx, "facts/user.md")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock()
	for _, name := range []string{"", "/facts/user.md", "facts//user.md", "facts/../x.md", "./x.md", "facts/user.md/", ".lease/facts"} {
		if _, err := b.Read(ctx, name, -1); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Read(%q): %v, want fs.ErrInvalid", name, err)
		}
		if _, err := h.Write(ctx, name, nil, ""); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Write(%q): %v, want fs.ErrInvalid", name, err)
		}
		if err := h.Remove(ctx, name, `"x"`); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Remove(%q): %v, want fs.ErrInvalid", name, err)
		}
	}
	for _, name := range []string{"", "/", "//", "../", ".lease/", "a/../"} {
		if _, err := b.Lock(ctx, name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Lock(%q): %v, want fs.ErrInvalid", name, err)
		}
	}
	for _, dir := range []string{"..", "/facts", "a//b", ".lease"} {
		if _, err := b.List(ctx, dir); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("List(%q): %v, want fs.ErrInvalid", dir, err)
		}
	}
}

// Errors from the SDK as a server's answers make them.
func apiErr(status int, code string) error {
	return &smithy.OperationError{ServiceID: "S3", OperationName: "PutObject", Err: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code},
	}}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		ifMatch bool
		want    s3store.Outcome
	}{
		{"412", apiErr(412, "PreconditionFailed"), true, s3store.Refused},
		{"412 create-only", apiErr(412, "PreconditionFailed"), false, s3store.Refused},
		{"409 conflict", apiErr(409, "ConditionalRequestConflict"), true, s3store.Refused},
		{"409 no code", apiErr(409, ""), false, s3store.Refused},
		{"409 other", apiErr(409, "OperationAborted"), true, s3store.Failed},
		{"404 on If-Match", apiErr(404, "NoSuchKey"), true, s3store.Refused},
		{"404 on create-only", apiErr(404, "NoSuchBucket"), false, s3store.Failed},
		{"500", apiErr(500, "InternalError"), true, s3store.Uncertain},
		{"503", apiErr(503, "SlowDown"), false, s3store.Uncertain},
		{"403", apiErr(403, "AccessDenied"), true, s3store.Failed},
		{"no response", &smithy.OperationError{Err: errors.New("connection reset")}, true, s3store.Uncertain},
		{"time-out", &smithy.OperationError{Err: &smithy.CanceledError{Err: context.DeadlineExceeded}}, true, s3store.Failed},
		{"canceled", &smithy.OperationError{Err: &smithy.CanceledError{Err: context.Canceled}}, true, s3store.Failed},
	} {
		if got := s3store.Classify(tc.err, tc.ifMatch); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSameETag(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`"abc"`, `"abc"`, true},
		{`"abc"`, `abc`, true},
		{`abc`, `"abc"`, true},
		{`"abc"`, `"abd"`, false},
		{``, ``, false},
		{`""`, ``, false},
	} {
		if got := s3store.SameETag(tc.a, tc.b); got != tc.want {
			t.Errorf("SameETag(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestWriteCreateOnly(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	v, err := put(ctx, b, "facts/user.md", []byte("# User\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, `"`) || !strings.HasSuffix(v, `"`) {
		t.Errorf("version %s is not the ETag as the server sends it, quoted", v)
	}
	// An existing file is not created again, by this Backend or another.
	for _, w := range []*s3store.Backend{b, e.backend(nil)} {
		_, err = put(ctx, w, "facts/user.md", []byte("# Other\n"), "")
		if !errors.Is(err, memory.ErrChanged) {
			t.Fatalf("create-only over an existing file: %v, want ErrChanged", err)
		}
		if !strings.Contains(err.Error(), e.key("facts/user.md")) {
			t.Errorf("error %q does not name the key", err)
		}
	}
	c, err := b.Read(ctx, "facts/user.md", -1)
	if err != nil || string(c.Data) != "# User\n" || c.Version != v || c.Size != 7 {
		t.Fatalf("Read: %+v, %v; want the first content at %s", c, err, v)
	}
	// The key is the prefix and the name, as on disk.
	h, err := e.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(testBucket), Key: aws.String(e.key("facts/user.md"))})
	if err != nil || aws.ToString(h.ETag) != v {
		t.Fatalf("HeadObject %s: %v, %v", e.key("facts/user.md"), h, err)
	}
	if ct := aws.ToString(h.ContentType); !strings.HasPrefix(ct, "text/markdown") {
		t.Errorf("content type %q", ct)
	}
}

func TestWriteReplace(t *testing.T) {
	needGateway(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		before func(e *env, b *s3store.Backend, v1 string) // between the read of v1 and the write
		match  func(v1, v2 string) string
		want   error
	}{
		{"right version", nil, func(v1, _ string) string { return v1 }, nil},
		{"stale version", func(e *env, b *s3store.Backend, v1 string) {
			if _, err := put(ctx, b, "f.md", []byte("two"), v1); err != nil {
				e.t.Fatal(err)
			}
		}, func(v1, _ string) string { return v1 }, memory.ErrChanged},
		{"deleted since", func(e *env, _ *s3store.Backend, _ string) {
			rawDelete(e, "f.md")
		}, func(v1, _ string) string { return v1 }, memory.ErrChanged},
		{"changed by a person", func(e *env, _ *s3store.Backend, _ string) {
			rawPut(e, "f.md", "edited by hand")
		}, func(v1, _ string) string { return v1 }, memory.ErrChanged},
		{"made-up version", nil, func(string, string) string { return `"0123456789abcdef0123456789abcdef"` }, memory.ErrChanged},
		{"bare version", nil, func(v1, _ string) string { return strings.Trim(v1, `"`) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b := e.backend(nil)
			v1, err := put(ctx, b, "f.md", []byte("one"), "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				tc.before(e, b, v1)
			}
			before, _ := rawGet(e, "f.md")
			v, err := put(ctx, b, "f.md", []byte("three"), tc.match(v1, ""))
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("Write: %v, want %v", err, tc.want)
			}
			got, exists := rawGet(e, "f.md")
			if tc.want != nil {
				if v != "" || got != before {
					t.Fatalf("a refused write returned %q and left %q (before: %q)", v, got, before)
				}
				return
			}
			c, err := b.Read(ctx, "f.md", -1)
			if err != nil || string(c.Data) != "three" || c.Version != v || v == v1 || !exists {
				t.Fatalf("after Write: %+v, %v (version %s, first %s)", c, err, v, v1)
			}
		})
	}
}

func TestRead(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	data := []byte("# Title\n> Summary: s\n\nbody\n")
	n := int64(len(data))
	v, err := put(ctx, b, "episodes/2026-11.md", data, "")
	if err != nil {
		t.Fatal(err)
	}
	ve, err := put(ctx, b, "episodes/empty.md", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		file  string
		limit int64
		data  string
		size  int64
		ver   string
	}{
		{"whole", "episodes/2026-11.md", -1, string(data), n, v},
		{"start", "episodes/2026-11.md", 7, "# Title", n, ""},
		{"one byte", "episodes/2026-11.md", 1, "#", n, ""},
		{"no byte", "episodes/2026-11.md", 0, "", n, ""},
		{"all but one", "episodes/2026-11.md", n - 1, string(data[:n-1]), n, ""},
		{"exactly all", "episodes/2026-11.md", n, string(data), n, v},
		{"more than all", "episodes/2026-11.md", n + 100, string(data), n, v},
		{"empty whole", "episodes/empty.md", -1, "", 0, ve},
		{"empty start", "episodes/empty.md", 5, "", 0, ve},
		{"empty no byte", "episodes/empty.md", 0, "", 0, ve},
	} {
		c, err := b.Read(ctx, tc.file, tc.limit)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(c.Data) != tc.data || c.Data == nil || c.Size != tc.size || c.Version != tc.ver {
			t.Errorf("%s: %q (nil %v), size %d, version %q; want %q, %d, %q", tc.name, c.Data, c.Data == nil, c.Size, c.Version, tc.data, tc.size, tc.ver)
		}
	}
	for _, limit := range []int64{-1, 0, 10} {
		_, err := b.Read(ctx, "episodes/2026-10.md", limit)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Read of a missing file, limit %d: %v, want fs.ErrNotExist", limit, err)
		} else if !strings.Contains(err.Error(), e.key("episodes/2026-10.md")) {
			t.Errorf("error %q does not name the key", err)
		}
	}
}

func TestRemove(t *testing.T) {
	needGateway(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		before func(e *env, b *s3store.Backend, v string) string // returns the version to give
		want   error
	}{
		{"right version", func(_ *env, _ *s3store.Backend, v string) string { return v }, nil},
		{"bare version", func(_ *env, _ *s3store.Backend, v string) string { return strings.Trim(v, `"`) }, nil},
		{"stale version", func(e *env, b *s3store.Backend, v string) string {
			if _, err := put(ctx, b, "f.md", []byte("two"), v); err != nil {
				e.t.Fatal(err)
			}
			return v
		}, memory.ErrChanged},
		{"edited by a person", func(e *env, _ *s3store.Backend, v string) string {
			rawPut(e, "f.md", "by hand")
			return v
		}, memory.ErrChanged},
		{"missing", func(e *env, _ *s3store.Backend, v string) string {
			rawDelete(e, "f.md")
			return v
		}, memory.ErrChanged},
		{"no version", func(*env, *s3store.Backend, string) string { return "" }, memory.ErrChanged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b := e.backend(nil)
			v, err := put(ctx, b, "f.md", []byte("one"), "")
			if err != nil {
				t.Fatal(err)
			}
			match := tc.before(e, b, v)
			before, existed := rawGet(e, "f.md")
			err = del(ctx, b, "f.md", match)
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("Remove: %v, want %v", err, tc.want)
			}
			after, exists := rawGet(e, "f.md")
			switch {
			case tc.want == nil && exists:
				t.Fatalf("removed, but the object is still there: %q", after)
			case tc.want != nil && (exists != existed || after != before):
				t.Fatalf("a refused remove changed the object: %q %v, was %q %v", after, exists, before, existed)
			}
		})
	}
}

func TestList(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx := context.Background()
	files := map[string]string{
		"facts/user.md":               "# User\n",
		"facts/memory.md":             "# Memory\n> Summary: x\n",
		"facts/a.md":                  "",
		"episodes/2026-11.md":         "# Nov\n",
		"episodes/2026-02.md":         "# Feb\n",
		"episodes/2026-02.001.md":     "# Feb, part 1\n",
		"episodes/archive/2025-01.md": "# Archived\n",
	}
	versions := map[string]string{}
	for name, data := range files {
		v, err := put(ctx, b, name, []byte(data), "")
		if err != nil {
			t.Fatal(err)
		}
		versions[name] = v
	}
	// What else a bucket can hold: a folder marker (the console's "create
	// folder"), a dot file, a key just outside the folder.
	rawPut(e, "facts/", "")
	rawPut(e, "facts/.DS_Store", "junk")
	rawPut(e, "factsheet.md", "not in facts")
	if _, err := b.Lock(ctx, "facts/"); err != nil { // a lease exists, and is not listed
		t.Fatal(err)
	}
	check := func(dir string, want []string) {
		t.Helper()
		entries, err := b.List(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, en := range entries {
			names = append(names, en.Name)
			if en.Size != int64(len(files[en.Name])) || en.Tag != versions[en.Name] {
				t.Errorf("List(%q): %+v, want size %d and tag %s", dir, en, len(files[en.Name]), versions[en.Name])
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("List(%q): %q, want %q", dir, names, want)
		}
	}
	check("facts", []string{"facts/a.md", "facts/memory.md", "facts/user.md"})
	check("facts/", []string{"facts/a.md", "facts/memory.md", "facts/user.md"})
	check("episodes", []string{"episodes/2026-02.001.md", "episodes/2026-02.md", "episodes/2026-11.md", "episodes/archive/2025-01.md"})
	check("episodes/archive", []string{"episodes/archive/2025-01.md"})
	check("nothing", nil)
	all, err := b.List(ctx, "") // everything, in one listing: what a search asks for
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range all {
		names = append(names, en.Name)
	}
	if want := []string{"episodes/2026-02.001.md", "episodes/2026-02.md", "episodes/2026-11.md", "episodes/archive/2025-01.md", "facts/a.md", "facts/memory.md", "facts/user.md", "factsheet.md"}; !slices.Equal(names, want) {
		t.Errorf("List(\"\"): %q, want %q", names, want)
	}

	// A person's `aws s3 cp` changes a file's tag, and the size.
	rawPut(e, "facts/user.md", "# User\n\nlikes tea\n")
	entries, err := e.backend(nil).List(ctx, "facts")
	if err != nil {
		t.Fatal(err)
	}
	c, err := b.Read(ctx, "facts/user.md", -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		changed := en.Tag != versions[en.Name]
		if changed != (en.Name == "facts/user.md") {
			t.Errorf("after an edit of facts/user.md: %+v (was %s)", en, versions[en.Name])
		}
		if en.Name == "facts/user.md" && (en.Tag != c.Version || en.Size != c.Size) {
			t.Errorf("tag %s, size %d; Read says %s, %d", en.Tag, en.Size, c.Version, c.Size)
		}
	}
}

// TestListPages lists a folder of more than one page of keys.
func TestListPages(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,001 objects")
	}
	e := newEnv(t)
	fc := newFaultClient()
	b := e.backend(newClient(e.gw.endpoint, fc))
	ctx := context.Background()
	const n = 1001
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := put(ctx, b, fmt.Sprintf("episodes/%04d.md", i), []byte(strconv.Itoa(i)), "")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	entries, err := b.List(ctx, "episodes")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("%d entries, want %d", len(entries), n)
	}
	if got := fc.lists.Load(); got != 2 {
		t.Errorf("%d ListObjectsV2 requests for %d keys, want 2", got, n)
	}
	for i, en := range entries {
		if en.Name != fmt.Sprintf("episodes/%04d.md", i) || en.Size != int64(len(strconv.Itoa(i))) {
			t.Fatalf("entry %d: %+v", i, en)
		}
	}
}

// TestContextEnded: every method returns the context's error.
func TestContextEnded(t *testing.T) {
	e := newEnv(t)
	b := e.backend(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Read(ctx, "f.md", -1); !errors.Is(err, context.Canceled) {
		t.Errorf("Read: %v", err)
	}
	// A lock taken before the context ended: its Write and Remove with
	// the ended context.
	h, err := b.Lock(context.Background(), "f.md")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Unlock()
	if _, err := h.Write(ctx, "f.md", nil, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Write: %v", err)
	}
	if err := h.Remove(ctx, "f.md", `"x"`); !errors.Is(err, context.Canceled) {
		t.Errorf("Remove: %v", err)
	}
	if _, err := b.List(ctx, "facts"); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v", err)
	}
	if _, err := b.Lock(ctx, "facts/"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock of a folder: %v", err)
	}
	if _, err := b.Lock(ctx, "facts/user.md"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock of a file: %v", err)
	}
	if _, exists := rawGet(e, "f.md"); exists {
		t.Error("a Write with an ended context wrote")
	}
}

// TestConcurrentIncrements: 8 goroutines, on 4 Backends, each add 25 to a
// counter with Read and Write loops; none is lost.
func TestConcurrentIncrements(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const workers, each = 8, 25
	backends := []*s3store.Backend{e.backend(nil), e.backend(nil), e.backend(newClient(e.gw.endpoint, nil)), e.backend(newClient(e.gw.endpoint, nil))}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	conflicts := make([]int, workers)
	for w := range workers {
		wg.Go(func() {
			b := backends[w%len(backends)]
			for range each {
				n, err := update(ctx, b, nil, "counter.md", func(old []byte) []byte {
					return []byte(strconv.Itoa(counterOf(old) + 1))
				})
				conflicts[w] += n
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, _ := rawGet(e, "counter.md")
	if got != strconv.Itoa(workers*each) {
		t.Fatalf("counter %s, want %d", got, workers*each)
	}
	t.Logf("%d increments, %d conflicts retried", workers*each, sum(conflicts))
}

func sum(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}

func counterOf(data []byte) int {
	n, _ := strconv.Atoi(string(data))
	return n
}

// update is the Store's loop: read the file (missing: empty) with its
// version, edit it, write it at that version through h, and on ErrChanged
// do it again. h is a lock held on name or its folder; when it is nil,
// update takes the lock of the file name for itself (on S3, no lock: the
// write's version is the compare-and-swap). It returns how many times it
// did it again.
func update(ctx context.Context, b *s3store.Backend, h memory.Held, name string, edit func([]byte) []byte) (conflicts int, err error) {
	if h == nil {
		if h, err = b.Lock(ctx, name); err != nil {
			return 0, err
		}
		defer h.Unlock()
	}
	for {
		c, err := b.Read(ctx, name, -1)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return conflicts, err
		}
		_, err = h.Write(ctx, name, edit(c.Data), c.Version)
		if !errors.Is(err, memory.ErrChanged) {
			return conflicts, err
		}
		conflicts++
	}
}

// rawPut writes an object as a person's `aws s3 cp` does: no condition.
func rawPut(e *env, name, data string) {
	e.t.Helper()
	_, err := e.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: aws.String(e.key(name)), Body: strings.NewReader(data)})
	if err != nil {
		e.t.Fatal(err)
	}
}

// rawDelete deletes an object as `aws s3 rm` does.
func rawDelete(e *env, name string) {
	e.t.Helper()
	_, err := e.client.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(testBucket), Key: aws.String(e.key(name))})
	if err != nil {
		e.t.Fatal(err)
	}
}

// rawGet reads an object, and tells whether it exists.
func rawGet(e *env, name string) (string, bool) {
	e.t.Helper()
	out, err := e.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: aws.String(e.key(name))})
	if err != nil {
		var nsk interface{ ErrorCode() string }
		if errors.As(err, &nsk) && nsk.ErrorCode() == "NoSuchKey" {
			return "", false
		}
		e.t.Fatal(err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data), true
}
