package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mdmemory/memory"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the HTTP options.
const (
	defaultMaxSessions    = 1000
	defaultSessionTimeout = 30 * time.Minute

	// bodyTimeout bounds the time a client takes to send a request's
	// body: a body sent a byte at a time does not hold a connection.
	bodyTimeout = 30 * time.Second

	// maxBodyBytes bounds a request's body, as the SDK does.
	maxBodyBytes = mcp.DefaultMaxRequestBodyBytes

	// storeLinger is how long a user's store stays open once the user
	// has no session and no request under way.
	storeLinger = time.Minute

	sessionIDHeader = "Mcp-Session-Id"
)

// Users are the users of a handler made by [UsersHandler]: who a bearer
// token names, and how to open each one's memory. Its methods are called
// from many goroutines at once.
type Users interface {
	// User returns the name of the user whose bearer token is token, or
	// ok false when the token is nobody's. It should take a time that
	// does not depend on how much of the token is right: compare
	// digests, or look the token's SHA-256 up in a map.
	User(token string) (name string, ok bool)

	// Open opens the memory of the user name. The handler calls it on the
	// user's first request, and again after it released the store: it
	// calls close, once, when the user has no session left and no
	// request under way. An error is the host's failure: the request
	// gets 500, and the error goes to Options.Observer (OpenFailed).
	Open(ctx context.Context, name string) (store *memory.Store, close func(), err error)
}

// Handler returns an HTTP handler that serves a server made by [New] over
// the MCP streamable HTTP transport, at whatever path it is mounted, in
// both eras of MCP. A request of the stateless revision (2026-07-28: its
// MCP-Protocol-Version header or its params._meta names the version) is
// served on its own, a conversation of its own, without a session; its
// routing headers must agree with its body (400 and HeaderMismatch,
// -32020, otherwise), a method the revision does not have gets 404, and a
// GET 405. An initialize opens a session of an older revision (2025-11-25
// and before), and the requests that carry its Mcp-Session-Id are served
// in it: one conversation per MCP session, ended when the
// client deletes the session, when it has been idle for
// Options.SessionTimeout (30 minutes by default), or when it is the one
// closed to make room past Options.MaxSessions (1,000 by default).
// Closing a session frees its goroutines and ends its conversation
// ([memory.Session.End]). A nil opts gives the defaults; store must not
// be nil. The handler does not close store.
//
// On every request, whatever its method, its revision or the address it
// came to, the handler applies, in this order:
//
//   - Host: the Host header must name a loopback name or address when the
//     connection came to a loopback address, the address the connection
//     came to otherwise, or one of Options.AllowedHosts; anything else
//     gets 403. This refuses DNS rebinding, where a web page reaches the
//     server under a name of its own.
//   - Origin: a request without an Origin header (a client that is not a
//     browser) passes; one with an Origin must come from the server's own
//     origin (the same host and port as the Host header) or one of
//     Options.AllowedOrigins, and gets 403 otherwise, as the MCP transport
//     specification (2025-11-25) requires.
//   - Token: with Options.Token set, a request without
//     "Authorization: Bearer TOKEN" gets 401 with a WWW-Authenticate:
//     Bearer header. The token is compared in constant time.
//   - Body: read whole before the request is served, within 30 seconds and
//     4 MiB (408 or 413 otherwise), so that a client sending a byte at a
//     time does not hold a connection.
//
// What stays the host's to add: TLS (serve the handler with
// http.Server.ServeTLS, or behind a proxy that terminates it; a token
// sent in clear over a network can be read on the way), OAuth (wrap the
// handler in the go-sdk's auth.RequireBearerToken and leave Options.Token
// empty), the http.Server's own limits (ReadHeaderTimeout, IdleTimeout;
// not WriteTimeout, which would cut a session's event stream) and a bound
// on connections (a net.Listener that accepts at most so many, as
// mdmemory mcp --max-conns does). A handler with no Token serves whoever
// can reach its address: listen on a loopback address, or set a Token.
func Handler(store *memory.Store, opts *Options) http.Handler {
	if store == nil {
		panic("mcpserver: Handler called with a nil store")
	}
	h := newHandler(opts)
	if h.opts.Token != "" {
		h.token = sha256.Sum256([]byte(h.opts.Token))
		h.hasToken = true
	}
	h.open = func(context.Context, string) (*memory.Store, func(), error) { return store, nil, nil }
	return h
}

// UsersHandler returns an HTTP handler like [Handler] that serves many
// users, each its own memory: the bearer token of a request names its user
// (users.User; no user, 401), and the request sees that user's memory
// alone, through tools, resources and prompts alike, in requests of the
// stateless revision as in sessions. A session belongs to
// the user that opened it: the id of one user's session, sent with another
// user's token, gets 404, as an unknown session does. Options.MaxSessions
// bounds the sessions of all users together; Options.Token is ignored.
//
// A user's store is opened (users.Open) on its first request and released
// (the close Open returned) when the user has no session left and no
// request under way, so that an idle user costs nothing but its entry in
// users; its next request opens the store again. A nil opts gives the
// defaults; users must not be nil.
func UsersHandler(users Users, opts *Options) http.Handler {
	if users == nil {
		panic("mcpserver: UsersHandler called with nil users")
	}
	h := newHandler(opts)
	h.users = users
	h.open = users.Open
	return h
}

// handler is the http.Handler of Handler and UsersHandler.
type handler struct {
	opts           Options
	allowedHosts   map[string]bool   // lower case, without ports
	allowedOrigins map[string]bool   // lower case, without a trailing /
	users          Users             // nil: Handler's one store
	token          [sha256.Size]byte // Handler's token's digest
	hasToken       bool
	open           func(context.Context, string) (*memory.Store, func(), error)
	bodyTimeout    time.Duration   // bodyTimeout, or a test's
	sessionClosed  func(id string) // for tests: called when a session left the table
	storeLinger    time.Duration   // storeLinger, or a test's
	noPool         bool            // for tests: every stateless request goes to the SDK's handler

	mu       sync.Mutex
	tenants  map[string]*tenant  // the users with a store open or opening
	mark     string              // the value of reservedHeader on a request that holds a place
	sessions map[string]*session // the live sessions, by id
	pending  map[string]bool     // the places taken for new sessions being made, by reservedHeader's value: counted against MaxSessions until made
	places   uint64              // numbers the places taken
	tick     uint64              // orders the sessions' uses
}

// A tenant is one user of a handler, with its store and its MCP server.
type tenant struct {
	name string
	refs int // guarded by handler.mu: its live sessions and requests under way

	mu    sync.Mutex // held while the store opens or closes
	store *memory.Store
	close func()       // nil: the store is the host's, never released
	timer *time.Timer  // guarded by handler.mu: closes the store once idle
	sdk   http.Handler // the SDK's handler of sessions (2025-11-25 and older)
	once  http.Handler // the SDK's stateless handler (2026-07-28): each request on its own
	pool  *pooled      // serves the plain requests of 2026-07-28
}

// A session is one live MCP session.
type session struct {
	id     string
	t      *tenant
	ss     *mcp.ServerSession
	last   uint64 // guarded by handler.mu: handler.tick at its latest use
	active int    // guarded by handler.mu: its requests under way
}

func newHandler(opts *Options) *handler {
	h := &handler{
		mark:           rand.Text(),
		allowedHosts:   make(map[string]bool),
		allowedOrigins: make(map[string]bool),
		tenants:        make(map[string]*tenant),
		sessions:       make(map[string]*session),
		pending:        make(map[string]bool),
		bodyTimeout:    bodyTimeout,
		storeLinger:    storeLinger,
	}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.AllowedHosts = append([]string(nil), h.opts.AllowedHosts...)
	h.opts.AllowedOrigins = append([]string(nil), h.opts.AllowedOrigins...)
	for _, a := range h.opts.AllowedHosts {
		h.allowedHosts[hostname(a)] = true
	}
	for _, o := range h.opts.AllowedOrigins {
		h.allowedOrigins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	if h.opts.MaxSessions <= 0 {
		h.opts.MaxSessions = defaultMaxSessions
	}
	switch {
	case h.opts.SessionTimeout == 0:
		h.opts.SessionTimeout = defaultSessionTimeout
	case h.opts.SessionTimeout < 0:
		h.opts.SessionTimeout = 0 // the SDK's "never"
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, observed := observeHTTP(h.opts.Observer, w, r)
	var user string // known once the token is
	defer func() { observed(user) }()
	// The request, whoever sent it, has the body's time to arrive, before
	// any check: a refused client that sends its body a byte at a time
	// holds no connection past it. (A writer without deadlines, not a
	// server's connection, is served as it is.)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.bodyTimeout))
	refuse := func(status int, msg string) {
		// Not kept for another request: the server closes the connection
		// rather than read what is left of the body.
		w.Header().Set("Connection", "close")
		http.Error(w, msg, status)
	}
	if !h.hostAllowed(r) {
		refuse(http.StatusForbidden, "Forbidden: the Host header names no address of this server")
		return
	}
	if !h.originAllowed(r) {
		refuse(http.StatusForbidden, "Forbidden: cross-origin request")
		return
	}
	user, ok := h.authenticate(r)
	if !ok {
		user = "" // nobody's
		w.Header().Set("WWW-Authenticate", `Bearer realm="mdmemory"`)
		refuse(http.StatusUnauthorized, "Unauthorized: a bearer token is required (Authorization: Bearer TOKEN)")
		return
	}
	// Only the handler marks a request as holding a place (see route).
	r.Header.Del(reservedHeader)
	body, ok := readBody(w, r, h.bodyTimeout)
	if !ok {
		return
	}
	// The body is in: a session's event stream (a GET) stays open as long
	// as the session.
	_ = rc.SetReadDeadline(time.Time{})
	// From here on every JSON-RPC message is answered in JSON-RPC: the
	// refusals below and the SDK's own, as much as its answers.
	jsonRPCErrors(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.route(w, r, user, body)
	}), maxBodyBytes).ServeHTTP(w, r)
}

// route serves a request of user whose body has been read: a request of
// the stateless revision on its own, another to its session, or to the
// user's server for a new one.
func (h *handler) route(w http.ResponseWriter, r *http.Request, user string, body []byte) {
	if statelessRequest(r) {
		// No session: an Mcp-Session-Id the request carries is ignored,
		// as 2026-07-28 asks, and none is made. The user's store is held
		// for the request alone.
		t, err := h.acquire(r.Context(), user)
		if err != nil {
			h.openFailed(w, user, err)
			return
		}
		defer h.release(t)
		if h.noPool || !t.pool.serve(w, r) {
			t.once.ServeHTTP(w, r)
		}
		return
	}
	if id := r.Header.Get(sessionIDHeader); id != "" {
		h.mu.Lock()
		s := h.sessions[id]
		if s == nil || s.t.name != user {
			h.mu.Unlock()
			// Another user's session is as unknown as one that never was.
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		// A POST or DELETE under way keeps the session from being closed
		// to make room, and counts as its use; a GET's event stream, which
		// the client opens on its own and holds for the whole session,
		// does neither.
		busy := r.Method != http.MethodGet
		if busy {
			s.active++
			h.tick++
			s.last = h.tick
		}
		t := s.t
		t.refs++
		h.mu.Unlock()
		t.sdk.ServeHTTP(w, r)
		h.mu.Lock()
		if busy {
			// Its use is when it came: an answer may reach the client, and
			// the client send its next request to another session, before
			// this handler returns.
			s.active--
		}
		h.mu.Unlock()
		h.release(t)
		return
	}

	t, err := h.acquire(r.Context(), user)
	if err != nil {
		h.openFailed(w, user, err)
		return
	}
	defer h.release(t)
	if r.Method != http.MethodPost || !isInitialize(body) {
		// Without a session id, only an initialize makes a session that
		// lasts: the SDK answers anything else in a session that ends
		// with the request (a probe such as server/discover), or refuses
		// it.
		t.sdk.ServeHTTP(w, r)
		return
	}
	// An initialize takes a place under MaxSessions before it is served.
	place, ok := h.reserve(user)
	if !ok {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: too many sessions serving requests", http.StatusServiceUnavailable)
		return
	}
	defer func() {
		h.mu.Lock()
		delete(h.pending, place) // when no session was made of it
		h.mu.Unlock()
	}()
	// The mark tells track that this initialize has its place, which the
	// session it makes takes over: the SDK initializes sessions of its own
	// too, for probes that end with their request, which take none.
	r.Header.Set(reservedHeader, place)
	t.sdk.ServeHTTP(w, r)
}

// openFailed answers a request whose user's memory could not be opened,
// and tells the Observer who and why. The Logger is told only that it
// happened: the user's name, which may be a path, and the error, which may
// hold it, are the Observer's, which knows how to hash them.
func (h *handler) openFailed(w http.ResponseWriter, user string, err error) {
	if h.opts.Observer != nil {
		h.opts.Observer.OpenFailed(user, err)
	}
	if h.opts.Logger != nil {
		h.opts.Logger.Error("mcpserver: a user's memory could not be opened (Options.Observer is told whose, and why)")
	}
	http.Error(w, "the memory could not be opened", http.StatusInternalServerError)
}

// reserve takes a place for a new session of user, closing the session
// idle the longest when there is none free. It reports false when every
// session is serving a request.
func (h *handler) reserve(user string) (place string, ok bool) {
	h.mu.Lock()
	h.places++
	place = fmt.Sprintf("%s-%d", h.mark, h.places)
	if len(h.sessions)+len(h.pending) < h.opts.MaxSessions {
		h.pending[place] = true
		h.mu.Unlock()
		return place, true
	}
	victim := h.victim(user)
	if victim == nil {
		h.mu.Unlock()
		return "", false
	}
	// Out of the table now, so that the place is free at once; the
	// session's watcher releases its tenant when it has closed.
	delete(h.sessions, victim.id)
	h.pending[place] = true
	h.mu.Unlock()
	victim.ss.Close()
	return place, true
}

// acquire returns the tenant of user, with its store open, holding a
// reference to it: release it when done.
func (h *handler) acquire(ctx context.Context, user string) (*tenant, error) {
	h.mu.Lock()
	t := h.tenants[user]
	if t == nil {
		t = &tenant{name: user}
		h.tenants[user] = t
	}
	t.refs++
	h.mu.Unlock()

	t.mu.Lock()
	if t.store == nil {
		store, close, err := h.open(ctx, user)
		if err == nil && store == nil {
			//lint:ignore ST1005 Open is the name of the Users method at fault
			err = errors.New("Open returned no store")
		}
		if err != nil {
			t.mu.Unlock()
			h.mu.Lock()
			t.refs--
			h.mu.Unlock()
			h.closeIfIdle(t)
			return nil, err
		}
		t.store, t.close = store, close
		if h.opts.Observer != nil {
			h.opts.Observer.StoreOpened()
		}
		o := h.opts
		o.user = user
		srv, tools := newServer(store, &o)
		srv.AddReceivingMiddleware(h.track(t))
		get := func(*http.Request) *mcp.Server { return srv }
		t.sdk = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			SessionTimeout: h.opts.SessionTimeout,
			Logger:         h.opts.Logger,
			// The handler checks Host itself, with AllowedHosts.
			DisableLocalhostProtection: true,
		})
		t.pool = newPooled(srv, tools, poolSize(h.users != nil))
		t.once = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                  true,
			Logger:                     h.opts.Logger,
			DisableLocalhostProtection: true,
			// A client that goes away cancels what it asked: the POST is
			// the whole request.
			PropagateRequestCancellation: true,
		})
	}
	t.mu.Unlock()
	return t, nil
}

// release drops a reference to t taken by acquire or a session. When it
// was the last, t's store closes after storeLinger without a new one (at
// once when it did not open): a client's probe without a session, then
// its initialize, use one store.
func (h *handler) release(t *tenant) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.refs--
	if t.refs > 0 {
		return
	}
	if t.timer != nil {
		t.timer.Reset(h.storeLinger)
		return
	}
	t.timer = time.AfterFunc(h.storeLinger, func() { h.closeIfIdle(t) })
}

// closeIfIdle closes t's store, and forgets t, if it has no reference;
// the host's store stays.
func (h *handler) closeIfIdle(t *tenant) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h.mu.Lock()
	if t.refs != 0 || (t.store != nil && t.close == nil) {
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	if t.store != nil {
		// t stays in the table while its store closes: a request for
		// the user meanwhile waits on t.mu, then opens the store again.
		t.pool.close()
		t.close()
		t.store, t.close, t.sdk, t.once, t.pool = nil, nil, nil, nil, nil
		if h.opts.Observer != nil {
			h.opts.Observer.StoreClosed()
		}
	}
	h.mu.Lock()
	if t.refs == 0 && h.tenants[t.name] == t {
		delete(h.tenants, t.name)
		if t.timer != nil {
			t.timer.Stop()
		}
	}
	h.mu.Unlock()
}

// victim returns the session to close to make room for a new session of
// user, or nil when every session is serving a request: the user's own
// session idle the longest, or else anyone's, so that one client opening
// sessions in a loop pushes out its own, not another user's. h.mu is held.
func (h *handler) victim(user string) *session {
	var own, oldest *session
	for _, s := range h.sessions {
		if s.active > 0 {
			continue
		}
		if oldest == nil || s.last < oldest.last {
			oldest = s
		}
		if s.t.name == user && (own == nil || s.last < own.last) {
			own = s
		}
	}
	if own != nil {
		return own
	}
	return oldest
}

// track returns the receiving middleware that enters each session of t in
// the table of live sessions once its initialize succeeded, and takes it
// out when the session closes, however it closes.
func (h *handler) track(t *tenant) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "initialize" || err != nil {
				return res, err
			}
			ss, ok := req.GetSession().(*mcp.ServerSession)
			if !ok || ss.ID() == "" {
				return res, err
			}
			extra := req.GetExtra()
			if extra == nil {
				return res, err
			}
			place := extra.Header.Get(reservedHeader)
			s := &session{id: ss.ID(), t: t, ss: ss}
			h.mu.Lock()
			if !h.pending[place] {
				// Not the initialize of a request ServeHTTP took a place
				// for: the SDK's own, for a session that ends with its
				// request (such as a server/discover probe's).
				h.mu.Unlock()
				return res, err
			}
			delete(h.pending, place) // the session has the place now
			h.tick++
			s.last = h.tick
			h.sessions[s.id] = s
			t.refs++
			h.mu.Unlock()
			if h.opts.Observer != nil {
				h.opts.Observer.SessionOpened()
			}
			go func() {
				_ = ss.Wait()
				if h.opts.Observer != nil {
					h.opts.Observer.SessionClosed()
				}
				h.mu.Lock()
				if h.sessions[s.id] == s {
					delete(h.sessions, s.id)
				}
				h.mu.Unlock()
				h.release(t)
				if h.sessionClosed != nil {
					h.sessionClosed(s.id)
				}
			}()
			return res, err
		}
	}
}

// authenticate returns the user whose token r carries. Handler without a
// Token has one user, "".
func (h *handler) authenticate(r *http.Request) (string, bool) {
	if h.users == nil && !h.hasToken {
		return "", true
	}
	token, ok := bearer(r)
	if !ok {
		return "", false
	}
	if h.users != nil {
		return h.users.User(token)
	}
	got := sha256.Sum256([]byte(token))
	return "", subtle.ConstantTimeCompare(got[:], h.token[:]) == 1
}

// bearer returns the token of r's "Authorization: Bearer TOKEN" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// hostAllowed says whether r's Host header names this server.
func (h *handler) hostAllowed(r *http.Request) bool {
	host := hostname(r.Host)
	if host == "" {
		return false
	}
	if h.allowedHosts[host] {
		return true
	}
	var local string
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		local = hostname(a.String())
	}
	if isLoopback(host) {
		// A loopback name reaches a loopback address alone; a handler
		// called without a connection (a test's recorder) is taken as
		// local.
		return local == "" || isLoopback(local)
	}
	return local != "" && sameHost(host, local)
}

// originAllowed says whether r comes from no browser, or from the
// server's own origin or an allowed one.
func (h *handler) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		// A browser sends Origin on every cross-origin fetch; a request
		// it marks cross-site without one is refused all the same.
		return r.Header.Get("Sec-Fetch-Site") != "cross-site"
	}
	if h.allowedOrigins[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// readBody reads r's body whole, within timeout and maxBodyBytes, and
// puts it back in r, and returns it. It answers the request itself and
// reports false when the body could not be read.
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	rc := http.NewResponseController(w)
	// A writer without deadlines (not a server's connection) reads as it
	// can.
	deadline := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if deadline && err == nil {
		// The connection stays open for the session's stream and the
		// next requests. (After an error it stays past its deadline, and
		// the server closes it.)
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		// A JSON-RPC error, as every answer to a POST is; a GET or DELETE
		// has no body to speak of.
		writeError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the request body exceeds %d bytes", tooLarge.Limit))
		return nil, false
	case err != nil:
		w.Header().Set("Connection", "close")
		http.Error(w, "the request body was not received in time", http.StatusRequestTimeout)
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return body, true
}

// reservedHeader marks, with the handler's own random value, a request
// that holds a place under MaxSessions; a client's is removed.
const reservedHeader = "X-Mdmemory-Place"

// isInitialize says whether body is, or is a batch that holds, an
// initialize request. It errs towards yes: every key that a decoder could
// take for "method", whatever its case, and every one of them where a key
// is given twice. Anything else, malformed JSON included, is the SDK's to
// answer.
func isInitialize(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				depth++
			} else {
				depth--
			}
			continue
		case string:
			// A key of a message: the message is at depth 1, or 2 in a
			// batch. (Values at those depths are decoded below, so a
			// string token here is a key.)
			if depth > 2 {
				continue
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return false
			}
			var method string
			if strings.EqualFold(tok, "method") && json.Unmarshal(v, &method) == nil && method == "initialize" {
				return true
			}
		}
	}
}

// hostname returns the host of "host:port", "[v6]:port", "host" or
// "v6", in lower case, without a trailing dot.
func hostname(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// isLoopback says whether host is "localhost" or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// sameHost says whether the hosts a and b are the same name or address.
func sameHost(a, b string) bool {
	x, errx := netip.ParseAddr(a)
	y, erry := netip.ParseAddr(b)
	if errx == nil && erry == nil {
		return x.Unmap().WithZone("") == y.Unmap().WithZone("")
	}
	return a == b
}
