package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithymw "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	memory "github.com/mdmemory/memory"
)

// A Backend is a [memory.Backend] on the keys under one prefix of one S3
// bucket. It is safe for concurrent use, and any number of Backends, in any
// number of processes and machines, may share a prefix.
//
//   - Read is a GetObject (a ranged one when a limit is given, a HeadObject
//     for limit 0); Version is the ETag when Data is the whole object. A
//     missing object is an error wrapping [fs.ErrNotExist].
//   - A held lock's Write is a PutObject with If-None-Match: * (match "") or If-Match:
//     match, sent once, without the SDK's retries. A refusal (412
//     PreconditionFailed, 409 ConditionalRequestConflict, or 404 NoSuchKey
//     for an If-Match PUT) is [memory.ErrChanged]. After a 5xx or a
//     transport error the object is read again: if it holds exactly the
//     bytes sent, the write succeeded and its ETag is returned; if it is
//     still at match, the error is returned; otherwise it is ErrChanged.
//     Two cases are undecidable: an identical write by someone else in
//     that window counts as this one, and a write that was made and then
//     changed by someone else before the read counts as not made (the
//     Store then reads again and makes its change again). When ctx ends
//     during the PUT, the write may or may not have been made, and the
//     error wraps ctx's.
//   - A held lock's Remove is a HeadObject that compares the ETag (a missing object is
//     ErrChanged), then a DeleteObject with If-Match. A server that ignores
//     If-Match on DELETE (AWS S3 and versitygw honour it) leaves the
//     window between the two requests: a change made in it is deleted.
//   - List is one ListObjectsV2 per 1,000 keys; an entry's tag is its ETag.
//   - Lock of a file returns at once, a lock that only writes; Lock of a
//     folder takes a lease object (see [Backend.Lock]). Write and Remove
//     through a lock after its Unlock are refused.
type Backend struct {
	client *s3.Client
	bucket string
	prefix string

	// bare is set when the server compares If-Match with the bare form of
	// an ETag only (Ceph RGW): If-Match is then sent without the quotes.
	bare atomic.Bool

	ttl     time.Duration // of the leases this backend takes; LeaseTTL but in tests
	maxList int           // the files List returns at most: MaxListFiles but in tests

	mu    sync.Mutex
	turns map[string]chan struct{} // this Backend's queue for each folder's lease
}

var _ memory.Backend = (*Backend)(nil)

// New returns the Backend of the keys under prefix in bucket, with client
// (s3.NewFromConfig). An empty prefix is the bucket's root; otherwise the
// prefix is a path such as "memory/alice" or "memory/alice/", to which a
// missing final "/" is added. A prefix that starts with "/" or has an empty,
// "." or ".." segment is refused. New makes no request: a bucket that does
// not exist, or credentials that do not work, show on first use.
//
// The client's redirects are the caller's to bound: the SDK follows a 307
// or 308 to any address, and Go's HTTP client keeps the signed
// Authorization header on one to the same host under another scheme or
// port, so give it an http.Client whose CheckRedirect follows a redirect
// only within the endpoint's scheme, host and port, as the mdmemory
// command does.
func New(client *s3.Client, bucket, prefix string) (*Backend, error) {
	if client == nil {
		return nil, errors.New("s3store: nil client")
	}
	if bucket == "" {
		return nil, errors.New("s3store: empty bucket name")
	}
	if prefix != "" {
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		for seg := range strings.SplitSeq(strings.TrimSuffix(prefix, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				return nil, fmt.Errorf("s3store: invalid prefix %q: empty, \".\" or \"..\" segment, or a leading \"/\"", prefix)
			}
		}
	}
	return &Backend{client: client, bucket: bucket, prefix: prefix, ttl: LeaseTTL, maxList: MaxListFiles, turns: map[string]chan struct{}{}}, nil
}

// Bucket returns the bucket the Backend keeps its files in.
func (b *Backend) Bucket() string { return b.bucket }

// Prefix returns the key prefix of the Backend's files: "" or a path
// ending in "/".
func (b *Backend) Prefix() string { return b.prefix }

// Key returns the object key of the file name: the prefix followed by name.
func (b *Backend) Key(name string) string { return b.prefix + name }

// key checks name and returns its key. Names are relative slash-separated
// paths of non-empty segments, none "." or "..", and not under ".lease/".
func (b *Backend) key(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	return b.prefix + name, nil
}

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("s3store: empty name: %w", fs.ErrInvalid)
	}
	for i, seg := range strings.Split(name, "/") {
		if seg == "" || seg == "." || seg == ".." || i == 0 && seg == leaseFolder {
			return fmt.Errorf("s3store: invalid name %q: %w", name, fs.ErrInvalid)
		}
	}
	return nil
}

// Read returns the file at name: all of it when limit is negative, with
// its ETag as Version, or its first limit bytes with a ranged GET, with
// Version "" unless they are the whole file. Size is always the whole
// object's. A missing object is an error wrapping [fs.ErrNotExist].
func (b *Backend) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	key, err := b.key(name)
	if err != nil {
		return memory.Content{}, err
	}
	if err := ctx.Err(); err != nil {
		return memory.Content{}, opErr(ctx, "get", key, err)
	}
	if limit == 0 {
		h, err := b.head(ctx, key)
		if err != nil {
			return memory.Content{}, opErr(ctx, "head", key, err)
		}
		c := memory.Content{Data: []byte{}, Size: h.size}
		if h.size == 0 {
			c.Version = h.etag
		}
		return c, nil
	}
	o, err := b.get(ctx, key, limit)
	if err != nil {
		return memory.Content{}, opErr(ctx, "get", key, err)
	}
	c := memory.Content{Data: o.data, Size: o.size}
	if int64(len(o.data)) == o.size {
		c.Version = o.etag
	}
	return c, nil
}

// object is what a GET or a HEAD says of an object.
type object struct {
	data     []byte // nil for a HEAD
	size     int64  // of the whole object
	etag     string
	modified time.Time // LastModified, to the second
	now      time.Time // the server's time of the response (its Date), or ours
}

// get reads the object at key: all of it when limit is negative, else at
// most its first limit bytes (limit > 0).
func (b *Backend) get(ctx context.Context, key string, limit int64) (object, error) {
	in := &s3.GetObjectInput{Bucket: &b.bucket, Key: &key}
	if limit > 0 {
		in.Range = aws.String("bytes=0-" + strconv.FormatInt(limit-1, 10))
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil && limit > 0 && statusOf(err) == 416 {
		// The first byte of an empty object is not satisfiable: read it whole.
		in.Range = nil
		out, err = b.client.GetObject(ctx, in)
	}
	if err != nil {
		return object{}, notExist(err)
	}
	defer out.Body.Close()
	// The length the server declares sizes the buffer only as far as the
	// limit bounds it, or up to maxPrealloc: a server that declares more
	// than it sends (or than memory holds) allocates nothing for it.
	r := io.Reader(out.Body)
	if limit >= 0 {
		r = io.LimitReader(r, limit) // a server that ignores Range sends it all
	}
	want := int64(-1) // the bytes that should come, when the server says
	if n := aws.ToInt64(out.ContentLength); out.ContentLength != nil && n >= 0 {
		want = n
		if limit >= 0 {
			want = min(n, limit)
		}
	}
	size := int64(maxPrealloc)
	if want >= 0 {
		size = min(size, want)
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(r); err != nil {
		return object{}, err
	}
	data := buf.Bytes()
	if int64(len(data)) < want {
		return object{}, io.ErrUnexpectedEOF // fewer bytes than declared: the body was cut
	}
	o := object{data: data, etag: aws.ToString(out.ETag), modified: aws.ToTime(out.LastModified), now: serverTime(out.ResultMetadata)}
	o.size = aws.ToInt64(out.ContentLength)
	if cr := aws.ToString(out.ContentRange); cr != "" {
		// "bytes 0-99/1234": the whole size follows the slash.
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			if n, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
				o.size = n
			}
		}
	}
	if o.size < int64(len(data)) {
		o.size = int64(len(data))
	}
	return o, nil
}

// maxPrealloc bounds the buffer a GET allocates before it reads: past it,
// the buffer grows with the bytes that come.
const maxPrealloc = 1 << 20

// head asks for the object at key's size, ETag and time.
func (b *Backend) head(ctx context.Context, key string) (object, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return object{}, notExist(err)
	}
	return object{size: aws.ToInt64(out.ContentLength), etag: aws.ToString(out.ETag), modified: aws.ToTime(out.LastModified), now: serverTime(out.ResultMetadata)}, nil
}

// serverTime is the Date of a response, or our time without one.
func serverTime(md smithymw.Metadata) time.Time {
	if t, ok := awsmiddleware.GetServerTime(md); ok && !t.IsZero() {
		return t
	}
	return time.Now()
}

// write is a held lock's Write: a conditional PUT of data as the object at
// name.
func (b *Backend) write(ctx context.Context, name string, data []byte, match string) (string, error) {
	key, err := b.key(name)
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", opErr(ctx, "put", key, err)
	}
	v, err := b.put(ctx, key, data, match)
	if err != nil {
		return "", opErr(ctx, "put", key, err)
	}
	return v, nil
}

// noRetry switches off the SDK's retries for a conditional request: a
// retry of one that succeeded but whose response was lost would be refused,
// and a change that was made reported as not made.
func noRetry(o *s3.Options) { o.Retryer = aws.NopRetryer{} }

// put is Write on a checked key.
func (b *Backend) put(ctx context.Context, key string, data []byte, match string) (string, error) {
	in := &s3.PutObjectInput{
		Bucket:        &b.bucket,
		Key:           &key,
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if strings.HasSuffix(key, ".md") {
		in.ContentType = aws.String("text/markdown; charset=utf-8")
	}
	bare := b.bare.Load()
	if match == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(etagForm(match, bare))
	}
	out, err := b.client.PutObject(ctx, in, noRetry)
	if err != nil && match != "" && statusOf(err) == 412 {
		// Refused: a change, or a server that wants the other form.
		var retried bool
		if retried, bare = b.otherForm(ctx, key, match, bare); retried {
			in.IfMatch = aws.String(etagForm(match, bare))
			in.Body = bytes.NewReader(data)
			out, err = b.client.PutObject(ctx, in, noRetry)
		}
	}
	if err == nil {
		if match != "" {
			b.learnForm(bare)
		}
		etag := aws.ToString(out.ETag)
		if etag == "" {
			return "", errors.New("the server returned no ETag")
		}
		return etag, nil
	}
	switch classify(err, match != "") {
	case refused:
		return "", changedErr(err)
	case uncertain:
		return b.settlePut(ctx, key, data, match, err)
	}
	return "", err
}

// settlePut decides what a conditional PUT whose outcome is unknown did,
// by reading the object again.
func (b *Backend) settlePut(ctx context.Context, key string, data []byte, match string, cause error) (string, error) {
	if ctx.Err() != nil {
		return "", cause
	}
	// One byte more than was sent tells an object that is not these bytes.
	o, err := b.get(ctx, key, int64(len(data))+1)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if match == "" {
			return "", cause // not created
		}
		return "", changedErr(cause) // deleted by someone: our If-Match could not create it
	case err != nil:
		return "", fmt.Errorf("%w (reading it again to tell whether it was written: %v)", cause, err)
	case bytes.Equal(o.data, data):
		return o.etag, nil // it was
	case match != "" && sameETag(o.etag, match):
		return "", cause // it was not, and the object is as it was
	}
	return "", changedErr(cause) // someone else's content
}

// removeName is a held lock's Remove: a conditional DELETE of the object at
// name.
func (b *Backend) removeName(ctx context.Context, name, match string) error {
	key, err := b.key(name)
	if err != nil {
		return err
	}
	if match == "" {
		return fmt.Errorf("s3store: delete %s: %w: no version given", key, memory.ErrChanged)
	}
	if err := ctx.Err(); err != nil {
		return opErr(ctx, "delete", key, err)
	}
	if err := b.remove(ctx, key, match); err != nil {
		return opErr(ctx, "delete", key, err)
	}
	return nil
}

// remove is Remove on a checked key and a version.
func (b *Backend) remove(ctx context.Context, key, match string) error {
	h, err := b.head(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return changedErr(err)
	}
	if err != nil {
		return err
	}
	if !sameETag(h.etag, match) {
		return fmt.Errorf("%w: it is at %s, not %s", memory.ErrChanged, h.etag, match)
	}
	bare := b.bare.Load()
	in := &s3.DeleteObjectInput{Bucket: &b.bucket, Key: &key, IfMatch: aws.String(etagForm(match, bare))}
	_, err = b.client.DeleteObject(ctx, in, noRetry)
	if err != nil && statusOf(err) == 412 {
		var retried bool
		if retried, bare = b.otherForm(ctx, key, match, bare); retried {
			in.IfMatch = aws.String(etagForm(match, bare))
			_, err = b.client.DeleteObject(ctx, in, noRetry)
		}
	}
	if err == nil {
		b.learnForm(bare)
		return nil
	}
	switch classify(err, true) {
	case refused:
		return changedErr(err)
	case uncertain:
		if ctx.Err() != nil {
			return err
		}
		h, herr := b.head(ctx, key)
		switch {
		case errors.Is(herr, fs.ErrNotExist):
			return nil // deleted
		case herr != nil:
			return fmt.Errorf("%w (asking again whether it was deleted: %v)", err, herr)
		case sameETag(h.etag, match):
			return err // not deleted
		}
		return changedErr(err)
	}
	return err
}

// otherForm is called when the server refused If-Match in the form bare
// says. If the object's ETag is the one sent, the server wants the other
// form (Ceph RGW compares the bare form only): otherForm returns true and
// that form, to send once more.
func (b *Backend) otherForm(ctx context.Context, key, match string, bare bool) (bool, bool) {
	h, err := b.head(ctx, key)
	if err != nil || !sameETag(h.etag, match) {
		return false, bare
	}
	return true, !bare
}

// learnForm records that If-Match in the form bare was honoured: it is
// the form to send from now on.
func (b *Backend) learnForm(bare bool) {
	if b.bare.Load() != bare {
		b.bare.Store(bare)
	}
}

// etagForm is the ETag as sent in If-Match: as the server returned it
// (quoted), or bare.
func etagForm(etag string, bare bool) string {
	if bare {
		return strings.Trim(etag, `"`)
	}
	return etag
}

// sameETag tells whether two ETags are one, quoted or not.
func sameETag(a, b string) bool {
	a = strings.Trim(a, `"`)
	return a != "" && a == strings.Trim(b, `"`)
}

// MaxListFiles bounds the files one List returns: past it, List fails
// rather than hold a listing without end (a prefix shared with millions of
// other objects). A memory holds a few hundred files.
const MaxListFiles = 1 << 20

// List returns the objects under the folder dir, its sub-folders
// included, or under the whole prefix when dir is "", with one
// ListObjectsV2 per 1,000 keys, sorted by name, each tagged with its ETag.
// Folder markers (keys ending in "/") and names with a part starting with
// "." (the leases) are left out. A folder with no objects is empty, not an
// error; one with more than MaxListFiles files is an error.
func (b *Backend) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	dir = strings.TrimSuffix(dir, "/")
	lp := b.prefix
	if dir != "" {
		if err := checkName(dir); err != nil {
			return nil, err
		}
		lp += dir + "/"
	}
	if err := ctx.Err(); err != nil {
		return nil, opErr(ctx, "list", lp, err)
	}
	var entries []memory.Entry
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &lp})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, opErr(ctx, "list", lp, err)
		}
		for _, o := range page.Contents {
			base, ok := strings.CutPrefix(aws.ToString(o.Key), lp)
			if !ok || base == "" || strings.HasSuffix(base, "/") || strings.HasPrefix(base, ".") || strings.Contains(base, "/.") {
				continue // a folder marker, or a dot file such as a lease
			}
			name := base
			if dir != "" {
				name = dir + "/" + base
			}
			if len(entries) == b.maxList {
				return nil, fmt.Errorf("s3store: list %s: more than %d files", lp, b.maxList)
			}
			entries = append(entries, memory.Entry{Name: name, Size: aws.ToInt64(o.Size), Tag: aws.ToString(o.ETag)})
		}
	}
	slices.SortFunc(entries, func(a, b memory.Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// What a failed request means for a conditional change.
type outcome int

const (
	failed    outcome = iota // it was not made; the error says why
	refused                  // its condition did not hold: ErrChanged
	uncertain                // it may or may not have been made
)

// classify says what err from a conditional request means. A 404 means a
// change only for a request with If-Match (ifMatch): the object it was to
// match is gone.
func classify(err error, ifMatch bool) outcome {
	status, code := statusOf(err), codeOf(err)
	switch {
	case status == 412 || code == "PreconditionFailed":
		return refused
	case status == 409 && (code == "" || code == "ConditionalRequestConflict"), code == "ConditionalRequestConflict":
		return refused
	case ifMatch && (status == 404 || code == "NoSuchKey" || code == "NotFound"):
		return refused
	case status >= 500:
		return uncertain
	case status == 0 && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded):
		// No response: the request may have reached the server.
		return uncertain
	case status == 0:
		// The caller's context ended: the request may have reached the
		// server too, but the context's error is what the caller expects.
		return failed
	}
	return failed
}

// statusOf is the HTTP status of the response err came with, 0 for none.
func statusOf(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// codeOf is the S3 error code of err, "" for none.
func codeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// notExist turns a missing object's error into one that also wraps
// fs.ErrNotExist.
func notExist(err error) error {
	if statusOf(err) == 404 || codeOf(err) == "NoSuchKey" || codeOf(err) == "NotFound" {
		return fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return err
}

// changedErr wraps memory.ErrChanged around the server's refusal.
func changedErr(err error) error {
	return fmt.Errorf("%w: %w", memory.ErrChanged, err)
}

// opErr says which operation on which key failed. When ctx ended, the
// error wraps ctx's, whatever else it says.
func opErr(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("s3store: %s %s: %w (%w)", op, key, cerr, err)
	}
	return fmt.Errorf("s3store: %s %s: %w", op, key, err)
}
