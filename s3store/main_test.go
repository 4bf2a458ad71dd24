package s3store_test

import (
	"context"
	"errors"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdmemory/memory/s3store"
)

// The tests run against versitygw (an S3 gateway over a local folder),
// started once per test binary on loopback. Without it they skip.
const (
	versitygwEnv  = "MDMEMORY_VERSITYGW" // exactly this binary, if set
	installTarget = "make s3-tools"      // what installs it
	testBucket    = "mdmemory-test"
	accessKey     = "mdmemorytest"
	secretKey     = "mdmemorytestsecret"

	// A helper process (see runChildren) finds the server, the prefix and
	// what to do in these.
	childEnv    = "MDMEMORY_S3_CHILD" // the mode; unset outside helper processes
	endpointEnv = "MDMEMORY_S3_ENDPOINT"
	prefixEnv   = "MDMEMORY_S3_PREFIX"
	idEnv       = "MDMEMORY_S3_CHILD_ID"
)

// gw is the server of this test binary; gwErr says why there is none.
var (
	gw    *gateway
	gwErr error
	// gwMissing is set when versitygw is not installed: the tests skip.
	gwMissing bool
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		// A helper process: the parent's server is at endpointEnv.
		gw = &gateway{endpoint: os.Getenv(endpointEnv)}
		os.Exit(m.Run())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	bin, err := findVersitygw()
	if err != nil {
		gwMissing, gwErr = true, err
		return m.Run()
	}
	gw, gwErr = startGateway(bin)
	if gw != nil {
		defer gw.stop()
	}
	return m.Run()
}

// findVersitygw looks for the versitygw binary: exactly $MDMEMORY_VERSITYGW
// when set, else on PATH, else where go install puts it.
func findVersitygw() (string, error) {
	if p, ok := os.LookupEnv(versitygwEnv); ok {
		if fi, err := os.Stat(p); err != nil || fi.IsDir() {
			return "", fmt.Errorf("versitygw not found at $%s=%s", versitygwEnv, p)
		}
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	var dirs []string
	if gobin := os.Getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	if out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) == 2 && lines[0] != "" {
			dirs = append(dirs, lines[0])
		}
		for _, p := range filepath.SplitList(lines[len(lines)-1]) {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	for _, p := range filepath.SplitList(build.Default.GOPATH) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("versitygw not found on PATH nor in $(go env GOPATH)/bin")
}

// A gateway is a versitygw process serving a temporary folder.
type gateway struct {
	endpoint string // http://127.0.0.1:port
	root     string // the folder it serves: root/bucket/key is an object
	cmd      *exec.Cmd
	exited   chan struct{}
	log      string
}

// startGateway starts bin on a free loopback port, trying a few ports in
// case another process takes the one picked first, and creates testBucket.
func startGateway(bin string) (*gateway, error) {
	root, err := os.MkdirTemp("", "mdmemory-s3store-*")
	if err != nil {
		return nil, err
	}
	var errs []error
	for range 3 {
		g, err := tryGateway(bin, root)
		if err == nil {
			return g, nil
		}
		errs = append(errs, err)
	}
	os.RemoveAll(root)
	return nil, errors.Join(errs...)
}

func tryGateway(bin, root string) (*gateway, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	data := filepath.Join(root, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp(root, "versitygw-*.log")
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	g := &gateway{endpoint: "http://" + addr, root: data, exited: make(chan struct{}), log: logf.Name()}
	g.cmd = exec.Command(bin, "--port", addr, "--access", accessKey, "--secret", secretKey, "--quiet", "posix", data)
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	ownGroup(g.cmd)
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	c := newClient(g.endpoint, nil)
	// The one wait on time in these tests: for the process to listen.
	wait := 10 * time.Millisecond
	for range 50 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = c.ListBuckets(ctx, &s3.ListBucketsInput{}, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
		cancel()
		if err == nil {
			break
		}
		select {
		case <-g.exited:
			out, _ := os.ReadFile(g.log)
			return nil, fmt.Errorf("versitygw on %s exited: %s", addr, out)
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
	if err != nil {
		g.stop()
		return nil, fmt.Errorf("versitygw on %s not ready: %w", addr, err)
	}
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(testBucket)}); err != nil {
		g.stop()
		return nil, fmt.Errorf("create bucket: %w", err)
	}
	return g, nil
}

// stop kills the gateway's process group and removes its folder.
func (g *gateway) stop() {
	if g.cmd == nil {
		return
	}
	killGroup(g.cmd)
	<-g.exited
	os.RemoveAll(filepath.Dir(g.root))
}

// needGateway skips t when versitygw is not installed, and fails it when
// it is but would not start.
func needGateway(t testing.TB) *gateway {
	t.Helper()
	if gwMissing {
		t.Skipf("needs versitygw v1.8.0 (%v): %s installs it", gwErr, installTarget)
	}
	if gw == nil {
		t.Fatalf("versitygw: %v", gwErr)
	}
	return gw
}

// newClient is an S3 client of the gateway at endpoint, through hc (the
// SDK's default when nil).
func newClient(endpoint string, hc s3.HTTPClient) *s3.Client {
	cfg := aws.Config{
		Region: "us-east-1",
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, Source: "test"}, nil
		}),
	}
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
}

// prefixes numbers the tests' prefixes, so that -count=2 gets new ones.
var prefixes atomic.Int64

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// newPrefix is a key prefix no other test uses: "TestName-7/".
func newPrefix(t testing.TB) string {
	return fmt.Sprintf("%s-%d/", unsafeChars.ReplaceAllString(t.Name(), "_"), prefixes.Add(1))
}

// env is a test's view of the gateway: a prefix of its own, and the client
// of "a person" (aws s3 cp, rm), which no Backend of the env uses.
type env struct {
	t      testing.TB
	gw     *gateway
	client *s3.Client
	prefix string
}

func newEnv(t testing.TB) *env {
	g := needGateway(t)
	return &env{t: t, gw: g, client: newClient(g.endpoint, nil), prefix: newPrefix(t)}
}

// backend is a new Backend on the env's prefix, with client c (a new one
// when nil).
func (e *env) backend(c *s3.Client) *s3store.Backend {
	e.t.Helper()
	if c == nil {
		c = newClient(e.gw.endpoint, nil)
	}
	b, err := s3store.New(c, testBucket, e.prefix)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// key is the key of a file name under the env's prefix.
func (e *env) key(name string) string { return e.prefix + name }

// path is where the gateway keeps the object of the file name.
func (e *env) path(name string) string {
	return filepath.Join(e.gw.root, testBucket, filepath.FromSlash(e.key(name)))
}

// faultClient passes requests to the SDK's HTTP client, but for the next
// request that fault picks, which it breaks as fault says.
type faultClient struct {
	next  s3.HTTPClient
	fault atomic.Pointer[fault]
	sent  atomic.Int64 // requests that reached the server
	puts  atomic.Int64 // PUT requests made, whether they reached it or not
	lists atomic.Int64 // ListObjectsV2 requests made
}

// A fault breaks the first request match accepts.
type fault struct {
	match func(*http.Request) bool
	// before drops the request (it never reaches the server); otherwise
	// it is sent and its response lost.
	before bool
	// status, when set, replaces the response with one of that status.
	status int
	// pass sends the request and returns its response: no fault, but
	// prior and then run around it.
	pass bool
	// prior runs before the request is sent: another writer acting
	// between this request and the one before.
	prior func()
	// then runs after the request reached the server (or would have),
	// before the error returns: another writer acting in the window.
	then func()
	hits atomic.Int64
}

func newFaultClient() *faultClient {
	return &faultClient{next: awshttp.NewBuildableClient()}
}

func (c *faultClient) Do(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPut {
		c.puts.Add(1)
	}
	if req.Method == http.MethodGet && req.URL.Query().Get("list-type") == "2" {
		c.lists.Add(1)
	}
	f := c.fault.Load()
	if f == nil || !f.match(req) {
		c.sent.Add(1)
		return c.next.Do(req)
	}
	c.fault.CompareAndSwap(f, nil)
	f.hits.Add(1)
	if f.prior != nil {
		f.prior()
	}
	if f.pass {
		c.sent.Add(1)
		resp, err := c.next.Do(req)
		if f.then != nil {
			f.then()
		}
		return resp, err
	}
	if f.before {
		if req.Body != nil {
			req.Body.Close()
		}
	} else {
		c.sent.Add(1)
		resp, err := c.next.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	if f.then != nil {
		f.then()
	}
	if f.status != 0 {
		body := "<Error><Code>InternalError</Code><Message>injected</Message></Error>"
		return &http.Response{
			Status:        http.StatusText(f.status),
			StatusCode:    f.status,
			Proto:         "HTTP/1.1",
			ProtoMajor:    1,
			ProtoMinor:    1,
			Header:        http.Header{"Content-Type": {"application/xml"}},
			Body:          io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)),
			Request:       req,
		}, nil
	}
	return nil, errors.New("injected: connection reset by peer")
}

// isPut matches a PUT of an object whose key ends in suffix.
func isPut(suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, suffix) }
}

// isDelete matches a DELETE of an object whose key ends in suffix.
func isDelete(suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, suffix)
	}
}
