// Package textpack keeps many short texts compactly in memory, each one
// readable back on its own in about a microsecond: the search index's copy
// of the memory files' documents, from which hits take their snippets.
//
// A [Dict] cuts text into tokens — a run of ASCII letters and digits with
// the one space that follows it, or a run of other ASCII characters — and
// writes each token as its number in the dictionary: one byte for the
// first 192 tokens it meets, two for the next 12,288, three for the next
// 983,040. Bytes outside ASCII (CJK text) and tokens past the dictionary's
// size are written as they are, behind a length. English prose takes about
// a quarter of its size; the dictionary holds each token once.
//
// Nothing here does I/O. The dictionary only grows: it is meant to live as
// long as the index it serves and to be dropped with it.
package textpack

import (
	"encoding/binary"
	"sync"
)

// Token limits: a token is at most maxToken bytes, and the dictionary holds
// at most maxWords of them: 65,536, about 6 MB of heap filled with short
// words (measured), however much text went through it (tokens stay until
// the dictionary is dropped with its index), where a memory's own words
// are a few thousand; later tokens are written as literals.
const (
	maxToken = 24
	oneByte  = 0xC0     // codes 0x00-0xBF: tokens 0-191
	twoByte  = 48 << 8  // codes 0xC0-0xEF and a byte: the next 12,288
	three    = 15 << 16 // codes 0xF0-0xFE and two bytes: the next 983,040
	maxWords = 1 << 16  // of the oneByte + twoByte + three codes it could write
	literal  = 0xFF     // then a uvarint length and that many bytes
)

// Dict is a dictionary of tokens. The zero value is an empty dictionary
// ready to use. Append may be called from several goroutines at once;
// Decode may run concurrently with other Decode calls, but not with Append.
type Dict struct {
	mu    sync.Mutex
	ids   map[string]uint32
	words []string
	limit int // the most tokens held; 0 means maxWords (tests set less)
}

// Words returns the number of tokens in the dictionary.
func (d *Dict) Words() int { return len(d.words) }

// wordByte reports whether c belongs to a word token.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Append appends the encoding of text to dst and returns it, adding the
// tokens of text that the dictionary lacks while it has room.
func (d *Dict) Append(dst, text []byte) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = make(map[string]uint32)
	}
	lit := -1 // start of the pending literal run, or -1
	flush := func(end int) {
		if lit >= 0 {
			dst = append(dst, literal)
			dst = binary.AppendUvarint(dst, uint64(end-lit))
			dst = append(dst, text[lit:end]...)
			lit = -1
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		j := i + 1
		if c >= 0x80 {
			for j < len(text) && text[j] >= 0x80 {
				j++
			}
			if lit < 0 {
				lit = i
			}
			i = j
			continue
		}
		w := wordByte(c)
		for j < len(text) && j-i < maxToken && text[j] < 0x80 && wordByte(text[j]) == w {
			j++
		}
		if w && j < len(text) && text[j] == ' ' {
			j++
		}
		id, ok := d.ids[string(text[i:j])]
		if !ok {
			if len(d.words) >= maxWords || d.limit > 0 && len(d.words) >= d.limit {
				if lit < 0 {
					lit = i
				}
				i = j
				continue
			}
			id = uint32(len(d.words))
			s := string(text[i:j])
			d.ids[s] = id
			d.words = append(d.words, s)
		}
		flush(i)
		switch {
		case id < oneByte:
			dst = append(dst, byte(id))
		case id < oneByte+twoByte:
			id -= oneByte
			dst = append(dst, oneByte+byte(id>>8), byte(id))
		default:
			id -= oneByte + twoByte
			dst = append(dst, 0xF0+byte(id>>16), byte(id>>8), byte(id))
		}
		i = j
	}
	flush(len(text))
	return dst
}

// Decode appends the text that enc encodes to dst and returns it. enc must
// come from Append of this Dict; a malformed enc ends the text early rather
// than panic.
func (d *Dict) Decode(dst, enc []byte) []byte {
	for len(enc) > 0 {
		c := enc[0]
		var id int
		switch {
		case c < oneByte:
			id, enc = int(c), enc[1:]
		case c < 0xF0 && len(enc) >= 2:
			id, enc = oneByte+(int(c-oneByte)<<8|int(enc[1])), enc[2:]
		case c < literal && len(enc) >= 3:
			id, enc = oneByte+twoByte+(int(c-0xF0)<<16|int(enc[1])<<8|int(enc[2])), enc[3:]
		case c == literal:
			n, k := binary.Uvarint(enc[1:])
			if k <= 0 || n > uint64(len(enc)-1-k) {
				return dst
			}
			enc = enc[1+k:]
			dst = append(dst, enc[:n]...)
			enc = enc[n:]
			continue
		default:
			return dst
		}
		if id >= len(d.words) {
			return dst
		}
		dst = append(dst, d.words[id]...)
	}
	return dst
}
