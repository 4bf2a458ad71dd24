package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// concepts are what the fake embeddings endpoint knows: a text's vector
// counts the words of each concept it holds, in either language, so that
// "杭州" and "Hangzhou" are near and "Tokyo" is not.
var concepts = [][]string{
	{"hangzhou", "杭州"},
	{"tea", "茶", "longjing", "龙井"},
	{"tokyo", "东京"},
	{"flight", "航班", "airlines"},
	{"ceramics", "陶瓷"},
	{"visa", "签证"},
}

// fakeEmbedder is an OpenAI-compatible embeddings endpoint on loopback
// that embeds deterministically; answer, when set, replaces its answers.
type fakeEmbedder struct {
	*httptest.Server
	mu     sync.Mutex
	auth   []string // the Authorization headers received
	calls  int
	answer func(w http.ResponseWriter, r *http.Request, texts []string) bool // true: answered
}

func newFakeEmbedder(t *testing.T) *fakeEmbedder {
	f := &fakeEmbedder{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake-embed" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.calls++
		answer := f.answer
		f.mu.Unlock()
		if answer != nil && answer(w, r, req.Input) {
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			out.Data = append(out.Data, item{Index: i, Embedding: conceptVector(text)})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(f.Close)
	return f
}

// conceptVector is the fake model: one number a concept, and a small one
// that every text has, so that no vector is zero.
func conceptVector(text string) []float32 {
	text = strings.ToLower(text)
	v := make([]float32, len(concepts)+1)
	for i, words := range concepts {
		for _, w := range words {
			v[i] += float32(strings.Count(text, w))
		}
	}
	v[len(concepts)] = 0.1
	return v
}

func (f *fakeEmbedder) url() string { return f.URL + "/v1" }

// hangzhouSample is the sample memory with an entry about Hangzhou, in
// English only.
func hangzhouSample(t *testing.T) string {
	dir := sample(t)
	put(t, dir, "episodes/2026-03.md", "# 2026-03 Episodes\n\n> Summary: Hangzhou\n\n## Tea tasting in Hangzhou\n- Date: 2026-03-02\n- Summary: bought Longjing near West Lake\n")
	return dir
}

// TestSearchByMeaning: with an embeddings endpoint, by flag or by the
// environment, search and context find what the words of the query do not
// match ("杭州" for a memory that says "Hangzhou"); the key goes to the
// endpoint from $MDMEMORY_EMBED_KEY ($OPENAI_API_KEY goes to https
// endpoints alone: TestEmbedKey).
func TestSearchByMeaning(t *testing.T) {
	dir := hangzhouSample(t)
	f := newFakeEmbedder(t)
	env := map[string]string{dirEnv: dir}
	require.Equal(t, "Nothing found.\n", mdm(t, env, "search", "杭州").ok(t), "keywords alone find nothing")

	out := mdm(t, env, "search", "--embed-url", f.url(), "--embed-model", "fake-embed", "杭州").ok(t)
	require.Equal(t, []string{"episodes/2026-03.md:5"}, firstFields(out), out)
	require.Contains(t, out, "Tea tasting in Hangzhou")

	env = map[string]string{dirEnv: dir, embedURLEnv: f.url(), embedModelEnv: "fake-embed", openAIKeyEnv: "sk-openai"}
	out = mdm(t, env, "search", "--limit", "3", "杭州的茶").ok(t)
	require.Equal(t, "episodes/2026-03.md:5", firstFields(out)[0], out)
	env[embedKeyEnv] = "sk-mdmemory"
	out = mdm(t, env, "context", "--budget", "2000", "杭州").ok(t)
	require.Contains(t, out, "Tea tasting in Hangzhou")
	f.mu.Lock()
	require.NotContains(t, f.auth, "Bearer sk-openai", "$OPENAI_API_KEY is not sent over http")
	require.Equal(t, "Bearer sk-mdmemory", f.auth[len(f.auth)-1], "$MDMEMORY_EMBED_KEY first")
	f.mu.Unlock()

	// A query with no words lists the newest entries, as without one.
	out = mdm(t, env, "search").ok(t)
	require.Equal(t, "episodes/2026-03.md:5", firstFields(out)[0])
}

// TestSearchByMeaningFallback: an endpoint that fails, cannot be reached,
// or answers with vectors that cannot be (of two lengths, or of millions
// of numbers) makes search answer by keywords, exactly as without one,
// with one line on stderr that says so and never holds the key, even when
// the server's error repeats it.
func TestSearchByMeaningFallback(t *testing.T) {
	dir := hangzhouSample(t)
	const key = "sk-very-secret-key"
	keywords := mdm(t, map[string]string{dirEnv: dir}, "search", "tokyo flight").ok(t)
	require.NotEqual(t, "Nothing found.\n", keywords)

	f := newFakeEmbedder(t)
	gone := newFakeEmbedder(t)
	gone.Close()
	for name, answer := range map[string]func(w http.ResponseWriter, r *http.Request, texts []string) bool{
		"server error": func(w http.ResponseWriter, r *http.Request, _ []string) bool {
			http.Error(w, `{"error":{"message":"invalid key `+r.Header.Get("Authorization")+`"}}`, http.StatusInternalServerError)
			return true
		},
		"vectors of two lengths": func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[1,0]}` + strings.Repeat(`,{"embedding":[1,0,0]}`, len(texts)-1) + `]}`))
			return len(texts) > 1
		},
		"huge vectors": func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[` + strings.Repeat("0.5,", 70000) + `1]}]}`))
			return true
		},
		"unreachable": nil,
	} {
		t.Run(name, func(t *testing.T) {
			url := f.url()
			if answer == nil {
				url = gone.url()
			}
			f.mu.Lock()
			f.answer = answer
			f.mu.Unlock()
			os.RemoveAll(filepath.Join(dir, ".cache"))
			env := map[string]string{dirEnv: dir, embedURLEnv: url, embedModelEnv: "fake-embed", embedKeyEnv: key}
			r := mdm(t, env, "search", "tokyo flight")
			require.Equal(t, 0, r.code, r.stderr)
			require.Equal(t, keywords, r.stdout, "the keywords' answer")
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			require.True(t, strings.HasPrefix(r.stderr, "mdmemory: the embeddings endpoint failed, so this searches by keywords alone: "), r.stderr)
			require.NotContains(t, r.stderr, key)
		})
	}
}

// TestEmbedUsage: an endpoint without a model, or a model without an
// endpoint, or a URL that is none, is a mistake in the command line; the
// help names the flags and the environment, never a key.
func TestEmbedUsage(t *testing.T) {
	dir := sample(t)
	for _, args := range [][]string{
		{"search", "--embed-url", "http://127.0.0.1:1/v1", "tea"},
		{"context", "--embed-model", "m", "tea"},
		{"mcp", "--embed-url", "ftp://example.com", "--embed-model", "m"},
	} {
		r := mdm(t, map[string]string{dirEnv: dir}, args...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "--embed-", "%v", args)
	}
	r := mdm(t, map[string]string{dirEnv: dir, embedModelEnv: "m"}, "search", "tea")
	require.Equal(t, 2, r.code, "a model from the environment and no endpoint: %s", r.stderr)

	env := map[string]string{embedKeyEnv: "sk-help-secret", openAIKeyEnv: "sk-help-secret"}
	for _, cmd := range []string{"search", "context", "mcp"} {
		help := mdm(t, env, cmd, "--help").ok(t)
		require.Contains(t, help, "--embed-url")
		require.Contains(t, help, "--embed-model")
		require.Contains(t, help, "$"+embedKeyEnv)
		require.NotContains(t, help, "sk-help-secret")
	}
}

// TestMCPSearchByMeaning: "mdmemory mcp" with the endpoint in its
// environment gives an MCP client meaning-search through memory_search.
func TestMCPSearchByMeaning(t *testing.T) {
	dir := hangzhouSample(t)
	f := newFakeEmbedder(t)
	cmd := mdmemoryCmd("mcp", "--dir", dir)
	cmd.Env = append(cmd.Env, embedURLEnv+"="+f.url(), embedModelEnv+"=fake-embed")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	text, isErr := call(t, cs, "memory_search", map[string]any{"query": "杭州"})
	require.False(t, isErr, text)
	require.Contains(t, text, "Tea tasting in Hangzhou")
	require.NoError(t, cs.Close())
	require.Empty(t, stderr.String())
	f.mu.Lock()
	require.Positive(t, f.calls)
	f.mu.Unlock()
}

// TestEmbedKey: $MDMEMORY_EMBED_KEY goes to any endpoint; $OPENAI_API_KEY,
// often set for other tools, to an https one alone.
func TestEmbedKey(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	openai := env(map[string]string{openAIKeyEnv: "sk-openai"})
	both := env(map[string]string{openAIKeyEnv: "sk-openai", embedKeyEnv: "sk-mdmemory"})
	require.Equal(t, "sk-openai", embedKey("https://api.openai.com/v1", openai))
	require.Equal(t, "sk-openai", embedKey("HTTPS://example.com/v1", openai))
	require.Empty(t, embedKey("http://localhost:11434/v1", openai))
	require.Empty(t, embedKey("http://gpu-box.lan:8000/v1", openai))
	require.Equal(t, "sk-mdmemory", embedKey("http://gpu-box.lan:8000/v1", both))
	require.Equal(t, "sk-mdmemory", embedKey("https://api.openai.com/v1", both))
}
