package memory

import (
	"bytes"
	"encoding/binary"
	"github.com/mdmemory/memory/internal/textpack"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeCache(t *testing.T) {
	vecs := map[[32]byte][]float32{{1}: {0.6, 0.8}, {2}: {1, 0}}
	good := encodeCache("m", 2, vecs)
	dim, got, ok := decodeCache(good, "m")
	require.True(t, ok)
	require.Equal(t, 2, dim)
	require.Equal(t, vecs, got)
	require.Equal(t, good, encodeCache("m", 2, got), "the same bytes for the same vectors")

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
	require.True(t, bytes.HasPrefix(good, []byte("mdmemory vectors 1\n")))
}

func TestEmbedHelpers(t *testing.T) {
	require.Equal(t, strings.Repeat("é", embedChars), embedText(strings.Repeat("é", embedChars+5)))
	require.Equal(t, "- a line", embedText("- a line\n\n"))
	require.Zero(t, wordJaccard(map[string]bool{}, map[string]bool{}))
	require.Equal(t, []float32{0, 0}, unit([]float32{0, 0}))
	require.Equal(t, []float32{0, 0}, unit([]float32{float32(math.Inf(1)), 1}))
	require.Equal(t, []float32{0.6, 0.8}, unit([]float32{3, 4}))
	require.Equal(t, 1.0+4+9+16+25, dot([]float32{1, 2, 3, 4, 5}, []float32{1, 2, 3, 4, 5}))
	require.True(t, inRange("2026-02-03", "2026-02", "2026-02"))
	require.False(t, inRange("", "2026", ""))
	require.Equal(t, ".cache/vectors-"+"e3b0c44298fc1c14"+".bin", cacheName(""))

	s := &Store{}
	s.search.dict = &textpack.Dict{}
	s.search.files = map[string]*indexed{"facts/user.md": {text: s.search.dict.Append(nil, []byte("- x")), docs: []docInfo{{line: 1}}}}
	require.Equal(t, "- x", s.docText("facts/user.md", 1))
	require.Equal(t, "", s.docText("facts/user.md", 2), "no document there")
}
