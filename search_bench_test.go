package memory_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/markdown"
)

// Search benchmarks. BenchmarkSearch and BenchmarkSearchBuild run on a
// synthetic corpus written here; BenchmarkPeers runs on the corpus that
// ../shared/bench/scale_bench.py generated for SQLite FTS5 and ripgrep, so
// that the figures sit side by side (make bench-peers).

// writeCorpus writes n episode entries, 100 to a month file, and returns
// queries that each name one entry's rare words.
func writeCorpus(b *testing.B, dir string, n int) []string {
	b.Helper()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	vocab := make([]string, 4000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%xq%c", i*7919%65521, 'a'+rune(i%26))
	}
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[int(r.ExpFloat64()*400)%len(vocab)]
		}
		return strings.Join(ws, " ")
	}
	var queries []string
	for m := 0; m*100 < n; m++ {
		month := fmt.Sprintf("%04d-%02d", 2000+m/12, m%12+1)
		var f strings.Builder
		f.WriteString("# " + month + " Episodes\n\n> Summary: many things\n\n")
		for i := 0; i < 100 && m*100+i < n; i++ {
			title := words(4)
			fmt.Fprintf(&f, "## %s\n- Summary: %s\n- Date: %s-%02d\n- Details: %s\n- Lesson: %s\n\n", title, words(8), month, i%28+1, words(30), words(10))
			if i%10 == 0 {
				queries = append(queries, title)
			}
		}
		writeFile(b, dir, "episodes/"+month+".md", f.String())
	}
	return queries
}

var corpusSizes = []int{1000, 10000, 100000}

func BenchmarkSearch(b *testing.B) {
	for _, n := range corpusSizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s, dir := open(b, nil)
			queries := writeCorpus(b, dir, n)
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
		})
	}
}

// BenchmarkSearchBuild is a cold start: a new Store's first search reads,
// parses and indexes every file.
func BenchmarkSearchBuild(b *testing.B) {
	for _, n := range corpusSizes[:2] {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			_, dir := open(b, nil)
			writeCorpus(b, dir, n)
			ctx := context.Background()
			for b.Loop() {
				s, err := memory.Open(dir, nil)
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

type peerQuery struct {
	Query, Lang, Target string
}

// peerCorpora calls f for each corpus scale_bench.py left in
// $MDMEMORY_PEERS_WORK/<N>/, smallest first.
func peerCorpora(b *testing.B, f func(b *testing.B, dir string, queries []peerQuery)) {
	work := os.Getenv("MDMEMORY_PEERS_WORK")
	if work == "" {
		b.Skip("set MDMEMORY_PEERS_WORK to scale_bench.py's --work folder (make bench-peers)")
	}
	entries, _ := os.ReadDir(work)
	var sizes []int
	for _, d := range entries {
		if n, err := strconv.Atoi(d.Name()); err == nil {
			sizes = append(sizes, n)
		}
	}
	slices.Sort(sizes)
	for _, n := range sizes {
		root := filepath.Join(work, strconv.Itoa(n))
		queries := readPeerQueries(b, filepath.Join(root, "queries.jsonl"))
		b.Run(strconv.Itoa(n), func(b *testing.B) { f(b, filepath.Join(root, "data", "memory"), queries) })
	}
}

// BenchmarkPeersBuild is the cold build of the index from disk (read,
// parse, index) on the peers' corpus, and the memory the index holds.
func BenchmarkPeersBuild(b *testing.B) {
	ctx := context.Background()
	peerCorpora(b, func(b *testing.B, dir string, _ []peerQuery) {
		build := func() *memory.Store {
			s, err := memory.Open(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Search(ctx, "anything", nil); err != nil {
				b.Fatal(err)
			}
			return s
		}
		// The memory held, measured once, outside the timed loop.
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := build()
		runtime.GC()
		runtime.ReadMemStats(&after)
		s.Close()
		for b.Loop() {
			build().Close()
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-held")
	})
}

// BenchmarkPeersQuery runs the peers' corpus queries in turn: latency
// median and p95, and recall@5 of the planted entry per language over the
// first pass (run with -benchtime=Nx, N a multiple of the query count).
func BenchmarkPeersQuery(b *testing.B) {
	ctx := context.Background()
	peerCorpora(b, func(b *testing.B, dir string, queries []peerQuery) {
		s, err := memory.Open(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		entries := map[string][]int{} // path → heading lines, for the targets' "#K"
		found := map[string][2]int{}  // lang → hits, total
		var lat []time.Duration
		i := 0
		for b.Loop() {
			q := queries[i%len(queries)]
			start := time.Now()
			hits, err := s.Search(ctx, q.Query, &memory.SearchOptions{Limit: 5})
			lat = append(lat, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if i < len(queries) {
				f := found[q.Lang]
				f[1]++
				for _, h := range hits {
					if h.Path+"#"+strconv.Itoa(entryNumber(b, entries, dir, h.Path, h.Line)) == q.Target {
						f[0]++
						break
					}
				}
				found[q.Lang] = f
			}
			i++
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "median-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		for lang, f := range found {
			b.ReportMetric(float64(f[0])/float64(f[1]), "R@5-"+lang)
		}
	})
}

func readPeerQueries(b *testing.B, path string) []peerQuery {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var qs []peerQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q peerQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

// entryNumber returns the 1-based number of the entry at line in path, as
// memdocs.py numbers the targets (its README's "0-based" is off by one).
func entryNumber(b *testing.B, cache map[string][]int, dir, path string, line int) int {
	lines, ok := cache[path]
	if !ok {
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range markdown.Parse(src).Entries {
			lines = append(lines, e.Line)
		}
		cache[path] = lines
	}
	i, _ := slices.BinarySearch(lines, line)
	return i + 1
}
