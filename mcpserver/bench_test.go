package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCall measures a memory_read of a small fact file through
// the MCP server over an in-memory transport (the SDK's client, JSON-RPC
// encoding both ways, the session's conversation), beside the same call
// made directly with Session.Call: the difference is what MCP adds.
func BenchmarkToolCall(b *testing.B) {
	store, _ := openStore(b)
	ctx := context.Background()
	if err := store.Write(ctx, "facts/user.md", "# User\n\n- Prefers green tea.\n- Lives in Lyon.\n- Works on the payments team.\n"); err != nil {
		b.Fatal(err)
	}
	b.Run("mcp", func(b *testing.B) {
		cs := connect(b, mcpserver.New(store, nil))
		params := &mcp.CallToolParams{Name: "memory_read", Arguments: read("facts/user.md")}
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		session := store.NewSession()
		args := json.RawMessage(`{"path":"facts/user.md","line":null}`)
		for b.Loop() {
			res, err := session.Call(ctx, "memory_read", args)
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
}
