// Package mcpserver serves a memory store ([github.com/mdmemory/memory])
// to MCP clients (Claude Desktop, Claude Code, IDEs, the MCP Inspector)
// with the official Go SDK, [github.com/modelcontextprotocol/go-sdk/mcp].
//
// [New] returns an *mcp.Server that offers the six memory tools with the
// library's own descriptions and input schemas, each memory file as a
// resource (memory:///facts/user.md, ...) and the memory index as the
// prompt [IndexPrompt]; run it over standard input and output with
// Server.Run and [StdioTransport], or serve it over the streamable HTTP
// transport with [Handler], or many users' memories, one per bearer token,
// with [UsersHandler]. The HTTP handlers check every request's Host and
// Origin (the MCP transport specification's rule against DNS rebinding)
// and its token, and bound sessions and request bodies; TLS and OAuth are
// the host's to add. Both transports answer a message they cannot take
// with a JSON-RPC error (-32700, -32600, -32601) and go on serving.
//
// Both eras of MCP are served on one endpoint, request by request: the
// stateless revision [StatelessRevision] (2026-07-28), whose requests carry
// their protocol version and client identity in params._meta (and, over
// HTTP, in the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers,
// checked against the body), with server/discover in place of a handshake;
// and the revisions with sessions (2025-11-25 and older), which open one
// with initialize. The lists that change only with the program may be
// cached for [ListTTL]; what memory holds, not at all.
//
// Each MCP session is one conversation of the store ([memory.Session]): it
// may change what it has read, and a change made since by anyone else (a
// person's edit, another session) is refused until it reads the file
// again. A stateless request is a conversation of its own, as is each call
// of a client that starts a new process or session for every call: such a
// client carries the version memory_read gives instead (the tools' version
// argument). A model's mistake is a tool result with isError set; a
// failure of the host is a protocol error.
package mcpserver
