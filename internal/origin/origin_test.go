package origin

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://api.example.com/v1", "https://api.example.com/other", true},
		{"https://api.example.com/v1", "https://API.example.com:443/v1", true},
		{"HTTP://h/", "http://h:80/x", true},
		{"http://[::1]:8080/", "http://[::1]:8080/x", true},
		{"https://h/", "http://h/", false},
		{"https://h/", "https://h:8443/", false},
		{"http://h:8080/", "http://h:8081/", false},
		{"https://h/", "https://other/", false},
		{"ftp://h/", "ftp://h:21/", false},
	} {
		a, err := url.Parse(tc.a)
		require.NoError(t, err)
		b, err := url.Parse(tc.b)
		require.NoError(t, err)
		require.Equal(t, tc.same, Same(a, b), "%s %s", tc.a, tc.b)
		require.Equal(t, tc.same, Same(b, a), "%s %s", tc.b, tc.a)
	}
}
