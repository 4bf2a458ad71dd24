package openaiembed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/openaiembed"
	"github.com/stretchr/testify/require"
)

var _ memory.Embedder = (*openaiembed.Client)(nil)

// embedRequest is what the server was sent.
type embedRequest struct {
	Path, Auth, ContentType string
	Body                    map[string]any
	Input                   []string
}

// server answers as handle says and records the requests.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []embedRequest
}

func newServer(t *testing.T, handle func(w http.ResponseWriter, r embedRequest)) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		er := embedRequest{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
		if r.Method != http.MethodPost || json.Unmarshal(b, &er.Body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		for _, in := range er.Body["input"].([]any) {
			er.Input = append(er.Input, in.(string))
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, er)
		s.mu.Unlock()
		handle(w, er)
	}))
	t.Cleanup(s.Close)
	return s
}

// vector is the fake model: a text's length and its number of spaces.
func vector(text string) []float32 {
	return []float32{float32(len(text)), float32(strings.Count(text, " ")), 1}
}

// openAI answers as OpenAI does, with the data in the order given by
// order (a permutation of the indexes), or in order when nil.
func openAI(order func(n int) []int) func(w http.ResponseWriter, r embedRequest) {
	return func(w http.ResponseWriter, r embedRequest) {
		idx := make([]int, len(r.Input))
		for i := range idx {
			idx[i] = i
		}
		if order != nil {
			idx = order(len(r.Input))
		}
		data := []map[string]any{}
		for _, i := range idx {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vector(r.Input[i])})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": r.Body["model"], "usage": map[string]int{"prompt_tokens": 3, "total_tokens": 3}})
	}
}

func TestEmbed(t *testing.T) {
	srv := newServer(t, openAI(nil))
	c, err := openaiembed.New(srv.URL+"/v1/", "text-embedding-3-small", &openaiembed.Options{APIKey: "sk-test"})
	require.NoError(t, err)
	texts := []string{"a car", "an automobile of note", "x"}
	got, err := c.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Equal(t, [][]float32{vector(texts[0]), vector(texts[1]), vector(texts[2])}, got)

	require.Len(t, srv.reqs, 1)
	r := srv.reqs[0]
	require.Equal(t, "/v1/embeddings", r.Path)
	require.Equal(t, "Bearer sk-test", r.Auth)
	require.Equal(t, "application/json", r.ContentType)
	require.Equal(t, map[string]any{"model": "text-embedding-3-small", "input": []any{"a car", "an automobile of note", "x"}}, r.Body)
	require.Equal(t, "text-embedding-3-small", c.Model())
	require.Zero(t, c.Floor())

	got, err = c.Embed(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Len(t, srv.reqs, 1, "no texts, no request")
}

func TestEmbedNoKeyDimensionsFloor(t *testing.T) {
	srv := newServer(t, openAI(nil))
	c, err := openaiembed.New(srv.URL+"/v1", "text-embedding-3-large", &openaiembed.Options{Dimensions: 256, Floor: 0.2})
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.NoError(t, err)
	require.Empty(t, srv.reqs[0].Auth, "no key, no header")
	require.Equal(t, float64(256), srv.reqs[0].Body["dimensions"])
	require.Equal(t, "text-embedding-3-large/256", c.Model(), "vectors of another length are another cache")
	require.Equal(t, 0.2, c.Floor())
}

func TestEmbedOutOfOrder(t *testing.T) {
	srv := newServer(t, openAI(func(n int) []int {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = n - 1 - i
		}
		return idx
	}))
	c, err := openaiembed.New(srv.URL+"/v1", "m", nil)
	require.NoError(t, err)
	texts := []string{"one", "two words", "three words here"}
	got, err := c.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Equal(t, [][]float32{vector(texts[0]), vector(texts[1]), vector(texts[2])}, got, "ordered by index")
}

func TestEmbedBatches(t *testing.T) {
	srv := newServer(t, openAI(nil))
	c, err := openaiembed.New(srv.URL+"/v1", "m", &openaiembed.Options{BatchSize: 2})
	require.NoError(t, err)
	texts := []string{"a", "b b", "c c c", "d d d d", "e"}
	got, err := c.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, got, 5)
	for i, tx := range texts {
		require.Equal(t, vector(tx), got[i])
	}
	require.Len(t, srv.reqs, 3)
	require.Equal(t, []string{"a", "b b"}, srv.reqs[0].Input)
	require.Equal(t, []string{"e"}, srv.reqs[2].Input)

	// The default: 64 a request.
	srv2 := newServer(t, openAI(nil))
	c2, err := openaiembed.New(srv2.URL+"/v1", "m", nil)
	require.NoError(t, err)
	_, err = c2.Embed(context.Background(), make([]string, 65))
	require.NoError(t, err)
	require.Len(t, srv2.reqs, 2)
	require.Len(t, srv2.reqs[0].Input, openaiembed.DefaultBatchSize)
}

func TestEmbedServerErrors(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		body        string
		wantStatus  int
		wantMessage string
	}{
		{"OpenAI", 401, `{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, 401, "Incorrect API key provided: sk-test."},
		{"Ollama", 404, `{"error":"model \"nomic\" not found, try pulling it first"}`, 404, `model "nomic" not found, try pulling it first`},
		{"llama.cpp", 400, `{"error":{"code":400,"message":"input is too large to process. increase the physical batch size","type":"invalid_request_error"}}`, 400, "input is too large to process. increase the physical batch size"},
		{"vLLM", 400, `{"object":"error","message":"This model's maximum context length is 512 tokens.","type":"BadRequestError","param":null,"code":400}`, 400, "This model's maximum context length is 512 tokens."},
		{"a text body", 502, "Bad Gateway\n\x00from the proxy", 502, "Bad Gateway  from the proxy"},
		{"no body", 503, "", 503, "503 Service Unavailable"},
		{"JSON without a message", 500, `{"detail":"x"}`, 500, "500 Internal Server Error"},
		{"a long text", 500, strings.Repeat("é", 400), 500, strings.Repeat("é", 300) + "…"},
		{"an error with status 200", 200, `{"error":{"message":"overloaded"}}`, 200, "overloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ embedRequest) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			c, err := openaiembed.New(srv.URL+"/v1", "m", nil)
			require.NoError(t, err)
			_, err = c.Embed(context.Background(), []string{"a"})
			var e *openaiembed.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tc.wantStatus, e.StatusCode)
			require.Equal(t, tc.wantMessage, e.Message)
			require.Equal(t, fmt.Sprintf("openaiembed: the server answered %d: %s", tc.wantStatus, tc.wantMessage), err.Error())
		})
	}
}

func TestEmbedBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"too few", `{"data":[{"index":0,"embedding":[1,2]}]}`, "1 embeddings for 2 texts"},
		{"too many", `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1]},{"index":2,"embedding":[1]}]}`, "3 embeddings for 2 texts"},
		{"an index twice", `{"data":[{"index":1,"embedding":[1]},{"index":1,"embedding":[1]}]}`, "two embeddings for index 1"},
		{"an index out of range", `{"data":[{"index":0,"embedding":[1]},{"index":2,"embedding":[1]}]}`, "index 2 of 2 texts"},
		{"a negative index", `{"data":[{"index":-1,"embedding":[1]},{"index":0,"embedding":[1]}]}`, "index -1 of 2 texts"},
		{"an empty embedding", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[1]}]}`, "an empty embedding for index 0"},
		{"lengths differ", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`, "vectors of 2 and 1 numbers"},
		{"not JSON", `<html>hello</html>`, "not an embeddings list"},
		{"base64", `{"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":"AAAA"}]}`, "not an embeddings list"},
		{"empty", `{}`, "0 embeddings for 2 texts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, _ embedRequest) { io.WriteString(w, tc.body) })
			c, err := openaiembed.New(srv.URL+"/v1", "m", nil)
			require.NoError(t, err)
			_, err = c.Embed(context.Background(), []string{"a", "b"})
			require.ErrorContains(t, err, tc.want)
			var e *openaiembed.Error
			require.False(t, errors.As(err, &e), "not a refusal")
		})
	}

	// Without indexes, the order of the list.
	srv := newServer(t, func(w http.ResponseWriter, _ embedRequest) {
		io.WriteString(w, `{"data":[{"embedding":[1,0]},{"embedding":[0,1]}]}`)
	})
	c, err := openaiembed.New(srv.URL+"/v1", "m", nil)
	require.NoError(t, err)
	got, err := c.Embed(context.Background(), []string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, [][]float32{{1, 0}, {0, 1}}, got)
}

func TestEmbedTransport(t *testing.T) {
	// A done context.
	srv := newServer(t, openAI(nil))
	c, err := openaiembed.New(srv.URL+"/v1", "m", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Embed(ctx, []string{"a"})
	require.ErrorIs(t, err, context.Canceled)

	// A server that is gone.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	c, err = openaiembed.New(gone.URL+"/v1", "m", &openaiembed.Options{HTTPClient: http.DefaultClient})
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "openaiembed:")

	// A body cut short.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"data":`)
	}))
	t.Cleanup(cut.Close)
	c, err = openaiembed.New(cut.URL+"/v1", "m", nil)
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "reading the response")

	// A nil context cannot make a request.
	//lint:ignore SA1012 the error of a nil context is what is tested
	_, err = c.Embed(nil, []string{"a"})
	require.Error(t, err)

	// A response over the limit.
	c, err = openaiembed.New(srv.URL+"/v1", "m", nil)
	require.NoError(t, err)
	openaiembed.SetLimit(c, 10)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "a response over 10 bytes")
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name, url, model string
		opts             *openaiembed.Options
		want             string
	}{
		{"no scheme", "localhost:11434/v1", "m", nil, "not an http or https URL"},
		{"ftp", "ftp://example.com/v1", "m", nil, "not an http or https URL"},
		{"no host", "http:///v1", "m", nil, "not an http or https URL"},
		{"unparsable", "http://[::1", "m", nil, "not an http or https URL"},
		{"no model", "http://localhost/v1", " ", nil, "no model"},
		{"negative", "http://localhost/v1", "m", &openaiembed.Options{BatchSize: -1}, "may not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := openaiembed.New(tc.url, tc.model, tc.opts)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestWithMemory: a Store with a Client finds by meaning what has no word
// of the query, and a second Store on the directory asks the server for
// nothing but the query.
func TestWithMemory(t *testing.T) {
	concept := func(text string) []float32 {
		v := []float32{0, 0, 0.01}
		for _, w := range strings.Fields(strings.ToLower(text)) {
			switch strings.Trim(w, ".,-#") {
			case "car", "automobile", "sedan":
				v[0]++
			case "dog", "puppy":
				v[1]++
			}
		}
		return v
	}
	srv := newServer(t, func(w http.ResponseWriter, r embedRequest) {
		data := []map[string]any{}
		for i, in := range r.Input {
			data = append(data, map[string]any{"index": i, "embedding": concept(in)})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	})
	dir := t.TempDir()
	open := func() *memory.Store {
		emb, err := openaiembed.New(srv.URL+"/v1", "concepts", nil)
		require.NoError(t, err)
		s, err := memory.Open(dir, &memory.Options{Embedder: emb})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	ctx := context.Background()
	s := open()
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Sold the sedan\n- Date: 2026-02-03\n- Details: to a neighbour", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Adopted a puppy\n- Date: 2026-02-10", ""))
	hits, err := s.Search(ctx, "automobile", nil)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	require.Equal(t, "Sold the sedan", hits[0].Title)
	require.Len(t, srv.reqs, 1, "the query and both entries in one request")
	require.Len(t, srv.reqs[0].Input, 3)

	hits, err = open().Search(ctx, "automobile", nil)
	require.NoError(t, err)
	require.Equal(t, "Sold the sedan", hits[0].Title)
	require.Len(t, srv.reqs, 2)
	require.Equal(t, []string{"automobile"}, srv.reqs[1].Input, "the entries' vectors came from the cache")
}

// TestEmbedHugeAnswer: an answer is read within a bound computed from its
// request (a few hundred KB for one text), and refused there: a server
// that streams hundreds of MB, or declares as much, costs a few MB of
// memory, not the body's size.
func TestEmbedHugeAnswer(t *testing.T) {
	chunk := []byte(strings.Repeat("0.123456789,", 1024))
	var mu sync.Mutex
	var sent int64
	stream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"data":[{"index":0,"embedding":[`)
		for range (300 << 20) / len(chunk) { // 300 MB
			n, err := w.Write(chunk)
			mu.Lock()
			sent += int64(n)
			mu.Unlock()
			if err != nil {
				return
			}
		}
		io.WriteString(w, `1]}]}`)
	}))
	t.Cleanup(stream.Close)
	c, err := openaiembed.New(stream.URL+"/v1", "m", nil)
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = c.Embed(context.Background(), []string{"a"})
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "more than 1 vectors of 8192 numbers take: refused")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "bytes allocated by one Embed of a huge answer")
	stream.CloseClientConnections()

	// A length declared too large is refused before the body is read.
	declared := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "300000000")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"data":[`)
	}))
	t.Cleanup(declared.Close)
	c, err = openaiembed.New(declared.URL+"/v1", "m", &openaiembed.Options{Dimensions: 256})
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a", "b"})
	require.ErrorContains(t, err, "more than 2 vectors of 256 numbers take: refused")

	// A vector longer than asked for.
	srv := newServer(t, func(w http.ResponseWriter, _ embedRequest) {
		io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2,3,4,5]}]}`)
	})
	c, err = openaiembed.New(srv.URL+"/v1", "m", &openaiembed.Options{Dimensions: 4})
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "an embedding of 5 numbers for index 0, more than the 4 asked for")
}

// TestEmbedRedirects: the key never leaves the base URL's scheme, host and
// port. Go's client keeps Authorization on a redirect to the same host
// under another scheme or port; the Client refuses such a redirect, and
// follows one to its own origin, asking the CheckRedirect of the client it
// was given too.
func TestEmbedRedirects(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
		openAI(nil)(w, embedRequest{Input: []string{"a"}})
	}))
	t.Cleanup(plain.Close)
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings": // to plain http, on another port
			http.Redirect(w, r, plain.URL+"/v1/embeddings", http.StatusTemporaryRedirect)
		case "/moved/embeddings": // within its own origin
			http.Redirect(w, r, "/v1/embeddings-here", http.StatusPermanentRedirect)
		case "/v1/embeddings-here":
			if r.Header.Get("Authorization") != "Bearer sk-secret" {
				http.Error(w, "no key", http.StatusUnauthorized)
				return
			}
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2]}]}`)
		}
	}))
	t.Cleanup(tls.Close)

	c, err := openaiembed.New(tls.URL+"/v1", "m", &openaiembed.Options{APIKey: "sk-secret", HTTPClient: tls.Client()})
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "another scheme, host or port")
	require.NotContains(t, err.Error(), "sk-secret")
	mu.Lock()
	require.Empty(t, leaked, "the plain http server was sent the request")
	mu.Unlock()

	// Another port of the same host, same scheme.
	other := httptest.NewServer(http.RedirectHandler(plain.URL+"/v1/embeddings", http.StatusTemporaryRedirect))
	t.Cleanup(other.Close)
	c, err = openaiembed.New(other.URL+"/v1", "m", &openaiembed.Options{APIKey: "sk-secret"})
	require.NoError(t, err)
	_, err = c.Embed(context.Background(), []string{"a"})
	require.ErrorContains(t, err, "another scheme, host or port")
	mu.Lock()
	require.Empty(t, leaked, "the server on another port was sent the request")
	mu.Unlock()

	// Within the origin: followed, with the key; the given client's own
	// CheckRedirect is asked too, and the client given is not changed.
	var asked int
	hc := tls.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { asked++; return nil }
	c, err = openaiembed.New(tls.URL+"/moved", "m", &openaiembed.Options{APIKey: "sk-secret", HTTPClient: hc})
	require.NoError(t, err)
	got, err := c.Embed(context.Background(), []string{"a"})
	require.NoError(t, err)
	require.Equal(t, [][]float32{{1, 2}}, got)
	require.Equal(t, 1, asked)
}
