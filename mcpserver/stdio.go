package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineLength bounds one message read by [StdioTransport]: a line longer
// than this is answered with an invalid-request error and skipped. It is
// the SDK's own bound on a message over standard input and output,
// mcp.DefaultMaxLineLength.
const MaxLineLength = mcp.DefaultMaxLineLength

// StdioTransport returns an MCP transport over r and w, one JSON-RPC
// message per line, as the SDK's mcp.StdioTransport is over standard
// input and output, for a server: run one with
//
//	err := mcpserver.New(store, nil).Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout))
//
// Unlike the SDK's, where one malformed line ends the session, it answers
// each line that is not a message the server can take with a JSON-RPC
// error, and goes on reading:
//
//   - a line that is not JSON (a truncated object included): -32700,
//     parse error, with "id": null;
//   - JSON that is not a JSON-RPC 2.0 message ({}, a string, an id that is
//     an object, an array or null, a method that is not a string), a line
//     longer than [MaxLineLength], or a batch (a JSON array) before the
//     session is initialized or once it speaks a protocol revision without
//     batches (2025-06-18 and later; 2025-03-26 had them, and a client
//     that negotiated it may send them, answered in one array): -32600,
//     invalid request, with "id": null.
//
// A request for a method the server does not have is answered -32601 by
// the SDK, with its id. A request that carries its protocol version in
// params._meta (the stateless revision, 2026-07-28) is served on its own,
// without initialize; server/discover without that version is answered
// -32602, as a server of that revision answers it. Empty lines are skipped. A request cancelled by the client
// (notifications/cancelled) before its answer is written gets no answer,
// as the MCP specification asks; one answered already stays answered.
//
// Writes to w are serialised, one line each. The transport never closes
// r or w; a session ends when r ends (io.EOF) or fails, or when the
// server's context is cancelled. Reading r happens in a goroutine of its
// own, which returns once r returns an error or the end of its input, or
// the next line is read after the session ended.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	return &stdioTransport{r: r, w: w}
}

type stdioTransport struct {
	r io.Reader
	w io.Writer
}

// Connect implements mcp.Transport. It may be called once.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		lines: make(chan line),
		done:  make(chan struct{}),
		w:     t.w,
		calls: make(map[jsonrpc.ID]*call),
	}
	go c.readLines(t.r)
	return c, nil
}

// line is one line of input, without its line break, or why there is
// none.
type line struct {
	data    []byte
	tooLong bool  // the line was longer than MaxLineLength, and skipped
	err     error // the input failed or ended; data is empty
}

// stdioConn is the connection of a StdioTransport.
type stdioConn struct {
	lines chan line     // from readLines
	done  chan struct{} // closed by Close
	once  sync.Once

	queue []jsonrpc.Message // the rest of a batch being read; Read's alone

	wmu sync.Mutex // serialises writes to w
	w   io.Writer

	mu      sync.Mutex
	calls   map[jsonrpc.ID]*call // requests read and not answered yet
	initID  jsonrpc.ID           // the id of the initialize request
	version string               // the protocol version the server negotiated
}

// call is a request read and not answered yet.
type call struct {
	cancelled bool   // by notifications/cancelled: its answer is dropped
	batch     *batch // the batch it arrived in, or nil
}

// batch collects the answers to the requests of one batch, written
// together as JSON-RPC asks.
type batch struct {
	answers []json.RawMessage // in the order of the requests; nil for a dropped one
	index   map[jsonrpc.ID]int
	left    int // requests not answered yet
}

// readLines sends the lines of r to c.lines until r fails or ends, or c is
// closed.
func (c *stdioConn) readLines(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var l line
		var buf []byte
		for {
			chunk, err := br.ReadSlice('\n')
			if !l.tooLong {
				if len(buf)+len(chunk) > MaxLineLength+2 { // a line break may be \r\n
					l.tooLong, buf = true, nil
				} else {
					buf = append(buf, chunk...)
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && len(buf) == 0 && !l.tooLong {
				l.err = err
			}
			break
		}
		if !l.tooLong {
			l.data = bytes.TrimRight(buf, "\r\n")
		}
		select {
		case c.lines <- l:
		case <-c.done:
			return
		}
		if l.err != nil {
			return
		}
	}
}

// Read implements mcp.Connection: it returns the next message the server
// can take, and answers the lines that are not one.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	for {
		var l line
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, io.EOF
		case l = <-c.lines:
		}
		switch {
		case l.err != nil:
			return nil, l.err
		case l.tooLong:
			c.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a message longer than %d bytes", MaxLineLength))
			continue
		case len(bytes.TrimSpace(l.data)) == 0:
			continue
		}
		if isBatch(l.data) {
			msgs, jerr := c.readBatch(l.data)
			if jerr != nil {
				c.answer(nil, jerr.Code, jerr.Message)
				continue
			}
			c.queue = msgs[1:]
			return msgs[0], nil
		}
		msg, jerr := decodeMessage(l.data)
		if jerr != nil {
			c.answer(nil, jerr.Code, jerr.Message)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "server/discover" && metaVersion(req.Params) == "" {
			// A request of the stateless revision alone, which must say
			// its version: invalid params, a modern error, so that a
			// client probing with it knows the server speaks that
			// revision. (The SDK answers -32601, as a server of sessions
			// alone would.)
			c.answer(rawID(req.ID), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: server/discover needs params._meta[%q], the protocol version of the request (%s or later)", mcp.MetaKeyProtocolVersion, StatelessRevision))
			continue
		}
		c.mu.Lock()
		c.track(msg, nil)
		c.mu.Unlock()
		return msg, nil
	}
}

// readBatch decodes a batch, when the session's protocol version has
// them, and tracks its requests.
func (c *stdioConn) readBatch(data []byte) ([]jsonrpc.Message, *jsonrpc.Error) {
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version == "" {
		// Before the server answered initialize, which may not be in a
		// batch: no revision with batches allows one.
		return nil, invalid("a JSON-RPC batch before the session is initialized")
	}
	if jerr := checkBatch(data, version); jerr != nil {
		return nil, jerr
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, invalid("%v", err)
	}
	msgs := make([]jsonrpc.Message, len(elems))
	b := &batch{index: make(map[jsonrpc.ID]int)}
	for i, e := range elems {
		msg, jerr := decodeMessage(e)
		if jerr != nil {
			return nil, jerr
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := b.index[req.ID]; dup {
				return nil, invalid("the id %v twice in one batch", req.ID.Raw())
			}
			b.index[req.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
		}
		msgs[i] = msg
	}
	b.left = len(b.answers)
	c.mu.Lock()
	for _, msg := range msgs {
		c.track(msg, b)
	}
	c.mu.Unlock()
	return msgs, nil
}

// track notes a message read: a request, to be answered; the initialize
// request, whose answer says the protocol version; a cancellation, whose
// request's answer is then dropped. c.mu is held.
func (c *stdioConn) track(msg jsonrpc.Message, b *batch) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.IsCall() {
		c.calls[req.ID] = &call{batch: b}
		if req.Method == "initialize" {
			c.initID = req.ID
		}
		return
	}
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	if cl := c.calls[id]; cl != nil && id != c.initID {
		// The initialize request may not be cancelled.
		cl.cancelled = true
	}
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.done:
		return io.ErrClosedPipe
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode a JSON-RPC message: %w", err)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		data = c.answered(resp, data)
		if data == nil {
			return nil
		}
	}
	return c.writeLine(data)
}

// answered notes that resp, encoded as data, answers a request, and
// returns what to write: data, nothing (nil) for a cancelled request or a
// batch with answers still to come, or the batch's answers.
func (c *stdioConn) answered(resp *jsonrpc.Response, data []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.calls[resp.ID]
	if cl == nil {
		return data
	}
	delete(c.calls, resp.ID)
	if resp.ID == c.initID && resp.Error == nil {
		var r struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil {
			c.version = r.ProtocolVersion
		}
	}
	if cl.batch == nil {
		if cl.cancelled {
			return nil
		}
		return data
	}
	b := cl.batch
	if !cl.cancelled {
		b.answers[b.index[resp.ID]] = data
	}
	if b.left--; b.left > 0 {
		return nil
	}
	var out []json.RawMessage
	for _, a := range b.answers {
		if a != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil
	}
	all, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return all
}

// answer writes an error response to the request with the id id, null
// when nil.
func (c *stdioConn) answer(id json.RawMessage, code int64, msg string) {
	// A failed write shows in the next Write, which the server makes.
	_ = c.writeLine(encodeError(id, code, msg))
}

// writeLine writes data and a line break.
func (c *stdioConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection: Read returns io.EOF, and Write an
// error, from then on.
func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

// SessionID implements mcp.Connection: a stdio session has no id.
func (c *stdioConn) SessionID() string { return "" }
