package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests of the stateless revision, 2026-07-28: requests that carry
// their protocol version, served each on its own beside the sessions of
// 2025-11-25.

// modernBody returns a request of the stateless revision: method with
// params, and the _meta every such request carries.
func modernBody(t testing.TB, method string, params map[string]any) string {
	t.Helper()
	p := map[string]any{"_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    mcpserver.StatelessRevision,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
	}}
	for k, v := range params {
		p[k] = v
	}
	return mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": p})
}

// modernHeaders returns the headers of a request of the stateless
// revision for method, naming name (a tool's, a prompt's or a resource's
// URI) when it is not "", with extra added.
func modernHeaders(method, name string, extra map[string]string) map[string]string {
	hdr := map[string]string{"Mcp-Protocol-Version": mcpserver.StatelessRevision, "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	for k, v := range extra {
		hdr[k] = v
	}
	return hdr
}

// answer decodes the JSON-RPC answer in body, a JSON object or an event
// stream whose last data line holds it.
func answer(t testing.TB, body string) rpc {
	t.Helper()
	data := body
	if !strings.HasPrefix(strings.TrimSpace(body), "{") {
		data = ""
		for _, l := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"id"`) {
				data = d
			}
		}
	}
	var m rpc
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("the answer %q is not a JSON-RPC message: %v", body, err)
	}
	return m
}

// modernPost posts a request of the stateless revision and returns the
// response and its answer.
func modernPost(t testing.TB, url, method, name string, params map[string]any, extra map[string]string) (*http.Response, rpc) {
	t.Helper()
	resp, body := do(t, rawRequest(t, http.MethodPost, url, modernHeaders(method, name, extra), modernBody(t, method, params)))
	return resp, answer(t, body)
}

// statelessClient connects the SDK's client, which speaks 2026-07-28 when
// the server does, with token on every request when it is not "".
func statelessClient(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearerTransport{token}}
	}
	cs, err := newClient().Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != mcpserver.StatelessRevision || cs.ID() != "" {
		t.Fatalf("the SDK's client speaks %q with session %q; want %s without a session", v, cs.ID(), mcpserver.StatelessRevision)
	}
	return cs
}

// One endpoint serves both revisions at once: the SDK's client of
// 2026-07-28 without a session, each request a conversation of its own,
// so that it edits an existing file only with the version memory_read
// gave; and a client of 2025-11-25 in a session, which edits what it read.
func TestStatelessHTTP(t *testing.T) {
	store, _ := openStore(t)
	h := mcpserver.Handler(store, nil)
	srv := newHTTPServer(t, h)
	modern := statelessClient(t, srv.URL, "")
	legacy := httpSession(t, srv.URL)

	ok(t, call(t, modern, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Likes tea.", "summary": "The user"}))
	s := ok(t, call(t, modern, "memory_read", read("facts/user.md")))
	v := versionOf(t, s)
	// The read was a request of its own: the patch that follows has read
	// nothing.
	refused(t, call(t, modern, "memory_patch", patch("facts/user.md", "tea", "coffee", nil)), "not read in this conversation")
	ok(t, call(t, modern, "memory_patch", patch("facts/user.md", "tea", "coffee", v)))
	// The version it read is stale now.
	refused(t, call(t, modern, "memory_patch", patch("facts/user.md", "coffee", "cocoa", v)), "")

	// The session's conversation goes on as before.
	ok(t, call(t, legacy, "memory_read", read("facts/user.md")))
	ok(t, call(t, legacy, "memory_patch", patch("facts/user.md", "coffee", "cocoa", nil)))
	if v := legacy.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("the session speaks %s", v)
	}
	// Only the session is one: the stateless requests made none. They
	// were served by the lasting server sessions of the pool, which
	// holds at least one, idle.
	if n := mcpserver.LiveSessions(h); n != 1 {
		t.Errorf("%d live sessions, want 1", n)
	}
	if n := mcpserver.Pooled(h, ""); n < 1 {
		t.Errorf("%d sessions idle in the pool, want at least 1", n)
	}
	text, err := store.Read(context.Background(), "facts/user.md")
	if err != nil || !strings.Contains(text, "cocoa") {
		t.Errorf("facts/user.md: %v %q", err, text)
	}

	// Resources and the prompt, statelessly.
	rr, err := modern.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory:///facts/user.md"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "cocoa") || rr.Contents[0].Meta["version"] == nil {
		t.Errorf("resources/read: %v %s", err, mustJSON(t, rr))
	}
	p, err := modern.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: mcpserver.IndexPrompt})
	if err != nil || !strings.Contains(mustJSON(t, p), "facts/user.md") {
		t.Errorf("prompts/get: %v %s", err, mustJSON(t, p))
	}
}

// What a request of 2026-07-28 gets on the wire: server/discover lists
// both revisions, no session id is made, the lists that change only with
// the program may be kept (ttlMs), those of memory not; the routing
// headers are checked against the body, an Mcp-Name in Base64 decoded;
// an unknown or removed method gets 404, an unsupported version 400 with
// the versions supported, a GET 405.
func TestStatelessHTTPWire(t *testing.T) {
	store, _ := openStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	url := srv.URL

	resp, m := modernPost(t, url, "server/discover", "", nil, nil)
	var disc struct {
		SupportedVersions []string `json:"supportedVersions"`
		TTLMs             int      `json:"ttlMs"`
		CacheScope        string   `json:"cacheScope"`
	}
	if resp.StatusCode != http.StatusOK || m.Error != nil || json.Unmarshal(m.Result, &disc) != nil {
		t.Fatalf("server/discover: %s %s", resp.Status, mustJSON(t, m))
	}
	if !slices.Contains(disc.SupportedVersions, "2026-07-28") || !slices.Contains(disc.SupportedVersions, "2025-11-25") {
		t.Errorf("server/discover lists %v", disc.SupportedVersions)
	}
	if want := int(mcpserver.ListTTL / time.Millisecond); disc.TTLMs != want || disc.CacheScope != "public" {
		t.Errorf("server/discover: ttlMs %d, cacheScope %q; want %d, public", disc.TTLMs, disc.CacheScope, want)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("a stateless request got the session id %q", id)
	}

	for _, c := range []struct {
		method string
		ttl    int
		scope  string
	}{
		{"tools/list", int(mcpserver.ListTTL / time.Millisecond), "public"},
		{"prompts/list", int(mcpserver.ListTTL / time.Millisecond), "public"},
		{"resources/templates/list", int(mcpserver.ListTTL / time.Millisecond), "public"},
		{"resources/list", 0, "private"},
	} {
		resp, m := modernPost(t, url, c.method, "", nil, nil)
		var res struct {
			TTLMs      *int   `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
		}
		if resp.StatusCode != http.StatusOK || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.TTLMs == nil {
			t.Errorf("%s: %s %s", c.method, resp.Status, mustJSON(t, m))
			continue
		}
		if *res.TTLMs != c.ttl || res.CacheScope != c.scope {
			t.Errorf("%s: ttlMs %d, cacheScope %q; want %d, %q", c.method, *res.TTLMs, res.CacheScope, c.ttl, c.scope)
		}
	}

	args := map[string]any{"name": "memory_list", "arguments": map[string]any{}}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	for _, c := range []struct {
		name   string
		hdr    map[string]string // replacing those of modernHeaders
		status int
		code   int64 // 0: a result
	}{
		{"headers match", nil, http.StatusOK, 0},
		{"Mcp-Name in Base64", map[string]string{"Mcp-Name": b64("memory_list")}, http.StatusOK, 0},
		{"Mcp-Name names another tool", map[string]string{"Mcp-Name": "memory_read"}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"Mcp-Name in Base64 names another tool", map[string]string{"Mcp-Name": b64("memory_read")}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"Mcp-Name not Base64", map[string]string{"Mcp-Name": "=?base64?!!!?="}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"Mcp-Name missing", map[string]string{"Mcp-Name": ""}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"Mcp-Method names another method", map[string]string{"Mcp-Method": "tools/list"}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"Mcp-Method missing", map[string]string{"Mcp-Method": ""}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"MCP-Protocol-Version says another version than _meta", map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
		{"MCP-Protocol-Version missing", map[string]string{"Mcp-Protocol-Version": ""}, http.StatusBadRequest, mcp.CodeHeaderMismatch},
	} {
		hdr := modernHeaders("tools/call", "memory_list", nil)
		for k, v := range c.hdr {
			if v == "" {
				delete(hdr, k)
			} else {
				hdr[k] = v
			}
		}
		resp, body := do(t, rawRequest(t, http.MethodPost, url, hdr, modernBody(t, "tools/call", args)))
		m := answer(t, body)
		switch {
		case resp.StatusCode != c.status:
			t.Errorf("%s: %s %s, want %d", c.name, resp.Status, body, c.status)
		case c.code == 0 && (m.Error != nil || !strings.Contains(string(m.Result), `"content"`)):
			t.Errorf("%s: %s", c.name, body)
		case c.code != 0 && (m.Error == nil || m.Error.Code != c.code || string(m.ID) != "7"):
			t.Errorf("%s: %s, want error %d with the request's id", c.name, body, c.code)
		}
	}

	// Methods the revision removed, and one that never was: 404, -32601.
	for _, method := range []string{"initialize", "ping", "logging/setLevel", "no/such"} {
		params := map[string]any{}
		if method == "initialize" {
			params = map[string]any{"protocolVersion": "2026-07-28", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}
		} else if method == "logging/setLevel" {
			params = map[string]any{"level": "info"}
		}
		resp, m := modernPost(t, url, method, "", params, nil)
		if resp.StatusCode != http.StatusNotFound || m.Error == nil || m.Error.Code != -32601 {
			t.Errorf("%s: %s %s, want 404 and -32601", method, resp.Status, mustJSON(t, m))
		}
	}

	// A version the server does not have: 400, -32022, and the versions
	// it has.
	body := strings.ReplaceAll(modernBody(t, "tools/list", nil), mcpserver.StatelessRevision, "2099-01-01")
	resp, text := do(t, rawRequest(t, http.MethodPost, url, modernHeaders("tools/list", "", map[string]string{"Mcp-Protocol-Version": "2099-01-01"}), body))
	if m := answer(t, text); resp.StatusCode != http.StatusBadRequest || m.Error == nil || m.Error.Code != mcp.CodeUnsupportedProtocolVersion || !strings.Contains(text, `"2026-07-28"`) {
		t.Errorf("an unsupported version: %s %s", resp.Status, text)
	}

	// No stream to open: GET is not part of the revision.
	resp, text = do(t, rawRequest(t, http.MethodGet, url, map[string]string{"Mcp-Protocol-Version": mcpserver.StatelessRevision}, ""))
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %s %s, want 405", resp.Status, text)
	}
}

// A session id on a request of 2026-07-28 is ignored: the request is not
// the session's, and does not share its conversation.
func TestStatelessIgnoresSessionID(t *testing.T) {
	store, _ := openStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	legacy := httpSession(t, srv.URL)
	ok(t, call(t, legacy, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Likes tea.", "summary": nil}))
	ok(t, call(t, legacy, "memory_read", read("facts/user.md")))

	resp, m := modernPost(t, srv.URL, "tools/call", "memory_patch", map[string]any{"name": "memory_patch", "arguments": patch("facts/user.md", "tea", "coffee", nil)}, map[string]string{"Mcp-Session-Id": legacy.ID()})
	if resp.StatusCode != http.StatusOK || m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("a stateless patch with the session's id, without a version: %s %s; want refused", resp.Status, mustJSON(t, m))
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		t.Errorf("the answer echoes the session id %q", id)
	}
	// The session itself still edits what it read.
	ok(t, call(t, legacy, "memory_patch", patch("facts/user.md", "tea", "coffee", nil)))
}

// The protections of Handler hold for requests of 2026-07-28 as for
// sessions: Host and Origin (403), the token (401), the body's time (408)
// and size (413).
func TestStatelessGuards(t *testing.T) {
	store, _ := openStore(t)
	const token = "correct-horse-battery-staple"
	h := mcpserver.Handler(store, &mcpserver.Options{Token: token})
	mcpserver.SetBodyTimeout(h, 50*time.Millisecond)
	srv := newHTTPServer(t, h)
	auth := map[string]string{"Authorization": "Bearer " + token}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range auth {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		name   string
		hdr    map[string]string
		status int
	}{
		{"the token", auth, http.StatusOK},
		{"no token", map[string]string{}, http.StatusUnauthorized},
		{"a wrong token", map[string]string{"Authorization": "Bearer correct-horse"}, http.StatusUnauthorized},
		{"another Host", with(map[string]string{"Host": "evil.example"}), http.StatusForbidden},
		{"another Origin", with(map[string]string{"Origin": "https://evil.example"}), http.StatusForbidden},
		{"cross-site without Origin", with(map[string]string{"Sec-Fetch-Site": "cross-site"}), http.StatusForbidden},
	} {
		resp, body := do(t, rawRequest(t, http.MethodPost, srv.URL, modernHeaders("tools/call", "memory_list", c.hdr), modernBody(t, "tools/call", map[string]any{"name": "memory_list", "arguments": map[string]any{}})))
		if resp.StatusCode != c.status {
			t.Errorf("%s: %s %s, want %d", c.name, resp.Status, body, c.status)
		}
	}
	ok(t, call(t, statelessClient(t, srv.URL, token), "memory_list", nil))

	large := modernBody(t, "tools/list", map[string]any{"x": strings.Repeat("a", 5<<20)})
	// (On a handler with the usual time for a body: 5 MiB may take more
	// than the 50 ms of the one above.)
	resp, _ := do(t, rawRequest(t, http.MethodPost, newHTTPServer(t, mcpserver.Handler(store, &mcpserver.Options{Token: token})).URL, modernHeaders("tools/list", "", auth), large))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 5 MiB body: %s, want 413", resp.Status)
	}

	// One byte of the body, and no more: 408, and the connection closed.
	// (The read's deadline is a guard against a hang, not a timing
	// assumption.)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: 100\r\n\r\n{", srv.Listener.Addr(), token)
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusRequestTimeout {
		t.Errorf("stalled body: %s, want 408", r.Status)
	}
}

// Each token its own memory in requests of 2026-07-28 too: a user sees
// and changes its own memory alone, through tools, resources and the
// prompt; an unknown token gets 401; a user's store, held for a request
// alone, is released once idle.
func TestStatelessUsers(t *testing.T) {
	users := newTestUsers(t, "alice", "bob")
	h := mcpserver.UsersHandler(users, nil)
	srv := newHTTPServer(t, h)
	alice := statelessClient(t, srv.URL, "token-of-alice")
	bob := statelessClient(t, srv.URL, "token-of-bob")
	ctx := context.Background()

	ok(t, call(t, alice, "memory_write", write("facts/user.md", "# User\n\n> Summary: Alice\n\n- Secret: alice-secret-42\n", nil)))
	if s := ok(t, call(t, bob, "memory_list", nil)); strings.Contains(s, "facts/user.md") {
		t.Errorf("bob lists alice's files: %s", s)
	}
	refused(t, call(t, bob, "memory_read", read("facts/user.md")), "")
	if s := text(t, call(t, bob, "memory_search", map[string]any{"query": "alice-secret-42", "limit": nil})); strings.Contains(s, "alice-secret") {
		t.Errorf("bob's search finds alice's facts: %s", s)
	}
	if list, err := bob.ListResources(ctx, nil); err != nil || len(list.Resources) != 0 {
		t.Errorf("bob's resources: %v %s", err, mustJSON(t, list))
	}
	if rr, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///facts/user.md"}); err == nil {
		t.Errorf("bob read alice's resource: %s", mustJSON(t, rr))
	}
	if p, err := bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt}); err != nil || strings.Contains(mustJSON(t, p), "Alice") {
		t.Errorf("bob's index: %v %s", err, mustJSON(t, p))
	}
	ok(t, call(t, bob, "memory_write", write("facts/user.md", "# User\n\n> Summary: Bob\n\n- Name: Bob\n", nil)))
	if s := ok(t, call(t, alice, "memory_read", read("facts/user.md"))); !strings.Contains(s, "alice-secret-42") || strings.Contains(s, "Bob") {
		t.Errorf("alice's file after bob's write: %s", s)
	}

	resp, _ := do(t, rawRequest(t, http.MethodPost, srv.URL, modernHeaders("tools/list", "", map[string]string{"Authorization": "Bearer token-of-carol"}), modernBody(t, "tools/list", nil)))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown token: %s, want 401", resp.Status)
	}

	// No session holds a store: once idle, each is released, and the
	// pool that served the user's requests with it.
	mcpserver.AwaitUnused(h, "alice")
	mcpserver.AwaitUnused(h, "bob")
	if n := mcpserver.Pooled(h, "alice"); n != 1 {
		t.Errorf("%d sessions idle in alice's pool, want 1", n)
	}
	mcpserver.ReleaseIdle(h)
	if n := mcpserver.Pooled(h, "alice"); n != -1 {
		t.Errorf("alice's pool after her store was released: %d", n)
	}
	if o, c := users.opened.Load(), users.closedN.Load(); o != 2 || c != 2 {
		t.Errorf("%d stores opened, %d closed; want 2 and 2", o, c)
	}
}

// Over standard input and output, a request that carries 2026-07-28 in
// _meta is served without initialize, on its own: server/discover lists
// the revision, and an edit of an existing file carries the version
// memory_read gave.
func TestStdioStateless(t *testing.T) {
	store, _ := openStore(t)
	p := runStdio(t, mcpserver.New(store, nil))
	callTool := func(name string, args map[string]any) (bool, string) {
		t.Helper()
		p.send(modernBody(t, "tools/call", map[string]any{"name": name, "arguments": args}))
		m, line := p.next()
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || len(res.Content) != 1 {
			t.Fatalf("%s: %s", name, line)
		}
		return res.IsError, res.Content[0].Text
	}

	p.send(modernBody(t, "server/discover", nil))
	if m, line := p.next(); m.Error != nil || !strings.Contains(string(m.Result), `"2026-07-28"`) || !strings.Contains(string(m.Result), `"2025-11-25"`) {
		t.Errorf("server/discover: %s", line)
	}
	// server/discover is of the stateless revision alone: without the
	// version it must carry, invalid params (a modern error), not the
	// SDK's -32601 of a server of sessions alone.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{}}`)
	if m, line := p.next(); m.Error == nil || m.Error.Code != -32602 || string(m.ID) != "3" {
		t.Errorf("server/discover without _meta: %s", line)
	}
	if isErr, s := callTool("memory_append", map[string]any{"path": "facts/user.md", "entry": "- Likes tea.", "summary": nil}); isErr {
		t.Fatalf("memory_append: %s", s)
	}
	_, s := callTool("memory_read", read("facts/user.md"))
	v := versionOf(t, s)
	if isErr, s := callTool("memory_patch", patch("facts/user.md", "tea", "coffee", nil)); !isErr || !strings.Contains(s, "not read in this conversation") {
		t.Errorf("a patch without a version after a read in another request: %v %s", isErr, s)
	}
	if isErr, s := callTool("memory_patch", patch("facts/user.md", "tea", "coffee", v)); isErr {
		t.Errorf("a patch with the version read: %s", s)
	}
}

// stalling is a Backend on a directory whose facts/memory.md, once armed,
// is read only when the read is cancelled: entered says a read began,
// cancelled that its context ended.
type stalling struct {
	*memory.Dir
	armed              *atomic.Bool
	entered, cancelled chan struct{}
}

func (s stalling) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	if name != "facts/memory.md" || !s.armed.Load() {
		return s.Dir.Read(ctx, name, limit)
	}
	s.entered <- struct{}{}
	<-ctx.Done()
	s.cancelled <- struct{}{}
	return memory.Content{}, ctx.Err()
}

// stallingStore opens a Store over a directory holding facts/memory.md,
// through a stalling backend (disarmed) whose reads wait for their
// context once armed.
func stallingStore(t *testing.T) (stalling, *memory.Store) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "facts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "facts", "memory.md"), []byte("# Memory\n\n> Summary: slow\n\n- x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := memory.OpenDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	b := stalling{Dir: d, armed: new(atomic.Bool), entered: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)}
	store, err := memory.OpenBackend(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return b, store
}

// A stateless request whose client goes away is cancelled: closing the
// request is its cancellation, in the 2026-07-28 revision; the next
// request is served.
func TestStatelessClientGoneCancels(t *testing.T) {
	b, store := stallingStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	b.armed.Store(true)

	ctx, cancel := context.WithCancel(context.Background())
	req := rawRequest(t, http.MethodPost, srv.URL, modernHeaders("tools/call", "memory_read", nil), modernBody(t, "tools/call", map[string]any{"name": "memory_read", "arguments": read("facts/memory.md")})).WithContext(ctx)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	wait := func(ch chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(time.Minute): // a guard against a hang, not a timing assumption
			t.Fatalf("%s: not within a minute", what)
		}
	}
	wait(b.entered, "the read began")
	cancel()
	wait(b.cancelled, "the read of a request whose client went away was cancelled")
	<-done
	b.armed.Store(false)
	ok(t, call(t, statelessClient(t, srv.URL, ""), "memory_list", nil))
}

// A request of a session of 2025-11-25 runs in the session, which its
// HTTP request's context does not reach: Options.Stop cancels it.
func TestStopCancelsSessionRequests(t *testing.T) {
	b, store := stallingStore(t)
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newHTTPServer(t, mcpserver.Handler(store, &mcpserver.Options{Stop: stop}))
	cs := httpSession(t, srv.URL)
	b.armed.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_read", Arguments: read("facts/memory.md")})
	}()
	<-b.entered
	cancel()
	select {
	case <-b.cancelled:
	case <-time.After(time.Minute): // a guard against a hang, not a timing assumption
		t.Fatal("the session's request was not cancelled by Stop")
	}
	<-done
}
