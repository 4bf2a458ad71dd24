package search

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMemo stores keys of every length around the eight-byte head, in
// slices with and without spare capacity, past several grows and a reset.
func TestMemo(t *testing.T) {
	var m memo
	key := func(i int) []byte {
		k := fmt.Appendf(nil, "%0*d", 1+i%20, i)
		return k[:len(k):len(k)] // no spare capacity
	}
	for round := range 2 {
		m.reset()
		for i := range 5000 {
			_, ok := m.get(key(i))
			assert.False(t, ok, "round %d key %d", round, i)
			m.put(key(i), int32(i))
		}
		for i := range 5000 {
			spare := append(make([]byte, 0, 32), key(i)...)
			for _, k := range [][]byte{key(i), spare} {
				id, ok := m.get(k)
				assert.True(t, ok)
				assert.Equal(t, int32(i), id)
			}
		}
	}
	// Keys that differ only after the head.
	m.reset()
	m.put([]byte("abcdefgh1"), 1)
	m.put([]byte("abcdefgh2"), 2)
	id, _ := m.get([]byte("abcdefgh2"))
	assert.Equal(t, int32(2), id)
	_, ok := m.get([]byte("abcdefgh3"))
	assert.False(t, ok)
}
