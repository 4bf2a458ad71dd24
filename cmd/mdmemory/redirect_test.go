package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestS3RedirectKeepsCredential: an S3 endpoint that redirects (307) to
// another port of its host gets no signed request followed there, where
// the SDK followed it with its Authorization header; a redirect within
// its own origin is still followed.
func TestS3RedirectKeepsCredential(t *testing.T) {
	var mu sync.Mutex
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "no", http.StatusForbidden)
	}))
	t.Cleanup(other.Close)
	var same []string
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("moved") == "" {
			mu.Lock()
			same = append(same, r.URL.Path)
			mu.Unlock()
		}
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	t.Cleanup(endpoint.Close)
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            endpoint.URL,
		"AWS_ACCESS_KEY_ID":           "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":       "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_ENDPOINT_URL_S3":         "",
		"AWS_MAX_ATTEMPTS":            "1",
	} {
		t.Setenv(k, v)
	}
	mdm(t, nil, "ls", "--dir", "s3://bucket/x").failed(t)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, same, "the endpoint was asked")
	require.Empty(t, got, "requests followed to another port of the endpoint's host")

	// Within the origin: followed.
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/a", nil)
	resp := &http.Response{StatusCode: http.StatusTemporaryRedirect}
	to, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/b", nil)
	to.Response = resp
	require.NoError(t, sameOriginRedirect(to, []*http.Request{req}))
	to, _ = http.NewRequest(http.MethodGet, "https://127.0.0.1:1/b", nil)
	to.Response = resp
	require.ErrorIs(t, sameOriginRedirect(to, []*http.Request{req}), http.ErrUseLastResponse)
	to, _ = http.NewRequest(http.MethodGet, "http://127.0.0.1:1/b", nil)
	to.Response = &http.Response{StatusCode: http.StatusFound}
	require.ErrorIs(t, sameOriginRedirect(to, []*http.Request{req}), http.ErrUseLastResponse, "a 302 is the SDK's error, as before")
}
