package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file serves the plain requests of the stateless revision over HTTP
// without the SDK's stateless handler, which makes and ends a server
// session for each request and parses the message a dozen times: such a
// request goes, decoded once, into one of a few lasting server sessions of
// the user's server, on a connection inside the process, and its answer
// comes back in JSON. What it runs is the SDK's own (the checks of the
// request's _meta, the methods, the tools), so a plain request gets the
// answer the stateless handler would give. Anything else (a routing header
// that disagrees with the body, an unsupported version, a method the
// revision removed, subscriptions/listen, a tool of the host's) goes to
// the SDK's handler, which answers it as the specification says.
//
// A pooled session serves many requests, of any client of the user: it
// keeps the InitializeParams the SDK made of the first request's _meta
// (ServerSession.InitializeParams names that request's client), and
// nothing of this server reads them. Each request's handlers see that
// request's own _meta (its client, capabilities and version), as the
// revision asks; TestPooledSessionPerRequestMeta shows both. A handler
// added later must read the request's _meta, never the session's
// InitializeParams.

// messageKey is the context key under which jsonRPCErrors hands the
// request it decoded on, so that it is not decoded again.
type messageKey struct{}

// pooled is the SDK's server on a connection inside the process: lasting
// server sessions that serve plain stateless requests one at a time each.
type pooled struct {
	srv   *mcp.Server
	tools map[string]bool // the names of the memory tools, which declare no x-mcp-header
	max   int             // idle sessions kept

	mu     sync.Mutex
	idle   []*pipe
	closed bool
}

// newPooled returns the pool of srv, which offers the tools named tools.
func newPooled(srv *mcp.Server, tools map[string]bool, max int) *pooled {
	return &pooled{srv: srv, tools: tools, max: max}
}

// poolSize is the number of idle sessions a pool keeps: one per processor
// for Handler's one store, one for each user of a UsersHandler (whose
// requests are few at once, and whose pool goes with its store).
func poolSize(users bool) int {
	if users {
		return 1
	}
	return runtime.GOMAXPROCS(0)
}

// plain reports whether req, which r carried, is a request this pool
// serves: a call whose MCP-Protocol-Version header and _meta name the
// same stateless version, one the server supports, with the client's
// capabilities; of a method the pool serves, named in Mcp-Method; and
// naming in Mcp-Name (already decoded) the tool, prompt or resource of
// its params, a tool being one of the memory tools.
//
// Each check errs towards no: a request that is not plain goes to the
// SDK's stateless handler, which answers it, refusals included. Its own
// checks of the transport come before this (jsonRPCErrors sends a body
// that is not application/json to the SDK undecoded) but for Accept,
// checked here as the SDK does (accepts).
func (p *pooled) plain(r *http.Request, req *jsonrpc.Request) bool {
	if !req.IsCall() || r.Header.Get("Mcp-Method") != req.Method {
		return false
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(params["_meta"], &meta) != nil {
		return false
	}
	var version string
	if json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &version) != nil || version != r.Header.Get(versionHeader) || !stateless(version) || !slices.Contains(mcp.SupportedProtocolVersions(), version) {
		return false
	}
	if caps := meta[mcp.MetaKeyClientCapabilities]; len(caps) == 0 || caps[0] != '{' {
		return false
	}
	var key string
	switch req.Method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover":
		return true
	default:
		return false
	}
	var name string
	if json.Unmarshal(params[key], &name) != nil || name == "" || r.Header.Get(nameHeader) != name {
		return false
	}
	return req.Method != "tools/call" || p.tools[name]
}

// serve answers r, a request of the stateless revision, when it is plain
// (decoded by jsonRPCErrors), and reports whether it did.
func (p *pooled) serve(w http.ResponseWriter, r *http.Request) bool {
	req, ok := r.Context().Value(messageKey{}).(*jsonrpc.Request)
	if !ok || !p.plain(r, req) {
		return false
	}
	s, err := p.get()
	if err != nil {
		// The pool is closed or the server refused a session: the SDK's
		// handler answers.
		return false
	}
	// The request as the SDK's transport would hand it on: the headers,
	// and the token an OAuth middleware put in the context.
	msg := &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: req.Params, Extra: &mcp.RequestExtra{
		TokenInfo: auth.TokenInfoFromContext(r.Context()),
		Header:    r.Header,
	}}
	resp, err := s.call(r.Context(), msg)
	if err != nil {
		// The client went away, which cancels its request, or the session
		// ended: the session, which may still answer, is not used again.
		s.cancel(req.ID)
		if r.Context().Err() == nil {
			http.Error(w, "the request could not be served", http.StatusInternalServerError)
		}
		return true
	}
	p.put(s)
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, "the answer could not be encoded", http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(errorStatus(resp))
	w.Write(data)
	return true
}

// accepts reports whether the Accept header's values take JSON and an
// event stream, as the SDK's streamable HTTP handler judges them (its
// unexported streamableAccepts, go-sdk v1.8.0): each comma-separated media
// range, its parameters ignored, in any case; application/* counts as
// JSON, text/* as a stream, */* as both. A POST must take both, or the
// SDK answers 400. TestPooledMatchesSDK holds the two together.
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// errorStatus is the HTTP status of an answer of the stateless revision:
// 404 for a method not found, 400 for invalid params, an unsupported
// version or a missing client capability, 200 otherwise. It is the SDK's
// rule (the unexported extractErrorStatus of go-sdk v1.8.0, which follows
// SEP-2575), which its stateless handler applies and which the pool's
// answers, written here, must follow too: TestPooledMatchesSDK compares
// them, and TestErrorStatus holds each code.
func errorStatus(resp *jsonrpc.Response) int {
	var jerr *jsonrpc.Error
	if !errors.As(resp.Error, &jerr) {
		return http.StatusOK
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// get returns an idle session, or a new one.
func (p *pooled) get() (*pipe, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("mcpserver: the pool is closed")
	}
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	s := &pipe{in: make(chan jsonrpc.Message), out: make(chan jsonrpc.Message, 8), done: make(chan struct{})}
	ss, err := p.srv.Connect(context.Background(), s, nil)
	if err != nil {
		return nil, err
	}
	s.ss = ss
	return s, nil
}

// put keeps s for the next request, or closes it when enough are idle or
// the pool is closed.
func (p *pooled) put(s *pipe) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < p.max {
		p.idle = append(p.idle, s)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	s.close()
}

// close closes the idle sessions, and those in use as they come back.
func (p *pooled) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range idle {
		s.close()
	}
}

// pipe is a server session of a pool and its connection: an mcp.Transport
// and mcp.Connection inside the process, one request at a time.
type pipe struct {
	ss   *mcp.ServerSession
	in   chan jsonrpc.Message // the requests, to the server
	out  chan jsonrpc.Message // the server's answers and notifications
	done chan struct{}        // closed by Close
	once sync.Once
}

// call sends req to the server and returns its answer; notifications sent
// meanwhile (progress, log messages) are dropped: the answer is JSON.
func (s *pipe) call(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	select {
	case s.in <- req:
	case <-s.done:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		select {
		case msg := <-s.out:
			if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == req.ID {
				return resp, nil
			}
		case <-s.done:
			return nil, mcp.ErrConnectionClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// close ends the session, in the background: a request it still serves
// finishes first.
func (s *pipe) close() {
	if s.ss != nil {
		go s.ss.Close()
	}
}

// cancel tells the server that the request id is cancelled (its client
// went away), then ends the session, in the background.
func (s *pipe) cancel(id jsonrpc.ID) {
	params, err := json.Marshal(map[string]any{"requestId": id.Raw(), "reason": "the client went away"})
	if err != nil {
		s.close()
		return
	}
	go func() {
		select {
		case s.in <- &jsonrpc.Request{Method: "notifications/cancelled", Params: params}:
		case <-s.done:
		}
		s.ss.Close()
	}()
}

// Connect implements mcp.Transport.
func (s *pipe) Connect(context.Context) (mcp.Connection, error) { return s, nil }

// Read implements mcp.Connection.
func (s *pipe) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-s.in:
		return msg, nil
	case <-s.done:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements mcp.Connection. An answer waits for call to take it; a
// notification nobody waits for (a list change sent to every session,
// while the session is idle) is dropped rather than block the server.
func (s *pipe) Write(ctx context.Context, msg jsonrpc.Message) error {
	if _, ok := msg.(*jsonrpc.Response); !ok {
		select {
		case s.out <- msg:
		default:
		}
		return nil
	}
	select {
	case s.out <- msg:
		return nil
	case <-s.done:
		return mcp.ErrConnectionClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close implements mcp.Connection.
func (s *pipe) Close() error {
	s.once.Do(func() { close(s.done) })
	return nil
}

// SessionID implements mcp.Connection: the sessions of a pool have none.
func (s *pipe) SessionID() string { return "" }
