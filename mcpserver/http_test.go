package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newHTTPServer serves h on a loopback httptest server, closed when the
// test ends: its client connections first, so that a session a failed test
// left open (its event stream) does not keep Close waiting.
func newHTTPServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// httpSession opens an MCP session on the streamable HTTP endpoint url
// with the SDK's client, closed when the test ends.
func httpSession(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, inSession)
	if err != nil {
		t.Fatal(err)
	}
	if cs.ID() == "" {
		t.Fatal("the HTTP session has no id")
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Over streamable HTTP each MCP session is a conversation of its own: two
// sessions open at once, calling at the same time, do not share what they
// read. A write in one session to a file it has not read is refused,
// whatever the other read; its own writes need no version.
func TestHTTPSessionsAreConversations(t *testing.T) {
	store, _ := openStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	a, b := httpSession(t, srv.URL), httpSession(t, srv.URL)
	if a.ID() == b.ID() {
		t.Fatalf("two sessions with the id %q", a.ID())
	}

	// Each session writes its own file and rewrites it without a version,
	// both sessions at once.
	var wg sync.WaitGroup
	for _, c := range []struct {
		cs   *mcp.ClientSession
		path string
	}{{a, "facts/user.md"}, {b, "facts/memory.md"}} {
		wg.Go(func() {
			for i := range 5 {
				content := "# Notes\n\n- Round " + string(rune('0'+i)) + " of " + c.path + ".\n"
				res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_write", Arguments: write(c.path, content, nil)})
				if err != nil {
					t.Errorf("%s round %d: %v", c.path, i, err)
					return
				}
				if res.IsError {
					t.Errorf("%s round %d refused its own rewrite: %s", c.path, i, mustJSON(t, res.Content))
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Neither session has read the other's file.
	refused(t, call(t, a, "memory_write", write("facts/memory.md", "# Memory\n\n- From a.\n", nil)), "memory_read")
	refused(t, call(t, b, "memory_patch", patch("facts/user.md", "- Round 4", "- Round 5", nil)), "memory_read")

	// b reads a's file and may then change it; a, whose file it was,
	// must now read it again.
	ok(t, call(t, b, "memory_read", read("facts/user.md")))
	ok(t, call(t, b, "memory_patch", patch("facts/user.md", "- Round 4", "- Round 5", nil)))
	refused(t, call(t, a, "memory_write", write("facts/user.md", "# User\n\n- Lost b's patch.\n", nil)), "memory_read")
	v := versionOf(t, ok(t, call(t, a, "memory_read", read("facts/user.md"))))
	ok(t, call(t, a, "memory_write", write("facts/user.md", "# User\n\n- Kept.\n", v)))
}

// The conversation of an HTTP session is "mcp:" and the session id, and
// ends when the client deletes the session.
func TestHTTPConversationEndsWithSession(t *testing.T) {
	store, _ := openStore(t)
	hook, next := endedHook(t)
	var opts mcpserver.Options
	mcpserver.SetEnded(&opts, hook)
	srv := newHTTPServer(t, mcpserver.Handler(store, &opts))

	cs := httpSession(t, srv.URL)
	ok(t, call(t, cs, "memory_write", write("facts/user.md", "# User\n\n- Prefers tea.\n", nil)))
	id := "mcp:" + cs.ID()
	// While the session is open, the store holds its conversation: it
	// may rewrite the file it wrote.
	res, err := store.Session(id).Call(context.Background(), "memory_write", json.RawMessage(`{"path":"facts/user.md","content":"# User\n\n- Prefers green tea.\n","version":null}`))
	if err != nil || res.IsError {
		t.Fatalf("the session's conversation is not %q: %+v, %v", id, res, err)
	}
	if err := cs.Close(); err != nil { // DELETE
		t.Fatal(err)
	}
	if got := next(); got != id {
		t.Fatalf("conversation %q ended, want %q", got, id)
	}
	res, err = store.Session(id).Call(context.Background(), "memory_write", json.RawMessage(`{"path":"facts/user.md","content":"# User\n","version":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "memory_read") {
		t.Errorf("the ended conversation could still write: %+v", res)
	}
}

// Resources and the prompt over HTTP, and a host failure as a protocol
// error there too.
func TestHTTPResourcesPromptAndHostError(t *testing.T) {
	store, _ := openStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	cs := httpSession(t, srv.URL)
	ctx := context.Background()
	ok(t, call(t, cs, "memory_append", map[string]any{"path": "episodes/2026-02.md", "entry": "## Tokyo flight research\n\n- Lesson: book early.", "summary": nil}))
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != "memory:///episodes/2026-02.md" {
		t.Fatalf("resources %s", mustJSON(t, list.Resources))
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: list.Resources[0].URI})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "## Tokyo flight research") {
		t.Fatalf("read: %v %s", err, mustJSON(t, rr))
	}
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt})
	if err != nil || !strings.Contains(mustJSON(t, p.Messages), "episodes/2026-02.md") {
		t.Fatalf("prompt: %v %s", err, mustJSON(t, p))
	}
	store.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_list"}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("memory_list on a closed store over HTTP: %+v, %v; want a protocol error", res, err)
	}
}
