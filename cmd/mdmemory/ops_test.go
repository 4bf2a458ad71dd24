package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// server is an "mdmemory mcp --http" process of a test.
type server struct {
	cmd     *exec.Cmd
	url     string        // where it serves MCP
	metrics string        // where it serves metrics, when asked
	lines   chan string   // the lines of its standard error after those, closed at its end
	done    chan struct{} // closed when its standard error ended
	mu      sync.Mutex
	stderr  strings.Builder
}

// output is what the server wrote on standard error after its first lines.
func (s *server) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// startServer starts "mdmemory mcp" with args, env added to its
// environment; withMetrics says it was given --metrics.
func startServer(t *testing.T, env []string, withMetrics bool, args ...string) *server {
	t.Helper()
	s := &server{cmd: mdmemoryCmd(append([]string{"mcp"}, args...)...), lines: make(chan string, 1024), done: make(chan struct{})}
	s.cmd.Env = append(s.cmd.Env, env...)
	errPipe, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	r := bufio.NewReader(errPipe)
	line, err := r.ReadString('\n')
	require.NoError(t, err, line)
	m := regexp.MustCompile(`^mdmemory: serving MCP \(streamable HTTP\) at (http://127\.0\.0\.1:\d+/) for `).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	s.url = m[1]
	if withMetrics {
		line, err = r.ReadString('\n')
		require.NoError(t, err, line)
		m = regexp.MustCompile(`^mdmemory: metrics at (http://127\.0\.0\.1:\d+/metrics)\n$`).FindStringSubmatch(line)
		require.NotNil(t, m, line)
		s.metrics = m[1]
	}
	go func() {
		defer close(s.done)
		defer close(s.lines)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				s.mu.Lock()
				s.stderr.WriteString(line)
				s.mu.Unlock()
				select {
				case s.lines <- line:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// stopWithin sends SIGTERM and requires exit status 0 within 20 s, far
// past any deadline the tests give the server: a guard against a hang,
// not a timing assumption; held says what would hold it.
func (s *server) stopWithin(t *testing.T, held string) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { <-s.done; exited <- s.cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		require.False(t, errors.As(err, &ee), "status 0 after SIGTERM: %v\n%s", err, s.output())
	case <-time.After(20 * time.Second):
		s.cmd.Process.Signal(syscall.SIGQUIT) // its goroutines, on standard error
		<-exited
		t.Fatalf("the server still runs 20 s after SIGTERM, held by %s:\n%s", held, s.output())
	}
}

// stop sends SIGTERM (an interrupt on Windows) and requires exit status 0;
// it returns the rest of the server's standard error.
func (s *server) stop(t *testing.T) string {
	t.Helper()
	sig := os.Signal(syscall.SIGTERM)
	if runtime.GOOS == "windows" {
		sig = os.Interrupt
	}
	require.NoError(t, s.cmd.Process.Signal(sig))
	<-s.done
	err := s.cmd.Wait()
	var ee *exec.ExitError
	require.False(t, errors.As(err, &ee), "status 0 after SIGTERM: %v\n%s", err, s.output())
	return s.output()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// scrape reads the metrics at url, parsed as Prometheus's text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value is the value of the metric of family name whose labels are those
// of labels ("k", "v", ...); -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMCPHTTPOperated: a server of --users answers /healthz and /readyz
// without a token, /readyz 503 once the folder of the users' memories is
// gone; its metrics, parsed as Prometheus's text format, count the
// requests, tool calls, sessions and stores; and neither a label nor the
// JSON access log holds a token, a memory's text or its path.
func TestMCPHTTPOperated(t *testing.T) {
	root := t.TempDir()
	mems := filepath.Join(root, "memories")
	require.NoError(t, os.Mkdir(mems, 0o700))
	const alice = "alice-token-0123456789abcdef"
	const secret = "Secret-memory-text-7f3a"
	users := filepath.Join(root, "users")
	require.NoError(t, os.WriteFile(users, []byte(alice+" "+filepath.Join(mems, "alice")+"\n"), 0o600))
	s := startServer(t, nil, true, "--http", "127.0.0.1:0", "--users", users, "--metrics", "127.0.0.1:0", "--log-format", "json")

	code, body := get(t, s.url+"healthz")
	require.Equal(t, http.StatusOK, code, body)
	// The memories' folder gone, the server is not ready, and still alive.
	// (The first probe: a later one within readyInterval would answer
	// from it, which TestReadinessInterval shows.)
	require.NoError(t, os.Rename(mems, mems+".away"))
	code, body = get(t, s.url+"readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.NotContains(t, body, root)
	code, _ = get(t, s.url+"healthz")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, os.Rename(mems+".away", mems))
	require.Equal(t, http.StatusUnauthorized, post(t, s.url, nil).StatusCode)

	// One client in a session of 2025-11-25, one in stateless requests.
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer(alice)}, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	require.NotEmpty(t, cs.ID())
	stateless := connectToken(t, s.url, alice)
	require.Empty(t, stateless.ID())
	text, isErr := call(t, stateless, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Note: " + secret, "summary": nil})
	require.False(t, isErr, text)
	text, isErr = call(t, cs, "memory_read", map[string]any{"path": "facts/user.md"})
	require.False(t, isErr, text)
	require.Contains(t, text, secret)
	text, isErr = call(t, cs, "memory_read", map[string]any{"path": "facts/" + secret + ".md"})
	require.True(t, isErr, text)

	fams := scrape(t, s.metrics)
	for _, c := range []struct {
		name   string
		labels []string
		min    float64
	}{
		{"mdmemory_mcp_requests_total", []string{"method", "tools/call", "outcome", "ok"}, 2},
		{"mdmemory_mcp_requests_total", []string{"method", "server/discover", "outcome", "ok"}, 1},
		{"mdmemory_mcp_requests_total", []string{"method", "initialize", "outcome", "ok"}, 1},
		{"mdmemory_mcp_tool_calls_total", []string{"tool", "memory_append", "outcome", "ok"}, 1},
		{"mdmemory_mcp_tool_calls_total", []string{"tool", "memory_read", "outcome", "ok"}, 1},
		{"mdmemory_mcp_tool_calls_total", []string{"tool", "memory_read", "outcome", "tool_error"}, 1},
		{"mdmemory_mcp_tool_call_duration_seconds", []string{"tool", "memory_append"}, 1},
		{"mdmemory_mcp_request_duration_seconds", []string{"method", "tools/call"}, 3},
		{"mdmemory_http_requests_total", []string{"method", "POST", "code", "401"}, 1},
		{"mdmemory_open_stores", nil, 1},
		{"mdmemory_live_sessions", nil, 1},
	} {
		require.GreaterOrEqual(t, value(fams, c.name, c.labels...), c.min, "%s %v", c.name, c.labels)
	}
	for _, name := range []string{"mdmemory_lock_wait_seconds", "mdmemory_backend_errors_total"} {
		require.Contains(t, fams[name].GetHelp(), "S3", name) // declared, counted on S3 memories
	}
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				for _, bad := range []string{alice, secret, root} {
					require.NotContains(t, l.GetValue(), bad, "%s{%s}", name, l.GetName())
				}
			}
		}
	}
	require.NoError(t, cs.Close())

	log := s.stop(t)
	require.NotContains(t, log, alice)
	require.NotContains(t, log, secret)
	var tools, statuses int
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "mdmemory: ") {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["tool"] == "memory_read" && rec["outcome"] == "tool_error" {
			tools++
			require.NotEmpty(t, rec["user"])
			require.NotContains(t, rec["user"], "alice")
			// Not a plain hash of the memory's name, which anyone could
			// compute from a guess of it: keyed with the users file.
			name := filepath.Join(mems, "alice")
			plain := sha256.Sum256([]byte(name))
			require.NotEqual(t, hex.EncodeToString(plain[:6]), rec["user"])
			u, err := readUsers(users, "", memory.Options{}, os.Getenv)
			require.NoError(t, err)
			require.Equal(t, userID(u.logKey(), name), rec["user"])
		}
		if rec["status"] == float64(http.StatusUnauthorized) {
			statuses++
			// The connection's address, the test's loopback one.
			require.Contains(t, rec["client"], "127.0.0.1:", line)
		}
	}
	require.Equal(t, 1, tools, log)
	require.Equal(t, 1, statuses, log)
}

// TestMCPHTTPGracefulStop: SIGTERM while a request is under way (a search
// waiting on the embeddings server) stops new connections, lets the
// request finish with its answer, and exits with status 0 as soon as it
// is answered: the session's event stream, held open, does not keep it
// waiting for --shutdown-timeout.
func TestMCPHTTPGracefulStop(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM to send")
	}
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	embed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-release
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i := range req.Input {
			out.Data = append(out.Data, item{Embedding: []float32{1, float32(i)}, Index: i})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(embed.Close)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // a failed test does not leave the handler waiting

	dir := sample(t)
	s := startServer(t, nil, false, "--dir", dir, "--http", "127.0.0.1:0", "--embed-url", embed.URL+"/v1", "--embed-model", "fake", "--log-format", "none", "--shutdown-timeout", "1h")
	// A client in a session of 2025-11-25, which holds an event stream
	// open, and retries it when it ends, as clients do by default: the
	// server ends it once the search is answered.
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	type answer struct {
		text string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "airport", "limit": nil}})
		var a answer
		a.err = err
		if err == nil && len(res.Content) > 0 {
			a.text = res.Content[0].(*mcp.TextContent).Text
		}
		answered <- a
	}()
	<-arrived
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	stopping := false
	for line := range s.lines {
		if stopping = strings.HasPrefix(line, "mdmemory: stopping"); stopping {
			break
		}
	}
	require.True(t, stopping, "no word of stopping: %s", s.output())
	// New connections are refused while the search is still under way.
	addr := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/")
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		runtime.Gosched()
	}
	select {
	case a := <-answered:
		t.Fatalf("the search ended before its embeddings came: %+v", a)
	default:
	}
	free()
	a := <-answered
	<-s.done
	require.NoError(t, a.err, s.output())
	require.NotEmpty(t, a.text)
	<-s.done
	err = s.cmd.Wait()
	var ee *exec.ExitError
	require.False(t, errors.As(err, &ee), "status 0 after SIGTERM: %v\n%s", err, s.output())
}

// TestUsersCloseAll: closeAll releases every store the users opened and
// did not release, once; a release after it does nothing.
func TestUsersCloseAll(t *testing.T) {
	root := t.TempDir()
	u, err := parseUsers(strings.NewReader("alice-token-0123456789 a\nbob-token-0123456789 b\n"), root, "")
	require.NoError(t, err)
	u.opener = &opener{getenv: func(string) string { return "" }}
	ctx := context.Background()
	a, releaseA, err := u.Open(ctx, filepath.Join(root, "a"))
	require.NoError(t, err)
	b, _, err := u.Open(ctx, filepath.Join(root, "b"))
	require.NoError(t, err)
	require.Equal(t, 2, u.opened())
	releaseA()
	require.Equal(t, 1, u.opened())
	u.closeAll()
	require.Equal(t, 0, u.opened())
	releaseA()
	for _, s := range []*memory.Store{a, b} {
		_, err := s.Read(ctx, "facts/user.md")
		require.ErrorIs(t, err, memory.ErrClosed)
	}
	require.Equal(t, []string{root}, u.roots())
}

// failing is a backend whose every call fails with err.
type failing struct{ err error }

func (f failing) Read(context.Context, string, int64) (memory.Content, error) {
	return memory.Content{}, f.err
}
func (f failing) List(context.Context, string) ([]memory.Entry, error) { return nil, f.err }
func (f failing) Lock(context.Context, string) (memory.Held, error)    { return nil, f.err }

// TestObservedBackend: a backend's failures are counted by operation, but
// not a missing file, a change made meanwhile or a cancelled request; each
// lock taken is a lock wait.
func TestObservedBackend(t *testing.T) {
	m := newMetrics()
	ctx := context.Background()
	for _, err := range []error{os.ErrNotExist, memory.ErrChanged, context.Canceled, errors.New("503 Slow Down")} {
		b := observedBackend{Backend: failing{err}, m: m}
		b.Read(ctx, "facts/user.md", -1)
		b.List(ctx, "")
		b.Lock(ctx, "facts/")
	}
	d, err := memory.OpenDir(t.TempDir(), 0)
	require.NoError(t, err)
	defer d.Close()
	b := observedBackend{Backend: d, m: m}
	h, err := b.Lock(ctx, "facts/user.md")
	require.NoError(t, err)
	_, err = h.Write(ctx, "facts/user.md", []byte("# User\n"), "")
	require.NoError(t, err)
	_, err = h.Write(ctx, "facts/user.md", []byte("# User\n"), "")
	require.ErrorIs(t, err, memory.ErrChanged)
	h.Unlock()

	srv := httptest.NewServer(m.handler())
	defer srv.Close()
	fams := scrape(t, srv.URL)
	for _, op := range []string{"read", "list", "lock"} {
		require.Equal(t, 1.0, value(fams, "mdmemory_backend_errors_total", "op", op), op)
	}
	require.Equal(t, 0.0, value(fams, "mdmemory_backend_errors_total", "op", "write"))
	require.Equal(t, 1.0, value(fams, "mdmemory_lock_wait_seconds"))
}

// A user of --users costs its line of the table alone until its first
// request: 10,000 users, their tokens as SHA-256 digests and their
// memories under one bucket, take well under 16 KB each.
func TestUsersMemory(t *testing.T) {
	const n = 10000
	var file strings.Builder
	for i := range n {
		fmt.Fprintf(&file, "sha256:%064x s3://bucket/fleet/u%06d\n", i, i)
	}
	heapNow := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	text := file.String()
	before := heapNow()
	u, err := parseUsers(strings.NewReader(text), "", "")
	require.NoError(t, err)
	after := heapNow()
	require.Equal(t, n, u.count())
	per := (int64(after) - int64(before)) / n
	t.Logf("%d users: %d bytes each in the table", n, per)
	require.Less(t, per, int64(16<<10))
	runtime.KeepAlive(u)
}

// TestMCPOperatorUsage: the operator's flags are checked: --metrics and a
// --log-format of its own go with --http, a negative --shutdown-timeout is
// refused, and a --metrics address that cannot listen is an error.
func TestMCPOperatorUsage(t *testing.T) {
	dir := t.TempDir()
	r := mdm(t, nil, "mcp", "--dir", dir, "--metrics", "9090")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--metrics go with --http")
	r = mdm(t, nil, "mcp", "--dir", dir, "--http", "127.0.0.1:0", "--log-format", "xml")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "--log-format")
	r = mdm(t, nil, "mcp", "--dir", dir, "--http", "127.0.0.1:0", "--shutdown-timeout", "-1s")
	require.Equal(t, 2, r.code)
	r = mdm(t, nil, "mcp", "--dir", dir, "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:-1")
	require.Contains(t, r.failed(t), "--metrics")
}

// TestReadinessOneProbeAtATime: a /readyz that comes while a probe is
// under way takes its result, and does not probe the backend again; the
// next call probes anew.
func TestReadinessOneProbeAtATime(t *testing.T) {
	var probes atomic.Int64
	started, release, waits := make(chan struct{}), make(chan struct{}), make(chan struct{})
	now := time.Unix(1e9, 0)
	rd := &readiness{
		now:   func() time.Time { return now },
		roots: []string{"s3://bucket"},
		probe: func(context.Context, string) error {
			if probes.Add(1) == 1 {
				close(started)
				<-release
			}
			return errors.New("no answer")
		},
		waiting: func() { close(waits) },
	}
	first, second := make(chan bool), make(chan bool)
	go func() { first <- rd.ready(context.Background()) }()
	<-started
	go func() { second <- rd.ready(context.Background()) }()
	<-waits
	close(release)
	require.False(t, <-first)
	require.False(t, <-second)
	require.Equal(t, int64(1), probes.Load(), "the second call probed too")
	now = now.Add(readyInterval)
	require.False(t, rd.ready(context.Background()))
	require.Equal(t, int64(2), probes.Load())
}

// TestUserIDKeyed: the access log's user id depends on the users file's
// tokens, so that it cannot be recomputed from a guess of the memory's
// name alone; processes reading one file agree on it.
func TestUserIDKeyed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) *users {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		u, err := readUsers(path, "", memory.Options{}, os.Getenv)
		require.NoError(t, err)
		return u
	}
	const mem = "s3://memory/users/alice"
	a := write("a", "alice-token-0123456789abcdef "+mem+"\nbob-token-0123456789abcdef s3://memory/users/bob\n")
	again := write("b", "bob-token-0123456789abcdef s3://memory/users/bob\nalice-token-0123456789abcdef "+mem+"\n")
	other := write("c", "alice-token-ffffffffffffffff "+mem+"\n")
	id := userID(a.logKey(), mem)
	require.Len(t, id, 12)
	require.Equal(t, id, userID(again.logKey(), mem), "the same tokens, in another order")
	require.NotEqual(t, id, userID(other.logKey(), mem), "other tokens")
	require.NotEqual(t, id, userID(a.logKey(), "s3://memory/users/bob"))
	plain := sha256.Sum256([]byte(mem))
	require.NotEqual(t, hex.EncodeToString(plain[:6]), id)
}

// TestObserverOpenFailed: a user's store that could not be opened is
// counted as a backend error and logged with the user's keyed id, the
// memory's name out of the error.
func TestObserverOpenFailed(t *testing.T) {
	m := newMetrics()
	var log strings.Builder
	key := []byte("key")
	o := observer{m: m, log: slog.New(slog.NewJSONHandler(&log, nil)), key: key}
	const mem = "s3://memory/users/alice"
	o.OpenFailed(mem, fmt.Errorf("open %s: head users/alice/facts: access denied (memory/users/alice)", mem))
	o.OpenFailed(mem, context.Canceled)
	fams, err := m.reg.Gather()
	require.NoError(t, err)
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	require.Equal(t, 1.0, value(byName, "mdmemory_backend_errors_total", "op", "open"))
	require.NotContains(t, log.String(), "alice")
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(log.String(), "\n", 2)[0]), &rec))
	require.Equal(t, userID(key, mem), rec["user"])
	require.Contains(t, rec["err"], "access denied")
	require.Contains(t, rec["err"], "MEMORY")
}

// TestReadinessInterval: calls of /readyz in a loop probe the backend at
// most once a readyInterval; the others get the last result.
func TestReadinessInterval(t *testing.T) {
	now := time.Unix(1e9, 0)
	var probes int
	up := true
	rd := &readiness{
		now:   func() time.Time { return now },
		roots: []string{"/a", "/b"},
		probe: func(context.Context, string) error {
			probes++
			if !up {
				return errors.New("down")
			}
			return nil
		},
	}
	for range 100 {
		require.True(t, rd.ready(context.Background()))
	}
	require.Equal(t, 2, probes, "one probe of each root")
	up = false
	now = now.Add(readyInterval - time.Nanosecond)
	require.True(t, rd.ready(context.Background()), "the last result, within the interval")
	require.Equal(t, 2, probes)
	now = now.Add(time.Nanosecond)
	require.False(t, rd.ready(context.Background()))
	require.Equal(t, 3, probes, "a probe once the interval is past; it stops at the first root down")
	require.False(t, rd.ready(context.Background()))
	require.Equal(t, 3, probes)
}

// TestStatDirTimeout: a stat that does not return (a hung file system)
// does not hold a probe past its context, and the stats left under way
// are bounded.
func TestStatDirTimeout(t *testing.T) {
	hang := make(chan struct{})
	entered := make(chan struct{}, maxStuckStats)
	stat := func(string) (fs.FileInfo, error) {
		entered <- struct{}{}
		<-hang
		return nil, errors.New("released")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range maxStuckStats {
		err := statDir(ctx, "/hung", stat)
		require.ErrorIs(t, err, context.Canceled)
		<-entered
	}
	err := statDir(context.Background(), "/hung", stat)
	require.ErrorContains(t, err, "still under way")
	close(hang)
	// The stuck ones return, and free their places.
	for len(stats) > 0 {
		runtime.Gosched()
	}
	require.NoError(t, statDir(context.Background(), t.TempDir(), os.Stat))
	require.ErrorIs(t, statDir(context.Background(), filepath.Join(t.TempDir(), "no"), os.Stat), fs.ErrNotExist)
}

// TestMCPHTTPProbesOnMetrics: /healthz and /readyz are served on the
// --metrics address too, whose connections are its own: clients holding
// every one of --max-conns with headers they never finish do not fail a
// liveness probe sent there.
func TestMCPHTTPProbesOnMetrics(t *testing.T) {
	s := startServer(t, nil, true, "--dir", sample(t), "--http", "127.0.0.1:0", "--max-conns", "2", "--metrics", "127.0.0.1:0", "--log-format", "none")
	addr := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/")
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n") // never finished
		require.NoError(t, err)
	}
	base := strings.TrimSuffix(s.metrics, "metrics")
	for _, path := range []string{"healthz", "readyz"} {
		code, body := get(t, base+path)
		require.Equal(t, http.StatusOK, code, path)
		require.Equal(t, "ok\n", body, path)
	}
	code, _ := get(t, base+"other")
	require.Equal(t, http.StatusNotFound, code)
}

// TestMCPHTTPStopSlowBody: a client that never finishes its request's
// body does not hold a stopping server until --shutdown-timeout (an hour
// here) nor until the body's own 30 seconds: the body gets bodyGrace, the
// request 408, and the process exits with status 0.
func TestMCPHTTPStopSlowBody(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM to send")
	}
	s := startServer(t, nil, false, "--dir", sample(t), "--http", "127.0.0.1:0", "--log-format", "none", "--shutdown-timeout", "1h")
	addr := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	// Expect: 100-continue: the server says "100 Continue" once the
	// handler reads the body, so the request is being served.
	_, err = io.WriteString(c, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "100 Continue")
	_, err = io.WriteString(c, `{"jsonrpc":"2.0",`) // and no more
	require.NoError(t, err)
	s.stopWithin(t, "a body that does not come")
}

// TestStreamsEndAfterGrace: at a stop, the sessions' event streams end
// after the streams' grace even while another request is under way, and a
// body still coming is given a deadline.
func TestStreamsEndAfterGrace(t *testing.T) {
	s := newStreams()
	s.grace = 0
	inPOST, release := make(chan struct{}), make(chan struct{})
	h := s.handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			close(inPOST)
			<-release
			return
		}
		<-r.Context().Done() // an event stream
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-inPOST
	streamed := make(chan struct{})
	go func() {
		defer close(streamed)
		resp, err := http.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
	}()
	s.stop()
	select {
	case <-s.end.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the streams did not end while a request was under way")
	}
	<-streamed
	close(release)
	<-posted
}

// TestMCPHTTPStopDeadline: a request still running at --shutdown-timeout
// (a search waiting on an embeddings server that never answers) has its
// context cancelled and its connection cut: the process releases its
// store and exits, not held by the request.
func TestMCPHTTPStopDeadline(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM to send")
	}
	arrived, release := make(chan struct{}, 2), make(chan struct{})
	embed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "gone", http.StatusServiceUnavailable)
	}))
	defer embed.Close()
	defer close(release)
	s := startServer(t, nil, false, "--dir", sample(t), "--http", "127.0.0.1:0", "--embed-url", embed.URL+"/v1", "--embed-model", "fake", "--log-format", "none", "--shutdown-timeout", "500ms")
	// In a stateless request and in a session of 2025-11-25, whose
	// requests run in the session, not in the POST's context.
	for _, version := range []string{"", "2025-11-25"} {
		cs := connectTokenAt(t, s.url, "", version)
		go func() {
			_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": "airport", "limit": nil}})
		}()
		<-arrived
	}
	s.stopWithin(t, "a request past its deadline")
}

// TestBodyWriterHoldsDeadline: once a stop shortened a body still coming,
// a handler's own read deadline does not lengthen it; once the body is
// in, the handler's deadline is its own again.
func TestBodyWriterHoldsDeadline(t *testing.T) {
	var got []time.Time
	rw := &deadlineRecorder{ResponseWriter: httptest.NewRecorder(), set: func(d time.Time) { got = append(got, d) }}
	b := &watchedBody{ReadCloser: io.NopCloser(strings.NewReader("x")), rc: http.NewResponseController(rw)}
	w := bodyWriter{ResponseWriter: rw, b: b}
	later := time.Now().Add(time.Hour)
	require.NoError(t, http.NewResponseController(w).SetReadDeadline(later))
	b.shorten()
	require.NoError(t, http.NewResponseController(w).SetReadDeadline(later))
	require.NoError(t, http.NewResponseController(w).SetReadDeadline(time.Time{}))
	_, err := io.ReadAll(b)
	require.NoError(t, err)
	require.NoError(t, http.NewResponseController(w).SetReadDeadline(time.Time{}))
	require.Len(t, got, 5)
	require.Equal(t, later, got[0], "before the stop: the handler's")
	require.True(t, got[1].Before(later), "the stop's")
	require.Equal(t, got[1], got[2], "held to the stop's")
	require.Equal(t, got[1], got[3], "no deadline is held to the stop's too")
	require.True(t, got[4].IsZero(), "the body in: the handler's")
}

// deadlineRecorder records the read deadlines set on it.
type deadlineRecorder struct {
	http.ResponseWriter
	set func(time.Time)
}

func (d *deadlineRecorder) SetReadDeadline(t time.Time) error { d.set(t); return nil }
