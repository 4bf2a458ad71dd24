package memory_test

import (
	"context"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// hashEmbedder is a fake model for benchmarks: a text's words hashed into
// 384 numbers (the length of small sentence models such as all-MiniLM).
type hashEmbedder struct{}

const hashDim = 384

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, hashDim)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%hashDim]++
		}
		out[i] = v
	}
	return out, nil
}

// age sets the time of every file under dir an hour back, so that the
// directory's listing tags them and a search does not read them again
// (files changed in the last two seconds are read at every search).
func age(b testing.TB, dir string) {
	b.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSearchSemantic is BenchmarkSearch with an Embedder (a fake, so
// that the figures are the library's: the query's embedding costs what the
// model costs on top), beside the keyword search of the same files, all
// tagged (see age). It reports the cache object's size.
func BenchmarkSearchSemantic(b *testing.B) {
	for _, n := range corpusSizes[:2] {
		for _, semantic := range []bool{false, true} {
			name := strconv.Itoa(n) + "/keyword"
			opts := &memory.Options{}
			if semantic {
				name = strconv.Itoa(n) + "/semantic"
				opts.Embedder = hashEmbedder{}
			}
			b.Run(name, func(b *testing.B) { benchSearch(b, n, opts) })
		}
	}
}

func benchSearch(b *testing.B, n int, opts *memory.Options) {
	s, dir := open(b, opts)
	queries := writeCorpus(b, dir, n)
	age(b, dir)
	ctx := context.Background()
	if _, err := s.Search(ctx, "warm up", nil); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		if _, err := s.Search(ctx, queries[i%len(queries)], nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".cache", "vectors-*.bin")); len(m) == 1 {
		if fi, err := os.Stat(m[0]); err == nil {
			b.ReportMetric(float64(fi.Size()), "cache-B")
		}
	}
}

// BenchmarkSearchSemanticRestart is a new Store's first semantic search on
// a memory whose vectors are cached: the index is built from the files, the
// vectors read from the cache, and only the query embedded.
func BenchmarkSearchSemanticRestart(b *testing.B) {
	for _, n := range corpusSizes[:2] {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s, dir := open(b, &memory.Options{Embedder: hashEmbedder{}})
			writeCorpus(b, dir, n)
			ctx := context.Background()
			if _, err := s.Search(ctx, "warm up", nil); err != nil {
				b.Fatal(err)
			}
			age(b, dir)
			for b.Loop() {
				s, err := memory.Open(dir, &memory.Options{Embedder: hashEmbedder{}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Search(ctx, "anything", nil); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkHybridVsKeyword runs, in each iteration, one query on a Store
// with an Embedder (hashEmbedder: 384 numbers, answering at once, so that
// the figures are the library's) and the same query on a Store without
// one, over the same 10,000 entries, files tagged (see age), and reports
// each's median time and their ratio: the two in the same moments of a
// noisy machine.
func BenchmarkHybridVsKeyword(b *testing.B) {
	const n = 10000
	hybrid, dir := open(b, &memory.Options{Embedder: hashEmbedder{}})
	queries := writeCorpus(b, dir, n)
	age(b, dir)
	keyword, err := memory.Open(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer keyword.Close()
	ctx := context.Background()
	for _, s := range []*memory.Store{hybrid, keyword} {
		if _, err := s.Search(ctx, "warm up", nil); err != nil {
			b.Fatal(err)
		}
	}
	var kw, hy []time.Duration
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		start := time.Now()
		if _, err := keyword.Search(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := hybrid.Search(ctx, q, nil); err != nil {
			b.Fatal(err)
		}
		kw, hy = append(kw, mid.Sub(start)), append(hy, time.Since(mid))
		i++
	}
	slices.Sort(kw)
	slices.Sort(hy)
	k, h := kw[len(kw)/2], hy[len(hy)/2]
	b.ReportMetric(float64(k.Microseconds())/1000, "keyword-ms")
	b.ReportMetric(float64(h.Microseconds())/1000, "hybrid-ms")
	b.ReportMetric(float64(h)/float64(k), "hybrid/keyword")
}
