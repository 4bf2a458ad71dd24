package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// This file holds what both transports use to answer a message that is not
// one the SDK can take with a JSON-RPC error instead of ending the session
// (standard input and output) or answering in plain text (HTTP).

// batchesUntil is the first protocol revision without JSON-RPC batches:
// 2025-06-18 removed them, which 2025-03-26 had added.
const batchesUntil = "2025-06-18"

// errorResponse is a JSON-RPC error response. Unlike the SDK's encoding of
// a response, it always has an id, null when the request's id could not
// be read, as JSON-RPC 2.0 asks of a parse error or an invalid request.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *jsonrpc.Error  `json:"error"`
}

// encodeError returns the JSON of an error response to the request with
// the id id (nil for null), without a final newline.
func encodeError(id json.RawMessage, code int64, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		// An id that decodeMessage accepted, a code and a string always
		// marshal.
		panic("mcpserver: encode a JSON-RPC error: " + err.Error())
	}
	return b
}

// rawID returns the JSON of a request's id, for encodeError.
func rawID(id jsonrpc.ID) json.RawMessage {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return nil
	}
	return b
}

// invalid is a message that is not a valid JSON-RPC message.
func invalid(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
}

// decodeMessage decodes one JSON-RPC 2.0 message, a request, notification
// or response, as MCP allows it: an object with "jsonrpc": "2.0"; an id, if
// any, that is a string or an integer (MCP forbids null); a method that is
// a string, with params, if any, an object or array; or, without a method,
// an id and either a result or an error. What is not JSON is a parse error
// (-32700); any other departure is an invalid request (-32600). data must
// not be a batch (an array): the caller decides about batches.
func decodeMessage(data []byte) (jsonrpc.Message, *jsonrpc.Error) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the message is not JSON"}
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, invalid("a message is a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, invalid("%v", err)
	}
	if v, ok := m["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return nil, invalid(`"jsonrpc" must be "2.0"`)
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return nil, invalid(`"id" must be a string or an integer`)
	}
	if method, ok := m["method"]; ok {
		if len(method) == 0 || method[0] != '"' {
			return nil, invalid(`"method" must be a string`)
		}
		if p, ok := m["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return nil, invalid(`"params" must be an object`)
		}
	} else {
		_, hasResult := m["result"]
		_, hasError := m["error"]
		switch {
		case !hasID:
			return nil, invalid(`a message without "method" is a response, which needs an "id"`)
		case hasResult == hasError:
			return nil, invalid(`a response has either "result" or "error"`)
		}
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return msg, nil
}

// validID reports whether id, the JSON of a message's id, is a string or
// an integer that fits in 64 bits.
func validID(id json.RawMessage) bool {
	switch {
	case len(id) == 0:
		return false
	case id[0] == '"':
		return true
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// isBatch reports whether data, a message as it arrived, is a JSON array.
func isBatch(data []byte) bool {
	data = bytes.TrimSpace(data)
	return len(data) > 0 && data[0] == '['
}

// method is what a server of go-sdk v1.8.0 takes of one method it
// receives.
type method struct {
	notification bool // it is a notification: it has no id
	params       bool // it requires params
}

// methods are the methods a server of go-sdk v1.8.0 receives (the SDK's
// serverMethodInfos): its streamable HTTP transport refuses any other in
// plain text, where jsonRPCErrors answers -32601. Keep it in step with the
// SDK when it is upgraded.
var methods = map[string]method{
	"initialize":                       {params: true},
	"ping":                             {},
	"completion/complete":              {params: true},
	"server/discover":                  {},
	"tools/list":                       {},
	"tools/call":                       {params: true},
	"prompts/list":                     {},
	"prompts/get":                      {params: true},
	"resources/list":                   {},
	"resources/templates/list":         {},
	"resources/read":                   {params: true},
	"resources/subscribe":              {params: true},
	"resources/unsubscribe":            {params: true},
	"subscriptions/listen":             {params: true},
	"logging/setLevel":                 {params: true},
	"notifications/initialized":        {notification: true},
	"notifications/cancelled":          {notification: true},
	"notifications/roots/list_changed": {notification: true},
	"notifications/progress":           {notification: true, params: true},
}

// jsonRPCErrors wraps h, the SDK's streamable HTTP handler, so that every
// POST of JSON that the SDK would refuse in plain text is answered with a
// JSON-RPC error in JSON instead:
//
//   - a body that is not JSON: -32700, status 400, id null;
//   - one that is not a JSON-RPC message (no "jsonrpc": "2.0", an id that
//     is an object, an array or null, a response with neither result nor
//     error), or a batch (an array) when the protocol version (the
//     MCP-Protocol-Version header) is 2025-06-18 or later or an element is
//     invalid: -32600, status 400, id null;
//   - a request for a method the server does not have: -32601, status 200
//     (404 in a request of the stateless revision, which says so), with
//     the request's id; a notification of a method it does not have is
//     accepted and ignored (202), as JSON-RPC says;
//   - a request with an id for a method that is a notification, or a
//     notification of a method that is a request: -32600, status 400;
//     a request without the params its method requires: -32602, status
//     200 (400 in a request of the stateless revision; 400 and id null for
//     a notification);
//   - in a request of the stateless revision, an Mcp-Name header in the
//     Base64 form that is not Base64: -32020, status 400 (a valid one is
//     decoded for the SDK, which compares it with the body);
//   - a refusal of the SDK in plain text (a session that does not exist,
//     404; an Accept header without text/event-stream, 400): the same
//     status, with a JSON-RPC error (-32600, or -32603 for a status of
//     500 or more) whose message is the SDK's text, and the request's id.
//
// It reads at most limit bytes of a body (the limit h applies too, the
// SDK's StreamableHTTPOptions.MaxRequestBodyBytes): a larger one, or one
// larger than a limit set on the request before it (an
// http.MaxBytesReader), gets -32600 with status 413. Everything else, and
// every GET and DELETE, goes to h as it came.
func jsonRPCErrors(h http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			// The SDK answers 415: not a JSON-RPC matter.
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the body is larger than %d bytes", mbe.Limit))
				return
			}
			writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the body could not be read")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if isBatch(body) {
			if jerr := checkBatch(body, r.Header.Get("Mcp-Protocol-Version")); jerr != nil {
				writeError(w, http.StatusBadRequest, nil, jerr.Code, jerr.Message)
				return
			}
			h.ServeHTTP(w, r)
			return
		}
		msg, jerr := decodeMessage(body)
		if jerr != nil {
			writeError(w, http.StatusBadRequest, nil, jerr.Code, jerr.Message)
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		var id json.RawMessage
		if req.IsCall() {
			id = rawID(req.ID)
		}
		jw := &jsonErrorWriter{ResponseWriter: w, id: id}
		defer jw.finish()
		w = jw
		// A request of the stateless revision gets its errors with the
		// statuses that revision gives them: 404 for a method the server
		// does not have, 400 for invalid params.
		modern := statelessMessage(r, req)
		notFound, badParams := http.StatusOK, http.StatusOK
		if modern {
			notFound, badParams = http.StatusNotFound, http.StatusBadRequest
			if err := decodeName(r); err != nil {
				writeError(w, http.StatusBadRequest, id, codeHeaderMismatch, err.Error())
				return
			}
		}
		m, known := methods[req.Method]
		switch {
		case !known && req.IsCall():
			writeError(w, notFound, rawID(req.ID), jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %q", req.Method))
		case !known:
			w.WriteHeader(http.StatusAccepted)
		case m.notification && req.IsCall():
			writeError(w, http.StatusBadRequest, rawID(req.ID), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %q is a notification, which has no id", req.Method))
		case !m.notification && !req.IsCall():
			writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %q is a request, which needs an id", req.Method))
		case m.params && (len(req.Params) == 0 || string(req.Params) == "null"):
			if req.IsCall() {
				writeError(w, badParams, rawID(req.ID), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: %q requires params", req.Method))
			} else {
				writeError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: %q requires params", req.Method))
			}
		default:
			// The request decoded goes on with it, for the handler of
			// the stateless revision.
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), messageKey{}, req)))
		}
	})
}

// checkBatch returns the error that answers the batch data, a JSON array,
// sent with the protocol version version (the MCP-Protocol-Version
// header; "" before the session has one, meaning 2025-03-26 over HTTP);
// nil when the SDK may take it.
func checkBatch(data []byte, version string) *jsonrpc.Error {
	if version >= batchesUntil {
		return invalid("JSON-RPC batches are not part of MCP since %s (this session speaks %s): send one message at a time", batchesUntil, version)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		if !json.Valid(data) {
			return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the message is not JSON"}
		}
		return invalid("%v", err)
	}
	if len(elems) == 0 {
		return invalid("an empty batch")
	}
	for i, e := range elems {
		if isBatch(e) {
			return invalid("element %d of the batch is an array", i)
		}
		if _, jerr := decodeMessage(e); jerr != nil {
			return invalid("element %d of the batch: %s", i, jerr.Message)
		}
	}
	return nil
}

// writeError answers an HTTP request with a JSON-RPC error response.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encodeError(id, code, msg))
}

// jsonErrorWriter turns an error the SDK writes in plain text (with
// http.Error) in answer to a JSON-RPC message into a JSON-RPC error in
// JSON, with the same status; finish writes it. Everything else, an event
// stream included, passes through.
type jsonErrorWriter struct {
	http.ResponseWriter
	id     json.RawMessage // the request's id; nil for a notification
	status int             // the status of the error held back, or 0
	text   bytes.Buffer    // its text
}

func (j *jsonErrorWriter) WriteHeader(status int) {
	if j.status == 0 && status >= 400 && strings.HasPrefix(j.Header().Get("Content-Type"), "text/plain") {
		j.status = status
		return
	}
	j.ResponseWriter.WriteHeader(status)
}

func (j *jsonErrorWriter) Write(p []byte) (int, error) {
	if j.status != 0 {
		return j.text.Write(p)
	}
	return j.ResponseWriter.Write(p)
}

// Flush passes a flush on, for the SDK's event streams.
func (j *jsonErrorWriter) Flush() {
	if f, ok := j.ResponseWriter.(http.Flusher); ok && j.status == 0 {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (j *jsonErrorWriter) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// finish writes the error held back, if any.
func (j *jsonErrorWriter) finish() {
	if j.status == 0 {
		return
	}
	code := int64(jsonrpc.CodeInvalidRequest)
	if j.status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	j.Header().Del("X-Content-Type-Options")
	writeError(j.ResponseWriter, j.status, j.id, code, strings.TrimSpace(j.text.String()))
}
