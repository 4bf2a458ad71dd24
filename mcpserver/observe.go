package mcpserver

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Observer is told what a server made by [New], [Handler] or
// [UsersHandler] does, for the host's metrics and access log: set
// Options.Observer. Its methods are called from many goroutines at once,
// on the path of every request: they must be quick, and must not block.
//
// Nothing an Observer is given holds a token or a memory's text: the
// names it gets are drawn from bounded sets (a method or tool name the
// server does not know is [Other]), so that they may be metric labels. The
// one exception is the user of a [UsersHandler], the name [Users.User]
// returned, which may be a path: hash it with a key (a plain hash of a
// name that can be guessed is undone by hashing guesses) or leave it out
// before it goes anywhere, and never make it a label.
type Observer interface {
	// Request is called once a JSON-RPC request or notification has been
	// handled by the server, with what it was and how it ended.
	Request(RequestInfo)

	// HTTP is called once an HTTP request to a [Handler] or
	// [UsersHandler] has been answered, whatever the answer: refusals
	// (401, 403, 404, 413) included. An event stream (a session's GET)
	// is answered when it closes.
	HTTP(HTTPInfo)

	// SessionOpened and SessionClosed are called when an MCP session of a
	// [Handler] or [UsersHandler] opens (its initialize succeeded) and
	// closes, however it closes: their difference is the live sessions.
	SessionOpened()
	SessionClosed()

	// StoreOpened and StoreClosed are called when a user's store is
	// opened (Users.Open) and released by a [UsersHandler], and once for
	// the host's store of a [Handler], on its first request (it is never
	// released): their difference is the stores open.
	StoreOpened()
	StoreClosed()

	// OpenFailed is called when a user's store could not be opened
	// (Users.Open returned err) for a request of a [UsersHandler], which
	// is answered 500. user is the user's name, as for
	// [RequestInfo.User], and err may name it, or a path, too: hash or
	// strip them before they go anywhere. This is the one place the
	// failure is told with its user and error: Options.Logger is only
	// told that a memory could not be opened.
	OpenFailed(user string, err error)
}

// Other is the name an [Observer] is given for a JSON-RPC method or a
// tool that the server does not know: a client's made-up names are not
// kept apart, so that they cannot make metrics without bound.
const Other = "other"

// The outcomes of a JSON-RPC request, as [RequestInfo.Outcome] gives them.
const (
	// OutcomeOK is a request answered with a result.
	OutcomeOK = "ok"
	// OutcomeToolError is a tools/call answered with a result that has
	// isError set: the model's mistake, such as a bad path or a change
	// since the file was read, which the model is told how to fix.
	OutcomeToolError = "tool_error"
	// OutcomeError is a request answered with a JSON-RPC error: a
	// malformed request, or a failure of the host (-32603).
	OutcomeError = "error"
)

// RequestInfo is a JSON-RPC request as an [Observer] is told of it.
type RequestInfo struct {
	// Method is the JSON-RPC method, such as "tools/call", or [Other].
	Method string
	// Tool is, for tools/call, the tool's name, such as "memory_read", or
	// [Other]; "" for any other method.
	Tool string
	// Outcome is [OutcomeOK], [OutcomeToolError] or [OutcomeError].
	Outcome string
	// Duration is the time the server took to handle it.
	Duration time.Duration
	// User is the user of a [UsersHandler] the request was served for, as
	// [Users.User] named it; "" otherwise. It may be a path: see
	// [Observer].
	User string
}

// HTTPInfo is an HTTP request as an [Observer] is told of it.
type HTTPInfo struct {
	// Method is the HTTP method: "GET", "POST", "DELETE", or [Other].
	Method string
	// Status is the HTTP status code of the answer.
	Status int
	// Duration is the time from the request's arrival to the end of its
	// answer.
	Duration time.Duration
	// Session reports whether the request named a session (the
	// Mcp-Session-Id header).
	Session bool
	// User is the user whose token the request carried, as for
	// [RequestInfo.User]; "" when it carried none that is known.
	User string
	// RemoteAddr is the address the request came from, as the
	// http.Request has it ("IP:port"): the client's, or the proxy's in
	// front of the server. (A header such as X-Forwarded-For, which the
	// client may write, is not looked at.) It is not a metric label.
	RemoteAddr string
}

// observe returns the receiving middleware that tells o of each request
// the server handles; tools are the server's tools by name, user the
// request's user.
func observe(o Observer, tools map[string]bool, user string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			start := time.Now()
			res, err := next(ctx, method, req)
			info := RequestInfo{Method: Other, Outcome: OutcomeOK, Duration: time.Since(start), User: user}
			if _, ok := methods[method]; ok { // the SDK's
				info.Method = method
			}
			if r, ok := req.(*mcp.CallToolRequest); ok {
				info.Tool = Other
				if r.Params != nil && tools[r.Params.Name] {
					info.Tool = r.Params.Name
				}
			}
			switch r, _ := res.(*mcp.CallToolResult); {
			case err != nil:
				info.Outcome = OutcomeError
			case r != nil && r.IsError:
				info.Outcome = OutcomeToolError
			}
			o.Request(info)
			return res, err
		}
	}
}

// observedWriter keeps the status of the answer it writes, for an
// Observer's HTTP.
type observedWriter struct {
	http.ResponseWriter
	status int
}

func (w *observedWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *observedWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what was written, for an event stream.
func (w *observedWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath, for its
// deadlines.
func (w *observedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observeHTTP starts watching an HTTP request for o: it returns the writer
// to answer through, and the func to call, with the request's user, once
// it has been answered. With no Observer it returns w and a func that does
// nothing.
func observeHTTP(o Observer, w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func(user string)) {
	if o == nil {
		return w, func(string) {}
	}
	start := time.Now()
	ow := &observedWriter{ResponseWriter: w}
	return ow, func(user string) {
		method := r.Method
		switch method {
		case http.MethodGet, http.MethodPost, http.MethodDelete:
		default:
			method = Other
		}
		o.HTTP(HTTPInfo{
			Method:     method,
			Status:     max(ow.status, http.StatusOK), // nothing written: the server's 200
			Duration:   time.Since(start),
			Session:    r.Header.Get(sessionIDHeader) != "",
			User:       user,
			RemoteAddr: r.RemoteAddr,
		})
	}
}
