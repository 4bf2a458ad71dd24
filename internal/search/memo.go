package search

import "encoding/binary"

// memo maps the words of one Set call to their term IDs (or -1 for a
// stopword), so that each distinct word of a file is stemmed and interned
// once. It is an open-addressing hash table over an arena of key bytes:
// about three times faster than a map[string] here, where every token of
// the corpus is looked up, and it allocates nothing per word.
type memo struct {
	slots []memoSlot // a power of two long, at most half full
	arena []byte     // the keys, end to end
	n     int
}

type memoSlot struct {
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
// key goes, and key's hash.
func (m *memo) find(key []byte) (*memoSlot, uint32) {
	if len(m.slots) == 0 {
		m.slots = make([]memoSlot, 1024)
	}
	h := hash(key)
	mask := uint32(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &m.slots[i]
		if s.size == 0 || s.hash == h && string(m.arena[s.off:s.off+s.size]) == string(key) {
			return s, h
		}
	}
}

// get returns the ID remembered for key.
func (m *memo) get(key []byte) (id int32, ok bool) {
	s, _ := m.find(key)
	return s.id, s.size != 0
}

// put remembers id for key, which must not be in m yet.
func (m *memo) put(key []byte, id int32) {
	if 2*(m.n+1) > len(m.slots) {
		m.grow()
	}
	s, h := m.find(key)
	*s = memoSlot{hash: h, id: id, off: uint32(len(m.arena)), size: uint32(len(key))}
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

// hash is a fast non-cryptographic hash of short keys, eight bytes at a
// time with the finalizer of splitmix64.
func hash(b []byte) uint32 {
	h := uint64(len(b)) * 0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xbf58476d1ce4e5b9
		b = b[8:]
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	h = (h ^ t) * 0x94d049bb133111eb
	h ^= h >> 31
	return uint32(h)
}
