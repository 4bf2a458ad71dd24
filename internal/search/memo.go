package search

import (
	"encoding/binary"
	"math/bits"
)

// memo maps the words of one Set call to their term IDs (or -1 for a
// stopword), so that each distinct word of a file is stemmed and interned
// once. It is an open-addressing hash table over an arena of key bytes,
// comparing keys of up to eight bytes — most words — without leaving the
// slot: every token of the corpus is looked up here, and a map[string] is
// about twice as slow at it.
type memo struct {
	slots []memoSlot // a power of two long, at most half full
	arena []byte     // the keys, end to end
	n     int
}

type memoSlot struct {
	head uint64 // the first eight bytes of the key, zero-padded
	hash uint32
	id   int32
	off  uint32 // key at arena[off:off+size]
	size uint32 // 0 for an empty slot: keys are never empty
}

// reset empties m, keeping its memory unless it grew past maxMemo words.
func (m *memo) reset() {
	if len(m.slots) > 2*maxMemo {
		*m = memo{}
	}
	clear(m.slots)
	m.arena, m.n = m.arena[:0], 0
}

// find returns the slot for key, which holds key or is the empty slot where
// key goes, with key's head and hash.
func (m *memo) find(key []byte) (s *memoSlot, head uint64, h uint32) {
	if len(m.slots) == 0 {
		m.slots = make([]memoSlot, 1024)
	}
	head, h = hash(key)
	size := uint32(len(key))
	mask := uint32(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s = &m.slots[i]
		if s.size == 0 || s.hash == h && s.size == size && s.head == head &&
			(size <= 8 || string(m.arena[s.off+8:s.off+size]) == string(key[8:])) {
			return s, head, h
		}
	}
}

// get returns the ID remembered for key.
func (m *memo) get(key []byte) (id int32, ok bool) {
	s, _, _ := m.find(key)
	return s.id, s.size != 0
}

// put remembers id for key, which must not be in m yet.
func (m *memo) put(key []byte, id int32) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	s, head, h := m.find(key)
	*s = memoSlot{head: head, hash: h, id: id, off: uint32(len(m.arena)), size: uint32(len(key))}
	m.arena = append(m.arena, key...)
	m.n++
}

func (m *memo) grow() {
	old := m.slots
	m.slots = make([]memoSlot, max(1024, 2*len(old)))
	mask := uint32(len(m.slots) - 1)
	for _, s := range old {
		if s.size == 0 {
			continue
		}
		i := s.hash & mask
		for m.slots[i].size != 0 {
			i = (i + 1) & mask
		}
		m.slots[i] = s
	}
}

// hash returns the first eight bytes of b, zero-padded, and a fast
// non-cryptographic hash of b (a multiply-fold over eight-byte words).
func hash(b []byte) (head uint64, h uint32) {
	switch {
	case len(b) >= 8:
		head = binary.LittleEndian.Uint64(b)
	case cap(b) >= 8:
		// One load instead of a loop; the bytes past the key are masked.
		head = binary.LittleEndian.Uint64(b[:8]) & (1<<(8*len(b)) - 1)
	default:
		for i, c := range b {
			head |= uint64(c) << (8 * i)
		}
	}
	x := head ^ uint64(len(b))*0x9e3779b97f4a7c15
	for b := b[min(8, len(b)):]; len(b) > 0; b = b[min(8, len(b)):] {
		var w uint64
		if len(b) >= 8 {
			w = binary.LittleEndian.Uint64(b)
		} else {
			for i, c := range b {
				w |= uint64(c) << (8 * i)
			}
		}
		hi, lo := bits.Mul64(x^w, 0xbf58476d1ce4e5b9)
		x = hi ^ lo
	}
	hi, lo := bits.Mul64(x, 0x94d049bb133111eb)
	return head, uint32(hi ^ lo)
}
