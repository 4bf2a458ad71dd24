package mcpserver_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mdmemory/memory/mcpserver"
)

// The pool answers the plain requests of the stateless revision without
// the SDK's stateless handler; its checks of the transport are a second
// copy of the SDK's. TestPooledMatchesSDK sends the same requests, good
// and bad, to a handler with its pool and to one without (every request
// to the SDK), and requires the same status and the same JSON-RPC error
// code (or a result in both), so that the copies cannot drift apart.
func TestPooledMatchesSDK(t *testing.T) {
	storeA, _ := openStore(t)
	storeB, _ := openStore(t)
	pooledH := mcpserver.Handler(storeA, nil)
	sdkH := mcpserver.Handler(storeB, nil)
	mcpserver.SetNoPool(sdkH)
	pooledSrv, sdkSrv := newHTTPServer(t, pooledH), newHTTPServer(t, sdkH)

	type req struct {
		name    string
		method  string
		tool    string // Mcp-Name
		params  map[string]any
		headers map[string]string // set over modernHeaders'; "" removes one
		body    string            // instead of modernBody's, when not ""
	}
	readArgs := map[string]any{"name": "memory_read", "arguments": read("facts/none.md")}
	meta := func(version string, caps bool) map[string]any {
		m := map[string]any{mcp.MetaKeyProtocolVersion: version, mcp.MetaKeyClientInfo: map[string]any{"name": "raw", "version": "1"}}
		if caps {
			m[mcp.MetaKeyClientCapabilities] = map[string]any{}
		}
		return m
	}
	cases := []req{
		{name: "tools/list", method: "tools/list"},
		{name: "prompts/list", method: "prompts/list"},
		{name: "resources/list", method: "resources/list"},
		{name: "resources/templates/list", method: "resources/templates/list"},
		{name: "server/discover", method: "server/discover"},
		{name: "a tool call", method: "tools/call", tool: "memory_read", params: readArgs},
		{name: "a tool call named in Base64", method: "tools/call", tool: "=?base64?" + base64.StdEncoding.EncodeToString([]byte("memory_read")) + "?=", params: readArgs},
		{name: "a tool call without its arguments", method: "tools/call", tool: "memory_read", params: map[string]any{"name": "memory_read"}},
		{name: "an unknown tool", method: "tools/call", tool: "no_such_tool", params: map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}},
		{name: "an unknown prompt", method: "prompts/get", tool: "nope", params: map[string]any{"name": "nope"}},
		{name: "the index prompt", method: "prompts/get", tool: mcpserver.IndexPrompt, params: map[string]any{"name": mcpserver.IndexPrompt}},
		{name: "a missing resource", method: "resources/read", tool: mcpserver.URIPrefix + "facts/none.md", params: map[string]any{"uri": mcpserver.URIPrefix + "facts/none.md"}},
		{name: "no Accept", method: "tools/list", headers: map[string]string{"Accept": ""}},
		{name: "Accept JSON alone", method: "tools/list", headers: map[string]string{"Accept": "application/json"}},
		{name: "Accept a stream alone", method: "tools/call", tool: "memory_read", params: readArgs, headers: map[string]string{"Accept": "text/event-stream"}},
		{name: "Accept anything", method: "tools/list", headers: map[string]string{"Accept": "*/*"}},
		{name: "Accept by type and case", method: "tools/list", headers: map[string]string{"Accept": "Application/*;q=0.9, TEXT/*"}},
		{name: "Accept other types", method: "tools/list", headers: map[string]string{"Accept": "text/html, image/png"}},
		{name: "Content-Type text", method: "tools/list", headers: map[string]string{"Content-Type": "text/plain"}},
		{name: "Content-Type with a charset", method: "tools/list", headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{name: "Mcp-Method missing", method: "tools/list", headers: map[string]string{"Mcp-Method": ""}},
		{name: "Mcp-Method other", method: "tools/list", headers: map[string]string{"Mcp-Method": "prompts/list"}},
		{name: "Mcp-Name missing", method: "tools/call", params: readArgs},
		{name: "Mcp-Name other", method: "tools/call", tool: "memory_search", params: readArgs},
		{name: "Mcp-Name bad Base64", method: "tools/call", tool: "=?base64?!!!?=", params: readArgs},
		{name: "version header missing", method: "tools/list", headers: map[string]string{"Mcp-Protocol-Version": ""}},
		{name: "version header old", method: "tools/list", headers: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
		{name: "version header unknown", method: "tools/list", headers: map[string]string{"Mcp-Protocol-Version": "2099-01-01"}},
		{name: "_meta version unknown", method: "tools/list", params: map[string]any{"_meta": meta("2099-01-01", true)}, headers: map[string]string{"Mcp-Protocol-Version": "2099-01-01"}},
		{name: "_meta version other than the header", method: "tools/list", params: map[string]any{"_meta": meta("2025-11-25", true)}},
		{name: "no client capabilities", method: "tools/list", params: map[string]any{"_meta": meta(mcpserver.StatelessRevision, false)}},
		{name: "a notification", method: "notifications/cancelled", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			send := func(url string) (int, rpc) {
				hdr := modernHeaders(c.method, c.tool, nil)
				body := c.body
				if body == "" {
					body = modernBody(t, c.method, c.params)
				}
				r := rawRequest(t, http.MethodPost, url, hdr, body)
				for k, v := range c.headers {
					if v == "" {
						r.Header.Del(k)
					} else {
						r.Header.Set(k, v)
					}
				}
				resp, text := do(t, r)
				if ct := resp.Header.Get("Content-Type"); text == "" || !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") {
					return resp.StatusCode, rpc{}
				}
				return resp.StatusCode, answer(t, text)
			}
			gotStatus, got := send(pooledSrv.URL)
			wantStatus, want := send(sdkSrv.URL)
			if gotStatus != wantStatus {
				t.Errorf("status %d through the pool, %d through the SDK's handler", gotStatus, wantStatus)
			}
			code := func(m rpc) int64 {
				if m.Error == nil {
					return 0
				}
				return m.Error.Code
			}
			if code(got) != code(want) || (got.Result == nil) != (want.Result == nil) {
				t.Errorf("through the pool: error %d, result %.80s; through the SDK's handler: error %d, result %.80s", code(got), got.Result, code(want), want.Result)
			}
		})
	}
	if mcpserver.Pooled(pooledH, "") < 1 {
		t.Error("the pool served none of the good requests")
	}
	if mcpserver.Pooled(sdkH, "") > 0 {
		t.Error("the handler without a pool pooled")
	}
}

// TestErrorStatus: the statuses of SEP-2575, as the SDK gives them to
// the errors it answers in a request of the stateless revision.
func TestErrorStatus(t *testing.T) {
	for code, want := range map[int64]int{
		jsonrpc.CodeMethodNotFound:                http.StatusNotFound,
		jsonrpc.CodeInvalidParams:                 http.StatusBadRequest,
		mcp.CodeUnsupportedProtocolVersion:        http.StatusBadRequest,
		mcp.CodeMissingRequiredClientCapabilities: http.StatusBadRequest,
		jsonrpc.CodeInternalError:                 http.StatusOK,
	} {
		resp := &jsonrpc.Response{Error: &jsonrpc.Error{Code: code, Message: "x"}}
		if got := mcpserver.ErrorStatus(resp); got != want {
			t.Errorf("code %d: status %d, want %d", code, got, want)
		}
	}
	if got := mcpserver.ErrorStatus(&jsonrpc.Response{}); got != http.StatusOK {
		t.Errorf("a result: status %d", got)
	}
	if got := mcpserver.ErrorStatus(&jsonrpc.Response{Error: errors.New("plain")}); got != http.StatusOK {
		t.Errorf("an error that is not a JSON-RPC one: status %d", got)
	}
}
