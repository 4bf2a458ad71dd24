package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpc is a JSON-RPC message as a test reads it.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// stdioPeer is the client end of a server run over StdioTransport on
// pipes, in this process.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter // the server's input
	out  *bufio.Reader  // the server's output
	done chan error     // Run's result
}

// runStdio runs srv over StdioTransport on pipes until the test ends or
// the peer closes the server's input.
func runStdio(t *testing.T, srv *mcp.Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := srv.Run(context.Background(), mcpserver.StdioTransport(inR, outW))
		outW.CloseWithError(io.EOF)
		p.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
	})
	return p
}

// send writes line and a line break to the server.
func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write %.80q: %v", line, err)
	}
}

// next reads the server's next message.
func (p *stdioPeer) next() (rpc, string) {
	p.t.Helper()
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("read the server's next message: %v (so far %q)", err, line)
	}
	var m rpc
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		p.t.Fatalf("the server wrote %q, not JSON: %v", line, err)
	}
	return m, line
}

// initialize opens the session with the protocol version version.
func (p *stdioPeer) initialize(version string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m, line := p.next(); string(m.ID) != `"init"` || m.Error != nil {
		p.t.Fatalf("initialize: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// ping sends a ping with the id id and requires its answer next.
func (p *stdioPeer) ping(id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
	if m, line := p.next(); string(m.ID) != id || m.Error != nil || string(m.Result) != "{}" {
		p.t.Fatalf("ping %s: the answer is %s", id, line)
	}
}

// end closes the server's input and returns what Run returned.
func (p *stdioPeer) end() error {
	p.t.Helper()
	p.in.Close()
	// Drain what the server still writes, so that it does not block.
	go io.Copy(io.Discard, p.out)
	select {
	case err := <-p.done:
		return err
	case <-time.After(time.Minute):
		p.t.Fatal("the server did not stop within a minute of the end of its input")
		return nil
	}
}

// Each line that is not a message the server can take is answered with a
// JSON-RPC error, -32700 or -32600 with "id": null, and the server goes on
// serving: the ping after each is answered, a tool call after them all
// too, and the end of input ends the server without an error.
func TestStdioMalformedInput(t *testing.T) {
	store, _ := openStore(t)
	p := runStdio(t, mcpserver.New(store, nil))
	p.initialize("2025-11-25")

	const parse, invalid = -32700, -32600
	for i, c := range []struct {
		name, line string
		code       int64
	}{
		{"not JSON", `not json`, parse},
		{"empty object", `{}`, invalid},
		{"truncated object", `{"jsonrpc":"2.0","id":2,"method":"ping"`, parse},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, invalid},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, invalid},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, invalid},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, invalid},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, invalid},
		{"empty batch", `[]`, invalid},
		{"string", `"ping"`, invalid},
		{"number", `42`, invalid},
		{"null", `null`, invalid},
		{"version 1.0", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, invalid},
		{"no version", `{"id":4,"method":"ping"}`, invalid},
		{"method a number", `{"jsonrpc":"2.0","id":5,"method":7}`, invalid},
		{"params a number", `{"jsonrpc":"2.0","id":6,"method":"ping","params":5}`, invalid},
		{"response without result", `{"jsonrpc":"2.0","id":7}`, invalid},
		{"response with both", `{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}`, invalid},
		{"longer than the limit", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"` + strings.Repeat("x", mcpserver.MaxLineLength) + `"}}`, invalid},
		{"trailing text", `{"jsonrpc":"2.0","id":9,"method":"ping"} x`, parse},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.t = t
			p.send(c.line)
			m, line := p.next()
			if m.Error == nil || m.Error.Code != c.code || string(m.ID) != "null" || !strings.Contains(line, `"id":null`) {
				t.Fatalf("answer %s, want the error %d with \"id\": null", line, c.code)
			}
			p.ping(`"after-` + string(rune('a'+i)) + `"`)
		})
	}
	p.t = t

	// Empty lines are skipped; a method the server does not have is
	// answered -32601 with the request's id, by the SDK.
	p.send("")
	p.send("  \r")
	p.send(`{"jsonrpc":"2.0","id":10,"method":"no/such/method"}`)
	if m, line := p.next(); m.Error == nil || m.Error.Code != -32601 || string(m.ID) != "10" {
		t.Fatalf("unknown method: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`)
	if m, line := p.next(); string(m.ID) != "11" || m.Error != nil || strings.Contains(line, `"isError":true`) {
		t.Fatalf("memory_list after the malformed lines: %s", line)
	}
	if err := p.end(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("Run after the end of input: %v", err)
	}
}

// A client that negotiated 2025-03-26, which had JSON-RPC batches, may send
// one: its requests are answered together, in one array.
func TestStdioBatch20250326(t *testing.T) {
	store, _ := openStore(t)
	p := runStdio(t, mcpserver.New(store, nil))
	p.initialize("2025-03-26")
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var answers []rpc
	if err := json.Unmarshal([]byte(line), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("the answer to a batch of two requests and a notification: %s (%v)", line, err)
	}
	ids := map[string]bool{}
	for _, a := range answers {
		if a.Error != nil {
			t.Errorf("an error in the batch's answers: %s", line)
		}
		ids[string(a.ID)] = true
	}
	if !ids["1"] || !ids["2"] {
		t.Errorf("the batch's answers have the ids %v, want 1 and 2", ids)
	}
	// An invalid element: the whole batch is an invalid request.
	p.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"},{}]`)
	if m, line := p.next(); m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "null" {
		t.Fatalf("a batch with an invalid element: %s", line)
	}
	p.ping("4")
}

// A request the client cancels with notifications/cancelled while it runs
// gets no answer; the session goes on.
func TestStdioCancelledRequestGetsNoAnswer(t *testing.T) {
	store, _ := openStore(t)
	srv := mcpserver.New(store, nil)
	started, returned := make(chan struct{}), make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "wait", Description: "waits until cancelled", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer close(returned)
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	p := runStdio(t, srv)
	p.initialize("2025-11-25")

	p.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"the user stopped it"}}`)
	<-returned
	p.ping("2")
	// A cancellation of a request already answered changes nothing.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	p.ping("3")

	p.in.Close()
	rest, err := io.ReadAll(p.out)
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	if strings.Contains(string(rest), `"slow"`) {
		t.Fatalf("the cancelled request was answered: %s", rest)
	}
}

// The initialize result advertises what the server does: tools and
// prompts, whose lists the SDK says it changes; resources without
// listChanged, since the files change on disk without the server
// knowing; no logging, completions or subscriptions.
func TestCapabilities(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	got := mustJSON(t, cs.InitializeResult().Capabilities)
	if want := `{"prompts":{"listChanged":true},"resources":{},"tools":{"listChanged":true}}`; got != want {
		t.Errorf("capabilities %s, want %s", got, want)
	}
}

// serverInfo.version is Version, the binary's version from its build
// information, never the placeholder of a replace directive.
func TestServerInfoVersion(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	got := cs.InitializeResult().ServerInfo.Version
	if got != mcpserver.Version() || !strings.HasPrefix(got, "devel") && !strings.HasPrefix(got, "v") || strings.Contains(got, "00010101000000") {
		t.Errorf("serverInfo.version %q, Version() %q", got, mcpserver.Version())
	}
	cs = connect(t, mcpserver.New(store, &mcpserver.Options{Version: "1.2.3"}))
	if got := cs.InitializeResult().ServerInfo.Version; got != "1.2.3" {
		t.Errorf("serverInfo.version %q with Options.Version 1.2.3", got)
	}
}

func TestVersionOf(t *testing.T) {
	placeholder := "v0.0.0-00010101000000-000000000000"
	dep := func(v string) *debug.Module {
		return &debug.Module{Path: "github.com/mdmemory/memory/mcpserver", Version: v}
	}
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}
	dirty := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"released command", debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Deps: []*debug.Module{dep("v1.2.0")}}, "v1.2.0"},
		{"pseudo-version from a clone", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126052259-cf2b4dd12345"}, Deps: []*debug.Module{dep(placeholder)}, Settings: vcs}, "v0.0.0-20261126052259-cf2b4dd12345"},
		{"a host that requires mcpserver", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: []*debug.Module{{Path: "example.com/x", Version: "v9.9.9"}, dep("v1.3.0")}}, "v1.3.0"},
		{"replaced by a released version", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: []*debug.Module{{Path: "github.com/mdmemory/memory/mcpserver", Version: "v1.0.0", Replace: &debug.Module{Path: "github.com/fork/mcpserver", Version: "v1.0.1"}}}}, "v1.0.1"},
		{"replace directive, revision", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: []*debug.Module{dep(placeholder)}, Settings: vcs}, "devel+0123456789ab"},
		{"replace directive, dirty tree", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Deps: []*debug.Module{dep(placeholder)}, Settings: dirty}, "devel+0123456789ab.dirty"},
		{"go test", debug.BuildInfo{Main: debug.Module{Path: "github.com/mdmemory/memory/mcpserver", Version: "(devel)"}}, "devel"},
		{"nothing", debug.BuildInfo{}, "devel"},
	} {
		if got := mcpserver.VersionOf(&c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// postJSON posts body to url with the headers of an MCP client.
func postJSON(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Over HTTP every JSON-RPC message is answered in JSON-RPC, in JSON: an
// unknown method -32601 with its id, what is not JSON or not a message
// -32700 or -32600 with "id": null, a batch -32600 since 2025-06-18;
// valid requests are served by the SDK as before.
func TestHTTPJSONRPCErrors(t *testing.T) {
	store, _ := openStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	resp := postJSON(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	if resp := postJSON(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", resp.Status)
	}

	for _, c := range []struct {
		name, session, body string
		status              int
		code                int64
		id                  string
	}{
		{"unknown method", session, `{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`, 200, -32601, "2"},
		{"unknown method, string id", session, `{"jsonrpc":"2.0","id":"x","method":"no/such/method"}`, 200, -32601, `"x"`},
		{"unknown method, no session", "", `{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`, 200, -32601, "3"},
		{"not JSON", session, `not json`, 400, -32700, "null"},
		{"truncated object", session, `{"jsonrpc":"2.0","id":4,"method":"ping"`, 400, -32700, "null"},
		{"empty object", session, `{}`, 400, -32600, "null"},
		{"object id", session, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, 400, -32600, "null"},
		{"batch", session, `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, 400, -32600, "null"},
		{"id on a notification", session, `{"jsonrpc":"2.0","id":6,"method":"notifications/initialized"}`, 400, -32600, "6"},
		{"no id on a request", session, `{"jsonrpc":"2.0","method":"tools/list"}`, 400, -32600, "null"},
		{"missing params", session, `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, 200, -32602, "7"},
		{"unknown session", "NOSUCHSESSION", `{"jsonrpc":"2.0","id":10,"method":"ping"}`, 404, -32600, "10"},
		{"body over the limit", session, `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("x", mcp.DefaultMaxRequestBodyBytes) + `"}}`, 413, -32600, "null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := postJSON(t, srv.URL, c.session, c.body)
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var m rpc
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != c.status || ct != "application/json" || json.Unmarshal(body, &m) != nil {
				t.Fatalf("%s %s: %s", resp.Status, ct, body)
			}
			if m.Error == nil || m.Error.Code != c.code || string(m.ID) != c.id || !strings.Contains(string(body), `"jsonrpc":"2.0"`) {
				t.Fatalf("answer %s, want the error %d with the id %s", body, c.code, c.id)
			}
		})
	}

	// A notification of an unknown method is accepted and ignored.
	if resp := postJSON(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/no_such_thing"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("an unknown notification: %s", resp.Status)
	}
	// The session still serves.
	resp = postJSON(t, srv.URL, session, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":8,"result":{}`) {
		t.Errorf("ping after the errors: %s %s", resp.Status, body)
	}
}
