package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUIOffLoopbackNeedsToken: mdmemory ui on an address beyond this
// machine refuses to start without a token, before it opens anything.
func TestUIOffLoopbackNeedsToken(t *testing.T) {
	dir := sample(t)
	msg := mdm(t, nil, "ui", "--dir", dir, "--addr", "0.0.0.0:0").failed(t)
	require.Contains(t, msg, "give a token with --token-file FILE or $MDMEMORY_TOKEN")
	msg = mdm(t, map[string]string{tokenEnv: "short"}, "ui", "--dir", dir, "--addr", "0.0.0.0:0").failed(t)
	require.Contains(t, msg, "at least 16")
}

// TestUIServes: mdmemory ui prints its address on standard output, serves
// the overview there, asks for the token a loopback address was given,
// and ends with status 0 when interrupted.
func TestUIServes(t *testing.T) {
	addr, _, stop := startUI(t, func(k string) string {
		if k == tokenEnv {
			return "0123456789abcdef-token"
		}
		return ""
	})
	require.True(t, strings.HasPrefix(addr, "http://127.0.0.1:"), addr)

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(addr)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a token given on loopback is asked for there too")

	req, _ := http.NewRequest(http.MethodGet, addr+"facts", nil)
	req.Header.Set("Authorization", "Bearer 0123456789abcdef-token")
	resp, err = client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "<title>Facts · mdmemory</title>")
	require.Contains(t, string(body), "Wife: Mei, birthday March 15")

	stop()
}

// TestUIMakesToken: without a token given, mdmemory ui makes one, prints
// the login address with it once, and asks for it: another account or
// program on this machine, which reaches the port, does not get in.
func TestUIMakesToken(t *testing.T) {
	addr, stderr, stop := startUI(t, func(string) string { return "" })
	var login string
	for l := range stderr {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, addr+"?token=") {
			login = l
			break
		}
	}
	require.NotEmpty(t, login, "no login address printed")
	require.GreaterOrEqual(t, len(strings.TrimPrefix(login, addr+"?token=")), 26, "a token of 128 bits at least")

	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(addr + "facts")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "without the token")
	require.True(t, resp.Close, "a refusal closes its connection")

	resp, err = client.Get(login)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc := resp.Header.Get("Location")
	require.Regexp(t, `^/s/[A-Za-z0-9_-]{43}/$`, loc, "the token leaves the address, for the session's path")
	require.Len(t, resp.Cookies(), 1)
	require.Equal(t, strings.TrimSuffix(loc, "/"), resp.Cookies()[0].Path, "the cookie is the session path's alone")
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(addr, "/")+loc+"facts", nil)
	req.AddCookie(resp.Cookies()[0])
	resp, err = client.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), "<title>Facts · mdmemory</title>")

	stop()
}

// TestUIServerTimeouts: the server cuts off a client slow to send its
// headers or read its answer, and idle connections soon.
func TestUIServerTimeouts(t *testing.T) {
	srv := uiServer(http.NotFoundHandler())
	require.NotZero(t, srv.ReadHeaderTimeout)
	require.NotZero(t, srv.ReadTimeout)
	require.NotZero(t, srv.WriteTimeout)
	require.NotZero(t, srv.IdleTimeout)
	require.LessOrEqual(t, srv.IdleTimeout, 30*time.Second)
	require.NotZero(t, srv.MaxHeaderBytes)
}

// startUI starts mdmemory ui on a sample memory on a loopback port, with
// getenv as its environment, and returns the address it printed, the lines
// of its standard error (those past 64 unread are dropped), and stop,
// which interrupts it and requires it to end with status 0.
func startUI(t *testing.T, getenv func(string) string) (addr string, stderr <-chan string, stop func()) {
	t.Helper()
	dir := sample(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"ui", "--dir", dir, "--addr", "127.0.0.1:0"}, strings.NewReader(""), outW, errW, getenv)
		outW.Close()
		errW.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, errR)
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	require.NoError(t, err)
	go io.Copy(io.Discard, outR)
	return strings.TrimSpace(line), lines, func() {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			require.Equal(t, exitOK, code)
		case <-time.After(10 * time.Second):
			t.Fatal("mdmemory ui did not end when interrupted")
		}
	}
}
