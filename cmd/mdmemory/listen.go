package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// tokenEnv names the environment variable that gives mcp --http its bearer
// token.
const tokenEnv = "MDMEMORY_TOKEN"

// listenAddr is the address mcp --http listens on for addr: a bare port
// ("8080") or one without a host (":8080") is on 127.0.0.1, this machine
// alone; any other address is as written. It reports whether the address
// is a loopback one: "localhost" or a loopback IP address. A host name
// other than localhost counts as reachable from elsewhere; what is no
// address at all counts as loopback, for net.Listen to refuse.
func listenAddr(addr string) (string, bool) {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// Not an address: net.Listen fails and says why, before any
		// token is asked for.
		return addr, true
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port), true
	}
	if strings.EqualFold(host, "localhost") {
		return addr, true
	}
	a, err := netip.ParseAddr(host)
	return addr, err == nil && a.Unmap().IsLoopback()
}

// readToken returns the bearer token of mcp --http: the content of file
// (its surrounding white space trimmed) when file is not "", else
// $MDMEMORY_TOKEN; "" for none.
func readToken(file string, getenv func(string) string) (string, error) {
	token := getenv(tokenEnv)
	from := "$" + tokenEnv
	if file != "" {
		b, err := readSmall(file, maxTokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		token, from = string(b), file
	}
	token = strings.TrimSpace(token)
	if token == "" && file != "" {
		return "", fmt.Errorf("--token-file: %s is empty (%s)", file, tokenHint)
	}
	if token != "" && (len(token) < minTokenLen || strings.ContainsAny(token, " \t\r\n")) {
		return "", fmt.Errorf("the token in %s has %d characters: a token has at least %d, without spaces (%s)", from, len(token), minTokenLen, tokenHint)
	}
	return token, nil
}

// maxTokenFile bounds what is read of --token-file: a token is a line.
const maxTokenFile = 4 << 10

// readSmall reads the file name, a person's setting (--token-file,
// --users), at most max bytes: one larger is refused as it is read, before
// it is all in memory. It is opened as it is named, a pipe included
// (--token-file <(pass show mdmemory)).
func readSmall(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s holds more than %d bytes, more than a setting's file does: not read", name, max)
	}
	return b, nil
}

// serverToken returns the token a server listening on f.addr serves with
// (readToken), and refuses to go without one where that would let others
// in: on an address beyond this machine, and with --allow-host, the names
// a proxy reaches a loopback server by on others' behalf. flag names the
// address's flag ("--addr"), kind the token ("a token"), and reach who
// would get in ("browsers reach the page").
func serverToken(e *env, f httpFlags, loopback bool, flag, kind, reach string) (string, error) {
	token, err := readToken(f.tokenFile, e.getenv)
	switch {
	case err != nil:
		return "", err
	case token == "" && !loopback:
		return "", fmt.Errorf("%s %s listens beyond this machine: give %s with --token-file FILE or $%s, or listen on 127.0.0.1", flag, f.addr, kind, tokenEnv)
	case token == "" && len(f.allowHosts) > 0:
		return "", fmt.Errorf("--allow-host lets %s under another name, such as a proxy's: give %s with --token-file FILE or $%s", reach, kind, tokenEnv)
	}
	return token, nil
}

// limitListener accepts at most max connections at once: past them,
// Accept waits for one to close, and the new ones wait in the system's
// queue.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(l net.Listener, max int) *limitListener {
	return &limitListener{Listener: l, sem: make(chan struct{}, max), done: make(chan struct{})}
}

// Accept waits for a free place, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.sem })}, nil
}

// Close closes the listener, and ends an Accept waiting for a place.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its place in a limitListener when it closes.
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// serve serves srv on l, at most maxConns connections at once, until ctx
// ends: it then stops taking connections, requests under way get grace
// to finish, and after it force, when not nil, is called (to cancel the
// requests' contexts: srv's BaseContext) and the connections still open
// are cut. It does not wait for the handlers still running.
func serve(ctx context.Context, srv *http.Server, l net.Listener, maxConns int, grace time.Duration, force func()) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(newLimitListener(l, maxConns)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		if force != nil {
			force()
		}
		srv.Close()
	}
	<-done
	return nil
}
