package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
)

func cmdMCP() *command {
	return &command{
		name: "mcp", summary: "the MCP server: on standard input and output, or --http ADDR",
		about: `Serves the memory to MCP clients (Claude Desktop, Claude Code, IDEs, the MCP
Inspector): the six memory tools, each memory file as a resource
(memory:///facts/user.md) and the index as the prompt memory_index.

Without --http, it speaks MCP on standard input and output, one conversation
for the process, until standard input closes: the form a client's
configuration starts it in, such as
  {"command": "mdmemory", "args": ["mcp", "--dir", "/home/me/memory"]}.
A line that is not a JSON-RPC message is answered with a JSON-RPC error
(-32700 or -32600), and the server goes on.

Both eras of MCP are served, over either transport, request by request: a
request of the stateless revision 2026-07-28 (its protocol version in
_meta, and over HTTP in the MCP-Protocol-Version header; no initialize, no
session) is a conversation of its own, so it changes an existing file only
with the version memory_read gave; an initialize (2025-11-25 and older)
opens a session, one conversation.

With --http ADDR, it serves the streamable HTTP transport at http://ADDR/,
one conversation per MCP session, until it is interrupted; it says where it
listens on standard error. A port alone (8080) or :8080 listens on
127.0.0.1, this machine only. To listen on every interface, write
0.0.0.0:8080 or [::]:8080 (or a LAN address); such an address needs a
bearer token, from --token-file FILE or $MDMEMORY_TOKEN (at least 16
characters: openssl rand -hex 32), which every request must carry as
"Authorization: Bearer TOKEN", or the users of --users. A token given on a
loopback address is required there too. Serve it behind a proxy with TLS
when it is reached over a network: the token travels in clear otherwise.

Every request's Host header must name the server (a loopback name on a
loopback address, else the address it listens on, or an --allow-host), and
a browser's request must come from the server's own origin or an
--allow-origin: anything else gets 403, so that no web page reaches the
memory. Sessions are bounded (--max-sessions: past them a new session
closes the one idle the longest; --session-timeout), and so are
connections (--max-conns) and the time a request's body may take (30s).

--users FILE serves many users from one process, each its own memory: one
line per user, fields separated by spaces,
  # TOKEN           MEMORY             [WORLD]
  sha256:9f86d08...  /srv/memory/alice  /srv/world
  3f5c0e1a77d2...   s3://bucket/bob
where TOKEN is the user's bearer token, or sha256: and the SHA-256 of it
in hex (printf %s TOKEN | sha256sum), so that the file need not hold it;
MEMORY is a directory (created on first use) or s3://BUCKET/PREFIX; and
WORLD, the user's shared world, defaults to --world. Relative directories
are taken from the file's folder. A request sees its token's memory alone;
a user's store opens on first use, and closes a minute after its last
session ends.

For an operator: GET /healthz answers 200 while the process runs, and GET
/readyz 200 while the memory's backend answers (503 otherwise), without a
token; --metrics ADDR serves Prometheus metrics at http://ADDR/metrics (no
token, user, path or memory text in them), and /healthz and /readyz again,
on connections of their own: the place for probes; an access log goes to standard
error (--log-format text, json or none); SIGTERM or SIGINT stops taking
requests, lets those under way finish within --shutdown-timeout, releases
every store and exits 0. Several processes with --users over one bucket
serve any request in any process, behind a plain round-robin proxy.

Unlike the other commands, mcp writes: the agent records memory through it.
It creates the directory when it does not exist.`,
		minArgs: 0, maxArgs: 0,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			var f httpFlags
			fs.StringVar(&f.addr, "http", "", "serve streamable HTTP on ADDR instead of standard input and output: PORT or :PORT listens on 127.0.0.1 alone, 0.0.0.0:PORT on every interface (with a token)")
			fs.StringVar(&f.tokenFile, "token-file", "", "with --http, the bearer token every request must carry, read from FILE (default $"+tokenEnv+"); needed unless ADDR is a loopback address")
			fs.StringVar(&f.users, "users", "", "with --http, serve many users: FILE has a line TOKEN MEMORY [WORLD] per user, and replaces --dir and the token")
			fs.Var(&f.allowHosts, "allow-host", "with --http, a host name clients reach the server by besides its address, such as a proxy's (repeat, or separate with commas); needs a token")
			fs.Var(&f.allowOrigins, "allow-origin", "with --http, a browser origin (https://app.example.com) whose pages may call the server (repeat, or separate with commas)")
			fs.IntVar(&f.maxSessions, "max-sessions", 1000, "with --http, the sessions open at once; past them a new session closes the one idle the longest")
			fs.DurationVar(&f.timeout, "session-timeout", 30*time.Minute, "with --http, close a session idle this long, and end its conversation (0: never)")
			fs.IntVar(&f.maxConns, "max-conns", 1024, "with --http, the connections open at once; past them new ones wait")
			fs.StringVar(&f.metrics, "metrics", "", "with --http, serve Prometheus metrics at http://ADDR/metrics: PORT or :PORT listens on 127.0.0.1 alone (no token: they hold no token, user, path or memory text)")
			fs.StringVar(&f.logFormat, "log-format", "text", "with --http, the access log on standard error: text, json, or none")
			fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "with --http, on SIGTERM or SIGINT, the time the requests under way get to finish before their connections are cut")
			embed := addEmbedFlags(fs)
			return func(ctx context.Context, e *env) error {
				if err := embed.use(e); err != nil {
					return err
				}
				if f.addr != "" {
					return serveHTTP(ctx, e, f)
				}
				if f.users != "" || f.tokenFile != "" || f.metrics != "" {
					return usageErr{"--users, --token-file and --metrics go with --http"}
				}
				s, close, err := e.open(ctx, true)
				if err != nil {
					return err
				}
				defer close()
				if isTerminal(e.stdin) {
					// A person who typed "mdmemory mcp" would otherwise see
					// nothing happen.
					fmt.Fprintln(e.stderr, "mdmemory: waiting for an MCP client on standard input; this is the server an MCP client starts from its configuration (see 'mdmemory mcp --help'); Ctrl-D or Ctrl-C ends it")
				}
				// A malformed line is answered with a JSON-RPC error, and the
				// server goes on.
				err = mcpserver.New(s, nil).Run(ctx, mcpserver.StdioTransport(e.stdin, e.stdout))
				if errors.Is(err, io.EOF) || ctx.Err() != nil {
					return nil // the client closed standard input, or we were interrupted
				}
				return err
			}
		},
	}
}

// httpFlags are the flags of mcp --http.
type httpFlags struct {
	addr         string
	tokenFile    string
	users        string
	allowHosts   listFlag
	allowOrigins listFlag
	maxSessions  int
	timeout      time.Duration
	maxConns     int

	metrics         string
	logFormat       string
	shutdownTimeout time.Duration
}

// serveHTTP serves MCP over streamable HTTP as f says, until ctx is done.
func serveHTTP(ctx context.Context, e *env, f httpFlags) error {
	switch {
	case f.maxSessions < 1:
		return usageErr{"--max-sessions must be at least 1"}
	case f.maxConns < 1:
		return usageErr{"--max-conns must be at least 1"}
	case f.timeout < 0:
		return usageErr{"--session-timeout may not be negative"}
	case f.shutdownTimeout < 0:
		return usageErr{"--shutdown-timeout may not be negative"}
	case f.users != "" && f.tokenFile != "":
		return usageErr{"--users gives each user's token: drop --token-file"}
	case f.users != "" && e.store.dir != "":
		return usageErr{"--users names each user's memory: drop --dir"}
	}
	addr, loopback := listenAddr(f.addr)
	opts := &mcpserver.Options{
		AllowedHosts:   f.allowHosts,
		AllowedOrigins: f.allowOrigins,
		MaxSessions:    f.maxSessions,
		SessionTimeout: f.timeout,
	}
	if f.timeout == 0 {
		opts.SessionTimeout = -1 // never
	}
	// The requests' contexts, and the sessions' end, when the graceful
	// stop runs out.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	opts.Stop = base
	accessLog, err := newAccessLog(f.logFormat, e.stderr)
	if err != nil {
		return err
	}
	var m *metrics
	if f.metrics != "" {
		m = newMetrics()
	}
	obs := observer{m: m, log: accessLog}
	observed := m != nil || accessLog != nil
	op := &opener{getenv: e.getenv}
	if m != nil {
		op.observe = func(b memory.Backend) memory.Backend { return observedBackend{Backend: b, m: m} }
	}
	var (
		handler  http.Handler
		serves   string
		roots    []string
		closeAll func()
	)
	if f.users != "" {
		sopts, err := e.store.options()
		if err != nil {
			return err
		}
		sopts.Embedder = e.embedder
		u, err := readUsers(f.users, e.store.worldWhere(e.getenv), sopts, e.getenv)
		if err != nil {
			return fmt.Errorf("--users %w", err)
		}
		u.opener = op
		roots, closeAll = u.roots(), u.closeAll
		if u.plain {
			warnReadable(e, f.users)
		}
		obs.key = u.logKey()
		if observed {
			opts.Observer = obs
		}
		handler = mcpserver.UsersHandler(u, opts)
		serves = fmt.Sprintf("%d users of %s, each with its token", u.count(), f.users)
	} else {
		token, err := serverToken(e, f, loopback, "--http", "a bearer token", "clients reach the server")
		if err != nil {
			return err
		}
		s, close, err := e.openWith(ctx, true, op)
		if err != nil {
			return err
		}
		closeAll = close
		for _, where := range []string{e.store.where(e.getenv), e.store.worldWhere(e.getenv)} {
			if root := rootOf(where, false); root != "" {
				roots = append(roots, root)
			}
		}
		if f.tokenFile != "" {
			warnReadable(e, f.tokenFile)
		}
		opts.Token = token
		if observed {
			opts.Observer = obs // one user, who has no id
		}
		handler = mcpserver.Handler(s, opts)
		serves = e.store.where(e.getenv)
		if token != "" {
			serves += ", with a bearer token"
		}
	}
	// Every store is released once the server stopped: its requests
	// finished or, past --shutdown-timeout, their contexts cancelled and
	// their connections cut; a store's Close waits for what still runs on
	// it, which the cancelled context ends.
	defer closeAll()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var ml net.Listener // the metrics'
	if m != nil {
		if ml, err = listenMetrics(f.metrics); err != nil {
			l.Close()
			return err
		}
	}
	health := probes(newReadiness(roots, op, accessLog))
	streams := newStreams()
	defer streams.endNow()
	srv := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return base },
		Handler:           operated(streams.handler(handler), health),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// No ReadTimeout or WriteTimeout: they would cut the event streams
		// that sessions hold open. The handler reads each body within its
		// own deadline.
	}
	srv.RegisterOnShutdown(streams.stop)
	fmt.Fprintf(e.stderr, "mdmemory: serving MCP (streamable HTTP) at http://%s/ for %s\n", l.Addr(), serves)
	var wg sync.WaitGroup
	defer wg.Wait()
	if m != nil {
		fmt.Fprintf(e.stderr, "mdmemory: metrics at http://%s/metrics\n", ml.Addr())
		wg.Go(func() { _ = serveMetrics(ctx, ml, m, health) })
	}
	defer context.AfterFunc(ctx, func() {
		fmt.Fprintf(e.stderr, "mdmemory: stopping: no new requests; those under way have %v to finish\n", f.shutdownTimeout)
	})()
	return serve(ctx, srv, l, f.maxConns, f.shutdownTimeout, cancelBase)
}

// listFlag is a flag that may be repeated, each value a comma-separated
// list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// warnReadable says on standard error when file, which holds a token in
// clear, can be read by other users of this machine. (Windows keeps no
// such bits: its access lists decide.)
func warnReadable(e *env, file string) {
	if runtime.GOOS == "windows" {
		return
	}
	if fi, err := os.Stat(file); err == nil && fi.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(e.stderr, "mdmemory: warning: %s holds a token in clear and other users may read it (mode %#o): chmod 600 %s\n", file, fi.Mode().Perm(), file)
	}
}
