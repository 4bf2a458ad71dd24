// Package openaiembed is a [memory.Embedder] for servers that speak
// OpenAI's embeddings API, POST {base}/embeddings: OpenAI itself
// (https://api.openai.com/v1), Ollama (http://localhost:11434/v1), vLLM
// and llama.cpp's server (http://localhost:8000/v1, http://localhost:8080/v1),
// and the many proxies that copy them. It uses the standard library only.
//
//	emb, err := openaiembed.New("http://localhost:11434/v1", "nomic-embed-text", nil)
//	if err != nil { … }
//	store, err := memory.Open("data/memory", &memory.Options{Embedder: emb})
//
// [memory.Embedder]: https://pkg.go.dev/github.com/mdmemory/memory#Embedder
package openaiembed

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DefaultBatchSize is the number of texts one request carries when
// Options.BatchSize is 0.
const DefaultBatchSize = 64

// DefaultTimeout bounds each request of a Client whose Options.HTTPClient
// is nil.
const DefaultTimeout = 60 * time.Second

// The bound of an answer, computed from its request (see responseBound):
// each text's vector has at most maxDimensions numbers (or the
// Options.Dimensions asked for), each number takes at most bytesPerNumber
// bytes of JSON with what separates it, and each text's entry
// ("object", "index") and the answer ("model", "usage") at most their
// slack. 64 texts of 8,192 numbers are some 17 MB.
const (
	maxDimensions  = 8192
	bytesPerNumber = 32
	slackPerText   = 1 << 10
	slackAnswer    = 64 << 10
)

// maxErrorBody bounds the body of a refusal read for its message.
const maxErrorBody = 64 << 10

// Options configure a [Client]. The zero value, like a nil *Options, sends
// no key, asks for the model's own number of dimensions, and sends
// DefaultBatchSize texts a request with a client that gives up after
// DefaultTimeout.
type Options struct {
	// APIKey is sent as "Authorization: Bearer APIKey". "" sends no
	// Authorization header, as Ollama, llama.cpp and vLLM without
	// --api-key want.
	APIKey string

	// Dimensions, when positive, is sent as "dimensions": models that can
	// shorten their vectors (OpenAI's text-embedding-3-*) return that
	// many numbers, which makes the vectors cheaper to keep and compare.
	// Servers that do not know the field may refuse it. 0 sends none.
	Dimensions int

	// BatchSize is the number of texts a request carries at most: Embed
	// sends more as several requests, one after the other. 0 means
	// DefaultBatchSize.
	BatchSize int

	// Floor is what Floor returns: the cosine similarity under which a
	// document is no semantic hit for memory's Search, which depends on
	// the model. 0 leaves memory's default (0.35).
	Floor float64

	// HTTPClient sends the requests. nil means a client with a
	// DefaultTimeout timeout. Whichever client sends them, a redirect
	// is followed only to the base URL's own scheme, host and port (see
	// [Client.Embed]): the Client uses a copy of it whose CheckRedirect
	// refuses the others before the one it had is asked.
	HTTPClient *http.Client
}

// A Client asks an OpenAI-compatible server for embeddings. It is a
// memory.Embedder, with the optional Model and Floor methods. A Client
// is safe for concurrent use by multiple goroutines.
type Client struct {
	url   string
	model string
	key   string
	dims  int
	batch int
	floor float64
	http  *http.Client
	limit int64 // when positive, the bytes of a response read at most, below responseBound (tests)
}

// New returns a Client for the model at baseURL, the API's root with its
// version: "https://api.openai.com/v1", "http://localhost:11434/v1". A nil
// opts gives the defaults. It returns an error for a baseURL that is not
// an absolute http or https URL, an empty model, or negative options. New
// makes no request: a server that cannot be reached, or a model it does
// not have, is an error of the first Embed.
func New(baseURL, model string, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openaiembed: base URL %q is not an http or https URL such as https://api.openai.com/v1", baseURL)
	}
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("openaiembed: no model named")
	}
	if o.Dimensions < 0 || o.BatchSize < 0 || o.Floor < 0 {
		return nil, errors.New("openaiembed: Dimensions, BatchSize and Floor may not be negative")
	}
	c := &Client{
		url:   strings.TrimRight(baseURL, "/") + "/embeddings",
		model: model,
		key:   o.APIKey,
		dims:  o.Dimensions,
		batch: o.BatchSize,
		floor: o.Floor,
	}
	if c.batch == 0 {
		c.batch = DefaultBatchSize
	}
	hc := http.Client{Timeout: DefaultTimeout}
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	hc.CheckRedirect = sameOrigin(u, hc.CheckRedirect)
	c.http = &hc
	return c, nil
}

// sameOrigin is a CheckRedirect that refuses a redirect to another
// scheme, host or port than base's, and asks next (Go's default when nil)
// about the others. Go's client keeps the Authorization header on a
// redirect to the same host under another scheme or port: from https to
// plain http, the key would go in clear, and with it the texts, which are
// a person's memory.
func sameOrigin(base *url.URL, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !strings.EqualFold(req.URL.Scheme, base.Scheme) || !strings.EqualFold(hostPort(req.URL), hostPort(base)) {
			return fmt.Errorf("the server redirected the request to %s://%s, another scheme, host or port than %s://%s: not followed, so that the key and the texts go nowhere else", req.URL.Scheme, req.URL.Host, base.Scheme, base.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// hostPort is u's host and port, the scheme's default port when it names
// none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// responseBound is the size in bytes an answer to n texts may have, for
// vectors of dims numbers at most (maxDimensions when 0): a body past it
// is refused as it is read, before it is all in memory.
func responseBound(n, dims int) int64 {
	if dims <= 0 {
		dims = maxDimensions
	}
	return int64(n)*(int64(dims)*bytesPerNumber+slackPerText) + slackAnswer
}

// Model names the model and the dimensions asked for, as memory names its
// cache of vectors by: "text-embedding-3-small", or
// "text-embedding-3-small/256" with Dimensions 256. It does not name the
// server: the same model name on two servers is taken to give the same
// vectors.
func (c *Client) Model() string {
	if c.dims > 0 {
		return c.model + "/" + strconv.Itoa(c.dims)
	}
	return c.model
}

// Floor returns Options.Floor.
func (c *Client) Floor() float64 { return c.floor }

// Embed returns the embeddings of texts, in their order, asking the server
// for at most BatchSize texts a request. No texts make no request. It
// returns an [*Error] when the server refuses a request (its status and
// message), and an error when it cannot be reached, when ctx ends, or when
// its answer is not one vector per text, all of one length.
//
// An answer is read within a bound computed from its request: the texts
// it carries, times the numbers of a vector (Options.Dimensions, or
// 8,192 when 0), times 32 bytes a number, and some room for the rest. An
// answer that declares a larger length, or grows past it as it is read,
// is refused there, and so is a vector of more numbers. A redirect is
// followed only to the base URL's scheme, host and port: the key (and the
// texts) go to no other.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for len(texts) > 0 {
		n := min(len(texts), c.batch)
		vs, err := c.embed(ctx, texts[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	if len(out) > 0 {
		for _, v := range out {
			if len(v) != len(out[0]) {
				return nil, fmt.Errorf("openaiembed: vectors of %d and %d numbers", len(out[0]), len(v))
			}
		}
	}
	return out, nil
}

type request struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	errorBody
}

// errorBody is what servers say of a refusal: OpenAI's and llama.cpp's
// {"error": {"message": …}}, Ollama's {"error": "…"}, vLLM's
// {"message": …}.
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
}

// text is the message of e, cleaned; "" for none.
func (e *errorBody) text() string {
	var text string
	var obj struct {
		Message string `json:"message"`
	}
	switch {
	case json.Unmarshal(e.Error, &text) == nil && text != "":
		return clean(text)
	case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
		return clean(obj.Message)
	case e.Message != "":
		return clean(e.Message)
	}
	return ""
}

// embed makes one request.
func (c *Client) embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, _ := json.Marshal(request{Model: c.model, Input: texts, Dimensions: c.dims}) // strings and an int: it cannot fail
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("openaiembed: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("openaiembed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil {
			return nil, fmt.Errorf("openaiembed: reading the response: %w", err)
		}
		return nil, &Error{StatusCode: resp.StatusCode, Message: message(data, resp.Status)}
	}
	dims := cmp.Or(c.dims, maxDimensions)
	bound := responseBound(len(texts), c.dims)
	if c.limit > 0 {
		bound = min(bound, c.limit)
	}
	tooLarge := func() error {
		return fmt.Errorf("openaiembed: a response over %d bytes, more than %d vectors of %d numbers take: refused", bound, len(texts), dims)
	}
	if resp.ContentLength > bound {
		return nil, tooLarge()
	}
	var r response
	dec := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, bound))
	if err := dec.Decode(&r); err != nil {
		var over *http.MaxBytesError
		switch {
		case errors.As(err, &over):
			return nil, tooLarge()
		case errors.Is(err, io.ErrUnexpectedEOF) && ctx.Err() == nil:
			return nil, fmt.Errorf("openaiembed: reading the response: %w", err)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("openaiembed: reading the response: %w", ctx.Err())
		}
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("openaiembed: the response is not an embeddings list: %w", err)
		}
		return nil, fmt.Errorf("openaiembed: reading the response: %w", err)
	}
	if len(r.Data) == 0 && len(texts) > 0 {
		if m := r.text(); m != "" {
			return nil, &Error{StatusCode: resp.StatusCode, Message: m}
		}
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("openaiembed: %d embeddings for %d texts", len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		switch {
		case at < 0 || at >= len(out):
			return nil, fmt.Errorf("openaiembed: an embedding for index %d of %d texts", at, len(texts))
		case out[at] != nil:
			return nil, fmt.Errorf("openaiembed: two embeddings for index %d", at)
		case len(d.Embedding) == 0:
			return nil, fmt.Errorf("openaiembed: an empty embedding for index %d", at)
		case len(d.Embedding) > dims:
			return nil, fmt.Errorf("openaiembed: an embedding of %d numbers for index %d, more than the %d asked for", len(d.Embedding), at, dims)
		}
		out[at] = d.Embedding
	}
	return out, nil
}

// Error is a request the server refused: its HTTP status and what it said
// of why.
type Error struct {
	StatusCode int    // the HTTP status, such as 401 or 404
	Message    string // the server's message, or its status line when it gave none
}

// Error returns "openaiembed: the server answered STATUS: MESSAGE".
func (e *Error) Error() string {
	return fmt.Sprintf("openaiembed: the server answered %d: %s", e.StatusCode, e.Message)
}

// message finds the server's message in an error body: OpenAI's and
// llama.cpp's {"error": {"message": …}}, Ollama's {"error": "…"}, vLLM's
// {"message": …}, or a text body, cut to 300 characters; otherwise
// fallback.
func message(body []byte, fallback string) string {
	var e errorBody
	if json.Unmarshal(body, &e) == nil {
		return cmp.Or(e.text(), fallback)
	}
	if m := clean(string(body)); m != "" {
		return m
	}
	return fallback
}

// clean keeps the printable runes of s, spaces for the others, trimmed and
// cut to 300 runes.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return ' '
	}, s)
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
