package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A host serves a memory directory over MCP. Here the client is the SDK's,
// over an in-memory transport; a real host runs the server on standard
// input and output (Run with mcpserver.StdioTransport(os.Stdin,
// os.Stdout)) or over HTTP (Handler).
func ExampleNew() {
	dir, err := os.MkdirTemp("", "memory")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The host's code: open the store, make the server, run it.
	store, err := memory.Open(dir, &memory.Options{Now: func() time.Time { return time.Date(2026, 2, 14, 9, 0, 0, 0, time.UTC) }})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	server := mcpserver.New(store, nil)
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := server.Connect(ctx, serverEnd, nil); err != nil {
		log.Fatal(err)
	}

	// A client's calls.
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	for _, args := range []map[string]any{
		{"path": "facts/user.md", "entry": "- Prefers green tea.", "summary": nil},
		{"path": "notes.txt", "entry": "- Prefers green tea.", "summary": nil},
	} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "memory_append", Arguments: args})
		if err != nil {
			log.Fatal(err) // a failure of the host
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	resources, err := session.ListResources(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range resources.Resources {
		fmt.Println(r.URI, r.Size, r.Description)
	}
	// Output:
	// false {"path":"facts/user.md","size":58,"version":"050c3bacbc39cf6da9278448"}
	// true notes.txt is not a memory file; valid paths are facts/user.md, facts/memory.md, procedures.md for rules learned from experience, or episodes/YYYY-MM.md for a month's episodes (such as episodes/2026-02.md)
	// memory:///facts/user.md 58 Prefers green…
}
