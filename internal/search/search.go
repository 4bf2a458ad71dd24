// Package search is an in-memory BM25 keyword index over short documents
// grouped by file: the fact lines and episode entries of a memory root.
//
// An [Index] holds, per file, the terms of that file's documents; the caller
// replaces a file's documents whenever the file changes ([Index.Set]) and
// drops them when it goes away ([Index.Remove]). The corpus statistics BM25
// needs — the number of documents, their total length and each term's
// document frequency — are kept up to date on every change, so replacing one
// file costs work in proportion to that file alone, and an index changed file
// by file scores exactly as one built from scratch from the same files.
//
// Terms come from [Tokenize]: lower-cased words minus English stopwords,
// stemmed, and overlapping bigrams of CJK text. [Index.Search] ranks by
// Okapi BM25 with k1 = 1.2, b = 0.75 and Lucene's idf,
// log(1 + (N − n + 0.5)/(n + 0.5)); a document's length counts all its
// words, stopwords included, as SQLite FTS5 counts it (leaving them out
// favours long documents full of them). A document matches when it holds
// any query term. Results are ordered by score, ties by file then position, so
// equal inputs give equal outputs. [Index.Latest] lists the dated documents
// newest first, for a query with no words.
//
// Nothing here does I/O, and the index keeps no document text: only term
// IDs, counts, positions and dates. It is laid out for memory: a file's
// postings are one byte string of delta-coded varints (most postings take
// one byte: the gap to the previous document and the term's frequency),
// and a document's position, date and length take 12 bytes.
package search

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"sync"
)

// BM25 parameters: term frequency saturation and length normalisation.
const (
	k1 = 1.2
	b  = 0.75
)

// maxTF caps a stored term frequency, so that it fits in a byte. BM25 has
// saturated by then: for a document up to eight times the average length,
// the term's score is within 3% of what any higher frequency would give.
// Only a term repeated hundreds of times in a far longer document (a huge
// code block) scores lower than it would uncapped.
const maxTF = math.MaxUint8

// Doc is one document of a file: a unit that is found and returned whole.
type Doc struct {
	// Pos identifies the document within its file and orders tied results;
	// the store uses the 1-based line where the entry or bullet starts. It
	// is kept as a uint32: from 0 to 4,294,967,295.
	Pos int
	// Date is the document's date as "YYYY-MM-DD", or "" when it has none
	// (any other form counts as none). It is what Filter's date range and
	// Latest look at.
	Date string
	// Text is what is indexed. The index keeps its terms, never the text.
	Text string
}

// Hit is a document found by [Index.Search] or [Index.Latest].
type Hit struct {
	File  string  // the file given to Set
	Pos   int     // the Doc's Pos
	Date  string  // the Doc's Date
	Score float64 // BM25 score; 0 from Latest
}

// Filter restricts the documents [Index.Search] and [Index.Latest] return.
// A nil *Filter, like the zero value, lets every document through.
type Filter struct {
	// File, when not nil, keeps only the files it returns true for. It is
	// called at most once per file and call to Search or Latest.
	File func(file string) bool
	// Since and Until, when not empty, keep only documents whose Date lies
	// in the range, compared as strings: Since <= Date, and Date <= Until
	// or Date starting with Until (so Until "2026-02" keeps all of
	// February). A document without a date is then left out.
	Since, Until string
}

// keepFile reports whether f lets the documents of file through.
func (f *Filter) keepFile(file string) bool {
	return f == nil || f.File == nil || f.File(file)
}

// keepDate reports whether f lets a document dated d (packed, 0 for none)
// through.
func (f *Filter) keepDate(d uint32) bool {
	if f == nil || f.Since == "" && f.Until == "" {
		return true
	}
	if d == 0 {
		return false
	}
	var buf [10]byte
	date := string(appendDate(buf[:0], d))
	if date < f.Since {
		return false
	}
	return f.Until == "" || date <= f.Until || strings.HasPrefix(date, f.Until)
}

// packDate packs a date "YYYY-MM-DD" as the number YYYYMMDD, which orders
// as the string does; 0 for anything else.
func packDate(s string) uint32 {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0
	}
	var n uint32
	for i := range 10 {
		if i == 4 || i == 7 {
			continue
		}
		c := s[i]
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint32(c-'0')
	}
	return n
}

// appendDate appends the date packDate packed as d to b.
func appendDate(b []byte, d uint32) []byte {
	y, m, day := d/10000, d/100%100, d%100
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-', byte('0'+day/10), byte('0'+day%10))
}

// dateString is the date packed as d, "" for 0.
func dateString(d uint32) string {
	if d == 0 {
		return ""
	}
	var buf [10]byte
	return string(appendDate(buf[:0], d))
}

// Index is an in-memory BM25 index of documents grouped by file. The zero
// value is an empty index ready to use.
//
// Search, Latest and Len may run concurrently with each other; Set and
// Remove change the index and must not run concurrently with any other
// method (guard the index with a sync.RWMutex). An Index must not be copied
// after first use.
type Index struct {
	files map[string]*segment
	segs  []*segment // the values of files, for iteration; order is not significant

	terms map[string]uint32 // term → ID
	names []string          // ID → term, "" when the ID is free
	df    []uint32          // ID → number of documents holding the term
	free  []uint32          // IDs of terms no document holds any more

	docs   int // number of documents
	length int // total length of the documents, in tokens, stopwords included

	scratch sync.Pool // *searcher
}

// segment holds the documents of one file: per document its position, date
// and length, and an inverted index from term ID to postings.
type segment struct {
	name   string
	slot   int    // index in Index.segs
	length int    // sum of lens
	newest uint32 // the latest of dates

	pos   []uint32
	dates []uint32 // packed by packDate; 0 for none
	lens  []uint32 // in tokens, stopwords included: a document's length is all its words

	// The postings of term terms[i] are post[offs[i]:offs[i+1]]: for each
	// document holding the term, by local document number ascending, a
	// uvarint of the gap from the previous one (from 0 for the first)
	// shifted left by 3 and or-ed with the term's frequency, or with 7 and
	// a byte of frequency after the uvarint for a frequency of 7 or more.
	terms []uint32 // sorted
	offs  []uint32
	post  []byte
}

// tfInline is the highest frequency a posting's uvarint holds itself.
const tfInline = 6

// appendPosting appends the posting of document gap documents after the
// previous one, with frequency tf, to b.
func appendPosting(b []byte, gap uint32, tf uint8) []byte {
	if tf <= tfInline {
		return binary.AppendUvarint(b, uint64(gap)<<3|uint64(tf))
	}
	return append(binary.AppendUvarint(b, uint64(gap)<<3|7), tf)
}

// nextPosting reads the posting at the start of p, as appendPosting wrote
// it: the gap, the frequency and the bytes it took.
func nextPosting(p []byte) (gap uint32, tf uint8, n int) {
	var v uint64
	if p[0] < 0x80 {
		v, n = uint64(p[0]), 1
	} else {
		v, n = binary.Uvarint(p)
	}
	if tf = uint8(v & 7); tf == 7 {
		tf = p[n]
		n++
	}
	return uint32(v >> 3), tf, n
}

// Len returns the number of documents in the index.
func (x *Index) Len() int { return x.docs }

// Set makes docs the documents of file, replacing any it had. An empty docs
// removes the file, as Remove does. The index keeps neither docs nor the
// strings in them. The cost is proportional to the size of docs (and of the
// file's previous documents); other files are not touched.
func (x *Index) Set(file string, docs []Doc) {
	if len(docs) == 0 {
		x.Remove(file)
		return
	}
	if x.files == nil {
		x.files = make(map[string]*segment)
		x.terms = make(map[string]uint32)
	}
	seg := x.newSegment(docs)
	if old := x.files[file]; old != nil {
		seg.name, seg.slot = old.name, old.slot
		x.drop(old)
	} else {
		seg.name, seg.slot = strings.Clone(file), len(x.segs)
		x.segs = append(x.segs, nil)
	}
	x.segs[seg.slot] = seg
	x.files[seg.name] = seg
}

// Remove removes the documents of file. Removing a file the index does not
// hold does nothing.
func (x *Index) Remove(file string) {
	old := x.files[file]
	if old == nil {
		return
	}
	x.drop(old)
	delete(x.files, file)
	last := x.segs[len(x.segs)-1]
	last.slot = old.slot
	x.segs[old.slot] = last
	x.segs[len(x.segs)-1] = nil
	x.segs = x.segs[:len(x.segs)-1]
}

// drop subtracts old's documents from the corpus statistics and frees the
// IDs of terms no document holds any more.
func (x *Index) drop(old *segment) {
	for i, id := range old.terms {
		x.df[id] -= old.count(i)
		if x.df[id] == 0 {
			delete(x.terms, x.names[id])
			x.names[id] = ""
			x.free = append(x.free, id)
		}
	}
	x.docs -= len(old.pos)
	x.length -= old.length
}

// builder is the scratch space of Set. Builders are pooled, shared by
// every Index, so that an index does not keep one (some 30 KB) between
// calls: a server holding many small indexes would pay that for each.
// Between calls a builder's cnt is all zeros, whatever index used it.
type builder struct {
	tok  tokenizer
	memo memo         // word → term ID, or -1 for a stopword, in this Set
	key  []byte       // a word before term changes it
	ids  []uint32     // term IDs of one document
	trip []occurrence // (term, document, frequency) of a whole file
	cnt  []uint32     // by term ID: occurrences in a document, then postings in the file
	uniq []uint32     // distinct term IDs of a document, then of the file
	docs []uint32     // the file's postings, grouped by term: documents
	tfs  []uint8      // and frequencies
	post []byte       // and encoded
}

// maxMemo bounds the words a builder keeps room for between calls.
const maxMemo = 1 << 14

// maxScratch bounds the postings a builder keeps room for between calls.
const maxScratch = 1 << 20

var builders = sync.Pool{New: func() any { return new(builder) }}

type occurrence struct {
	term, doc uint32
	tf        uint8
}

// newSegment builds the segment of docs (without name or slot) and adds its
// documents to the corpus statistics.
func (x *Index) newSegment(docs []Doc) *segment {
	bd := builders.Get().(*builder)
	defer builders.Put(bd)
	// One allocation for the three per-document columns.
	cols := make([]uint32, 3*len(docs))
	seg := &segment{
		pos:   cols[:len(docs):len(docs)],
		dates: cols[len(docs) : 2*len(docs) : 2*len(docs)],
		lens:  cols[2*len(docs):],
	}
	// Term IDs are only stable while no file is dropped: remember words for
	// this call only. Files repeat their words, so most are looked up once.
	bd.memo.reset()
	bd.trip = bd.trip[:0]
	for d, doc := range docs {
		seg.pos[d] = uint32(doc.Pos)
		seg.dates[d] = packDate(doc.Date)
		seg.newest = max(seg.newest, seg.dates[d])
		ids := bd.ids[:0]
		stop := 0
		bd.tok.scan(doc.Text, func(tok []byte, word bool) {
			if id, ok := bd.memo.get(tok); ok {
				if id >= 0 {
					ids = append(ids, uint32(id))
				} else {
					stop++
				}
				return
			}
			// CJK tokens and words never share a key: one holds only CJK
			// characters, the other none.
			bd.key = append(bd.key[:0], tok...)
			id := int32(-1)
			if !word {
				id = int32(x.intern(tok))
			} else if t, ok := term(tok); ok {
				id = int32(x.intern(t))
			}
			if id >= 0 {
				ids = append(ids, uint32(id))
			} else {
				stop++
			}
			bd.memo.put(bd.key, id)
		})
		bd.ids = ids
		seg.lens[d] = uint32(len(ids) + stop)
		seg.length += len(ids) + stop

		// Frequencies by counting; the order of a document's terms does not
		// matter, only that documents come in order.
		if n := len(x.df); len(bd.cnt) < n {
			bd.cnt = append(bd.cnt, make([]uint32, n-len(bd.cnt))...)
		}
		bd.uniq = bd.uniq[:0]
		for _, id := range ids {
			if bd.cnt[id] == 0 {
				bd.uniq = append(bd.uniq, id)
			}
			bd.cnt[id]++
		}
		for _, id := range bd.uniq {
			bd.trip = append(bd.trip, occurrence{term: id, doc: uint32(d), tf: uint8(min(bd.cnt[id], maxTF))})
			bd.cnt[id] = 0
		}
	}

	// Counting sort of the occurrences by term; they are already in
	// document order, which the sort keeps.
	bd.uniq = bd.uniq[:0]
	for _, o := range bd.trip {
		if bd.cnt[o.term] == 0 {
			bd.uniq = append(bd.uniq, o.term)
		}
		bd.cnt[o.term]++
	}
	slices.Sort(bd.uniq)
	seg.terms = slices.Clone(bd.uniq)
	seg.offs = make([]uint32, len(bd.uniq)+1)
	var at uint32
	for i, id := range bd.uniq {
		seg.offs[i] = at
		x.df[id] += bd.cnt[id]
		at += bd.cnt[id]
		bd.cnt[id] = seg.offs[i] // from here on: where the next posting goes
	}
	seg.offs[len(bd.uniq)] = at
	bd.docs = slices.Grow(bd.docs[:0], int(at))[:at]
	bd.tfs = slices.Grow(bd.tfs[:0], int(at))[:at]
	for _, o := range bd.trip {
		p := bd.cnt[o.term]
		bd.docs[p], bd.tfs[p] = o.doc, o.tf
		bd.cnt[o.term]++
	}
	// Each term's postings delta-coded; offs become byte offsets.
	bd.post = bd.post[:0]
	for i, id := range bd.uniq {
		lo, hi := seg.offs[i], bd.cnt[id]
		seg.offs[i] = uint32(len(bd.post))
		prev := uint32(0)
		for p := lo; p < hi; p++ {
			bd.post = appendPosting(bd.post, bd.docs[p]-prev, bd.tfs[p])
			prev = bd.docs[p]
		}
		bd.cnt[id] = 0
	}
	seg.offs[len(bd.uniq)] = uint32(len(bd.post))
	seg.post = slices.Clone(bd.post)
	if cap(bd.post) > maxScratch {
		bd.post, bd.docs, bd.tfs = nil, nil, nil // a huge file: let its scratch go
	}
	x.docs += len(docs)
	x.length += seg.length
	return seg
}

// count returns the number of postings of the i-th term of seg.
func (seg *segment) count(i int) uint32 {
	n := uint32(0)
	for p := seg.post[seg.offs[i]:seg.offs[i+1]]; len(p) > 0; n++ {
		_, _, k := nextPosting(p)
		p = p[k:]
	}
	return n
}

// intern returns the ID of term, giving it one if it is new.
func (x *Index) intern(term []byte) uint32 {
	if id, ok := x.terms[string(term)]; ok {
		return id
	}
	s := string(term)
	var id uint32
	if n := len(x.free); n > 0 {
		id = x.free[n-1]
		x.free = x.free[:n-1]
		x.names[id] = s
	} else {
		id = uint32(len(x.names))
		x.names = append(x.names, s)
		x.df = append(x.df, 0)
	}
	x.terms[s] = id
	return id
}

// searcher is the scratch space of one Search or Latest call, pooled.
type searcher struct {
	tok     tokenizer
	query   []queryTerm
	acc     []float64 // by local document number: score so far, 0 if untouched
	touched []uint32
	heap    []candidate
	segs    []*segment
}

type queryTerm struct {
	id  uint32
	idf float64
}

// candidate is a document competing for a place in the results.
type candidate struct {
	seg   *segment
	doc   uint32
	score float64
}

// Search returns the documents that hold any term of query, best first:
// by BM25 score descending, ties by file then Pos ascending. It returns at
// most limit hits, or all of them when limit <= 0, and only documents f lets
// through. A query with no indexed term (empty, only stopwords, or words no
// document holds) gives nil.
func (x *Index) Search(query string, limit int, f *Filter) []Hit {
	if x.docs == 0 {
		return nil
	}
	s, _ := x.scratch.Get().(*searcher)
	if s == nil {
		s = new(searcher)
	}
	defer x.scratch.Put(s)

	n := float64(x.docs)
	s.query = s.query[:0]
	s.tok.each(query, func(tok []byte) {
		id, ok := x.terms[string(tok)]
		if !ok || slices.ContainsFunc(s.query, func(q queryTerm) bool { return q.id == id }) {
			return
		}
		df := float64(x.df[id])
		s.query = append(s.query, queryTerm{id: id, idf: math.Log(1 + (n-df+0.5)/(df+0.5))})
	})
	if len(s.query) == 0 {
		return nil
	}

	// BM25 per posting: idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)).
	avglen := float64(x.length) / n
	c0, c1 := k1*(1-b), k1*b/avglen
	s.heap = s.heap[:0]
	for _, seg := range x.segs {
		if !f.keepFile(seg.name) {
			continue
		}
		if len(s.acc) < len(seg.pos) {
			s.acc = make([]float64, len(seg.pos))
		}
		acc, touched := s.acc, s.touched[:0]
		for _, q := range s.query {
			i, ok := slices.BinarySearch(seg.terms, q.id)
			if !ok {
				continue
			}
			d := uint32(0)
			for p := seg.post[seg.offs[i]:seg.offs[i+1]]; len(p) > 0; {
				// nextPosting, by hand: the one-byte case inline.
				v, n := uint64(p[0]), 1
				if v >= 0x80 {
					v, n = binary.Uvarint(p)
				}
				t := v & 7
				if t == 7 {
					t = uint64(p[n])
					n++
				}
				p = p[n:]
				d += uint32(v >> 3)
				tf := float64(t)
				if acc[d] == 0 {
					touched = append(touched, d)
				}
				acc[d] += q.idf * tf * (k1 + 1) / (tf + c0 + c1*float64(seg.lens[d]))
			}
		}
		for _, d := range touched {
			if f.keepDate(seg.dates[d]) {
				s.push(candidate{seg: seg, doc: d, score: acc[d]}, limit, byScore)
			}
			acc[d] = 0
		}
		s.touched = touched
	}
	return s.results(byScore)
}

// Latest returns the dated documents f lets through, newest first: by Date
// descending, ties by file then Pos descending (later in a file is newer).
// It returns at most limit hits, or all of them when limit <= 0. Hits have a
// zero Score. Documents without a date are left out.
func (x *Index) Latest(limit int, f *Filter) []Hit {
	s, _ := x.scratch.Get().(*searcher)
	if s == nil {
		s = new(searcher)
	}
	defer x.scratch.Put(s)

	// Files newest first, so that once limit hits are in, the files whose
	// newest date is older than the last hit can be skipped: with monthly
	// files, all but the last few.
	s.segs = s.segs[:0]
	for _, seg := range x.segs {
		if seg.newest != 0 && f.keepFile(seg.name) {
			s.segs = append(s.segs, seg)
		}
	}
	slices.SortFunc(s.segs, func(a, b *segment) int { return cmp.Compare(b.newest, a.newest) })
	s.heap = s.heap[:0]
	for _, seg := range s.segs {
		if limit > 0 && len(s.heap) == limit && seg.newest < s.heap[0].seg.dates[s.heap[0].doc] {
			break
		}
		for d, date := range seg.dates {
			if date != 0 && f.keepDate(date) {
				s.push(candidate{seg: seg, doc: uint32(d)}, limit, newest)
			}
		}
	}
	clear(s.segs)
	return s.results(newest)
}

// order is a ranking of candidates: negative when a comes before b.
type order func(a, b candidate) int

// byScore ranks Search results: by score descending, then by place.
func byScore(a, b candidate) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return byPlace(a, b)
}

// newest ranks Latest results: by date, then by place, both descending.
func newest(a, b candidate) int {
	if c := cmp.Compare(b.seg.dates[b.doc], a.seg.dates[a.doc]); c != 0 {
		return c
	}
	return byPlace(b, a)
}

// byPlace ranks by file, then Pos, then order in the file.
func byPlace(a, b candidate) int {
	if a.seg != b.seg {
		return strings.Compare(a.seg.name, b.seg.name)
	}
	if c := cmp.Compare(a.seg.pos[a.doc], b.seg.pos[b.doc]); c != 0 {
		return c
	}
	return cmp.Compare(a.doc, b.doc)
}

// push offers c for the results. With limit > 0, s.heap is a heap of the
// best limit candidates so far with the last of them, by rank, on top;
// otherwise it collects all.
func (s *searcher) push(c candidate, limit int, rank order) {
	h := s.heap
	if limit <= 0 {
		s.heap = append(h, c)
		return
	}
	if len(h) < limit {
		h = append(h, c)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if rank(h[i], h[p]) <= 0 {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		s.heap = h
		return
	}
	if rank(c, h[0]) >= 0 {
		return
	}
	h[0] = c
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && rank(h[l], h[m]) > 0 {
			m = l
		}
		if r < len(h) && rank(h[r], h[m]) > 0 {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// results turns the collected candidates into hits, best first.
func (s *searcher) results(rank order) []Hit {
	if len(s.heap) == 0 {
		return nil
	}
	slices.SortFunc(s.heap, rank)
	hits := make([]Hit, len(s.heap))
	for i, c := range s.heap {
		hits[i] = Hit{File: c.seg.name, Pos: int(c.seg.pos[c.doc]), Date: dateString(c.seg.dates[c.doc]), Score: c.score}
	}
	clear(s.heap) // let removed segments go
	return hits
}
