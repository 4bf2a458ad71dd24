package mcpserver

import "net/http"

// Guard returns next behind the Host and Origin checks that [Handler]
// applies to every request, with opts.AllowedHosts and
// opts.AllowedOrigins (a nil opts allows no more than the server's own
// names and origin): a request whose Host header names no address of the
// server, or that comes from another origin (or a browser's cross-site
// request without an Origin), gets 403 and never reaches next. It is for
// another HTTP surface of the same memory, such as mdmemory's page for
// people, to be guarded as the MCP endpoint is. The token is not checked:
// a page authenticates browsers in its own way.
func Guard(next http.Handler, opts *Options) http.Handler {
	h := newHandler(opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !h.hostAllowed(r):
			w.Header().Set("Connection", "close")
			http.Error(w, "Forbidden: the Host header names no address of this server", http.StatusForbidden)
		case !h.originAllowed(r):
			w.Header().Set("Connection", "close")
			http.Error(w, "Forbidden: cross-origin request", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}
