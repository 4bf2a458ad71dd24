package mcpserver_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/mdmemory/memory/mcpserver"
)

// rawSession is a session opened with plain HTTP requests, as a client
// that holds no event stream open: what it costs is the server's.
type rawSession struct {
	url, id, token string
}

// send posts one JSON-RPC message in the session and reads the answer
// whole.
func (s *rawSession) send(tb testing.TB, body string) {
	tb.Helper()
	hdr := map[string]string{"Mcp-Session-Id": s.id, "Mcp-Protocol-Version": "2025-11-25"}
	if s.token != "" {
		hdr["Authorization"] = "Bearer " + s.token
	}
	resp, text := do(tb, rawRequest(tb, http.MethodPost, s.url, hdr, body))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		tb.Fatalf("%s: %s %s", body, resp.Status, text)
	}
	if strings.Contains(text, `"isError":true`) {
		tb.Fatalf("%s: %s", body, text)
	}
}

// openRaw opens a session at url with token, and makes one memory_list
// call in it.
func openRaw(tb testing.TB, url, token string) *rawSession {
	tb.Helper()
	var hdr map[string]string
	if token != "" {
		hdr = map[string]string{"Authorization": "Bearer " + token}
	}
	s := &rawSession{url: url, id: initialize(tb, url, hdr), token: token}
	s.send(tb, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(tb, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`)
	return s
}

// close deletes the session.
func (s *rawSession) close(tb testing.TB) {
	tb.Helper()
	hdr := map[string]string{"Mcp-Session-Id": s.id}
	if s.token != "" {
		hdr["Authorization"] = "Bearer " + s.token
	}
	resp, _ := do(tb, rawRequest(tb, http.MethodDelete, s.url, hdr, ""))
	if resp.StatusCode != http.StatusNoContent {
		tb.Fatalf("DELETE: %s", resp.Status)
	}
}

// heap returns the bytes of live heap after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// sys returns the bytes the runtime holds from the system.
func sys() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Sys
}

// BenchmarkHTTPInitialize measures one client sending initialize requests
// over loopback to a Handler with the default bounds (1,000 sessions, the
// longest-idle closed past them): each makes a session and leaves it. Run
// with -benchtime=20000x for the figure. It reports the live heap
// the sessions left (client and server: one process), the memory the
// process holds from the system (sys-MB: the first run's is the one to
// read), and the goroutines and sessions left.
func BenchmarkHTTPInitialize(b *testing.B) {
	store, _ := openStore(b)
	h := mcpserver.Handler(store, nil)
	srv := newHTTPServer(b, h)
	b.Cleanup(func() { mcpserver.CloseAll(h) })
	before, h0 := runtime.NumGoroutine(), heap()
	for b.Loop() {
		initialize(b, srv.URL, nil)
	}
	b.StopTimer()
	b.ReportMetric(float64(int64(heap())-int64(h0))/(1<<20), "heap-MB")
	b.ReportMetric(float64(sys())/(1<<20), "sys-MB")
	b.ReportMetric(float64(runtime.NumGoroutine()-before), "goroutines")
	b.ReportMetric(float64(mcpserver.LiveSessions(h)), "sessions")
}

// BenchmarkHTTPSessions measures 1,000 live HTTP sessions, each with one
// memory_list call (and so a conversation), held idle: the heap and the
// goroutines they take, per 1,000; then what remains once they are
// deleted.
func BenchmarkHTTPSessions(b *testing.B) {
	const n = 1000
	store, _ := openStore(b)
	h := mcpserver.Handler(store, nil)
	srv := newHTTPServer(b, h)
	for b.Loop() {
		g0, h0 := runtime.NumGoroutine(), heap()
		sessions := make([]*rawSession, n)
		for i := range sessions {
			sessions[i] = openRaw(b, srv.URL, "")
		}
		g1, h1 := runtime.NumGoroutine(), heap()
		for _, s := range sessions {
			s.close(b)
		}
		for mcpserver.LiveSessions(h) > 0 {
			runtime.Gosched()
		}
		h2 := heap()
		b.ReportMetric(float64(g1-g0), "goroutines/1000-sessions")
		b.ReportMetric(float64(int64(h1)-int64(h0))/(1<<20), "heap-MB/1000-sessions")
		b.ReportMetric(float64(int64(h2)-int64(h0))/(1<<20), "heap-MB-after-delete")
	}
}

// BenchmarkHTTPUsers measures 1,000 users served by one UsersHandler over
// loopback, each with its own store (a directory) and one idle session
// that made a memory_list call: the heap and goroutines per user while
// they are idle; then per user once their sessions are deleted and their
// stores released.
func BenchmarkHTTPUsers(b *testing.B) {
	const n = 1000
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("user%04d", i)
	}
	users := newTestUsers(b, names...)
	h := mcpserver.UsersHandler(users, nil)
	srv := newHTTPServer(b, h)
	for b.Loop() {
		g0, h0 := runtime.NumGoroutine(), heap()
		sessions := make([]*rawSession, n)
		for i, name := range names {
			sessions[i] = openRaw(b, srv.URL, "token-of-"+name)
		}
		g1, h1 := runtime.NumGoroutine(), heap()
		for _, s := range sessions {
			s.close(b)
		}
		// The sessions' watchers end as their sessions close: wait for
		// the last, then release the stores as a minute's idling would.
		for mcpserver.LiveSessions(h) > 0 {
			runtime.Gosched()
		}
		mcpserver.ReleaseIdle(h)
		h2 := heap()
		b.ReportMetric(float64(int64(h1)-int64(h0))/n, "heap-B/idle-user")
		b.ReportMetric(float64(g1-g0)/n, "goroutines/idle-user")
		b.ReportMetric(float64(int64(h2)-int64(h0))/n, "heap-B/released-user")
		b.ReportMetric(float64(users.opened.Load()), "stores-opened")
	}
}

// BenchmarkHTTPToolCall measures the same tools/call, a memory_read of a
// small file, over loopback to one Handler, side by side: in a session of
// 2025-11-25 (the session opened before the timer starts), and as a
// stateless request of 2026-07-28, which carries its version in _meta and
// the routing headers and is served on its own. Each is one POST and its
// answer read whole, by the same client; allocations count both sides.
func BenchmarkHTTPToolCall(b *testing.B) {
	store, _ := openStore(b)
	seed := store.NewSession()
	if res, err := seed.Call(b.Context(), "memory_append", []byte(`{"path":"facts/user.md","entry":"- Likes tea.","summary":"The user"}`)); err != nil || res.IsError {
		b.Fatalf("seed: %v %+v", err, res)
	}
	h := mcpserver.Handler(store, nil)
	srv := newHTTPServer(b, h)
	b.Cleanup(func() { mcpserver.CloseAll(h) })
	args := map[string]any{"name": "memory_read", "arguments": read("facts/user.md")}

	b.Run("session-2025-11-25", func(b *testing.B) {
		s := openRaw(b, srv.URL, "")
		body := mustJSON(b, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": args})
		b.ReportAllocs()
		for b.Loop() {
			s.send(b, body)
		}
		b.StopTimer()
		s.close(b)
	})
	b.Run("stateless-2026-07-28", func(b *testing.B) {
		body := modernBody(b, "tools/call", args)
		hdr := modernHeaders("tools/call", "memory_read", nil)
		b.ReportAllocs()
		for b.Loop() {
			resp, text := do(b, rawRequest(b, http.MethodPost, srv.URL, hdr, body))
			if resp.StatusCode != http.StatusOK || !strings.Contains(text, "Likes tea") {
				b.Fatalf("%s %s", resp.Status, text)
			}
		}
	})
}
