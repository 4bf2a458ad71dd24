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
	"time"

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
With --http ADDR (127.0.0.1:8080, :8080), it serves the streamable HTTP
transport at http://ADDR/, one conversation per MCP session, until it is
interrupted; it says where it listens on standard error.

Unlike the other commands, mcp writes: the agent records memory through it.
It creates the directory when it does not exist.`,
		minArgs: 0, maxArgs: 0,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			addr := fs.String("http", "", "serve streamable HTTP on this address (host:port) instead of standard input and output")
			timeout := fs.Duration("session-timeout", 30*time.Minute, "with --http, close a session idle this long, and end its conversation (0: never)")
			return func(ctx context.Context, e *env) error {
				s, close, err := e.open(ctx, true)
				if err != nil {
					return err
				}
				defer close()
				if *addr == "" {
					// A malformed line is answered with a JSON-RPC error,
					// and the server goes on.
					err := mcpserver.New(s, nil).Run(ctx, mcpserver.StdioTransport(os.Stdin, e.stdout))
					if errors.Is(err, io.EOF) || ctx.Err() != nil {
						return nil // the client closed standard input, or we were interrupted
					}
					return err
				}
				l, err := net.Listen("tcp", *addr)
				if err != nil {
					return err
				}
				srv := &http.Server{
					Handler:           mcpserver.Handler(s, &mcpserver.Options{SessionTimeout: *timeout}),
					ReadHeaderTimeout: 10 * time.Second,
				}
				fmt.Fprintf(e.stderr, "mdmemory: serving MCP (streamable HTTP) at http://%s/ for %s\n", l.Addr(), e.store.where(e.getenv))
				done := make(chan error, 1)
				go func() { done <- srv.Serve(l) }()
				select {
				case err := <-done:
					return err
				case <-ctx.Done():
				}
				// Requests under way get a moment to finish; the event streams
				// that clients hold open are then cut.
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := srv.Shutdown(sctx); err != nil {
					srv.Close()
				}
				<-done
				return nil
			}
		},
	}
}
