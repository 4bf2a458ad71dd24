package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu       sync.Mutex
	requests []mcpserver.RequestInfo
	https    []mcpserver.HTTPInfo
	sessions int
	stores   int
	closed   chan struct{} // a session closed
	failed   []string      // OpenFailed's users and errors, as "user: err"
}

func newRecorder() *recorder { return &recorder{closed: make(chan struct{}, 16)} }

func (r *recorder) Request(i mcpserver.RequestInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, i)
}

func (r *recorder) HTTP(i mcpserver.HTTPInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.https = append(r.https, i)
}

func (r *recorder) SessionOpened() { r.add(&r.sessions, 1) }
func (r *recorder) SessionClosed() { r.add(&r.sessions, -1); r.closed <- struct{}{} }
func (r *recorder) StoreOpened()   { r.add(&r.stores, 1) }
func (r *recorder) StoreClosed()   { r.add(&r.stores, -1) }

func (r *recorder) OpenFailed(user string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, user+": "+err.Error())
}

func (r *recorder) add(n *int, d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*n += d
}

// counts returns the requests told, as "method tool outcome user", and
// the HTTP statuses, as "METHOD status".
func (r *recorder) counts() (map[string]int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs, https := map[string]int{}, map[string]int{}
	for _, i := range r.requests {
		if i.Duration < 0 {
			panic("negative duration")
		}
		reqs[strings.Join([]string{i.Method, i.Tool, i.Outcome, i.User}, " ")]++
	}
	for _, i := range r.https {
		https[fmt.Sprintf("%s %d", i.Method, i.Status)]++
	}
	return reqs, https
}

// An Observer of a UsersHandler is told of each JSON-RPC request (its
// method, tool and outcome, made-up names as "other"), of each HTTP
// request with its status (a refusal too), and of the sessions and stores
// as they open and close.
func TestObserver(t *testing.T) {
	users := newTestUsers(t, "alice")
	rec := newRecorder()
	h := mcpserver.UsersHandler(users, &mcpserver.Options{Observer: rec})
	srv := newHTTPServer(t, h)

	cs := tokenSession(t, srv.URL, "token-of-alice")
	ok(t, call(t, cs, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Likes tea", "summary": nil}))
	refused(t, call(t, cs, "memory_read", read("facts/nothere.md")), "")
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "secret-tool-name"}); err == nil {
		t.Error("an unknown tool was called")
	}
	// A method no one knows, sent raw in the session.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"made/up-secret","params":{}}`))
	req.Header.Set("Authorization", "Bearer token-of-alice")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// A request without a token.
	resp, err = http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	rec.mu.Lock()
	if rec.sessions != 1 || rec.stores != 1 {
		t.Errorf("%d sessions and %d stores open, want 1 and 1", rec.sessions, rec.stores)
	}
	rec.mu.Unlock()
	cs.Close()
	<-rec.closed
	mcpserver.AwaitUnused(h, "alice")
	mcpserver.ReleaseIdle(h)

	reqs, https := rec.counts()
	for _, want := range []string{
		"initialize  ok alice",
		"tools/call memory_append ok alice",
		"tools/call memory_read tool_error alice",
		"tools/call other error alice",
	} {
		if reqs[want] != 1 {
			t.Errorf("told %d times of %q; all: %v", reqs[want], want, reqs)
		}
	}
	for k := range reqs {
		if strings.Contains(k, "secret") {
			t.Errorf("a made-up name reached the observer: %q", k)
		}
	}
	if https["POST 401"] != 1 || https["POST 200"] < 4 {
		t.Errorf("HTTP requests told: %v", https)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.sessions != 0 || rec.stores != 0 {
		t.Errorf("%d sessions and %d stores open after all closed, want 0 and 0", rec.sessions, rec.stores)
	}
	for _, i := range rec.https {
		if i.Status == http.StatusUnauthorized && i.User != "" {
			t.Errorf("a refused request was told as %q's", i.User)
		}
		if !strings.HasPrefix(i.RemoteAddr, "127.0.0.1:") {
			t.Errorf("a request was told as from %q, want the test's loopback address", i.RemoteAddr)
		}
	}
}

// failingUsers are users whose memory cannot be opened: the error names
// the user's directory.
type failingUsers struct{ dir string }

func (u failingUsers) User(token string) (string, bool) { return "alice", token == "token-of-alice" }
func (u failingUsers) Open(context.Context, string) (*memory.Store, func(), error) {
	return nil, nil, fmt.Errorf("open %s/alice: permission denied", u.dir)
}

// A user's memory that cannot be opened is told to the Observer, with
// its user and the error; the Logger is told it happened, never whose or
// the path.
func TestObserverOpenFailed(t *testing.T) {
	rec := newRecorder()
	var log bytes.Buffer
	const dir = "/srv/memories-secret-path"
	h := mcpserver.UsersHandler(failingUsers{dir: dir}, &mcpserver.Options{Observer: rec, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	srv := newHTTPServer(t, h)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer token-of-alice")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("status %d, want 500", resp.StatusCode)
	}
	rec.mu.Lock()
	failed := append([]string(nil), rec.failed...)
	rec.mu.Unlock()
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "alice: ") || !strings.Contains(failed[0], "permission denied") {
		t.Errorf("OpenFailed told %q, want alice's failure once", failed)
	}
	if got := log.String(); strings.Contains(got, "alice") || strings.Contains(got, dir) || !strings.Contains(got, "could not be opened") {
		t.Errorf("the Logger was told %q: want the failure, without the user or the path", got)
	}
}
