package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// startHTTP starts "mdmemory mcp" with args, env added to its environment,
// and returns the URL it says it serves at, and the rest of its line.
func startHTTP(t *testing.T, env []string, args ...string) (url, rest string) {
	t.Helper()
	cmd := mdmemoryCmd(append([]string{"mcp"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(errPipe).ReadString('\n')
	require.NoError(t, err, line)
	m := regexp.MustCompile(`^mdmemory: serving MCP \(streamable HTTP\) at (http://127\.0\.0\.1:\d+/) for (.*)\n$`).FindStringSubmatch(line)
	require.NotNil(t, m, line)
	go io.Copy(io.Discard, errPipe)
	return m[1], m[2]
}

// bearer adds a bearer token to every request of an HTTP client.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connectToken connects the SDK's client at url, its requests carrying
// token: stateless, in the revision 2026-07-28, the client's default.
func connectToken(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	return connectTokenAt(t, url, token, "")
}

// connectTokenAt is connectToken at the protocol version version: a
// session for 2025-11-25 and older, none for 2026-07-28; "" for the
// client's default.
func connectTokenAt(t *testing.T, url, token, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	if version != "" {
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// post sends an initialize with the headers hdr and returns the status.
func post(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// TestListenAddr: a bare port or :PORT listens on 127.0.0.1; other
// addresses are as written, loopback or not.
func TestListenAddr(t *testing.T) {
	for _, c := range []struct {
		in, want string
		loopback bool
	}{
		{"8080", "127.0.0.1:8080", true},
		{":8080", "127.0.0.1:8080", true},
		{"0", "127.0.0.1:0", true},
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"127.0.0.2:8080", "127.0.0.2:8080", true},
		{"[::1]:8080", "[::1]:8080", true},
		{"localhost:8080", "localhost:8080", true},
		{"LOCALHOST:8080", "LOCALHOST:8080", true},
		{"0.0.0.0:8080", "0.0.0.0:8080", false},
		{"[::]:8080", "[::]:8080", false},
		{"192.168.1.20:8080", "192.168.1.20:8080", false},
		{"memory.lan:8080", "memory.lan:8080", false},
		{"[::ffff:127.0.0.1]:8080", "[::ffff:127.0.0.1]:8080", true},
		{"nonsense", "nonsense", true},
		{"99999", "99999", true},
	} {
		got, loopback := listenAddr(c.in)
		require.Equal(t, c.want, got, c.in)
		require.Equal(t, c.loopback, loopback, c.in)
	}
}

// TestMCPHTTPNeedsToken: an address beyond loopback without a token is
// refused before anything listens, in one line that says how to give one;
// a short or empty token is refused too.
func TestMCPHTTPNeedsToken(t *testing.T) {
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.10:0", "memory.lan:0"} {
		msg := mdm(t, nil, "mcp", "--dir", dir, "--http", addr).failed(t)
		require.Contains(t, msg, "listens beyond this machine")
		require.Contains(t, msg, "--token-file FILE or $MDMEMORY_TOKEN")
	}
	// A loopback server behind a proxy serves whoever reaches the proxy.
	msg := mdm(t, nil, "mcp", "--dir", dir, "--http", "0", "--allow-host", "memory.example.com").failed(t)
	require.Contains(t, msg, "--allow-host lets clients reach the server under another name")
	require.Contains(t, msg, "--token-file FILE or $MDMEMORY_TOKEN")
	short := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(short, []byte("secret\n"), 0o600))
	require.Contains(t, mdm(t, nil, "mcp", "--dir", dir, "--http", "0.0.0.0:0", "--token-file", short).failed(t), "at least 16")
	require.Contains(t, mdm(t, map[string]string{"MDMEMORY_TOKEN": "secret"}, "mcp", "--dir", dir, "--http", "0.0.0.0:0").failed(t), "$MDMEMORY_TOKEN has 6 characters")
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	require.Contains(t, mdm(t, nil, "mcp", "--dir", dir, "--http", "0.0.0.0:0", "--token-file", empty).failed(t), "is empty")
	// Usage mistakes.
	require.Equal(t, exitUsage, mdm(t, nil, "mcp", "--dir", dir, "--token-file", short).code)
	require.Equal(t, exitUsage, mdm(t, nil, "mcp", "--dir", dir, "--http", "0", "--max-sessions", "0").code)
	require.Equal(t, exitUsage, mdm(t, nil, "mcp", "--dir", dir, "--http", "0", "--max-conns", "0").code)
	require.Equal(t, exitUsage, mdm(t, nil, "mcp", "--dir", dir, "--http", "0", "--users", short).code)
	require.Equal(t, exitUsage, mdm(t, nil, "mcp", "--http", "0", "--users", short, "--token-file", short).code)
}

// TestMCPHTTPToken: a bare port listens on 127.0.0.1; with a token, a
// request without it gets 401, and a client that sends it is served; a
// foreign Host or Origin gets 403.
func TestMCPHTTPToken(t *testing.T) {
	const token = "0123456789abcdef-token"
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(token+"\n"), 0o600))
	url, rest := startHTTP(t, nil, "--dir", sample(t), "--http", "0", "--token-file", file)
	require.Contains(t, rest, "with a bearer token")

	resp := post(t, url, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer"))
	require.Equal(t, http.StatusUnauthorized, post(t, url, map[string]string{"Authorization": "Bearer " + token + "x"}).StatusCode)
	require.Equal(t, http.StatusForbidden, post(t, url, map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example"}).StatusCode)
	require.Equal(t, http.StatusForbidden, post(t, url, map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}).StatusCode)
	require.Equal(t, http.StatusOK, post(t, url, map[string]string{"Authorization": "Bearer " + token}).StatusCode)

	cs := connectToken(t, url, token)
	text, isErr := call(t, cs, "memory_read", map[string]any{"path": "facts/user.md"})
	require.False(t, isErr, text)
	require.Contains(t, text, "Name")

	// The token may come from the environment too.
	url, _ = startHTTP(t, []string{"MDMEMORY_TOKEN=" + token}, "--dir", sample(t), "--http", "127.0.0.1:0")
	require.Equal(t, http.StatusUnauthorized, post(t, url, nil).StatusCode)
	connectToken(t, url, token)
}

// TestMCPUsers: --users serves each token its own memory, by the token or
// its SHA-256, in sessions (2025-11-25) and in stateless requests
// (2026-07-28) alike; a user's writes land in its directory alone, and an
// unknown token gets 401.
func TestMCPUsers(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testMCPUsers(t, version) })
	}
}

func testMCPUsers(t *testing.T, version string) {
	root := t.TempDir()
	const alice, bob = "alice-token-0123456789", "bob-token-0123456789"
	sum := sha256.Sum256([]byte(bob))
	users := filepath.Join(root, "users")
	require.NoError(t, os.WriteFile(users, []byte("# the users\n\n"+alice+"  alice\nsha256:"+hex.EncodeToString(sum[:])+"\t"+filepath.Join(root, "bob")+"\n"), 0o600))
	url, rest := startHTTP(t, nil, "--http", "127.0.0.1:0", "--users", users)
	require.Contains(t, rest, "2 users of ")

	require.Equal(t, http.StatusUnauthorized, post(t, url, nil).StatusCode)
	require.Equal(t, http.StatusUnauthorized, post(t, url, map[string]string{"Authorization": "Bearer " + hex.EncodeToString(sum[:])}).StatusCode)

	a, b := connectTokenAt(t, url, alice, version), connectTokenAt(t, url, bob, version)
	text, isErr := call(t, a, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Secret: alice-42", "summary": nil})
	require.False(t, isErr, text)
	text, isErr = call(t, b, "memory_read", map[string]any{"path": "facts/user.md"})
	require.True(t, isErr, "bob reads alice's file: %s", text)
	text, isErr = call(t, b, "memory_append", map[string]any{"path": "facts/user.md", "entry": "- Name: Bob", "summary": nil})
	require.False(t, isErr, text)

	got, err := os.ReadFile(filepath.Join(root, "alice", "facts", "user.md"))
	require.NoError(t, err)
	require.Contains(t, string(got), "alice-42")
	require.NotContains(t, string(got), "Bob")
	got, err = os.ReadFile(filepath.Join(root, "bob", "facts", "user.md"))
	require.NoError(t, err)
	require.Contains(t, string(got), "Name: Bob")
	require.NotContains(t, string(got), "alice")
}

// TestParseUsers: the users file's format and its mistakes, each named by
// its line.
func TestParseUsers(t *testing.T) {
	sum := sha256.Sum256([]byte("some-token-0123456789"))
	hexSum := hex.EncodeToString(sum[:])
	_, err := parseUsers(strings.NewReader("# comment\n\nsome-token-0123456789 mem/a /w\n  sha256:"+strings.ToUpper(hexSum[:10])+hexSum[10:]+"x s3://b/p\nanother-token-0123456 mem/a /w\n"), "/base", "/default")
	require.Error(t, err, "a digest of 65 digits")
	_, err = parseUsers(strings.NewReader("# comment\n\nsome-token-0123456789 mem/a /w\nsha256:"+strings.ToUpper(hexSum)+" s3://b/p\n"), "/base", "/default")
	require.ErrorContains(t, err, "4: a token given twice")
	u, err := parseUsers(strings.NewReader("some-token-0123456789 mem/a /w\nanother-token-0123456 s3://b/p\nthird-token-012345678 mem/a /w\n"), "/base", "/default")
	require.NoError(t, err)
	require.Equal(t, 2, u.count())
	name, ok := u.User("some-token-0123456789")
	require.True(t, ok)
	require.Equal(t, filepath.Join("/base", "mem/a"), name)
	require.Equal(t, "/w", u.worlds[name])
	name, ok = u.User("another-token-0123456")
	require.True(t, ok)
	require.Equal(t, "s3://b/p", name)
	require.Equal(t, "/default", u.worlds[name])
	_, ok = u.User("some-token-012345678")
	require.False(t, ok)
	require.True(t, u.plain, "tokens in clear")

	// A comment may end a line; a file of digests holds no token in clear.
	u, err = parseUsers(strings.NewReader("sha256:"+hexSum+" /srv/a/ # alice\n"), "/base", "")
	require.NoError(t, err)
	name, ok = u.User("some-token-0123456789")
	require.True(t, ok)
	require.Equal(t, filepath.Clean("/srv/a"), name)
	require.Empty(t, u.worlds[name], "# alice is no world")
	require.False(t, u.plain)

	for _, c := range []struct{ file, want string }{
		{"", "no user"},
		{"# only a comment\n", "no user"},
		{"some-token-0123456789\n", "1: want TOKEN MEMORY [WORLD], found 1 fields"},
		{"some-token-0123456789 a b c\n", "1: want TOKEN MEMORY [WORLD], found 4 fields"},
		{"\nshort a\n", "2: a token of 5 characters"},
		{"sha256:abcd a\n", "1: sha256: takes the 64 hex digits"},
		{"some-token-0123456789 a /w1\nanother-token-0123456 a /w2\n", "2: a has another world on line 1"},
		{"some-token-0123456789 /srv/a /w1\nanother-token-0123456 /srv/a/ /w2\n", "2: /srv/a/ has another world on line 1"},
	} {
		_, err := parseUsers(strings.NewReader(c.file), "/base", "")
		require.ErrorContains(t, err, c.want, c.file)
	}
}

// TestLimitListener: past max connections, Accept waits until one closes;
// Close ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := newLimitListener(inner, 1)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first, err := l.Accept()
	require.NoError(t, err)
	dial()
	got := make(chan net.Conn)
	go func() {
		c, err := l.Accept()
		if err != nil {
			c = nil
		}
		got <- c
	}()
	select {
	case <-got:
		t.Fatal("a second connection was accepted while the first was open")
	default:
	}
	require.NoError(t, first.Close())
	require.Error(t, first.Close()) // a second Close frees no second place
	second := <-got
	require.NotNil(t, second)
	closed := make(chan error)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		closed <- err
	}()
	require.NoError(t, l.Close())
	require.ErrorIs(t, <-closed, net.ErrClosed)
	second.Close()
}

// TestWarnReadable: a file that holds a token in clear and that other
// users may read is named on standard error; a private one is not.
func TestWarnReadable(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps no permission bits")
	}
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("0123456789abcdef-token\n"), 0o600))
	var stderr strings.Builder
	e := &env{stderr: &stderr}
	warnReadable(e, file)
	require.Empty(t, stderr.String())
	require.NoError(t, os.Chmod(file, 0o644))
	warnReadable(e, file)
	require.Equal(t, "mdmemory: warning: "+file+" holds a token in clear and other users may read it (mode 0644): chmod 600 "+file+"\n", stderr.String())
}
