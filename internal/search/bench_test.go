package search_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory/internal/search"
)

// The benchmarks run on the synthetic corpus of corpus_test.go at three
// sizes. Reproduce with
//
//	go test -run '^$' -bench . -benchmem ./internal/search/
//
// Query reports, besides the mean (ns/op), the median and 95th percentile
// of single queries; Build reports the heap the finished index holds.

var sizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

var corpora sync.Map // n → *corpus

func corpusOf(n int) *corpus {
	if c, ok := corpora.Load(n); ok {
		return c.(*corpus)
	}
	c, _ := corpora.LoadOrStore(n, genCorpus(n, 1))
	return c.(*corpus)
}

// BenchmarkBuild indexes every file of the corpus into an empty index (the
// index's part of a cold start: the documents are already parsed).
func BenchmarkBuild(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			c := corpusOf(sz.n)
			for b.Loop() {
				c.index()
			}
			b.ReportMetric(heldMB(c), "MB-held")
		})
	}
}

// heldMB returns the heap, in MB, that an index of c holds once built.
func heldMB(c *corpus) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := c.index()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / 1e6
}

// BenchmarkTokenize tokenizes every document of the 10k corpus: the part
// of Build that is reading text.
func BenchmarkTokenize(b *testing.B) {
	c := corpusOf(10_000)
	var size int64
	for _, f := range c.files {
		for _, d := range f.docs {
			size += int64(len(d.Text))
		}
	}
	b.SetBytes(size)
	var t search.Tokenizer
	for b.Loop() {
		for _, f := range c.files {
			for _, d := range f.docs {
				t.Count(d.Text)
			}
		}
	}
}

// BenchmarkQuery runs the corpus's planted queries in turn, top 10 (as the
// FTS5 baseline does).
func BenchmarkQuery(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			c := corpusOf(sz.n)
			x := c.index()
			var lat []time.Duration
			i := 0
			for b.Loop() {
				q := c.queries[i%len(c.queries)]
				i++
				t := time.Now()
				x.Search(q.text, 10, nil)
				lat = append(lat, time.Since(t))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "median-ns")
			b.ReportMetric(float64(lat[(len(lat)*95+99)/100-1].Nanoseconds()), "p95-ns")
			r := recall(c, x)
			b.ReportMetric(r["en"], "R@5-en")
			b.ReportMetric(r["zh"], "R@5-zh")
		})
	}
}

// BenchmarkSet replaces one monthly file of a full index: the cost of
// keeping the index fresh after an append to that file.
func BenchmarkSet(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			c := corpusOf(sz.n)
			x := c.index()
			f := c.files[len(c.files)-1]
			for b.Loop() {
				x.Set(f.name, f.docs)
			}
			b.ReportMetric(float64(len(f.docs)), "docs/file")
		})
	}
}

// BenchmarkLatest lists the ten newest entries (an empty memory_search).
func BenchmarkLatest(b *testing.B) {
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			x := corpusOf(sz.n).index()
			for b.Loop() {
				x.Latest(10, nil)
			}
		})
	}
}

func ExampleIndex_Search() {
	var x search.Index
	x.Set("episodes/2026-02.md", []search.Doc{
		{Pos: 5, Date: "2026-02-03", Text: "Reviewed the quarterly budget with Priya in Lisbon."},
		{Pos: 11, Date: "2026-02-09", Text: "老王昨天在杭州买了龙井茶。"},
	})
	x.Set("facts/user.md", []search.Doc{{Pos: 5, Text: "Home city: Lisbon"}})
	for _, q := range []string{"review budget", "老王", "Lisbon"} {
		for _, h := range x.Search(q, 5, nil) {
			fmt.Printf("%s: %s:%d %.2f\n", q, h.File, h.Pos, h.Score)
		}
	}
	// Output:
	// review budget: episodes/2026-02.md:5 1.89
	// 老王: episodes/2026-02.md:11 0.81
	// Lisbon: facts/user.md:5 0.62
	// Lisbon: episodes/2026-02.md:5 0.45
}
