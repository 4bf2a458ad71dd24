package memory

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/mdmemory/memory/internal/search"
	"github.com/mdmemory/memory/internal/textpack"
)

// Semantic search. With Options.Embedder set, a search with words ranks the
// documents twice, by BM25 and by the cosine similarity of their vectors to
// the query's, fuses the two rankings and drops near-duplicates. The
// vectors are derived data: they are never written into the memory files,
// only kept in memory beside the index and in one cache object per model
// on the backend, .cache/vectors-<hash of the model>.bin, which the
// backend's listing leaves out (a dot-named folder) and which no tool
// reaches. A vector is found by the SHA-256 of the text embedded, so a
// restart embeds nothing that has not changed, and a file edited by hand
// has its new or changed documents embedded by the next search, which sees
// the edit as every search does.

// Semantic search's settings.
const (
	defaultFloor = 0.35 // cosine similarity under which a document is no semantic hit
	rrfK         = 60   // reciprocal rank fusion's constant: a document at rank r scores 1/(rrfK+r)
	dupJaccard   = 0.7  // two hits whose word sets overlap more are one
	embedBatch   = 64   // texts per call of Embed
	embedChars   = 2000 // characters of a document embedded
	minDepth     = 50   // documents at least taken from each ranking to fuse
)

// cacheMagic opens a cache object, readable to whoever opens one: version
// 2 holds vectors of 8-bit numbers with a scale; version 1, still read,
// held float32s.
const (
	cacheMagic   = "mdmemory vectors 2\n"
	cacheMagicV1 = "mdmemory vectors 1\n"
)

// minCandidates is the number of documents at least that the 8-bit scan
// hands to the exact ranking; it takes twice the depth when more.
const minCandidates = 100

// qvec is a vector as the store keeps it, in 8-bit numbers: codes, on a
// scale of the largest number's 127th, which the scan compares; and the
// rounding error of codes, res, on a scale of its own, so that
// scale·codes + rscale·res is the unit vector the Embedder gave to within
// about 1/30,000 of each number. inv is 1 over that vector's length.
type qvec struct {
	codes, res    []int8
	scale, rscale float32
	inv           float32
}

// quantize returns the stored form of the unit vector u (zero codes for a
// vector with no finite length).
func quantize(u []float32) *qvec {
	both := make([]int8, 2*len(u))
	q := &qvec{codes: both[:len(u):len(u)], res: both[len(u):]}
	var m float64
	for _, f := range u {
		m = max(m, math.Abs(float64(f)))
	}
	if m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return q
	}
	q.scale = float32(m / 127)
	var rm float64
	for i, f := range u {
		q.codes[i] = int8(math.Round(float64(f) / m * 127))
		rm = max(rm, math.Abs(float64(f)-float64(q.scale)*float64(q.codes[i])))
	}
	if rm > 0 {
		q.rscale = float32(rm / 127)
		for i, f := range u {
			q.res[i] = int8(math.Round((float64(f) - float64(q.scale)*float64(q.codes[i])) / float64(q.rscale)))
		}
	}
	q.norm()
	return q
}

// quantizeCodes returns the codes of quantize(u), for a query: what the
// scan compares.
func quantizeCodes(u []float32) []int8 {
	codes := make([]int8, len(u))
	var m float64
	for _, f := range u {
		m = max(m, math.Abs(float64(f)))
	}
	if m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return codes
	}
	for i, f := range u {
		codes[i] = int8(math.Round(float64(f) / m * 127))
	}
	return codes
}

// norm sets q.inv from the vector q holds.
func (q *qvec) norm() {
	var sum float64
	for i, c := range q.codes {
		f := float64(q.scale)*float64(c) + float64(q.rscale)*float64(q.res[i])
		sum += f * f
	}
	q.inv = 0
	if sum > 0 && !math.IsInf(sum, 0) && !math.IsNaN(sum) {
		q.inv = float32(1 / math.Sqrt(sum))
	}
}

// maxDim bounds the length of a vector, against a corrupt cache or an
// Embedder that answers with vectors of millions of numbers.
const maxDim = 1 << 16

// semantic is what the store knows of the vectors: the cache, and per file
// of the index, its documents' hashes. It belongs to the index: guarded by
// its mutex, made at the first semantic search after the index, released
// with it.
type semantic struct {
	model   string
	name    string // the cache object
	version string // the cache object's version as last read or written; "" for none
	dim     int    // the vectors' length; 0 before any

	vecs    map[[32]byte]*qvec  // by hash of the text embedded
	files   map[string]*semFile // by path, as the index has them
	missing map[[32]byte]string // documents without a vector: the text to embed
	dirty   bool                // vecs differs from the cache object: save it

	table *scanTable // what rank scans; nil when files or vecs changed since it was made
}

// scanTable is what rank scans: every document that has a vector, its
// 8-bit numbers end to end, so that the scan reads memory in order.
type scanTable struct {
	codes []int8    // dim numbers a document
	mult  []float32 // scale·inv of each document's vector
	docs  []*semDoc
	file  []int32  // index in paths
	paths []string // the files
}

// scan returns the scan table, made anew when it is out of date.
func (sem *semantic) scan() *scanTable {
	if sem.table != nil {
		return sem.table
	}
	t := &scanTable{}
	n := 0
	for _, sf := range sem.files {
		for i := range sf.docs {
			if d := &sf.docs[i]; d.vec == nil {
				d.vec = sem.vecs[d.hash] // nil until embedded
			}
			if sf.docs[i].vec != nil {
				n++
			}
		}
	}
	t.codes = make([]int8, 0, n*sem.dim)
	t.mult = make([]float32, 0, n)
	t.docs = make([]*semDoc, 0, n)
	t.file = make([]int32, 0, n)
	for p, sf := range sem.files {
		t.paths = append(t.paths, p)
		for i := range sf.docs {
			d := &sf.docs[i]
			if d.vec == nil || len(d.vec.codes) != sem.dim {
				continue
			}
			t.codes = append(t.codes, d.vec.codes...)
			t.mult = append(t.mult, d.vec.scale*d.vec.inv)
			t.docs = append(t.docs, d)
			t.file = append(t.file, int32(len(t.paths)-1))
		}
	}
	sem.table = t
	return t
}

// semFile is what semantic search knows of one indexed file.
type semFile struct {
	of   *indexed // the reading of the file it was made from
	docs []semDoc
}

// semDoc is one document of a file.
type semDoc struct {
	pos  int
	date string
	hash [32]byte
	vec  *qvec // sem.vecs[hash], once rank has looked it up
}

// modelOf returns the Embedder's model name, "" when it has none.
func modelOf(e Embedder) string {
	if m, ok := e.(interface{ Model() string }); ok {
		return m.Model()
	}
	return ""
}

// floorOf returns the similarity floor of the Embedder.
func floorOf(e Embedder) float64 {
	if f, ok := e.(interface{ Floor() float64 }); ok {
		if v := f.Floor(); v > 0 && v < 1 {
			return v
		}
	}
	return defaultFloor
}

// cacheName is the name of the cache object of model: the hash keeps any
// model name ("nomic-embed-text:latest") a valid file name everywhere.
func cacheName(model string) string {
	h := sha256.Sum256([]byte(model))
	return cacheDir + "/vectors-" + hex.EncodeToString(h[:8]) + ".bin"
}

// embedText is the part of a document that is embedded: its first
// embedChars characters, less the blank lines that end an entry followed
// by another (so that an append does not change the entry before it).
func embedText(doc string) string {
	doc = strings.TrimRight(doc, " \t\r\n")
	n := 0
	for i := range doc {
		if n == embedChars {
			return doc[:i]
		}
		n++
	}
	return doc
}

// searchSemantic is Search with an Embedder and a query with words: it
// prepares under the index's mutex, embeds with the mutex let go, ranks
// under it again, and saves the cache, if it changed, after. When the
// Embedder's vectors turn out to be of another length than the cache's
// (another model), the cache is dropped and the search done once more, so
// that it embeds every document.
func (s *Store) searchSemantic(ctx context.Context, query string, o SearchOptions) ([]SearchHit, error) {
	const op = "search"
	x := &s.search
	for round := 0; ; round++ {
		x.mu.Lock()
		sem, err := s.prepareSemantic(ctx)
		if err != nil {
			x.mu.Unlock()
			return nil, hostErr(op, "", err)
		}
		hashes := make([][32]byte, 0, len(sem.missing))
		texts := make([]string, 0, len(sem.missing))
		for h, t := range sem.missing {
			hashes = append(hashes, h)
			texts = append(texts, t)
		}
		x.mu.Unlock()

		qv, got, embedErr := embedAll(ctx, s.opts.Embedder, query, texts)

		x.mu.Lock()
		if x.sem != sem || x.files == nil {
			// The index was released, or another search rebuilt it, while
			// this one embedded: take it as it is now.
			if sem, err = s.prepareSemantic(ctx); err != nil {
				x.mu.Unlock()
				return nil, hostErr(op, "", err)
			}
		} else {
			sem.sync(x.idx, x.dict, x.files) // a search of the latest entries may have refreshed the index
		}
		if qv != nil && len(qv) != sem.dim && sem.reset(len(qv)) && round == 0 {
			x.mu.Unlock()
			continue
		}
		for i, v := range got {
			sem.add(hashes[i], v)
		}
		if err := ctx.Err(); err != nil {
			x.mu.Unlock() // the vectors got are kept, for the next search to save
			return nil, hostErr(op, "", err)
		}
		var out []SearchHit
		if embedErr == nil {
			out = s.fuse(sem, query, qv, o)
		} else {
			out = s.keyword(query, o)
		}
		s.idleLater()
		save := sem.toSave()
		x.mu.Unlock()

		if save != nil {
			s.saveCache(ctx, sem, save)
		}
		return out, nil
	}
}

// prepareSemantic brings the index up to date and the semantic state with
// it, reading the cache when the index was just built. The caller holds
// s.search.mu.
func (s *Store) prepareSemantic(ctx context.Context) (*semantic, error) {
	x := &s.search
	if err := s.refresh(ctx); err != nil {
		return nil, err
	}
	if x.sem == nil {
		sem, err := s.loadCache(ctx)
		if err != nil {
			return nil, err
		}
		x.sem = sem
	}
	x.sem.sync(x.idx, x.dict, x.files)
	return x.sem, nil
}

// loadCache reads the cache object of the Embedder's model. A cache that
// is missing, cannot be read or is corrupt gives an empty one, which the
// next save replaces; only a done context or a closed store is an error.
func (s *Store) loadCache(ctx context.Context) (*semantic, error) {
	model := modelOf(s.opts.Embedder)
	sem := &semantic{
		model:   model,
		name:    cacheName(model),
		vecs:    map[[32]byte]*qvec{},
		files:   map[string]*semFile{},
		missing: map[[32]byte]string{},
	}
	c, err := s.b.Read(ctx, sem.name, -1)
	switch {
	case classify(err) == faultStopped:
		return nil, err
	case err != nil:
		return sem, nil
	}
	sem.version = c.Version
	if dim, vecs, ok := decodeCache(c.Data, model); ok {
		sem.dim, sem.vecs = dim, vecs
	} else {
		sem.dirty = true // replace it at the next save
	}
	return sem, nil
}

// sync makes the semantic state follow the index's files: a file read
// again since (a new *indexed) has its documents hashed anew, one gone is
// forgotten. Documents whose hash has no vector become missing. The caller
// holds s.search.mu.
func (sem *semantic) sync(idx *search.Index, dict *textpack.Dict, files map[string]*indexed) {
	changed := false
	for p, f := range files {
		if sf := sem.files[p]; sf != nil && sf.of == f {
			continue
		}
		changed = true
		// The dates are the index's: the documents it holds of p, as
		// Latest lists them, so that the file need not be parsed again.
		dates := map[int]string{}
		for _, h := range idx.Latest(0, &search.Filter{File: func(file string) bool { return file == p }}) {
			dates[h.Pos] = h.Date
		}
		sf := &semFile{of: f, docs: make([]semDoc, len(f.docs))}
		var buf []byte
		for i, d := range f.docs {
			buf = f.docText(dict, i, buf[:0])
			text := embedText(string(buf))
			h := sha256.Sum256([]byte(text))
			sf.docs[i] = semDoc{pos: int(d.line), date: dates[int(d.line)], hash: h}
			if sem.vecs[h] == nil {
				sem.missing[h] = text
			}
		}
		sem.files[p] = sf
		sem.table = nil
	}
	for p := range sem.files {
		if files[p] == nil {
			delete(sem.files, p)
			sem.table = nil
			changed = true
		}
	}
	if !changed {
		return
	}
	// Documents changed or went: a vector or missing text no document
	// uses any more is dropped, and the cache saved without it.
	used := sem.used()
	for h := range sem.missing {
		if !used[h] {
			delete(sem.missing, h)
		}
	}
	for h := range sem.vecs {
		if !used[h] {
			sem.dirty = true
			break
		}
	}
}

// used returns the hashes of the documents there are.
func (sem *semantic) used() map[[32]byte]bool {
	used := map[[32]byte]bool{}
	for _, sf := range sem.files {
		for _, d := range sf.docs {
			used[d.hash] = true
		}
	}
	return used
}

// reset makes dim the length of the vectors, for an Embedder that gives
// vectors of that length, and drops those of another length: they came
// from another model. Every document then becomes missing at the next
// sync. It reports whether there were vectors to drop.
func (sem *semantic) reset(dim int) bool {
	sem.dim = dim
	if len(sem.vecs) == 0 {
		return false // the first vectors
	}
	clear(sem.vecs)
	clear(sem.files)
	clear(sem.missing)
	sem.dirty = true
	sem.table = nil
	return true
}

// add keeps v, of length sem.dim, as the vector of the text hashed h.
func (sem *semantic) add(h [32]byte, v []float32) {
	sem.vecs[h] = quantize(unit(v))
	sem.table = nil
	delete(sem.missing, h)
	sem.dirty = true
}

// unit returns a copy of v scaled to length 1, or zeros when v has no
// finite, positive length (which no similarity then reaches the floor).
func unit(v []float32) []float32 {
	var sum float64
	for _, f := range v {
		sum += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	n := math.Sqrt(sum)
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return out
	}
	for i, f := range v {
		out[i] = float32(float64(f) / n)
	}
	return out
}

// embedAll embeds the query and texts, embedBatch texts a call, the query
// first. It returns the query's vector, the vectors of texts got before any
// error (in the order of texts), and the error: an Embedder's, or one for
// vectors not one per text or not all of one length.
func embedAll(ctx context.Context, e Embedder, query string, texts []string) (qv []float32, got [][]float32, err error) {
	batch := append([]string{query}, texts[:min(len(texts), embedBatch-1)]...)
	texts = texts[len(batch)-1:]
	for len(batch) > 0 {
		vs, err := e.Embed(ctx, batch)
		if err != nil {
			return qv, got, fmt.Errorf("embed: %w", err)
		}
		if len(vs) != len(batch) {
			return qv, got, fmt.Errorf("embed: %d vectors for %d texts", len(vs), len(batch))
		}
		n := len(qv)
		if qv == nil {
			n = len(vs[0])
		}
		for _, v := range vs {
			if len(v) != n || n == 0 {
				return qv, got, fmt.Errorf("embed: vectors of %d and %d numbers", n, len(v))
			}
			if n > maxDim {
				return qv, got, fmt.Errorf("embed: vectors of %d numbers, over %d", n, maxDim)
			}
		}
		if qv == nil {
			qv, vs = unit(vs[0]), vs[1:]
		}
		got = append(got, vs...)
		batch = texts[:min(len(texts), embedBatch)]
		texts = texts[len(batch):]
	}
	return qv, got, nil
}

// keyword is the search of the keyword index alone. The caller holds
// s.search.mu, with the index up to date.
func (s *Store) keyword(query string, o SearchOptions) []SearchHit {
	return s.render(s.search.idx.Search(query, o.Limit, o.filter()), query)
}

// fuse ranks by reciprocal rank fusion of the BM25 ranking and the cosine
// ranking (less the documents under the floor), keeps the better of two
// hits whose word sets are near-duplicates, and renders the first
// o.Limit. The caller holds s.search.mu.
func (s *Store) fuse(sem *semantic, query string, qv []float32, o SearchOptions) []SearchHit {
	depth := max(minDepth, 4*o.Limit)
	f := o.filter()
	type key struct {
		file string
		pos  int
	}
	scores := map[key]*search.Hit{}
	add := func(rank int, h search.Hit) {
		k := key{h.File, h.Pos}
		if scores[k] == nil {
			scores[k] = &search.Hit{File: h.File, Pos: h.Pos, Date: h.Date}
		}
		scores[k].Score += 1 / float64(rrfK+rank+1)
	}
	for r, h := range s.search.idx.Search(query, depth, f) {
		add(r, h)
	}
	for r, h := range sem.rank(qv, floorOf(s.opts.Embedder), o, depth) {
		add(r, h)
	}
	fused := make([]search.Hit, 0, len(scores))
	for _, h := range scores {
		fused = append(fused, *h)
	}
	slices.SortFunc(fused, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return cmp.Compare(a.Pos, b.Pos)
	})
	var kept []search.Hit
	var words [][]uint64
	for _, h := range fused {
		if len(kept) == o.Limit {
			break
		}
		w := search.TermSet(nil, s.docText(h.File, h.Pos))
		if slices.ContainsFunc(words, func(k []uint64) bool { return wordJaccard(w, k) > dupJaccard }) {
			continue
		}
		kept = append(kept, h)
		words = append(words, w)
	}
	return s.render(kept, query)
}

// rank returns the documents o lets through whose similarity to the unit
// vector qv is at least floor, best first (ties by path, then line), at
// most depth of them, with the similarity as Score. The similarity is the
// exact cosine of qv with the stored vectors; an 8-bit scan picks the
// candidates for it, max(minCandidates, 2·depth) of them, so that the
// order returned is the exact one unless a document outside them, by 8-bit
// estimate, beats one inside by exact cosine: an error of the rounding
// (under 1% of a similarity) against a margin of hundreds of places.
func (sem *semantic) rank(qv []float32, floor float64, o SearchOptions, depth int) []search.Hit {
	qq := quantizeCodes(qv)
	top := candidates{max: max(minCandidates, 2*depth)}
	t := sem.scan()
	keep := make([]bool, len(t.paths))
	for i, p := range t.paths {
		keep[i] = strings.HasPrefix(p, o.Path)
	}
	dim := len(qq)
	for i, d := range t.docs {
		if !keep[t.file[i]] || !inRange(d.date, o.Since, o.Until) {
			continue
		}
		top.push(float32(dot8(qq, t.codes[i*dim:(i+1)*dim]))*t.mult[i], t.paths[t.file[i]], d)
	}
	var hits []search.Hit
	for _, c := range top.h {
		if sim := dotq(qv, c.doc.vec); sim >= floor {
			hits = append(hits, search.Hit{File: c.path, Pos: c.doc.pos, Date: c.doc.date, Score: sim})
		}
	}
	slices.SortFunc(hits, func(a, b search.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return cmp.Compare(a.Pos, b.Pos)
	})
	return hits[:min(len(hits), depth)]
}

// candidates keeps the max documents of highest estimate pushed: a heap
// with the lowest on top.
type candidates struct {
	max int
	h   []candidate
}

type candidate struct {
	est  float32
	path string
	doc  *semDoc
}

func (c *candidates) push(est float32, path string, doc *semDoc) {
	h := c.h
	if len(h) == c.max {
		if est <= h[0].est {
			return
		}
		h[0] = candidate{est, path, doc}
		for i := 0; ; {
			m, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && h[l].est < h[m].est {
				m = l
			}
			if r < len(h) && h[r].est < h[m].est {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	h = append(h, candidate{est, path, doc})
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].est <= h[i].est {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	c.h = h
}

// dot8Go is the dot product of two vectors of 8-bit numbers of one length,
// in integers: exact. Eight at a time, on slices whose length the compiler
// knows, so that it checks no index in the loop. dot8 is this, or on amd64
// the same with SSE2 instructions, ten times faster.
func dot8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(x[0])*int32(y[0]) + int32(x[4])*int32(y[4])
		s1 += int32(x[1])*int32(y[1]) + int32(x[5])*int32(y[5])
		s2 += int32(x[2])*int32(y[2]) + int32(x[6])*int32(y[6])
		s3 += int32(x[3])*int32(y[3]) + int32(x[7])*int32(y[7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// dotq is the cosine of the unit vector q with the stored vector v, in
// float64; two sums of each kind, so that the processor overlaps them.
func dotq(q []float32, v *qvec) float64 {
	codes, res := v.codes[:len(q)], v.res[:len(q)]
	var sc0, sc1, sr0, sr1 float64
	i := 0
	for ; i+2 <= len(q); i += 2 {
		f0, f1 := float64(q[i]), float64(q[i+1])
		sc0 += f0 * float64(codes[i])
		sc1 += f1 * float64(codes[i+1])
		sr0 += f0 * float64(res[i])
		sr1 += f1 * float64(res[i+1])
	}
	if i < len(q) {
		sc0 += float64(q[i]) * float64(codes[i])
		sr0 += float64(q[i]) * float64(res[i])
	}
	return (float64(v.scale)*(sc0+sc1) + float64(v.rscale)*(sr0+sr1)) * float64(v.inv)
}

// inRange reports whether a document dated date passes Since and Until, as
// search.Filter has it.
func inRange(date, since, until string) bool {
	if since == "" && until == "" {
		return true
	}
	if date == "" || date < since {
		return false
	}
	return until == "" || date <= until || strings.HasPrefix(date, until)
}

// docText returns the text of the document at line pos of the indexed file
// p. The caller holds s.search.mu.
func (s *Store) docText(p string, pos int) string {
	f := s.search.files[p]
	i, found := f.find(pos)
	if !found {
		return ""
	}
	return string(f.docText(s.search.dict, i, nil))
}

// wordJaccard returns |a ∩ b| / |a ∪ b| of two sorted sets, 0 when both
// are empty.
func wordJaccard(a, b []uint64) float64 {
	both := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			both++
			i++
			j++
		}
	}
	union := len(a) + len(b) - both
	if union == 0 {
		return 0
	}
	return float64(both) / float64(union)
}

// toSave returns the cache as it should be saved, or nil when the cache
// object has it already; the vectors of documents there are no longer are
// dropped first. The caller holds s.search.mu.
func (sem *semantic) toSave() []byte {
	if !sem.dirty {
		return nil
	}
	sem.dirty = false
	used := sem.used()
	for h := range sem.vecs {
		if !used[h] {
			delete(sem.vecs, h)
		}
	}
	return encodeCache(sem.model, sem.dim, sem.vecs)
}

// saveCache writes data as the cache object, only if it is still at the
// version this Store last read or wrote, waiting for the backend's lock no
// longer than Options.LockTimeout. When another Store wrote it since, their
// vectors for the documents there are join these, and the merge is
// written once more; when that loses too, the next search saves. Nothing
// here fails the search: the cache only saves work.
func (s *Store) saveCache(ctx context.Context, sem *semantic, data []byte) {
	x := &s.search
	for try := 0; ; try++ {
		x.mu.Lock()
		match := sem.version
		x.mu.Unlock()
		var v string
		wctx, cancel := context.WithTimeout(ctx, s.opts.LockTimeout)
		err := s.locked(wctx, "search", sem.name, sem.name, func(ctx context.Context, h Held) (err error) {
			v, err = s.commit(ctx, h, &change{op: "search", t: target{path: sem.name, fact: -1, cache: true}, ver: match, data: data})
			return err
		})
		cancel()
		x.mu.Lock()
		switch {
		case err == nil:
			sem.version = v
		case errors.Is(err, ErrChanged) && try == 0:
			x.mu.Unlock()
			c, rerr := s.b.Read(ctx, sem.name, -1)
			x.mu.Lock()
			if rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
				sem.version = c.Version
				if dim, vecs, ok := decodeCache(c.Data, sem.model); ok && dim == sem.dim {
					used := sem.used()
					for h, v := range vecs {
						if used[h] && sem.vecs[h] == nil {
							sem.vecs[h] = v
							sem.table = nil
							delete(sem.missing, h)
						}
					}
				}
				sem.dirty = true
				data = sem.toSave()
				x.mu.Unlock()
				continue
			}
		case errors.Is(err, ErrChanged):
			sem.dirty = true
		}
		x.mu.Unlock()
		return
	}
}

// encodeCache lays out the cache object: cacheMagic, the model's name, the
// vectors' length and number (uvarints), each vector as the SHA-256 of its
// text, its two scales (float32, little-endian) and its two sets of 8-bit
// numbers (see qvec), sorted by hash, then the CRC-32 (IEEE) of all that:
// half the size of version 1's float32s.
func encodeCache(model string, dim int, vecs map[[32]byte]*qvec) []byte {
	hashes := make([][32]byte, 0, len(vecs))
	for h := range vecs {
		hashes = append(hashes, h)
	}
	slices.SortFunc(hashes, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	b := make([]byte, 0, len(cacheMagic)+len(model)+3*binary.MaxVarintLen64+len(vecs)*(32+8+2*dim)+4)
	b = append(b, cacheMagic...)
	b = binary.AppendUvarint(b, uint64(len(model)))
	b = append(b, model...)
	b = binary.AppendUvarint(b, uint64(dim))
	b = binary.AppendUvarint(b, uint64(len(vecs)))
	for _, h := range hashes {
		v := vecs[h]
		b = append(b, h[:]...)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v.scale))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v.rscale))
		for _, c := range v.codes {
			b = append(b, byte(c))
		}
		for _, c := range v.res {
			b = append(b, byte(c))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// decodeCache reads a cache object of model, of either version; ok is false
// for one that is not whole, of another model, or corrupt. Version 1's
// float vectors are made 8-bit as they are read. A scale that is not a
// finite number of 0 or more makes the object corrupt.
func decodeCache(b []byte, model string) (dim int, vecs map[[32]byte]*qvec, ok bool) {
	size := 2 // bytes a number
	switch {
	case len(b) < len(cacheMagic)+4:
		return 0, nil, false
	case bytes.HasPrefix(b, []byte(cacheMagicV1)):
		size = 4
	case !bytes.HasPrefix(b, []byte(cacheMagic)):
		return 0, nil, false
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return 0, nil, false
	}
	r := body[len(cacheMagic):]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(r)
		if n <= 0 {
			return 0, false
		}
		r = r[n:]
		return v, true
	}
	n, ok := next()
	if !ok || n != uint64(len(model)) || uint64(len(r)) < n || string(r[:n]) != model {
		return 0, nil, false
	}
	r = r[n:]
	d, ok1 := next()
	count, ok2 := next()
	head := uint64(32) // the hash, and in version 2 the scales
	if size == 2 {
		head += 8
	}
	if !ok1 || !ok2 || d == 0 || d > maxDim || count > uint64(len(r)) || count*(head+uint64(size)*d) != uint64(len(r)) {
		return 0, nil, false
	}
	dim = int(d)
	vecs = make(map[[32]byte]*qvec, count)
	f := make([]float32, dim)
	for range count {
		h := [32]byte(r[:32])
		nums := r[head : head+uint64(size*dim)]
		var v *qvec
		if size == 4 {
			for i := range f {
				f[i] = math.Float32frombits(binary.LittleEndian.Uint32(nums[4*i:]))
			}
			v = quantize(unit(f))
		} else {
			both := make([]int8, 2*dim)
			v = &qvec{codes: both[:dim:dim], res: both[dim:]}
			v.scale = math.Float32frombits(binary.LittleEndian.Uint32(r[32:]))
			v.rscale = math.Float32frombits(binary.LittleEndian.Uint32(r[36:]))
			if !(v.scale >= 0 && v.rscale >= 0) || math.IsInf(float64(v.scale), 0) || math.IsInf(float64(v.rscale), 0) {
				return 0, nil, false
			}
			for i, c := range nums {
				both[i] = int8(c)
			}
			v.norm()
		}
		vecs[h] = v
		r = r[head+uint64(size*dim):]
	}
	return dim, vecs, true
}
