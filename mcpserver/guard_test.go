package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mdmemory/memory/mcpserver"
)

// TestGuard: Guard refuses what Handler refuses (another Host, another
// Origin, a browser's cross-site request) and passes the rest on.
func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := mcpserver.Guard(ok, &mcpserver.Options{AllowedOrigins: []string{"https://app.example.com"}})
	for _, tc := range []struct {
		name         string
		host, origin string
		site         string
		want         int
	}{
		{"own host", "127.0.0.1:7337", "", "", http.StatusTeapot},
		{"own origin", "127.0.0.1:7337", "http://127.0.0.1:7337", "", http.StatusTeapot},
		{"allowed origin", "127.0.0.1:7337", "https://app.example.com", "", http.StatusTeapot},
		{"another host", "evil.example", "", "", http.StatusForbidden},
		{"another origin", "127.0.0.1:7337", "http://evil.example", "", http.StatusForbidden},
		{"cross-site", "127.0.0.1:7337", "", "cross-site", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7337/", nil)
		r.Host = tc.host
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.want)
		}
	}
}
