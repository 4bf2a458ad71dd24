package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mdmemory/memory/cmd/mdmemory/internal/ui"
)

func cmdUI() *command {
	return &command{
		name: "ui", summary: "a page in the browser to browse, search, fix and undo the memory",
		about: `Serves a page for people at http://ADDR/ (default 127.0.0.1:7337) and prints
its address: an overview (the budgets, what the memory holds, the last
changes, what Check found and what to do), the facts, procedures, persona and
world topics (each line editable, or the whole file), the months as a
timeline, search, the history of changes with their diffs and a Restore
button, and compaction (a preview, then apply). It runs until interrupted.

Every change goes through the library with the version of the file the page
showed: a change made meanwhile, by the agent or in an editor, is never
overwritten; the page shows both texts to merge. The history records the
page's changes as made by "ui".

The page is for the person who started it, and always asks for a token:
the one of mdmemory mcp --http, from --token-file FILE or $MDMEMORY_TOKEN,
or else one made at random for this run, printed once (on standard error)
in a login address, http://127.0.0.1:7337/?token=TOKEN, as Jupyter does.
Another account or program on this machine reaches the port but not the
page. Open the address with ?token=TOKEN (or type the token into the login
form) and the browser gets a session cookie (HttpOnly, SameSite=Strict) in
exchange; the token leaves the address bar at once. The session's pages are
under a path of its own, /s/KEY/, the one path its cookie is sent to:
browsers keep cookies by host, not by port, so a page served on another port
of this machine gets no cookie of the page, and a request needs both the
cookie and the path. A session ends 12 hours
after the login, after an hour unused, at Log out, or when mdmemory ui
stops. Its cookie is marked Secure when the page was reached over https
(a proxy that sends X-Forwarded-Proto: https). A loopback address (the
default, a port alone, localhost) serves this machine only; any other
address, or --allow-host, needs a token given, not made. Every request's
Host and Origin are checked as mcp --http checks them (--allow-host,
--allow-origin), every form carries a CSRF token of the session, and
nothing is served from outside the binary. Serve it behind a proxy with
TLS when it is reached over a network.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			var f httpFlags
			fs.StringVar(&f.addr, "addr", "127.0.0.1:7337", "listen on ADDR: PORT or :PORT listens on 127.0.0.1 alone, 0.0.0.0:PORT on every interface (with a token)")
			fs.StringVar(&f.tokenFile, "token-file", "", "the token a browser logs in with, read from FILE (default $"+tokenEnv+"); needed unless ADDR is a loopback address, where one is made at random and printed")
			fs.Var(&f.allowHosts, "allow-host", "a host name the page is reached by besides its address, such as a proxy's (repeat, or separate with commas); needs a token")
			fs.Var(&f.allowOrigins, "allow-origin", "another origin whose pages may send the page's forms (repeat, or separate with commas)")
			return func(ctx context.Context, e *env) error { return serveUI(ctx, e, f) }
		},
	}
}

// uiServer is the HTTP server of the page: a client that is slow to send
// its headers or to read the answer, or that keeps a connection idle, is
// cut off, so that a few cannot hold all the connections the listener
// allows.
func uiServer(page http.Handler) *http.Server {
	return &http.Server{
		Handler:           page,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       15 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// serveUI serves the page as f says, until ctx is done.
func serveUI(ctx context.Context, e *env, f httpFlags) error {
	addr, loopback := listenAddr(f.addr)
	token, err := serverToken(e, f, loopback, "--addr", "a token", "browsers reach the page")
	if err != nil {
		return err
	}
	opts, err := e.store.options()
	if err != nil {
		return err
	}
	s, close, err := e.open(ctx, true)
	if err != nil {
		return err
	}
	defer close()
	if f.tokenFile != "" {
		warnReadable(e, f.tokenFile)
	}
	made := token == ""
	if made {
		token = rand.Text() // 130 bits
	}
	uo := &ui.Options{
		Token:          token,
		AllowedHosts:   f.allowHosts,
		AllowedOrigins: f.allowOrigins,
		FactsBudget:    opts.FactsBudget,
		WorldBudget:    opts.WorldBudget,
		World:          e.store.worldWhere(e.getenv) != "",
	}
	for _, ff := range opts.FactFiles {
		uo.FactFiles = append(uo.FactFiles, ff.Name)
	}
	page := ui.New(s, uo)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := uiServer(page)
	url := "http://" + l.Addr().String() + "/"
	fmt.Fprintln(e.stdout, url)
	if made {
		fmt.Fprintf(e.stderr, "mdmemory: serving the page for %s at %s (this machine only), for you alone; log in by opening\n\n    %s?token=%s\n\n(a token made for this run; Ctrl-C ends it)\n", e.store.where(e.getenv), url, url, token)
	} else {
		fmt.Fprintf(e.stderr, "mdmemory: serving the page for %s at %s; log in with %s?token=TOKEN (the token of --token-file or $%s) or the login form; Ctrl-C ends it\n", e.store.where(e.getenv), url, url, tokenEnv)
	}
	go page.Warm(ctx)
	return serve(ctx, srv, l, 256, 5*time.Second, nil)
}
