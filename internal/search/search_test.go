package search_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/search"
)

// hits renders hits compactly as "file:pos".
func hits(hs []search.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s:%d", h.File, h.Pos))
	}
	return out
}

func TestSearchBM25(t *testing.T) {
	var x search.Index
	x.Set("a.md", []search.Doc{
		{Pos: 1, Text: "apple banana"},
		{Pos: 2, Text: "apple"},
		{Pos: 3, Text: "cherry"},
	})
	require.Equal(t, 3, x.Len())

	// N = 3 documents, 4 tokens: average length 4/3.
	const k1, b, avg = 1.2, 0.75, 4.0 / 3
	bm25 := func(df, tf, dl float64) float64 {
		idf := math.Log(1 + (3-df+0.5)/(df+0.5))
		return idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
	}

	got := x.Search("banana", 0, nil)
	require.Equal(t, []string{"a.md:1"}, hits(got))
	assert.InDelta(t, bm25(1, 1, 2), got[0].Score, 1e-12)

	// The shorter document ranks first for a term both hold.
	got = x.Search("apples", 0, nil)
	require.Equal(t, []string{"a.md:2", "a.md:1"}, hits(got))
	assert.InDelta(t, bm25(2, 1, 1), got[0].Score, 1e-12)
	assert.InDelta(t, bm25(2, 1, 2), got[1].Score, 1e-12)

	// Scores add over query terms; a repeated query term counts once.
	got = x.Search("Apple BANANA banana cherry", 0, nil)
	require.Equal(t, []string{"a.md:1", "a.md:3", "a.md:2"}, hits(got))
	assert.InDelta(t, bm25(2, 1, 2)+bm25(1, 1, 2), got[0].Score, 1e-12)
	assert.InDelta(t, bm25(1, 1, 1), got[1].Score, 1e-12)

	// Term frequency counts, and saturates.
	x.Set("b.md", []search.Doc{
		{Pos: 1, Text: "kiwi kiwi kiwi kiwi"},
		{Pos: 2, Text: "kiwi " + strings.Repeat("kiwi ", 300)},
		{Pos: 3, Text: "kiwi date date date"},
	})
	got = x.Search("kiwi", 0, nil)
	require.Equal(t, []string{"b.md:2", "b.md:1", "b.md:3"}, hits(got))
	assert.Less(t, got[0].Score, 2*got[1].Score)
}

func TestSearchTies(t *testing.T) {
	var x search.Index
	doc := func(pos int) search.Doc { return search.Doc{Pos: pos, Text: "same words here"} }
	x.Set("b.md", []search.Doc{doc(1)})
	x.Set("a.md", []search.Doc{doc(7), doc(3), doc(3)})
	x.Set("c.md", []search.Doc{doc(0)})
	want := []string{"a.md:3", "a.md:3", "a.md:7", "b.md:1", "c.md:0"}
	assert.Equal(t, want, hits(x.Search("words", 0, nil)))
	for limit := 1; limit <= 6; limit++ {
		assert.Equal(t, want[:min(limit, len(want))], hits(x.Search("same", limit, nil)), "limit %d", limit)
	}
}

func TestSearchLimit(t *testing.T) {
	c := genCorpus(500, 3)
	x := c.index()
	for _, q := range c.queries[:20] {
		all := x.Search(q.text, 0, nil)
		require.NotEmpty(t, all)
		for _, limit := range []int{1, 2, 5, 10, len(all), len(all) + 5} {
			assert.Equal(t, all[:min(limit, len(all))], x.Search(q.text, limit, nil), "%q limit %d", q.text, limit)
		}
		for i := 1; i < len(all); i++ {
			assert.GreaterOrEqual(t, all[i-1].Score, all[i].Score)
		}
	}
}

func TestSearchEmpty(t *testing.T) {
	var x search.Index
	assert.Nil(t, x.Search("budget", 10, nil), "empty index")
	assert.Nil(t, x.Latest(10, nil), "empty index")
	assert.Zero(t, x.Len())
	x.Remove("nothing.md")

	x.Set("a.md", []search.Doc{{Pos: 1, Date: "2026-01-02", Text: "the budget"}, {Pos: 2, Text: ""}})
	assert.Equal(t, 2, x.Len())
	for _, q := range []string{"", "  ", "the and of", "unknown", "？！"} {
		assert.Nil(t, x.Search(q, 10, nil), "%q", q)
	}
	assert.Len(t, x.Search("budget", 10, nil), 1)

	x.Set("a.md", nil)
	assert.Zero(t, x.Len())
	assert.Nil(t, x.Search("budget", 10, nil))
	docs, length, df := x.Stats()
	assert.Zero(t, docs)
	assert.Zero(t, length)
	assert.Empty(t, df)
}

func TestSearchCJK(t *testing.T) {
	var x search.Index
	x.Set("episodes/2026-02.md", []search.Doc{
		{Pos: 3, Text: "老王昨天在杭州买了龙井茶。"},
		{Pos: 9, Text: "王老师推荐了一本书。"},
		{Pos: 15, Text: "Met 老王 at the Hangzhou office to review the budget."},
		{Pos: 21, Text: "会议在上海举行，老王没有来。"},
	})
	assert.ElementsMatch(t, []string{"episodes/2026-02.md:3", "episodes/2026-02.md:15", "episodes/2026-02.md:21"},
		hits(x.Search("老王", 0, nil)))
	assert.Equal(t, []string{"episodes/2026-02.md:3"}, hits(x.Search("龙井茶", 1, nil)))
	assert.Equal(t, []string{"episodes/2026-02.md:9"}, hits(x.Search("王老师", 1, nil)))
	assert.Equal(t, []string{"episodes/2026-02.md:3"}, hits(x.Search("老王 杭州", 1, nil)))
	assert.Equal(t, []string{"episodes/2026-02.md:15"}, hits(x.Search("reviewing budgets", 0, nil)))
}

func TestFilter(t *testing.T) {
	var x search.Index
	x.Set("facts/user.md", []search.Doc{{Pos: 5, Text: "Home city: Lisbon"}})
	x.Set("episodes/2026-01.md", []search.Doc{
		{Pos: 5, Date: "2026-01-30", Text: "Flew to Lisbon"},
		{Pos: 11, Text: "Lisbon again, undated"},
	})
	x.Set("episodes/2026-02.md", []search.Doc{
		{Pos: 5, Date: "2026-02-01", Text: "Lisbon trip"},
		{Pos: 11, Date: "2026-02-28", Text: "Back from Lisbon"},
	})
	x.Set("episodes/2026-03.md", []search.Doc{{Pos: 5, Date: "2026-03-01", Text: "Lisbon photos"}})

	episodes := func(f string) bool { return strings.HasPrefix(f, "episodes/") }
	tests := []struct {
		name string
		f    *search.Filter
		want []string
	}{
		{"nil", nil, []string{"facts/user.md:5", "episodes/2026-01.md:5", "episodes/2026-01.md:11",
			"episodes/2026-02.md:5", "episodes/2026-02.md:11", "episodes/2026-03.md:5"}},
		{"zero", &search.Filter{}, []string{"facts/user.md:5", "episodes/2026-01.md:5", "episodes/2026-01.md:11",
			"episodes/2026-02.md:5", "episodes/2026-02.md:11", "episodes/2026-03.md:5"}},
		{"facts", &search.Filter{File: func(f string) bool { return strings.HasPrefix(f, "facts/") }},
			[]string{"facts/user.md:5"}},
		{"episodes", &search.Filter{File: episodes}, []string{"episodes/2026-01.md:5", "episodes/2026-01.md:11",
			"episodes/2026-02.md:5", "episodes/2026-02.md:11", "episodes/2026-03.md:5"}},
		{"since", &search.Filter{Since: "2026-02-01"},
			[]string{"episodes/2026-02.md:5", "episodes/2026-02.md:11", "episodes/2026-03.md:5"}},
		{"until a month", &search.Filter{Until: "2026-02"},
			[]string{"episodes/2026-01.md:5", "episodes/2026-02.md:5", "episodes/2026-02.md:11"}},
		{"until a day", &search.Filter{Until: "2026-02-01"}, []string{"episodes/2026-01.md:5", "episodes/2026-02.md:5"}},
		{"range", &search.Filter{Since: "2026-02-02", Until: "2026-03"},
			[]string{"episodes/2026-02.md:11", "episodes/2026-03.md:5"}},
		{"file and range", &search.Filter{File: func(f string) bool { return f == "episodes/2026-02.md" }, Since: "2026-02-02"},
			[]string{"episodes/2026-02.md:11"}},
		{"nothing", &search.Filter{Since: "2027"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ElementsMatch(t, tt.want, hits(x.Search("lisbon", 0, tt.f)))
		})
	}

	calls := map[string]int{}
	x.Search("lisbon", 0, &search.Filter{File: func(f string) bool { calls[f]++; return true }})
	for f, n := range calls {
		assert.Equal(t, 1, n, f)
	}
	assert.Len(t, calls, 4)
}

func TestLatest(t *testing.T) {
	var x search.Index
	x.Set("facts/user.md", []search.Doc{{Pos: 5, Text: "Home city: Lisbon"}})
	x.Set("episodes/2026-01.md", []search.Doc{
		{Pos: 5, Date: "2026-01-30", Text: "one"},
		{Pos: 11, Date: "2026-01-30", Text: "two, same day, later in the file"},
		{Pos: 17, Text: "undated"},
	})
	x.Set("episodes/2026-02.md", []search.Doc{
		{Pos: 5, Date: "2026-02-01", Text: "three"},
		{Pos: 11, Date: "2026-02-28", Text: "four"},
	})
	x.Set("episodes/old.md", []search.Doc{{Pos: 1, Date: "2026-01-30", Text: "same day, another file"}})

	all := []string{"episodes/2026-02.md:11", "episodes/2026-02.md:5", "episodes/old.md:1",
		"episodes/2026-01.md:11", "episodes/2026-01.md:5"}
	got := x.Latest(0, nil)
	assert.Equal(t, all, hits(got))
	assert.Equal(t, "2026-02-28", got[0].Date)
	assert.Zero(t, got[0].Score)
	for limit := 1; limit <= len(all); limit++ {
		assert.Equal(t, all[:limit], hits(x.Latest(limit, nil)), "limit %d", limit)
	}
	assert.Equal(t, []string{"episodes/2026-01.md:11", "episodes/2026-01.md:5"},
		hits(x.Latest(5, &search.Filter{Until: "2026-01", File: func(f string) bool { return f != "episodes/old.md" }})))
}

// TestIncremental changes an index file by file — new files, replaced
// files, removed files, back and forth — and checks that it ends up with
// the statistics and the exact scores of an index built once from the
// final files.
func TestIncremental(t *testing.T) {
	c := genCorpus(2_000, 7)
	want := c.index()

	r := rand.New(rand.NewPCG(1, 2))
	other := genCorpus(1_000, 8)
	var x search.Index
	for range 3 {
		for _, i := range r.Perm(len(other.files)) {
			f := other.files[i]
			x.Set(f.name, f.docs)
			x.Set("extra/"+f.name, f.docs)
		}
		for _, i := range r.Perm(len(c.files)) {
			f := c.files[i]
			x.Set(f.name, f.docs)
			if i%3 == 0 {
				x.Remove(f.name)
			}
		}
		for _, f := range other.files {
			x.Remove("extra/" + f.name)
		}
	}
	for _, f := range c.files {
		x.Set(f.name, f.docs)
	}
	for _, f := range other.files {
		if !slicesContainsFile(c.files, f.name) {
			x.Remove(f.name)
		}
	}

	wd, wl, wdf := want.Stats()
	gd, gl, gdf := x.Stats()
	assert.Equal(t, wd, gd, "documents")
	assert.Equal(t, wl, gl, "length")
	assert.Equal(t, wdf, gdf, "document frequencies")
	assert.Positive(t, x.FreeTerms(), "some term IDs were freed")

	for _, q := range c.queries {
		require.Equal(t, want.Search(q.text, 0, nil), x.Search(q.text, 0, nil), q.text)
	}
	assert.Equal(t, want.Latest(0, nil), x.Latest(0, nil))
}

func slicesContainsFile(fs []corpusFile, name string) bool {
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

// TestManyWords sets files with more distinct words than the builder keeps
// room for, twice, and checks that every word is found.
func TestManyWords(t *testing.T) {
	var x search.Index
	var sb strings.Builder
	for i := range 40_000 {
		fmt.Fprintf(&sb, "w%d ", i)
	}
	for range 2 {
		x.Set("big.md", []search.Doc{{Pos: 1, Text: sb.String()}})
		x.Set("small.md", []search.Doc{{Pos: 1, Text: "w1 w39999 other"}})
	}
	assert.Equal(t, []string{"small.md:1", "big.md:1"}, hits(x.Search("w39999", 0, nil)))
	_, _, df := x.Stats()
	assert.Len(t, df, 40_001)
}

// TestConcurrentSearch runs searches side by side; run it with -race.
func TestConcurrentSearch(t *testing.T) {
	c := genCorpus(1_000, 5)
	x := c.index()
	want := make([][]search.Hit, len(c.queries))
	for i, q := range c.queries {
		want[i] = x.Search(q.text, 5, nil)
	}
	latest := x.Latest(5, nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i, q := range c.queries {
				if (i+g)%7 == 0 {
					assert.Equal(t, latest, x.Latest(5, nil))
				}
				assert.Equal(t, want[i], x.Search(q.text, 5, nil))
			}
		})
	}
	wg.Wait()
}

// TestPostingsWide: postings whose gap or frequency do not fit in one byte
// (documents far apart in a file, a word repeated) score as BM25 says; a
// date not in YYYY-MM-DD form counts as none.
func TestPostingsWide(t *testing.T) {
	var x search.Index
	docs := make([]search.Doc, 300)
	for i := range docs {
		docs[i] = search.Doc{Pos: i + 1, Date: "2026-02-01", Text: "filler words here"}
	}
	docs[0].Text = "zebra"
	docs[200].Text = strings.Repeat("zebra ", 9) // gap 200, frequency 9
	docs[299].Text = strings.Repeat("zebra ", 300)
	docs[299].Date = "2026-2-01"
	docs[298].Date = "2026-0x-01"
	x.Set("a.md", docs)
	hits := x.Search("zebra", 0, nil)
	require.Len(t, hits, 3)
	require.Equal(t, []int{201, 300, 1}, []int{hits[0].Pos, hits[1].Pos, hits[2].Pos})
	require.Equal(t, "2026-02-01", hits[0].Date)
	require.Equal(t, "", hits[1].Date, "no date in that form")
	require.Len(t, x.Search("zebra", 0, &search.Filter{Since: "2026"}), 2, "dated only")
	latest := x.Latest(0, nil)
	require.Len(t, latest, 298)
	x.Remove("a.md")
	docsN, _, df := x.Stats()
	require.Zero(t, docsN)
	require.Empty(t, df)
}
