package mcpserver

import (
	"net/http"
	"runtime"
	"time"
)

// SetEnded makes the server built with o call f with a conversation's id
// once the conversation ended with its MCP session.
func SetEnded(o *Options, f func(id string)) { o.ended = f }

// SetBodyTimeout sets the time h, made by Handler or UsersHandler, gives a
// request to send its body; before it serves any request.
func SetBodyTimeout(h http.Handler, d time.Duration) { h.(*handler).bodyTimeout = d }

// SetSessionClosed makes h, made by Handler or UsersHandler, call f with a
// session's id once the session has left its table of live sessions; set
// before it serves any request.
func SetSessionClosed(h http.Handler, f func(id string)) { h.(*handler).sessionClosed = f }

// LiveSessions returns the number of live sessions of h, made by Handler
// or UsersHandler.
func LiveSessions(h http.Handler) int {
	hh := h.(*handler)
	hh.mu.Lock()
	defer hh.mu.Unlock()
	return len(hh.sessions)
}

// ReleaseIdle closes at once the stores of the users of h, made by
// UsersHandler, that have no session and no request under way, as h does a
// minute after.
func ReleaseIdle(h http.Handler) {
	hh := h.(*handler)
	hh.mu.Lock()
	var idle []*tenant
	for _, t := range hh.tenants {
		if t.refs == 0 {
			idle = append(idle, t)
		}
	}
	hh.mu.Unlock()
	for _, t := range idle {
		hh.closeIfIdle(t)
	}
}

// CloseAll closes every live session of h, made by Handler or
// UsersHandler, as a test's cleanup.
func CloseAll(h http.Handler) {
	hh := h.(*handler)
	hh.mu.Lock()
	var all []*session
	for _, s := range hh.sessions {
		all = append(all, s)
	}
	hh.mu.Unlock()
	for _, s := range all {
		s.ss.Close()
	}
}

// VersionOf is versionOf.
var VersionOf = versionOf

// AwaitUnused returns once no session and no request of user holds its
// store in h, made by UsersHandler: a request that closed a session (a
// DELETE) still holds it until its handler returns, after the session has
// left the table.
func AwaitUnused(h http.Handler, user string) {
	hh := h.(*handler)
	for {
		hh.mu.Lock()
		t := hh.tenants[user]
		busy := t != nil && t.refs > 0
		hh.mu.Unlock()
		if !busy {
			return
		}
		runtime.Gosched()
	}
}

// AwaitRequestsDone returns once no session of h, made by Handler or
// UsersHandler, is serving a request: a client may have its answer (sent
// on the request's event stream) before the handler returns.
func AwaitRequestsDone(h http.Handler) {
	hh := h.(*handler)
	for {
		hh.mu.Lock()
		busy := false
		for _, s := range hh.sessions {
			busy = busy || s.active > 0
		}
		hh.mu.Unlock()
		if !busy {
			return
		}
		runtime.Gosched()
	}
}

// Pooled returns the number of idle server sessions in the pool that
// serves the plain stateless requests of user (of h, made by Handler or
// UsersHandler; "" for Handler's one store), or -1 when the user has no
// store open.
func Pooled(h http.Handler, user string) int {
	hh := h.(*handler)
	hh.mu.Lock()
	t := hh.tenants[user]
	hh.mu.Unlock()
	if t == nil {
		return -1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pool == nil {
		return -1
	}
	t.pool.mu.Lock()
	defer t.pool.mu.Unlock()
	return len(t.pool.idle)
}

// SetNoPool makes h, made by Handler or UsersHandler, serve every request
// of the stateless revision with the SDK's stateless handler, as it does
// those its pool does not take; before it serves any request.
func SetNoPool(h http.Handler) { h.(*handler).noPool = true }

// ErrorStatus is errorStatus.
var ErrorStatus = errorStatus
