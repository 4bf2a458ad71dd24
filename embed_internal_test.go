package memory

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/search"
	"github.com/mdmemory/memory/internal/textpack"
)

func TestDecodeCache(t *testing.T) {
	vecs := map[[32]byte]*qvec{{1}: quantize([]float32{0.6, 0.8}), {2}: quantize([]float32{1, 0}), {3}: quantize([]float32{0, 0})}
	good := encodeCache("m", 2, vecs)
	dim, got, ok := decodeCache(good, "m")
	require.True(t, ok)
	require.Equal(t, 2, dim)
	require.Equal(t, vecs, got)
	require.Equal(t, good, encodeCache("m", 2, got), "the same bytes for the same vectors")
	require.Equal(t, []int8{95, 127}, got[[32]byte{1}].codes)
	require.Len(t, good, len(cacheMagic)+1+1+1+1+3*(32+8+2*2)+4, "two bytes a number, and two scales")

	// Version 1, float32s, is read and made 8-bit.
	v1 := []byte(cacheMagicV1)
	v1 = binary.AppendUvarint(v1, 1)
	v1 = append(v1, 'm')
	v1 = binary.AppendUvarint(v1, 2)
	v1 = binary.AppendUvarint(v1, 1)
	v1 = append(v1, make([]byte, 32)...)
	v1 = binary.LittleEndian.AppendUint32(v1, math.Float32bits(0.6))
	v1 = binary.LittleEndian.AppendUint32(v1, math.Float32bits(0.8))
	v1 = binary.LittleEndian.AppendUint32(v1, crc32.ChecksumIEEE(v1))
	dim, got, ok = decodeCache(v1, "m")
	require.True(t, ok)
	require.Equal(t, 2, dim)
	require.Equal(t, quantize([]float32{0.6, 0.8}), got[[32]byte{}])

	// sealed gives b with its checksum, as a cache whose checksum is right
	// but whose content is not.
	sealed := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)) }
	head := func(model string, dim, count uint64) []byte {
		b := []byte(cacheMagic)
		b = binary.AppendUvarint(b, uint64(len(model)))
		b = append(b, model...)
		b = binary.AppendUvarint(b, dim)
		return binary.AppendUvarint(b, count)
	}
	for name, b := range map[string][]byte{
		"another model":         good,
		"short":                 []byte(cacheMagic),
		"no uvarint":            sealed([]byte(cacheMagic)),
		"model cut":             sealed(append([]byte(cacheMagic), 10, 'm')),
		"no count":              sealed(binary.AppendUvarint(append([]byte(cacheMagic), 1, 'x'), 2)),
		"dimension 0":           sealed(head("x", 0, 0)),
		"dimension over 65536":  sealed(head("x", maxDim+1, 0)),
		"more vectors than fit": sealed(head("x", 2, 1)),
		"bytes left over":       sealed(append(head("x", 2, 0), 0)),
		"huge count":            sealed(append(head("x", 2, math.MaxUint64/8), make([]byte, 40)...)),
	} {
		_, _, ok := decodeCache(b, "x")
		require.False(t, ok, name)
	}
	_, _, ok = decodeCache(sealed(head("x", 2, 0)), "x")
	require.True(t, ok, "an empty cache")
	require.True(t, bytes.HasPrefix(good, []byte("mdmemory vectors 2\n")))
}

func TestEmbedHelpers(t *testing.T) {
	require.Equal(t, strings.Repeat("é", embedChars), embedText(strings.Repeat("é", embedChars+5)))
	require.Equal(t, "- a line", embedText("- a line\n\n"))
	require.Zero(t, wordJaccard(nil, nil))
	require.Equal(t, 0.5, wordJaccard(search.TermSet(nil, "tea in Hangzhou, tea"), search.TermSet(nil, "Hangzhou tea, West Lake")))
	require.Equal(t, []float32{0, 0}, unit([]float32{0, 0}))
	require.Equal(t, []float32{0, 0}, unit([]float32{float32(math.Inf(1)), 1}))
	require.Equal(t, []float32{0.6, 0.8}, unit([]float32{3, 4}))
	require.Equal(t, int32(1+4+9+16+25+36+49+64+81), dot8Go([]int8{1, 2, 3, 4, 5, 6, 7, 8, 9}, []int8{1, 2, 3, 4, 5, 6, 7, 8, 9}))
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 15, 16, 17, 384, 1000} {
		a, b := make([]int8, n), make([]int8, n)
		for i := range a {
			a[i], b[i] = int8(rng.IntN(256)-128), int8(rng.IntN(256)-128)
		}
		require.Equal(t, dot8Go(a, b), dot8(a, b), "%d numbers", n)
	}
	zero := &qvec{codes: []int8{0, 0}, res: []int8{0, 0}}
	require.Equal(t, zero, quantize([]float32{0, 0}))
	require.Equal(t, zero, quantize([]float32{float32(math.NaN()), 0}))
	require.Equal(t, zero, quantize([]float32{float32(math.Inf(1)), 0}))
	require.Equal(t, []int8{0, 0}, quantizeCodes([]float32{float32(math.NaN()), 0}))
	require.Equal(t, []int8{0, 0}, quantizeCodes([]float32{float32(math.Inf(-1)), 0}))
	for _, u := range [][]float32{{0.6, -0.8, 0}, {0.1, 0.2, -0.3, 0.9}} {
		require.Equal(t, quantize(u).codes, quantizeCodes(u))
	}
	require.Equal(t, []int8{0, 127}, quantize([]float32{0, 1}).codes, "no rounding error: no residue")
	require.InDelta(t, 0, dotq([]float32{0.6, 0.8, 0}, quantize([]float32{0.8, -0.6, 0})), 1e-6)
	require.InDelta(t, 1, dotq([]float32{0.6, 0.8, 0}, quantize([]float32{0.6, 0.8, 0})), 1e-6)
	require.True(t, inRange("2026-02-03", "2026-02", "2026-02"))
	require.False(t, inRange("", "2026", ""))
	require.Equal(t, ".cache/vectors-"+"e3b0c44298fc1c14"+".bin", cacheName(""))

	s := &Store{}
	s.search.dict = &textpack.Dict{}
	s.search.files = map[string]*indexed{"facts/user.md": {text: s.search.dict.Append(nil, []byte("- x")), docs: []docInfo{{line: 1}}}}
	require.Equal(t, "- x", s.docText("facts/user.md", 1))
	require.Equal(t, "", s.docText("facts/user.md", 2), "no document there")
}

// TestRankIsExact: the 8-bit scan and the exact re-ranking of its best
// candidates give the ten best documents in the order the exact cosine
// gives them, over 10,000 vectors of 384 numbers; and these are, in the
// same order, the ten best by the embedder's own float vectors.
func TestRankIsExact(t *testing.T) {
	const n, dim = 10000, 384
	rng := rand.New(rand.NewPCG(1, 2))
	// Vectors near 50 topics, as texts about a few things are.
	topics := make([][]float32, 50)
	for i := range topics {
		topics[i] = unit(randVec(rng, dim, nil, 0))
	}
	sem := &semantic{dim: dim, vecs: map[[32]byte]*qvec{}, files: map[string]*semFile{}, missing: map[[32]byte]string{}}
	floats := map[[32]byte][]float32{}
	for f := range 100 {
		sf := &semFile{}
		for d := range n / 100 {
			var h [32]byte
			copy(h[:], fmt.Sprint(f, "/", d))
			v := randVec(rng, dim, topics[rng.IntN(len(topics))], 0.5)
			sem.add(h, v)
			floats[h] = unit(v)
			sf.docs = append(sf.docs, semDoc{pos: d + 1, hash: h})
		}
		sem.files[fmt.Sprintf("episodes/%04d-01.md", 1000+f)] = sf
	}
	exact := func(qv []float32, vec func(h [32]byte) func([]float32) float64) []search.Hit {
		var all []search.Hit
		for p, sf := range sem.files {
			for _, d := range sf.docs {
				all = append(all, search.Hit{File: p, Pos: d.pos, Score: vec(d.hash)(qv)})
			}
		}
		slices.SortFunc(all, func(a, b search.Hit) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			if c := strings.Compare(a.File, b.File); c != 0 {
				return c
			}
			return cmp.Compare(a.Pos, b.Pos)
		})
		return all[:10]
	}
	places := func(hits []search.Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprint(h.File, ":", h.Pos))
		}
		return out
	}
	swapped := 0
	for q := range 20 {
		qv := unit(randVec(rng, dim, topics[q%len(topics)], 0.6))
		got := sem.rank(qv, -1, SearchOptions{}, 10)
		stored := exact(qv, func(h [32]byte) func([]float32) float64 {
			return func(q []float32) float64 { return dotq(q, sem.vecs[h]) }
		})
		require.Equal(t, places(stored), places(got), "query %d: the exact cosine's order over the stored vectors", q)
		for i := range got {
			require.InDelta(t, stored[i].Score, got[i].Score, 1e-12)
		}
		orig := exact(qv, func(h [32]byte) func([]float32) float64 {
			return func(q []float32) float64 {
				var s float64
				for i := range q {
					s += float64(q[i]) * float64(floats[h][i])
				}
				return s
			}
		})
		// Against the embedder's own float vectors: the same order, but
		// where two documents' similarities differ by less than 1e-4, which
		// the stored vectors do not tell apart (nor would a float32 sum
		// with a different order of additions, by much less).
		for i, h := range got {
			o := orig[i]
			if h.File != o.File || h.Pos != o.Pos {
				require.InDelta(t, o.Score, h.Score, 1e-4, "query %d, place %d: %s:%d for %s:%d", q, i, h.File, h.Pos, o.File, o.Pos)
				swapped++
			}
		}
	}
	t.Logf("against the embedder's float vectors: %d of 200 places differ, each a tie within 1e-4", swapped)
}

// randVec returns a random vector of dim numbers: around center, at
// distance spread, or anywhere when center is nil.
func randVec(rng *rand.Rand, dim int, center []float32, spread float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		if center != nil {
			v[i] = center[i]*float32(math.Sqrt(float64(dim))) + float32(spread)*v[i]*3
		}
	}
	return v
}
