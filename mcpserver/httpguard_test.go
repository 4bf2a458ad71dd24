package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// initBody is an initialize request, as a client's first POST.
const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawRequest makes a request for an MCP endpoint: JSON in, JSON or an event
// stream out. hdr may set Host, which becomes the request's Host.
func rawRequest(t testing.TB, method, url string, hdr map[string]string, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

// do sends req and returns its status and body, read whole.
func do(t testing.TB, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// initialize opens a session with a raw initialize POST, and returns its
// id.
func initialize(t testing.TB, url string, hdr map[string]string) string {
	t.Helper()
	resp, body := do(t, rawRequest(t, http.MethodPost, url, hdr, initBody))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("initialize: no session id")
	}
	return id
}

// bearerTransport adds a bearer token to every request of an HTTP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// tokenSession opens an MCP session with the SDK's client whose requests
// carry token, closed when the test ends.
func tokenSession(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearerTransport{token}},
		MaxRetries: -1,
	}, inSession)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A request that names another host, or comes from a browser page of
// another origin, is refused with 403 on every method; a client that is
// not a browser (no Origin) and the server's own origin are served.
func TestHTTPHostAndOrigin(t *testing.T) {
	store, _ := openStore(t)
	strict := newHTTPServer(t, mcpserver.Handler(store, nil))
	allowing := newHTTPServer(t, mcpserver.Handler(store, &mcpserver.Options{
		AllowedHosts:   []string{"Memory.Example.COM"},
		AllowedOrigins: []string{"https://app.example.com/"},
	}))
	port := func(srv *httptest.Server) string { return srv.URL[strings.LastIndex(srv.URL, ":"):] }
	for _, c := range []struct {
		name      string
		allowing  bool
		host      string // "" leaves the URL's
		origin    string
		fetchSite string
		want403   bool
	}{
		{name: "no origin"},
		{name: "localhost", host: "localhost"},
		{name: "localhost with port", host: "localhost" + port(strict)},
		{name: "ipv6 loopback", host: "[::1]:8080"},
		{name: "own origin", origin: "http://127.0.0.1" + port(strict)},
		{name: "foreign host", host: "evil.example", want403: true},
		{name: "foreign host with port", host: "evil.example" + port(strict), want403: true},
		{name: "LAN address on loopback", host: "192.168.1.20:8080", want403: true},
		{name: "foreign origin", origin: "http://evil.example", want403: true},
		{name: "origin of another port", origin: "http://127.0.0.1:1", want403: true},
		{name: "null origin", origin: "null", want403: true},
		{name: "cross-site without origin", fetchSite: "cross-site", want403: true},
		{name: "same-origin fetch", fetchSite: "same-origin"},
		{name: "allowed host", allowing: true, host: "memory.example.com"},
		{name: "allowed host with port", allowing: true, host: "memory.example.com:443"},
		{name: "allowed origin", allowing: true, origin: "https://APP.example.com"},
		{name: "allowed host, foreign origin", allowing: true, host: "memory.example.com", origin: "https://evil.example", want403: true},
		{name: "other host, allowing", allowing: true, host: "evil.example", want403: true},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			t.Run(c.name+"/"+method, func(t *testing.T) {
				srv := strict
				if c.allowing {
					srv = allowing
				}
				hdr := map[string]string{"Mcp-Session-Id": "none"}
				if c.host != "" {
					hdr["Host"] = c.host
				}
				if c.origin != "" {
					hdr["Origin"] = c.origin
				}
				if c.fetchSite != "" {
					hdr["Sec-Fetch-Site"] = c.fetchSite
				}
				body := ""
				if method == http.MethodPost {
					body = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
				}
				resp, text := do(t, rawRequest(t, method, srv.URL, hdr, body))
				if got := resp.StatusCode == http.StatusForbidden; got != c.want403 {
					t.Errorf("status %s (%q), want 403: %v", resp.Status, text, c.want403)
				}
				if !c.want403 && resp.StatusCode != http.StatusNotFound {
					// Past the guards: the session "none" is unknown.
					t.Errorf("status %s (%q), want 404 for an unknown session", resp.Status, text)
				}
			})
		}
	}
}

// On a connection to an address that is not loopback, the Host header
// must name that address or an allowed host; a loopback name is refused
// there (no browser sends it to another machine but by rebinding).
func TestHTTPHostNonLoopback(t *testing.T) {
	store, _ := openStore(t)
	h := mcpserver.Handler(store, &mcpserver.Options{Token: "a-token-of-sixteen-bytes", AllowedHosts: []string{"memory.lan"}})
	local := &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 8080}
	for _, c := range []struct {
		host    string
		want403 bool
	}{
		{"192.0.2.10:8080", false},
		{"192.0.2.10", false},
		{"memory.lan:8080", false},
		{"localhost:8080", true},
		{"127.0.0.1:8080", true},
		{"192.0.2.11:8080", true},
		{"evil.example:8080", true},
		{"", true},
	} {
		t.Run(c.host, func(t *testing.T) {
			req := rawRequest(t, http.MethodGet, "http://192.0.2.10:8080/", map[string]string{"Host": c.host, "Authorization": "Bearer a-token-of-sixteen-bytes"}, "")
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, net.Addr(local)))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Code == http.StatusForbidden; got != c.want403 {
				t.Errorf("status %d (%q), want 403: %v", rec.Code, rec.Body.String(), c.want403)
			}
		})
	}
}

// With a Token, a request without it, or with another, gets 401 and
// WWW-Authenticate: Bearer, whatever its method; with it, it is served.
func TestHTTPToken(t *testing.T) {
	store, _ := openStore(t)
	const token = "correct-horse-battery-staple"
	srv := newHTTPServer(t, mcpserver.Handler(store, &mcpserver.Options{Token: token}))
	for _, c := range []struct{ name, auth string }{
		{"none", ""},
		{"wrong", "Bearer correct-horse-battery-stapler"},
		{"prefix", "Bearer correct-horse"},
		{"basic", "Basic " + token},
		{"bare", token},
		{"empty bearer", "Bearer "},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			hdr := map[string]string{}
			if c.auth != "" {
				hdr["Authorization"] = c.auth
			}
			body := ""
			if method == http.MethodPost {
				body = initBody
			}
			resp, text := do(t, rawRequest(t, method, srv.URL, hdr, body))
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s: %s %q, WWW-Authenticate %q; want 401 and Bearer", c.name, method, resp.Status, text, resp.Header.Get("WWW-Authenticate"))
			}
		}
	}
	cs := tokenSession(t, srv.URL, token)
	ok(t, call(t, cs, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Prefers tea.", "summary": nil}))
	// The session's id is not a token: without the token it is refused.
	resp, _ := do(t, rawRequest(t, http.MethodPost, srv.URL, map[string]string{"Mcp-Session-Id": cs.ID()}, `{"jsonrpc":"2.0","id":9,"method":"ping"}`))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a session's id without the token: %s, want 401", resp.Status)
	}
}

// A body sent a byte at a time is cut off after the handler's body
// timeout, with 408, and the connection closed; one larger than 4 MiB
// gets 413.
func TestHTTPSlowAndLargeBody(t *testing.T) {
	store, _ := openStore(t)
	h := mcpserver.Handler(store, nil)
	mcpserver.SetBodyTimeout(h, 50*time.Millisecond)
	srv := newHTTPServer(t, h)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// One byte of a 100-byte body, and no more: the server must answer
	// without waiting for the rest. The read below returns when it does,
	// and fails the test if it has not within a minute (a guard, not a
	// timing assumption).
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{", srv.Listener.Addr())
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("stalled body: %s, want 408", resp.Status)
	}
	// The server closed the connection.
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Error("the connection of a stalled body is still open")
	}

	// Refused before its body is read (here for want of a token), a
	// client that sends no body holds its connection no longer either.
	th := mcpserver.Handler(store, &mcpserver.Options{Token: "0123456789abcdef0123"})
	mcpserver.SetBodyTimeout(th, 50*time.Millisecond)
	tsrv := newHTTPServer(t, th)
	tconn, err := net.Dial("tcp", tsrv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tconn.Close()
	fmt.Fprintf(tconn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", tsrv.Listener.Addr())
	tconn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err = http.ReadResponse(bufio.NewReader(tconn), nil)
	if err != nil {
		t.Fatalf("no answer to a refused request whose body never comes: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("refused request: %s, connection closed %v; want 401, closed", resp.Status, resp.Close)
	}
	if _, err := tconn.Read(make([]byte, 1)); err == nil {
		t.Error("the connection of a refused request is still open")
	}

	large := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5<<20) + `"}}`
	r, _ := do(t, rawRequest(t, http.MethodPost, newHTTPServer(t, mcpserver.Handler(store, nil)).URL, nil, large))
	if r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 5 MiB body: %s, want 413", r.Status)
	}
}

// Past MaxSessions, a new session closes the session idle the longest,
// whose conversation ends; the others go on.
func TestHTTPMaxSessionsClosesLongestIdle(t *testing.T) {
	store, _ := openStore(t)
	hook, next := endedHook(t)
	opts := mcpserver.Options{MaxSessions: 3}
	mcpserver.SetEnded(&opts, hook)
	h := mcpserver.Handler(store, &opts)
	srv := newHTTPServer(t, h)
	connect := func() *mcp.ClientSession {
		cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, inSession)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b, c := connect(), connect(), connect()
	// Used in the order b, c, a: b is idle the longest.
	for _, cs := range []*mcp.ClientSession{b, c, a} {
		ok(t, call(t, cs, "memory_list", nil))
	}
	// A session serving a request is never closed to make room: the
	// answers are in, and so must the handlers be.
	mcpserver.AwaitRequestsDone(h)
	d := connect()
	if got := next(); got != "mcp:"+b.ID() {
		t.Fatalf("conversation %q ended, want b's, mcp:%s (a %s c %s d %s)", got, b.ID(), a.ID(), c.ID(), d.ID())
	}
	if n := mcpserver.LiveSessions(h); n != 3 {
		t.Errorf("%d live sessions, want 3", n)
	}
	for _, cs := range []*mcp.ClientSession{a, c, d} {
		ok(t, call(t, cs, "memory_list", nil))
	}
	if _, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_list"}); err == nil {
		t.Error("the closed session b was still served")
	}
}

// An initialize that does not look like one to the handler's gate (in a
// batch, or with a second key "Method" that a case-blind decoder takes)
// still counts against MaxSessions: the table never holds more.
func TestHTTPMaxSessionsDisguisedInitialize(t *testing.T) {
	const max = 3
	store, _ := openStore(t)
	h := mcpserver.Handler(store, &mcpserver.Options{MaxSessions: max})
	srv := newHTTPServer(t, h)
	t.Cleanup(func() { mcpserver.CloseAll(h) })
	params := `"params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`
	for i := range 20 {
		for _, body := range []string{
			fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"initialize",%s}]`, i, params),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize",%s,"Method":"x"}`, i, params),
		} {
			resp, _ := do(t, rawRequest(t, http.MethodPost, srv.URL, nil, body))
			resp.Body.Close()
			if n := mcpserver.LiveSessions(h); n > max {
				t.Fatalf("%d live sessions after %s, want at most %d", n, body[:20], max)
			}
		}
	}
}

// A session idle for SessionTimeout is closed and leaves the table.
func TestHTTPSessionTimeout(t *testing.T) {
	store, _ := openStore(t)
	// Long enough that an initialize is answered before the timer on any
	// machine, short enough to wait for.
	h := mcpserver.Handler(store, &mcpserver.Options{SessionTimeout: 500 * time.Millisecond})
	closed := make(chan string, 100)
	mcpserver.SetSessionClosed(h, func(id string) { closed <- id })
	srv := newHTTPServer(t, h)
	// The SDK starts a session's timer before it serves the initialize: on
	// a machine loaded past half a second per request the timer may close
	// the session first, and the answer is empty. Such a session is closed
	// too; try again.
	var id string
	for range 50 {
		resp, body := do(t, rawRequest(t, http.MethodPost, srv.URL, nil, initBody))
		if resp.StatusCode == http.StatusOK && strings.Contains(body, `"serverInfo"`) {
			id = resp.Header.Get("Mcp-Session-Id")
			break
		}
	}
	if id == "" {
		t.Fatal("no initialize was answered before its session's timer")
	}
	for got := ""; got != id; {
		select {
		case got = <-closed:
		case <-time.After(time.Minute):
			t.Fatal("an idle session was not closed within a minute")
		}
	}
	resp, _ := do(t, rawRequest(t, http.MethodPost, srv.URL, map[string]string{"Mcp-Session-Id": id}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request for the closed session: %s, want 404", resp.Status)
	}
}

// One client opening sessions in a loop leaves no more than MaxSessions
// live, and the goroutines of the sessions it pushed out end: the count
// does not grow with the number of sessions made.
func TestHTTPSessionsBounded(t *testing.T) {
	const max, made = 50, 1000
	store, _ := openStore(t)
	h := mcpserver.Handler(store, &mcpserver.Options{MaxSessions: max})
	var closed atomic.Int64
	done := make(chan struct{})
	mcpserver.SetSessionClosed(h, func(string) {
		if closed.Add(1) == made-max {
			close(done)
		}
	})
	srv := newHTTPServer(t, h)
	t.Cleanup(func() { mcpserver.CloseAll(h) })
	before := runtime.NumGoroutine()
	for range made {
		initialize(t, srv.URL, nil)
	}
	if n := mcpserver.LiveSessions(h); n != max {
		t.Errorf("%d live sessions after %d made, want %d", n, made, max)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%d of %d closed sessions ended within a minute", closed.Load(), made-max)
	}
	// Every pushed-out session's watcher has reported; a few may still be
	// returning. Each live session holds a few goroutines; the made
	// sessions would hold thousands.
	got := runtime.NumGoroutine() - before
	t.Logf("%d goroutines for %d live sessions after %d made", got, max, made)
	if got > 4*max+20 {
		t.Errorf("%d more goroutines after %d sessions made, %d live", got, made, max)
	}
}

// testUsers are users of a UsersHandler, each a directory, counting the
// stores opened and closed.
type testUsers struct {
	t      testing.TB
	tokens map[string]string // token: user
	dirs   map[string]string // user: directory

	opened, closedN atomic.Int64
	closed          chan string // the user whose store closed, when not nil
}

func (u *testUsers) User(token string) (string, bool) {
	name, ok := u.tokens[token]
	return name, ok
}

func (u *testUsers) Open(ctx context.Context, name string) (*memory.Store, func(), error) {
	s, err := memory.Open(u.dirs[name], &memory.Options{Now: clock})
	if err != nil {
		return nil, nil, err
	}
	u.opened.Add(1)
	return s, func() {
		s.Close()
		u.closedN.Add(1)
		if u.closed != nil {
			u.closed <- name
		}
	}, nil
}

func newTestUsers(t testing.TB, names ...string) *testUsers {
	u := &testUsers{t: t, tokens: map[string]string{}, dirs: map[string]string{}}
	for _, n := range names {
		u.tokens["token-of-"+n] = n
		u.dirs[n] = t.TempDir()
	}
	return u
}

// A user of a UsersHandler sees its own memory alone, through tools,
// resources and the prompt, and changes nobody else's.
func TestUsersIsolation(t *testing.T) {
	users := newTestUsers(t, "alice", "bob")
	srv := newHTTPServer(t, mcpserver.UsersHandler(users, nil))
	alice := tokenSession(t, srv.URL, "token-of-alice")
	bob := tokenSession(t, srv.URL, "token-of-bob")
	ctx := context.Background()

	ok(t, call(t, alice, "memory_write", write("facts/user.md", "# User\n\n> Summary: Alice\n\n- Secret: alice-secret-42\n", nil)))
	ok(t, call(t, alice, "memory_append", map[string]any{"path": "episodes/2026-02.md", "entry": "## Alice's trip\n\n- alice-secret-43", "summary": nil}))

	// Bob's tools see none of it.
	if s := ok(t, call(t, bob, "memory_list", nil)); strings.Contains(s, "facts/user.md") || strings.Contains(s, "2026-02") {
		t.Errorf("bob lists alice's files: %s", s)
	}
	refused(t, call(t, bob, "memory_read", read("facts/user.md")), "")
	if s := text(t, call(t, bob, "memory_search", map[string]any{"query": "alice-secret-42", "limit": nil})); strings.Contains(s, "alice-secret") {
		t.Errorf("bob's search finds alice's facts: %s", s)
	}
	// Nor resources, nor the prompt.
	list, err := bob.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 0 {
		t.Errorf("bob's resources: %v %s", err, mustJSON(t, list))
	}
	if rr, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///facts/user.md"}); err == nil {
		t.Errorf("bob read alice's resource: %s", mustJSON(t, rr))
	}
	p, err := bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt})
	if err != nil || strings.Contains(mustJSON(t, p), "Alice") {
		t.Errorf("bob's index: %v %s", err, mustJSON(t, p))
	}
	// Bob's writes land in bob's memory.
	ok(t, call(t, bob, "memory_write", write("facts/user.md", "# User\n\n> Summary: Bob\n\n- Name: Bob\n", nil)))
	s := ok(t, call(t, alice, "memory_read", read("facts/user.md")))
	if !strings.Contains(s, "alice-secret-42") || strings.Contains(s, "Bob") {
		t.Errorf("alice's file after bob's write: %s", s)
	}
	rr, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///facts/user.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "alice-secret-42") {
		t.Errorf("alice's resource: %v %s", err, mustJSON(t, rr))
	}
	p, err = alice.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt})
	if err != nil || !strings.Contains(mustJSON(t, p), "Alice") || strings.Contains(mustJSON(t, p), "Bob") {
		t.Errorf("alice's index: %v %s", err, mustJSON(t, p))
	}
}

// A session belongs to the user who opened it: its id with another user's
// token gets 404, on every method, and the session goes on; an unknown
// token gets 401.
func TestUsersSessionOfAnother(t *testing.T) {
	users := newTestUsers(t, "alice", "bob")
	srv := newHTTPServer(t, mcpserver.UsersHandler(users, nil))
	alice := tokenSession(t, srv.URL, "token-of-alice")
	ok(t, call(t, alice, "memory_write", write("facts/user.md", "# User\n\n- Secret: alice-secret-42\n", nil)))

	readCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_read","arguments":{"path":"facts/user.md","line":null}}}`
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = readCall
		}
		hdr := map[string]string{"Mcp-Session-Id": alice.ID(), "Authorization": "Bearer token-of-bob", "Mcp-Protocol-Version": "2025-11-25"}
		resp, text := do(t, rawRequest(t, method, srv.URL, hdr, body))
		if resp.StatusCode != http.StatusNotFound || strings.Contains(text, "alice-secret") {
			t.Errorf("%s of alice's session with bob's token: %s %q, want 404", method, resp.Status, text)
		}
		hdr["Authorization"] = "Bearer token-of-eve"
		if resp, _ := do(t, rawRequest(t, method, srv.URL, hdr, body)); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with an unknown token: %s, want 401", method, resp.Status)
		}
	}
	if s := ok(t, call(t, alice, "memory_read", read("facts/user.md"))); !strings.Contains(s, "alice-secret-42") {
		t.Errorf("alice's session after bob's attempts: %s", s)
	}
}

// A user's store opens on its first request and closes once the user has
// no session left (a minute after, or when ReleaseIdle says so); its next
// session opens it again. Another user's store stays open meanwhile.
func TestUsersStoreReleasedWhenIdle(t *testing.T) {
	users := newTestUsers(t, "alice", "bob")
	users.closed = make(chan string, 4)
	h := mcpserver.UsersHandler(users, nil)
	sessionClosed := make(chan string, 4)
	mcpserver.SetSessionClosed(h, func(id string) { sessionClosed <- id })
	srv := newHTTPServer(t, h)
	waitFor := func(ch chan string, want string) {
		t.Helper()
		select {
		case got := <-ch:
			if got != want {
				t.Fatalf("%s closed, want %s", got, want)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s not closed within a minute", want)
		}
	}
	a1 := tokenSession(t, srv.URL, "token-of-alice")
	a2 := tokenSession(t, srv.URL, "token-of-alice")
	b := tokenSession(t, srv.URL, "token-of-bob")
	ok(t, call(t, a1, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Prefers tea.", "summary": nil}))
	if n := users.opened.Load(); n != 2 {
		t.Fatalf("%d stores opened for two users", n)
	}
	a1.Close()
	waitFor(sessionClosed, a1.ID())
	mcpserver.ReleaseIdle(h)
	ok(t, call(t, a2, "memory_list", nil)) // alice's store is still open
	a2.Close()
	waitFor(sessionClosed, a2.ID())
	if n := users.closedN.Load(); n != 0 {
		t.Fatalf("%d stores closed before they were idle", n)
	}
	mcpserver.AwaitUnused(h, "alice")
	mcpserver.ReleaseIdle(h)
	waitFor(users.closed, "alice")
	ok(t, call(t, b, "memory_list", nil))
	a3 := tokenSession(t, srv.URL, "token-of-alice")
	if s := ok(t, call(t, a3, "memory_read", read("facts/user.md"))); !strings.Contains(s, "Prefers tea") {
		t.Errorf("alice's memory after it was reopened: %s", s)
	}
	if n := users.opened.Load(); n != 3 {
		t.Errorf("%d stores opened, want 3 (alice's twice)", n)
	}
	b.Close()
	waitFor(sessionClosed, b.ID())
	a3.Close()
	waitFor(sessionClosed, a3.ID())
	mcpserver.AwaitUnused(h, "alice")
	mcpserver.AwaitUnused(h, "bob")
	mcpserver.ReleaseIdle(h)
	if o, c := users.opened.Load(), users.closedN.Load(); o != 3 || c != 3 {
		t.Errorf("%d stores opened, %d closed; want 3 and 3", o, c)
	}
}

// The users' sessions, made at once, each see their own memory (run with
// -race).
func TestUsersConcurrent(t *testing.T) {
	names := []string{"u0", "u1", "u2", "u3", "u4", "u5"}
	users := newTestUsers(t, names...)
	srv := newHTTPServer(t, mcpserver.UsersHandler(users, nil))
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			for i := range 3 {
				cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{
					Endpoint: srv.URL, HTTPClient: &http.Client{Transport: bearerTransport{"token-of-" + n}}, MaxRetries: -1,
				}, inSession)
				if err != nil {
					t.Error(err)
					return
				}
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_append", Arguments: map[string]any{"path": "facts/user.md", "entry": fmt.Sprintf("- Note %d of %s.", i, n), "summary": nil}})
				if err != nil || res.IsError {
					t.Errorf("%s: %v %+v", n, err, res)
				}
				cs.Close()
			}
		})
	}
	wg.Wait()
	for _, n := range names {
		s, err := memory.Open(users.dirs[n], nil)
		if err != nil {
			t.Fatal(err)
		}
		text, _ := s.Read(context.Background(), "facts/user.md")
		s.Close()
		for _, other := range names {
			if other != n && strings.Contains(text, "of "+other+".") {
				t.Errorf("%s's facts hold %s's note: %s", n, other, text)
			}
		}
	}
}
