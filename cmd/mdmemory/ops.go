package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
)

// What mcp --http offers an operator: /healthz and /readyz, Prometheus
// metrics on an address of their own, an access log, and a graceful stop.

// probeTimeout bounds each probe of the memory's backend by /readyz.
const probeTimeout = 2 * time.Second

// metrics are the Prometheus metrics of mcp --http. No label holds a
// token, a user, a path or a memory's text: methods and tools are those
// the server knows, or "other" (mcpserver.Observer), and HTTP statuses
// are codes.
type metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec   // method, outcome
	requestSeconds  *prometheus.HistogramVec // method
	toolCalls       *prometheus.CounterVec   // tool, outcome
	toolSeconds     *prometheus.HistogramVec // tool
	httpRequests    *prometheus.CounterVec   // method, code
	openStores      prometheus.Gauge
	liveSessions    prometheus.Gauge
	lockWaitSeconds prometheus.Histogram
	backendErrors   *prometheus.CounterVec // op
}

func newMetrics() *metrics {
	// Request latencies: from a millisecond (a read of a cached file) to
	// the 10 s a change may wait for a lock.
	buckets := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdmemory_mcp_requests_total",
			Help: "JSON-RPC requests and notifications handled, by method (\"other\" for one the server does not know) and outcome (ok, tool_error, error).",
		}, []string{"method", "outcome"}),
		requestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mdmemory_mcp_request_duration_seconds",
			Help:    "The time taken to handle a JSON-RPC request, by method.",
			Buckets: buckets,
		}, []string{"method"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdmemory_mcp_tool_calls_total",
			Help: "Tool calls, by tool (\"other\" for one the server does not have) and outcome (ok; tool_error, the model's mistake; error, a failure of the host).",
		}, []string{"tool", "outcome"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mdmemory_mcp_tool_call_duration_seconds",
			Help:    "The time taken by a tool call, by tool.",
			Buckets: buckets,
		}, []string{"tool"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdmemory_http_requests_total",
			Help: "HTTP requests answered, by method (GET, POST, DELETE, other) and status code; refusals (401, 403, 404) included.",
		}, []string{"method", "code"}),
		openStores: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mdmemory_open_stores",
			Help: "The users' stores open: a user's store opens on its first request and is released a minute after its last.",
		}),
		liveSessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mdmemory_live_sessions",
			Help: "The MCP sessions (2025-11-25 and older clients) open.",
		}),
		lockWaitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "mdmemory_lock_wait_seconds",
			Help:    "The time a change waited for the lock of the files it changes, on S3 memories (the facts' lease); its count is the locks taken.",
			Buckets: buckets,
		}),
		backendErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mdmemory_backend_errors_total",
			Help: "Failures of a memory's backend, by operation: a user's store that could not be opened (open, any memory); and on S3 memories read, list, lock, write, remove: neither a missing file, nor a change made meanwhile, nor a request cancelled.",
		}, []string{"op"}),
	}
	for _, op := range []string{"open", "read", "list", "lock", "write", "remove"} {
		m.backendErrors.WithLabelValues(op) // shown at 0 before the first
	}
	m.reg.MustRegister(m.requests, m.requestSeconds, m.toolCalls, m.toolSeconds, m.httpRequests,
		m.openStores, m.liveSessions, m.lockWaitSeconds, m.backendErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the metrics in Prometheus's text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// observer is the mcpserver.Observer of mcp --http: it counts into m, when
// not nil, and logs each request to log, when not nil.
type observer struct {
	m   *metrics
	log *slog.Logger
	key []byte // the key of userID: users.logKey
}

func (o observer) Request(r mcpserver.RequestInfo) {
	if o.m != nil {
		o.m.requests.WithLabelValues(r.Method, r.Outcome).Inc()
		o.m.requestSeconds.WithLabelValues(r.Method).Observe(r.Duration.Seconds())
		if r.Tool != "" {
			o.m.toolCalls.WithLabelValues(r.Tool, r.Outcome).Inc()
			o.m.toolSeconds.WithLabelValues(r.Tool).Observe(r.Duration.Seconds())
		}
	}
	if o.log != nil && !strings.HasPrefix(r.Method, "notifications/") {
		attrs := []slog.Attr{slog.String("method", r.Method)}
		if r.Tool != "" {
			attrs = append(attrs, slog.String("tool", r.Tool))
		}
		attrs = append(attrs, slog.String("outcome", r.Outcome), slog.Duration("duration", r.Duration))
		if r.User != "" {
			attrs = append(attrs, slog.String("user", userID(o.key, r.User)))
		}
		o.log.LogAttrs(context.Background(), slog.LevelInfo, "mcp request", attrs...)
	}
}

func (o observer) HTTP(r mcpserver.HTTPInfo) {
	if o.m != nil {
		o.m.httpRequests.WithLabelValues(r.Method, strconv.Itoa(r.Status)).Inc()
	}
	if o.log != nil {
		attrs := []slog.Attr{slog.String("method", r.Method), slog.Int("status", r.Status), slog.Duration("duration", r.Duration), slog.Bool("session", r.Session)}
		if r.RemoteAddr != "" {
			// The connection's address: a proxy's, behind one.
			attrs = append(attrs, slog.String("client", r.RemoteAddr))
		}
		if r.User != "" {
			attrs = append(attrs, slog.String("user", userID(o.key, r.User)))
		}
		o.log.LogAttrs(context.Background(), slog.LevelInfo, "http request", attrs...)
	}
}

func (o observer) SessionOpened() {
	o.gauge(func(m *metrics) prometheus.Gauge { return m.liveSessions }, 1)
}
func (o observer) SessionClosed() {
	o.gauge(func(m *metrics) prometheus.Gauge { return m.liveSessions }, -1)
}
func (o observer) StoreOpened() {
	o.gauge(func(m *metrics) prometheus.Gauge { return m.openStores }, 1)
}
func (o observer) StoreClosed() {
	o.gauge(func(m *metrics) prometheus.Gauge { return m.openStores }, -1)
}

// OpenFailed counts a user's store that could not be opened as a backend
// error ("open"), and logs it with the user's id, the error's mentions of
// the user's memory (its name, which may be a path) replaced by MEMORY.
func (o observer) OpenFailed(user string, err error) {
	if o.m != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		o.m.backendErrors.WithLabelValues("open").Inc()
	}
	if o.log != nil {
		o.log.LogAttrs(context.Background(), slog.LevelError, "a user's memory could not be opened",
			slog.String("user", userID(o.key, user)), slog.String("err", withoutMemory(err.Error(), user)))
	}
}

// withoutMemory returns msg with every mention of the memory mem replaced
// by MEMORY: the name as written, and for s3://BUCKET/PREFIX also
// BUCKET/PREFIX and PREFIX, the forms an S3 error names it by.
func withoutMemory(msg, mem string) string {
	names := []string{mem}
	if rest, ok := strings.CutPrefix(mem, "s3://"); ok {
		names = append(names, rest)
		if _, prefix, ok := strings.Cut(rest, "/"); ok && prefix != "" {
			names = append(names, prefix)
		}
	}
	for _, n := range names {
		if n != "" {
			msg = strings.ReplaceAll(msg, n, "MEMORY")
		}
	}
	return msg
}

func (o observer) gauge(g func(*metrics) prometheus.Gauge, d float64) {
	if o.m != nil {
		g(o.m).Add(d)
	}
}

// userID is what the access log says of a user: the first 12 hex digits
// of the HMAC-SHA-256, keyed with key (users.logKey), of its memory's
// name. It is the same in every line and every process of a fleet that
// reads one users file, and names neither the memory nor the token: a
// plain hash of the name could be undone by hashing guessed names
// (s3://memory/users/alice), which takes the key, here the users file.
func userID(key []byte, name string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(name))
	return hex.EncodeToString(mac.Sum(nil)[:6])
}

// newAccessLog returns the access log for --log-format: "text" or "json"
// lines on w.
func newAccessLog(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	case "none":
		return nil, nil
	}
	return nil, usageErr{fmt.Sprintf("--log-format %q: give text, json or none", format)}
}

// observedBackend is an S3 memory's backend as the metrics see it: the
// time each lock took, and each failure.
type observedBackend struct {
	memory.Backend
	m *metrics
}

func (b observedBackend) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	c, err := b.Backend.Read(ctx, name, limit)
	b.failed("read", err)
	return c, err
}

func (b observedBackend) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	e, err := b.Backend.List(ctx, dir)
	b.failed("list", err)
	return e, err
}

func (b observedBackend) Lock(ctx context.Context, name string) (memory.Held, error) {
	start := time.Now()
	h, err := b.Backend.Lock(ctx, name)
	if err != nil {
		b.failed("lock", err)
		return nil, err
	}
	b.m.lockWaitSeconds.Observe(time.Since(start).Seconds())
	return observedHeld{Held: h, b: b}, nil
}

// failed counts err, when it is a failure of the backend.
func (b observedBackend) failed(op string, err error) {
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, memory.ErrChanged) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	b.m.backendErrors.WithLabelValues(op).Inc()
}

// observedHeld is a lock of an observedBackend.
type observedHeld struct {
	memory.Held
	b observedBackend
}

func (h observedHeld) Write(ctx context.Context, name string, data []byte, match string) (string, error) {
	v, err := h.Held.Write(ctx, name, data, match)
	h.b.failed("write", err)
	return v, err
}

func (h observedHeld) Remove(ctx context.Context, name, match string) error {
	err := h.Held.Remove(ctx, name, match)
	h.b.failed("remove", err)
	return err
}

// rootOf is where a probe looks for the memory or world at where: the
// bucket of s3://BUCKET/PREFIX ("s3://BUCKET"), or the directory, or with
// parent the folder that holds it (which a directory created on first use
// needs); "" for no memory.
func rootOf(where string, parent bool) string {
	if where == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(where, "s3://"); ok {
		bucket, _, _ := strings.Cut(rest, "/")
		return "s3://" + bucket
	}
	if parent {
		return filepath.Dir(where)
	}
	return where
}

// maxStuckStats bounds the stats of a directory probe that are still
// under way after their timeout (a hung network file system): past it, a
// probe fails at once rather than start another.
const maxStuckStats = 4

// stats counts the stats of directory probes under way.
var stats = make(chan struct{}, maxStuckStats)

// probe says whether the backend at root, as rootOf gives it, answers
// within probeTimeout: an S3 bucket, to a HEAD; a directory, to a stat.
// os.Stat takes no context: it runs on a goroutine of its own, which the
// probe stops waiting for at the timeout (at most maxStuckStats of them at
// once).
func probe(ctx context.Context, root string, o *opener) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if bucket, ok := strings.CutPrefix(root, "s3://"); ok {
		c, err := o.s3Client(ctx)
		if err != nil {
			return err
		}
		_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
		return err
	}
	return statDir(ctx, root, os.Stat)
}

// statDir says whether stat finds a directory at root before ctx ends.
func statDir(ctx context.Context, root string, stat func(string) (fs.FileInfo, error)) error {
	select {
	case stats <- struct{}{}:
	default:
		return fmt.Errorf("%d stats of %s and the like still under way", maxStuckStats, root)
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-stats }()
		fi, err := stat(root)
		if err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", root)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("stat %s: %w", root, ctx.Err())
	}
}

// readyInterval is the least time between two probes of /readyz: a call
// sooner after the last probe ended gets its result. /readyz needs no
// token, and a client calling it in a loop costs the backend one probe a
// second at most.
const readyInterval = time.Second

// readiness probes the roots, one probe at a time, at most one a
// readyInterval: a call of /readyz, which anyone may make, that comes
// while a probe is under way takes its result, and one that comes within
// readyInterval of the last probe's end takes that one's.
type readiness struct {
	roots []string
	probe func(ctx context.Context, root string) error
	log   *slog.Logger
	now   func() time.Time // time.Now, or a test's

	mu      sync.Mutex
	running chan struct{} // closed when the probe under way is done; nil for none
	ok      bool          // the last probe's result
	at      time.Time     // when the last probe ended; zero before the first

	waiting func() // tests: called when a call waits for another's probe
}

// ready reports whether every root answers a probe.
func (rd *readiness) ready(ctx context.Context) bool {
	now := time.Now
	if rd.now != nil {
		now = rd.now
	}
	rd.mu.Lock()
	if !rd.at.IsZero() && now().Sub(rd.at) < readyInterval {
		defer rd.mu.Unlock()
		return rd.ok
	}
	if ch := rd.running; ch != nil {
		rd.mu.Unlock()
		if rd.waiting != nil {
			rd.waiting()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
		rd.mu.Lock()
		defer rd.mu.Unlock()
		return rd.ok
	}
	ch := make(chan struct{})
	rd.running = ch
	rd.mu.Unlock()
	ok := true
	for _, root := range rd.roots {
		// Not the caller's context: others may wait for this probe.
		if err := rd.probe(context.WithoutCancel(ctx), root); err != nil {
			if rd.log != nil {
				rd.log.Warn("readiness probe failed", slog.String("err", err.Error()))
			}
			ok = false
			break
		}
	}
	rd.mu.Lock()
	rd.ok, rd.running, rd.at = ok, nil, now()
	rd.mu.Unlock()
	close(ch)
	return ok
}

// probes answers GET (and HEAD) /healthz with 200 while the process runs,
// and /readyz with 200 while every root answers a probe (rd), 503
// otherwise; neither needs a token nor says more. mcp --http serves them
// on its own listener (operated) and on the --metrics one, which has
// connections of its own: a flood of slow clients that takes every one of
// --max-conns does not fail a liveness probe sent there.
//
// On the MCP listener they are served before the handler's Host check:
// a load balancer or an orchestrator probes by whatever address it has,
// and what a page that rebound a name to the server could learn is "ok".
func probes(rd *readiness) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead || (r.URL.Path != "/healthz" && r.URL.Path != "/readyz") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == "/readyz" && !rd.ready(r.Context()) {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready: the memory's backend does not answer\n")
			return
		}
		io.WriteString(w, "ok\n")
	})
}

// newReadiness returns the readiness of the roots, probed through o; a
// failed probe goes to log, when not nil.
func newReadiness(roots []string, o *opener, log *slog.Logger) *readiness {
	return &readiness{roots: roots, log: log, probe: func(ctx context.Context, root string) error { return probe(ctx, root, o) }}
}

// operated serves h with the probes p at /healthz and /readyz (GET and
// HEAD); every other request is h's.
func operated(h, p http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead || (r.URL.Path != "/healthz" && r.URL.Path != "/readyz") {
			h.ServeHTTP(w, r)
			return
		}
		p.ServeHTTP(w, r)
	})
}

// Bounds of a graceful stop, within --shutdown-timeout.
const (
	// streamGrace is the longest a session's event stream (a GET) stays
	// open once the server stops: it ends sooner, once no other request
	// is under way.
	streamGrace = 5 * time.Second

	// bodyGrace is the time a request whose body is still coming when the
	// server stops has left to send the rest (30 seconds otherwise).
	bodyGrace = time.Second
)

// streams holds the requests a server serves, so that a graceful stop
// waits for none longer than it must. A session's event stream (a GET),
// which lasts as long as its session, ends once the server stops (stop)
// and no other request is under way, or streamGrace after the stop,
// whichever comes first; the client opens it again, on another process.
// (A stream ended while a request of its session is under way would fail
// that request in some clients: hence the wait.) A request whose body is
// still coming gets bodyGrace to send the rest.
type streams struct {
	mu       sync.Mutex
	requests int  // the requests under way that are not streams
	stopping bool // stop was called
	reading  map[*watchedBody]bool
	end      context.Context
	endNow   context.CancelFunc
	grace    time.Duration // streamGrace, or a test's
}

func newStreams() *streams {
	s := &streams{reading: make(map[*watchedBody]bool), grace: streamGrace}
	s.end, s.endNow = context.WithCancel(context.Background())
	return s
}

// stop ends the streams once no other request is under way, or after
// s.grace, and cuts the bodies still coming short.
func (s *streams) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	if s.requests == 0 {
		s.endNow()
	} else {
		time.AfterFunc(s.grace, s.endNow)
	}
	for b := range s.reading {
		b.shorten()
	}
}

// watchedBody is a request's body as streams sees it: whether it is all
// in, and how to give the rest a deadline.
type watchedBody struct {
	io.ReadCloser
	rc *http.ResponseController

	mu       sync.Mutex
	done     bool      // read to its end, or failed
	deadline time.Time // set by shorten: the latest the rest may come
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.mu.Lock()
		b.done = true
		b.mu.Unlock()
	}
	return n, err
}

// shorten gives what is left of the body bodyGrace to come. (A body
// already in is left alone: a read deadline on its connection would
// cancel the request once it passed.)
func (b *watchedBody) shorten() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.deadline = time.Now().Add(bodyGrace)
		_ = b.rc.SetReadDeadline(b.deadline)
	}
}

// bodyWriter is the writer of a request with a watchedBody: a read
// deadline the handler sets (mcpserver gives a body 30 seconds) is held
// to the one shorten set while the body is still coming, so that a
// handler that sets its own after the stop does not lengthen it.
type bodyWriter struct {
	http.ResponseWriter
	b *watchedBody
}

// SetReadDeadline is what http.ResponseController calls.
func (w bodyWriter) SetReadDeadline(t time.Time) error {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if !w.b.done && !w.b.deadline.IsZero() && (t.IsZero() || t.After(w.b.deadline)) {
		t = w.b.deadline
	}
	return w.b.rc.SetReadDeadline(t)
}

// Unwrap gives http.ResponseController the writer beneath, for the rest.
func (w bodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// handler serves h, ending its streams and shortening its bodies as stop
// says.
func (s *streams) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			var body *watchedBody
			s.mu.Lock()
			s.requests++
			if r.Body != nil && r.Body != http.NoBody {
				body = &watchedBody{ReadCloser: r.Body, rc: http.NewResponseController(w)}
				r.Body = body
				w = bodyWriter{ResponseWriter: w, b: body}
				s.reading[body] = true
				if s.stopping {
					body.shorten()
				}
			}
			s.mu.Unlock()
			defer func() {
				s.mu.Lock()
				s.requests--
				delete(s.reading, body)
				if s.stopping && s.requests == 0 {
					s.endNow()
				}
				s.mu.Unlock()
			}()
			h.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.end, cancel)()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// listenMetrics listens on the --metrics address addr.
func listenMetrics(addr string) (net.Listener, error) {
	addr, _ = listenAddr(addr)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	return l, nil
}

// serveMetrics serves m at l's /metrics, and the probes p at /healthz and
// /readyz, until ctx ends.
func serveMetrics(ctx context.Context, l net.Listener, m *metrics, p http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.handler())
	mux.Handle("GET /healthz", p)
	mux.Handle("GET /readyz", p)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return serve(ctx, srv, l, 16, time.Second, nil)
}
