package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds what serves the stateless revision of MCP, 2026-07-28,
// beside the revisions with sessions (2025-11-25 and older): which
// requests speak it, the routing header the SDK does not decode, and how
// long a client may keep a list.

// StatelessRevision is the first revision of the MCP specification
// without sessions: no initialize handshake and no Mcp-Session-Id; every
// request carries its protocol version, client capabilities and client
// identity in params._meta (and, over HTTP, the MCP-Protocol-Version,
// Mcp-Method and Mcp-Name headers), and server/discover tells a client
// what the server supports. [New], [Handler], [UsersHandler] and
// [StdioTransport] serve it beside the revisions with sessions, chosen
// request by request: a request that carries the version in _meta (or,
// over HTTP, in the header) is served on its own; an initialize opens a
// session of an older revision, as before.
const StatelessRevision = "2026-07-28"

// ListTTL is how long a client may keep the answer to tools/list,
// prompts/list, resources/templates/list and server/discover (their
// ttlMs): what they list changes only when the program serving them does.
// They are the same for every user ("cacheScope": "public"). What
// resources/list and resources/read give changes whenever a person or a
// model edits memory, and is the user's own: "ttlMs": 0, "cacheScope":
// "private".
const ListTTL = 5 * time.Minute

// Header names of the streamable HTTP transport of 2026-07-28.
const (
	versionHeader = "Mcp-Protocol-Version"
	nameHeader    = "Mcp-Name"
)

// codeHeaderMismatch is the JSON-RPC error code of 2026-07-28 for routing
// headers that are missing, malformed, or that disagree with the body.
const codeHeaderMismatch = mcp.CodeHeaderMismatch

// stateless reports whether the protocol version v is one of the
// stateless revisions (2026-07-28 or later; dated versions compare as
// strings).
func stateless(v string) bool { return v >= StatelessRevision }

// metaVersion returns the protocol version that the params of a request
// carry in _meta ("io.modelcontextprotocol/protocolVersion"), or "".
func metaVersion(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// statelessRequest reports whether the HTTP request r is one of the
// stateless revision: a POST whose MCP-Protocol-Version header names
// 2026-07-28 or later, or whose request (as jsonRPCErrors decoded it)
// carries a protocol version in _meta, which only the stateless revisions
// define (the SDK checks it against the header); or a GET or DELETE
// without a session that names such a version in its header, which is
// answered 405 as that revision asks. Anything else is served in a
// session, or opens one.
func statelessRequest(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return stateless(r.Header.Get(versionHeader)) && r.Header.Get(sessionIDHeader) == ""
	}
	req, _ := r.Context().Value(messageKey{}).(*jsonrpc.Request)
	return statelessMessage(r, req)
}

// statelessMessage reports whether a POST r, carrying req (nil when it
// is not one request), is of the stateless revision: its
// MCP-Protocol-Version header names 2026-07-28 or later, or req carries a
// protocol version in _meta. The one test of it, for the routing
// (statelessRequest) and for the statuses of errors (jsonRPCErrors).
func statelessMessage(r *http.Request, req *jsonrpc.Request) bool {
	return stateless(r.Header.Get(versionHeader)) || req != nil && metaVersion(req.Params) != ""
}

// decodeName replaces r's Mcp-Name header, when it is in the Base64
// sentinel form of 2026-07-28 ("=?base64?...?="), with the value it
// encodes, which the SDK then compares with the body's params.name or
// params.uri (it decodes the Mcp-Param-* headers, not this one). A
// sentinel that does not hold Base64 is an error: the request is refused
// with HeaderMismatch.
func decodeName(r *http.Request) error {
	v := r.Header.Get(nameHeader)
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return nil
	}
	if enc, ok = strings.CutSuffix(enc, "?="); !ok {
		return nil
	}
	dec, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return fmt.Errorf("header mismatch: the %s header is not valid Base64 between =?base64? and ?=", nameHeader)
	}
	r.Header.Set(nameHeader, string(dec))
	return nil
}

// cacheable sets the cache fields of the results that have them: the
// lists that change only with the program, ListTTL and public; every
// other (resources/list and resources/read, which say private themselves)
// as its handler made it.
func cacheable(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.ListPromptsRequest, *mcp.ListResourceTemplatesRequest, *mcp.ServerRequest[*mcp.DiscoverParams]:
		c.TTLMs = int(ListTTL / time.Millisecond)
		c.CacheScope = "public"
	}
}
