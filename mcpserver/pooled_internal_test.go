package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two requests served by one pooled session each see their own _meta (the
// client's name and capabilities), not the first request's: the session
// keeps the first request's InitializeParams, which nothing of the server
// reads.
func TestPooledSessionPerRequestMeta(t *testing.T) {
	store, err := memory.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv := New(store, nil)
	type seen struct {
		ss      *mcp.ServerSession
		client  string // the request's own _meta clientInfo name
		initial string // the session's InitializeParams client name
	}
	var (
		mu    sync.Mutex
		seens []seen
	)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				s := seen{ss: req.GetSession().(*mcp.ServerSession)}
				if info, ok := req.GetParams().GetMeta()[mcp.MetaKeyClientInfo].(map[string]any); ok {
					s.client, _ = info["name"].(string)
				}
				if ip := s.ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
					s.initial = ip.ClientInfo.Name
				}
				mu.Lock()
				seens = append(seens, s)
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	p := newPooled(srv, nil, 1)
	defer p.close()
	for _, client := range []string{"first-client", "second-client"} {
		params, _ := json.Marshal(map[string]any{"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    StatelessRevision,
			mcp.MetaKeyClientCapabilities: map[string]any{},
			mcp.MetaKeyClientInfo:         map[string]any{"name": client, "version": "1"},
		}})
		id, _ := jsonrpc.MakeID(float64(1))
		msg := &jsonrpc.Request{ID: id, Method: "tools/list", Params: params}
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
		r.Header.Set(versionHeader, StatelessRevision)
		r.Header.Set("Mcp-Method", "tools/list")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r = r.WithContext(context.WithValue(r.Context(), messageKey{}, msg))
		w := httptest.NewRecorder()
		if !p.serve(w, r) || w.Code != http.StatusOK {
			t.Fatalf("%s: served %v, status %d: %s", client, w.Code != 0, w.Code, w.Body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seens) != 2 || seens[0].ss != seens[1].ss {
		t.Fatalf("want two requests on one pooled session, got %+v", seens)
	}
	if seens[0].client != "first-client" || seens[1].client != "second-client" {
		t.Errorf("the requests saw the clients %q and %q, want their own", seens[0].client, seens[1].client)
	}
	// What the session keeps is the first request's, or nothing: no
	// handler of the server reads it (grep InitializeParams: none).
	if seens[1].initial == "second-client" {
		t.Errorf("the session's InitializeParams changed with the second request: %+v", seens)
	}
	t.Logf("the pooled session's InitializeParams name the client %q", seens[1].initial)
}
