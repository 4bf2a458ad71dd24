// Package origin compares URLs by their origin, the scheme, host and port
// a credential is scoped to.
package origin

import (
	"net"
	"net/url"
	"strings"
)

// Same reports whether a and b have the same scheme, host and port, the
// scheme's default port (80 for http, 443 for https) standing for none;
// case does not matter.
func Same(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

// hostPort is u's host and port, the scheme's default port when it names
// none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return net.JoinHostPort(u.Hostname(), port)
}
