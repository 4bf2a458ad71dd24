package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// concepts are the dimensions of conceptEmbedder's vectors: each word of
// a group adds one to its group's dimension, so that "car" and
// "automobile" give the same vector and BM25 sees no match between them.
var concepts = [][]string{
	{"car", "automobile", "sedan", "vehicle"},
	{"dog", "puppy", "canine"},
	{"plane", "flight", "airline"},
	{"recipe", "cooking", "kitchen"},
	{"guitar", "music", "song"},
	{"tennis", "racket"},
	{"novel", "book", "reading"},
	{"garden", "weeding", "flowers"},
	{"bill", "invoice", "payment"},
	{"brake", "brakes", "pads"},
}

// conceptEmbedder is a deterministic fake Embedder: a text's vector counts
// its words by concept. It records the texts it embedded, and can be made
// to fail.
type conceptEmbedder struct {
	mu     sync.Mutex
	calls  int
	texts  []string                                            // every text embedded, queries included
	fail   func(call int, texts []string) ([][]float32, error) // when not nil and it returns non-nil, Embed returns that
	during func()                                              // when not nil, called inside each Embed
}

func (e *conceptEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls++
	call := e.calls
	e.texts = append(e.texts, texts...)
	fail, during := e.fail, e.during
	e.mu.Unlock()
	if during != nil {
		during()
	}
	if fail != nil {
		if vs, err := fail(call, texts); vs != nil || err != nil {
			return vs, err
		}
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = conceptVector(t)
	}
	return out, nil
}

func conceptVector(text string) []float32 {
	v := make([]float32, len(concepts))
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		for i, c := range concepts {
			if slices.Contains(c, w) || slices.Contains(c, strings.TrimSuffix(w, "s")) {
				v[i]++
			}
		}
	}
	return v
}

// embedded returns the texts embedded other than the queries given.
func (e *conceptEmbedder) embedded(queries ...string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, t := range e.texts {
		if !slices.Contains(queries, t) {
			out = append(out, t)
		}
	}
	return out
}

func (e *conceptEmbedder) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls, e.texts = 0, nil
}

// modelEmbedder adds a model name and a floor to conceptEmbedder.
type modelEmbedder struct {
	*conceptEmbedder
	model string
	floor float64
}

func (e modelEmbedder) Model() string  { return e.model }
func (e modelEmbedder) Floor() float64 { return e.floor }

// semanticCorpus is a memory written by hand: facts, and two months.
const (
	semUser = "# User\n\n> Summary: about the person\n\n" +
		"- Drives a blue sedan to work\n" + // 5: the car concept alone
		"- Has a puppy named Rex\n" + // 6
		"- Weekend list: sedan wash, puppy walk, plane tickets, recipe shopping, guitar practice, tennis match, novel club, garden work, bill paying\n" + // 7: nine concepts, car's similarity 1/3
		"- Errands: sedan wash, puppy walk, plane tickets, recipe shopping\n" // 8: four concepts, 1/2
	semJan = "# 2026-01 Episodes\n\n> Summary: January\n\n" +
		"## Fixed the brakes\n- Date: 2026-01-10\n- Details: new pads for the sedan\n\n" + // 5: car 1, brake 2: similarity to car 0.447
		"## Fixed the brakes again\n- Date: 2026-01-12\n- Details: new pads for the sedan\n\n" + // 9: a near-duplicate
		"## Booked a flight\n- Date: 2026-01-20\n- Details: airline tickets to Tokyo\n" // 13
	semFeb = "# 2026-02 Episodes\n\n> Summary: February\n\n" +
		"## Sold the old automobile\n- Date: 2026-02-03\n- Details: a buyer from the next town\n" // 5
)

// openSemantic opens a store with e on a directory holding the corpus.
func openSemantic(t *testing.T, e memory.Embedder) (*memory.Store, string) {
	t.Helper()
	s, dir := open(t, &memory.Options{Embedder: e})
	writeFile(t, dir, "facts/user.md", semUser)
	writeFile(t, dir, "episodes/2026-01.md", semJan)
	writeFile(t, dir, "episodes/2026-02.md", semFeb)
	return s, dir
}

// reopen opens another store on dir.
func reopen(t *testing.T, dir string, opts *memory.Options) *memory.Store {
	t.Helper()
	opts.Now = feb26
	s, err := memory.Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	checkAtEnd(t, s, dir, opts)
	return s
}

func places(hits []memory.SearchHit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s:%d", h.Path, h.Line))
	}
	return out
}

func search(t *testing.T, s *memory.Store, query string, opts *memory.SearchOptions) []string {
	t.Helper()
	hits, err := s.Search(context.Background(), query, opts)
	require.NoError(t, err)
	return places(hits)
}

func TestSemanticFindsWhatKeywordsMiss(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	plain := reopen(t, dir, &memory.Options{})

	require.Empty(t, search(t, plain, "vehicle", nil), "no document has the word")
	got := search(t, s, "vehicle", nil)
	require.Equal(t, []string{"episodes/2026-02.md:5", "facts/user.md:5", "facts/user.md:8", "episodes/2026-01.md:5"}, got,
		"by similarity (ties by path), the near-duplicate of 2026-01.md:5 and what is under the floor left out")
	require.NotContains(t, got, "facts/user.md:6", "a puppy is no vehicle")

	// A document both rankings have comes first: "sedan" finds it by its
	// word and its vector.
	hits, err := s.Search(context.Background(), "sedan", nil)
	require.NoError(t, err)
	require.Equal(t, "facts/user.md", hits[0].Path)
	require.Equal(t, 5, hits[0].Line)
	require.Equal(t, "Drives a blue sedan to work", hits[0].Snippet)
	require.InDelta(t, 1.0/61+1.0/62, hits[0].Score, 1e-12, "first by keywords, second by similarity")
	for i := 1; i < len(hits); i++ {
		require.LessOrEqual(t, hits[i].Score, hits[i-1].Score)
	}

	// First by keywords and first by similarity tie: by path, then line.
	hits, err = s.Search(context.Background(), "Rex vehicle", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"episodes/2026-02.md:5", "facts/user.md:6"}, places(hits)[:2])
	require.Equal(t, hits[0].Score, hits[1].Score)
}

func TestSemanticNearDuplicates(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	plain := reopen(t, dir, &memory.Options{})

	require.Equal(t, []string{"episodes/2026-01.md:5", "episodes/2026-01.md:9"}, search(t, plain, "brakes pads", nil))
	got := search(t, s, "brakes pads", nil)
	require.Equal(t, []string{"episodes/2026-01.md:5"}, got, "the second entry says again what the first says")
}

func TestSemanticFloor(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	got := search(t, s, "automobile", nil)
	require.Contains(t, got, "facts/user.md:8", "a similarity of 0.5 is over the floor")
	require.NotContains(t, got, "facts/user.md:7", "a similarity of 1/3 is under 0.35")
	require.NotContains(t, got, "facts/user.md:6", "nor is a similarity of 0")

	low := reopen(t, dir, &memory.Options{Embedder: modelEmbedder{conceptEmbedder: &conceptEmbedder{}, floor: 0.3}})
	_ = e
	require.Contains(t, search(t, low, "automobile", nil), "facts/user.md:7", "the Embedder's floor of 0.3")
	high := reopen(t, dir, &memory.Options{Embedder: modelEmbedder{conceptEmbedder: &conceptEmbedder{}, floor: 0.6}})
	got = search(t, high, "automobile", nil)
	require.NotContains(t, got, "facts/user.md:8")
	require.Contains(t, got, "facts/user.md:5")
	odd := reopen(t, dir, &memory.Options{Embedder: modelEmbedder{conceptEmbedder: &conceptEmbedder{}, floor: 1.5}})
	require.Equal(t, search(t, s, "automobile", nil), search(t, odd, "automobile", nil), "a floor outside (0, 1) means 0.35")
}

func TestSemanticFilters(t *testing.T) {
	s, _ := openSemantic(t, &conceptEmbedder{})
	require.Equal(t, []string{"episodes/2026-02.md:5", "episodes/2026-01.md:5"},
		search(t, s, "vehicle", &memory.SearchOptions{Path: "episodes/"}))
	require.Equal(t, []string{"episodes/2026-02.md:5"},
		search(t, s, "vehicle", &memory.SearchOptions{Since: "2026-02"}))
	require.Equal(t, []string{"episodes/2026-01.md:5"},
		search(t, s, "vehicle", &memory.SearchOptions{Until: "2026-01"}))
	require.Equal(t, []string{"episodes/2026-02.md:5"}, search(t, s, "vehicle", &memory.SearchOptions{Limit: 1}))

	// The empty query lists the newest entries, and embeds nothing.
	e := &conceptEmbedder{}
	s2, _ := openSemantic(t, e)
	require.Equal(t, []string{"episodes/2026-02.md:5", "episodes/2026-01.md:13"}, search(t, s2, " ", &memory.SearchOptions{Limit: 2}))
	require.Zero(t, e.calls)
}

func TestSemanticCacheSurvivesRestart(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	first := search(t, s, "vehicle", nil)
	require.Len(t, e.embedded("vehicle"), 8, "every fact line and entry, once")
	require.Equal(t, 1, e.calls, "the query and the documents in one call")
	search(t, s, "puppy", nil)
	require.Len(t, e.embedded("vehicle", "puppy"), 8, "nothing again")
	require.NoError(t, s.Close())

	e2 := &conceptEmbedder{}
	s2 := reopen(t, dir, &memory.Options{Embedder: e2})
	require.Equal(t, first, search(t, s2, "vehicle", nil))
	require.Empty(t, e2.embedded("vehicle"), "a restart embeds what did not change: nothing")

	// The index released, as by Options.IndexIdle, reads the cache again.
	s2.ReleaseIndex()
	require.Equal(t, first, search(t, s2, "vehicle", nil))
	require.Empty(t, e2.embedded("vehicle"))
}

func TestSemanticHandEdit(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	require.NotContains(t, search(t, s, "canine", nil), "facts/user.md:9")
	e.reset()

	// A person adds a line and changes another.
	edited := strings.Replace(semUser, "- Has a puppy named Rex\n", "- Has a puppy named Max\n", 1) + "- Walks the dog at seven\n"
	writeFile(t, dir, "facts/user.md", edited)
	got := search(t, s, "canine", nil)
	require.ElementsMatch(t, []string{"- Has a puppy named Max", "- Walks the dog at seven"}, e.embedded("canine"), "only the changed and new lines")
	require.Contains(t, got, "facts/user.md:9")
	require.Contains(t, got, "facts/user.md:6")

	// The cache the next store reads has the new lines, and not the old one.
	e2 := &conceptEmbedder{}
	s2 := reopen(t, dir, &memory.Options{Embedder: e2})
	require.Equal(t, got, search(t, s2, "canine", nil))
	require.Empty(t, e2.embedded("canine"))

	// A file removed by hand: its documents go from the cache at the save.
	before := cacheSize(t, dir)
	require.NoError(t, os.Remove(filepath.Join(dir, "episodes", "2026-01.md")))
	require.NotContains(t, strings.Join(search(t, s2, "vehicle", nil), " "), "2026-01")
	require.Less(t, cacheSize(t, dir), before, "the vectors of the removed entries are dropped")
}

// cacheFiles returns the cache objects in dir's .cache folder.
func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".cache", "vectors-*.bin"))
	require.NoError(t, err)
	return m
}

func cacheSize(t *testing.T, dir string) int64 {
	t.Helper()
	files := cacheFiles(t, dir)
	require.Len(t, files, 1)
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	return fi.Size()
}

func TestSemanticCacheHidden(t *testing.T) {
	ctx := context.Background()
	s, dir := openSemantic(t, &conceptEmbedder{})
	search(t, s, "vehicle", nil)
	files := cacheFiles(t, dir)
	require.Len(t, files, 1, "one cache object")
	rel, err := filepath.Rel(dir, files[0])
	require.NoError(t, err)
	rel = filepath.ToSlash(rel)

	list, err := s.List(ctx)
	require.NoError(t, err)
	for _, f := range list {
		require.NotContains(t, f.Path, ".cache")
	}
	require.Len(t, list, 3)
	require.Empty(t, search(t, s, "mdmemory vectors", nil), "the cache is not searched")
	_, err = s.Read(ctx, rel)
	require.ErrorIs(t, err, memory.ErrInvalidPath)

	conv := s.NewSession()
	res, err := conv.Call(ctx, "memory_list", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.NotContains(t, res.Text, "cache")
	res, err = conv.Call(ctx, "memory_read", json.RawMessage(fmt.Sprintf(`{"path":%q,"line":null}`, rel)))
	require.NoError(t, err)
	require.True(t, res.IsError)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, st.Files)
	for _, f := range []string{"facts/user.md", "episodes/2026-01.md", "episodes/2026-02.md"} {
		require.NotContains(t, readFile(t, dir, f), "vector", "no vector in a memory file")
	}
}

func TestSemanticCorruptCache(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(b []byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"a flipped bit", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }},
		{"empty", func([]byte) []byte { return nil }},
		{"another format", func([]byte) []byte { return []byte("not a cache at all, but long enough") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := openSemantic(t, &conceptEmbedder{})
			want := search(t, s, "vehicle", nil)
			require.NoError(t, s.Close())
			p := cacheFiles(t, dir)[0]
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, tc.corrupt(b), 0o644))

			e := &conceptEmbedder{}
			s2 := reopen(t, dir, &memory.Options{Embedder: e})
			require.Equal(t, want, search(t, s2, "vehicle", nil), "a corrupt cache is no error")
			require.Len(t, e.embedded("vehicle"), 8, "everything embedded again")
			require.NoError(t, s2.Close())

			e3 := &conceptEmbedder{}
			s3 := reopen(t, dir, &memory.Options{Embedder: e3})
			require.Equal(t, want, search(t, s3, "vehicle", nil))
			require.Empty(t, e3.embedded("vehicle"), "the cache was rebuilt")
		})
	}
}

func TestSemanticModels(t *testing.T) {
	e := &conceptEmbedder{}
	_, dir := openSemantic(t, e)
	a := reopen(t, dir, &memory.Options{Embedder: modelEmbedder{conceptEmbedder: e, model: "a"}})
	search(t, a, "vehicle", nil)
	require.Len(t, e.embedded("vehicle"), 8)
	require.Len(t, cacheFiles(t, dir), 1)

	// Another model has a cache of its own: nothing of a's is used.
	eb := &conceptEmbedder{}
	b := reopen(t, dir, &memory.Options{Embedder: modelEmbedder{conceptEmbedder: eb, model: "b"}})
	search(t, b, "vehicle", nil)
	require.Len(t, eb.embedded("vehicle"), 8)
	require.Len(t, cacheFiles(t, dir), 2)

	// A model without a name whose vectors change length: the old ones
	// are dropped, everything embedded again.
	e1 := &conceptEmbedder{}
	s1 := reopen(t, dir, &memory.Options{Embedder: e1})
	want := search(t, s1, "vehicle", nil)
	longer := &conceptEmbedder{fail: func(_ int, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = append(conceptVector(t), 0, 0)
		}
		return out, nil
	}}
	s2 := reopen(t, dir, &memory.Options{Embedder: longer})
	require.Equal(t, want, search(t, s2, "vehicle", nil), "vectors of another length: all embedded again at once")
	search(t, s2, "vehicle", nil)
	require.Len(t, longer.embedded("vehicle"), 8, "embedded again, once")
	require.Equal(t, 3, longer.calls, "the query, then the query and the documents, then the query")
	s3 := reopen(t, dir, &memory.Options{Embedder: &conceptEmbedder{}})
	require.Equal(t, want, search(t, s3, "vehicle", nil))
}

// TestSemanticWithoutEmbedder: with no Embedder, and with one that fails,
// the hits are those of the keyword index.
func TestSemanticWithoutEmbedder(t *testing.T) {
	queries := []string{"vehicle", "sedan", "worn brake pads", "puppy walk", "flight Tokyo", "the", ""}
	opts := []*memory.SearchOptions{nil, {Limit: 2}, {Path: "episodes/"}, {Since: "2026-01-11"}}
	fail := &conceptEmbedder{fail: func(int, []string) ([][]float32, error) { return nil, errors.New("the server is down") }}
	s, dir := openSemantic(t, fail)
	plain := reopen(t, dir, &memory.Options{})
	nilEmb := reopen(t, dir, &memory.Options{Embedder: nil})
	for _, q := range queries {
		for _, o := range opts {
			want, err := plain.Search(context.Background(), q, o)
			require.NoError(t, err)
			got, err := nilEmb.Search(context.Background(), q, o)
			require.NoError(t, err)
			require.Equal(t, want, got)
			got, err = s.Search(context.Background(), q, o)
			require.NoError(t, err, "an Embedder's error is no error of the search")
			require.Equal(t, want, got, "%q %+v", q, o)
		}
	}
	calls := fail.calls
	search(t, s, "vehicle", nil)
	require.Equal(t, calls+1, fail.calls, "the next search tries again")
}

func TestSemanticEmbedderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(call int, texts []string) ([][]float32, error)
	}{
		{"an error", func(int, []string) ([][]float32, error) { return nil, errors.New("boom") }},
		{"too few vectors", func(_ int, texts []string) ([][]float32, error) { return make([][]float32, len(texts)-1), nil }},
		{"an empty query vector", func(_ int, texts []string) ([][]float32, error) { return make([][]float32, len(texts)), nil }},
		{"lengths differ", func(_ int, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = make([]float32, 3+i)
				out[i][0] = 1
			}
			return out, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := openSemantic(t, &conceptEmbedder{fail: tc.fail})
			plain := reopen(t, dir, &memory.Options{})
			require.Equal(t, search(t, plain, "sedan", nil), search(t, s, "sedan", nil))
			require.Empty(t, cacheFiles(t, dir), "nothing to save")
		})
	}
}

// TestSemanticBatches: the documents are embedded 64 texts a call at most;
// when a call fails, the vectors of the calls before it are kept.
func TestSemanticBatches(t *testing.T) {
	var lines strings.Builder
	lines.WriteString("# User\n\n> Summary: many lines\n\n")
	for i := range 150 {
		fmt.Fprintf(&lines, "- Line %d about the sedan\n", i)
	}
	e := &conceptEmbedder{fail: func(call int, texts []string) ([][]float32, error) {
		if len(texts) > 64 {
			return nil, fmt.Errorf("%d texts in one call", len(texts))
		}
		if call == 3 {
			return nil, errors.New("the third call fails")
		}
		return nil, nil
	}}
	s, dir := open(t, &memory.Options{Embedder: e})
	writeFile(t, dir, "facts/user.md", lines.String())
	plain := reopen(t, dir, &memory.Options{})
	require.Equal(t, search(t, plain, "sedan", nil), search(t, s, "sedan", nil), "the third call failed: keywords alone")
	require.Equal(t, 3, e.calls)
	require.Len(t, e.embedded("sedan"), 63+64+23)

	e.reset()
	got := search(t, s, "sedan", nil)
	require.Len(t, e.embedded("sedan"), 23, "only what the failed call had")
	require.Equal(t, 1, e.calls)
	require.Len(t, got, memory.DefaultSearchLimit)

	e2 := &conceptEmbedder{}
	s2 := reopen(t, dir, &memory.Options{Embedder: e2})
	require.Equal(t, got, search(t, s2, "sedan", nil))
	require.Empty(t, e2.embedded("sedan"))
}

func TestSemanticContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	e := &conceptEmbedder{fail: func(int, []string) ([][]float32, error) {
		cancel()
		return nil, context.Canceled
	}}
	s, dir := openSemantic(t, e)
	_, err := s.Search(ctx, "vehicle", nil)
	require.ErrorIs(t, err, context.Canceled, "a done context is the search's error")
	var me *memory.Error
	require.False(t, errors.As(err, &me))
	require.Empty(t, cacheFiles(t, dir))

	// An Embedder that succeeds as the context ends: its vectors are kept.
	ctx, cancel = context.WithCancel(context.Background())
	e2 := &conceptEmbedder{during: cancel}
	s2 := reopen(t, dir, &memory.Options{Embedder: e2})
	_, err = s2.Search(ctx, "vehicle", nil)
	require.ErrorIs(t, err, context.Canceled)
	e2.reset()
	search(t, s2, "vehicle", nil)
	require.Empty(t, e2.embedded("vehicle"), "kept from the search whose context ended")
	require.Len(t, cacheFiles(t, dir), 1, "and saved by the next")
}

// TestSemanticChangesWhileEmbedding: the index released, or a file edited,
// while the Embedder runs (no lock is held then).
func TestSemanticChangesWhileEmbedding(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	e.during = s.ReleaseIndex
	require.Equal(t, "episodes/2026-02.md:5", search(t, s, "vehicle", nil)[0])

	e2 := &conceptEmbedder{}
	s2 := reopen(t, dir, &memory.Options{Embedder: e2})
	e2.during = func() {
		writeFile(t, dir, "episodes/2026-02.md", semFeb+"\n## Washed the vehicle\n- Date: 2026-02-20\n")
		s2.ReleaseIndex()
	}
	got := search(t, s2, "vehicle", nil)
	require.Contains(t, got, "episodes/2026-02.md:9", "found by its word; its vector comes with the next search")
	e2.during = nil
	e2.reset()
	search(t, s2, "vehicle", nil)
	require.Equal(t, []string{"## Washed the vehicle\n- Date: 2026-02-20"}, e2.embedded("vehicle"))
}

// TestSemanticLatestWhileEmbedding: a search of the latest entries, which
// refreshes the index, while the Embedder runs: the semantic search ranks
// the files as they are now.
func TestSemanticLatestWhileEmbedding(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := openSemantic(t, e)
	search(t, s, "vehicle", nil)
	e.during = func() {
		writeFile(t, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: February\n\n## Washed the vehicle\n- Date: 2026-02-20\n\n"+
			strings.TrimPrefix(semFeb, "# 2026-02 Episodes\n\n> Summary: February\n\n"))
		_, err := s.Search(context.Background(), "", nil)
		require.NoError(t, err)
	}
	got := search(t, s, "vehicle", nil)
	require.Contains(t, got, "episodes/2026-02.md:5", "the new entry, by its word")
	require.Contains(t, got, "episodes/2026-02.md:8", "the old entry where it is now, by its vector")
}

// TestSemanticLongDocument: a document is embedded by its first 2,000
// characters.
func TestSemanticLongDocument(t *testing.T) {
	e := &conceptEmbedder{}
	s, dir := open(t, &memory.Options{Embedder: e})
	long := "- Drives a sedan " + strings.Repeat("é", 3000)
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: one long line\n\n"+long+"\n")
	require.Equal(t, []string{"facts/user.md:5"}, search(t, s, "vehicle", nil))
	require.Equal(t, []string{long[:len("- Drives a sedan ")+2*(2000-len("- Drives a sedan "))]}, e.embedded("vehicle"))
}

// TestSemanticMissingGone: a document whose embedding failed and that is
// then removed is not embedded later.
func TestSemanticMissingGone(t *testing.T) {
	e := &conceptEmbedder{fail: func(int, []string) ([][]float32, error) { return nil, errors.New("down") }}
	s, dir := openSemantic(t, e)
	search(t, s, "vehicle", nil)
	require.NoError(t, os.Remove(filepath.Join(dir, "episodes", "2026-01.md")))
	e.mu.Lock()
	e.fail = nil
	e.mu.Unlock()
	e.reset()
	search(t, s, "vehicle", nil)
	require.Len(t, e.embedded("vehicle"), 5, "the facts and February, not January")
}

func TestSemanticIndexErrors(t *testing.T) {
	// The listing fails before the Embedder is called.
	d, err := memory.OpenDir(filepath.Join(t.TempDir(), "m"), 0)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	fb := &cacheFault{Dir: d, listErr: errors.New("the network is down")}
	e := &conceptEmbedder{}
	s, err := memory.OpenBackend(fb, &memory.Options{Embedder: e, Now: feb26})
	require.NoError(t, err)
	_, err = s.Search(context.Background(), "vehicle", nil)
	require.ErrorContains(t, err, "the network is down")
	require.Zero(t, e.calls)

	// The listing fails after: the index was released while the Embedder
	// ran, and cannot be built again.
	fb.listErr = nil
	e.during = func() {
		s.ReleaseIndex()
		fb.listErr = errors.New("the network went down")
	}
	_, err = s.Search(context.Background(), "vehicle", nil)
	require.ErrorContains(t, err, "the network went down")
}

// TestSemanticStoresShareCache: two stores on one directory save the cache
// in turn; the one that finds it changed merges the other's vectors.
func TestSemanticStoresShareCache(t *testing.T) {
	ea, eb := &conceptEmbedder{}, &conceptEmbedder{}
	a, dir := openSemantic(t, ea)
	b := reopen(t, dir, &memory.Options{Embedder: eb})
	search(t, a, "vehicle", nil)
	search(t, b, "vehicle", nil)
	require.Empty(t, eb.embedded("vehicle"), "b read what a saved")

	writeFile(t, dir, "episodes/2026-02.md", semFeb+"\n## Washed the vehicle\n- Date: 2026-02-20\n")
	search(t, a, "vehicle", nil) // embeds the new entry, saves
	writeFile(t, dir, "facts/user.md", semUser+"- Owns a canine\n")
	ea.reset()
	eb.reset()
	search(t, b, "vehicle", nil) // embeds both new documents, finds a's save, merges
	require.Len(t, eb.embedded("vehicle"), 2)

	ec := &conceptEmbedder{}
	c := reopen(t, dir, &memory.Options{Embedder: ec})
	search(t, c, "vehicle", nil)
	require.Empty(t, ec.embedded("vehicle"), "the merged cache has everything")
	search(t, a, "vehicle", nil)
	require.Len(t, ea.embedded("vehicle"), 1, "a embeds the fact b added: it has not read b's cache since")

	// b fails to embed some documents that a has saved vectors for: b's
	// save loses the race, and takes a's vectors for them.
	var lines strings.Builder
	for i := range 70 {
		fmt.Fprintf(&lines, "- Note %d on the sedan\n", i)
	}
	writeFile(t, dir, "facts/memory.md", "# Memory\n\n> Summary: notes\n\n"+lines.String())
	search(t, a, "vehicle", nil)
	eb.reset()
	eb.fail = func(call int, _ []string) ([][]float32, error) {
		if call == 2 {
			return nil, errors.New("the second call fails")
		}
		return nil, nil
	}
	search(t, b, "vehicle", nil)
	require.Len(t, eb.embedded("vehicle"), 70, "63 embedded, 7 failed")
	eb.reset()
	eb.fail = nil
	search(t, b, "vehicle", nil)
	require.Empty(t, eb.embedded("vehicle"), "the 7 came from a's cache")
}

// cacheFault is a Dir whose cache object misbehaves.
type cacheFault struct {
	*memory.Dir
	readErr  error
	writeErr error
	listErr  error
	writes   int
	mu       sync.Mutex
}

func (f *cacheFault) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return f.Dir.List(ctx, dir)
}

func (f *cacheFault) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	if strings.HasPrefix(name, ".cache/") && f.readErr != nil {
		return memory.Content{}, f.readErr
	}
	return f.Dir.Read(ctx, name, limit)
}

func (f *cacheFault) Lock(ctx context.Context, name string) (memory.Held, error) {
	h, err := f.Dir.Lock(ctx, name)
	return hook(h, err, f.write)
}

func (f *cacheFault) write(ctx context.Context, h memory.Held, name string, data []byte, match string) (string, error) {
	if strings.HasPrefix(name, ".cache/") {
		f.mu.Lock()
		f.writes++
		f.mu.Unlock()
		if f.writeErr != nil {
			return "", f.writeErr
		}
	}
	return h.Write(ctx, name, data, match)
}

func TestSemanticCacheFaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readErr   error
		writeErr  error
		writes    int // writes after the second search
		searchErr error
	}{
		{name: "write lost twice", writeErr: memory.ErrChanged, writes: 4},
		{name: "write refused", writeErr: fs.ErrPermission, writes: 1},
		{name: "read fails", readErr: fs.ErrPermission, writes: 1},
		{name: "read and write fail", readErr: fs.ErrPermission, writeErr: memory.ErrChanged, writes: 1},
		{name: "closed", readErr: memory.ErrClosed, searchErr: memory.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := memory.OpenDir(filepath.Join(t.TempDir(), "m"), 0)
			require.NoError(t, err)
			t.Cleanup(func() { d.Close() })
			fb := &cacheFault{Dir: d, readErr: tc.readErr, writeErr: tc.writeErr}
			e := &conceptEmbedder{}
			s, err := memory.OpenBackend(fb, &memory.Options{Embedder: e, Now: feb26})
			require.NoError(t, err)
			ctx := context.Background()
			_, err = put(ctx, d, "facts/user.md", []byte(semUser), "")
			require.NoError(t, err)
			_, err = s.Search(ctx, "vehicle", nil)
			if tc.searchErr != nil {
				require.ErrorIs(t, err, tc.searchErr)
				return
			}
			require.NoError(t, err, "the cache never fails a search")
			search(t, s, "vehicle", nil)
			require.Equal(t, tc.writes, fb.writes)
			require.Len(t, e.embedded("vehicle"), 4, "the vectors are kept in memory all the same")
		})
	}
}
