package diff

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A delta, version 1, is printable UTF-8 text:
//
//	delta  = "d1;" size { copy | insert }
//	copy   = "=" offset "," length        the old text's bytes [offset, offset+length)
//	insert = "+" length ":" text          length bytes of new text
//
// Numbers are decimal, without leading zeros; size is the new text's
// length in bytes. Copies take the old text's bytes in order, never the
// same byte twice, and no operation is empty. An insert's text is the
// bytes as they are, but for "%", control characters other than newline
// and tab, DEL and bytes that are not UTF-8, which are written "%XX" in
// upper-case hex. So a delta is valid UTF-8, sits in a JSON string as it
// is, and reads as the text it adds.
//
// A delta against no old text is the new text whole: "d1;5+5:hello".
const tag = "d1;"

// maxNumber bounds a number of a delta, far above any text's size, so that
// sums of them cannot overflow.
const maxNumber = 1 << 40

// ErrDelta is returned by [Apply] and [Size] for a delta that is not one
// [Delta] could have written for the old text given.
var ErrDelta = errors.New("invalid delta")

// Delta returns the new text as a delta against the old one, which [Apply]
// turns back into new: the lines old and new share are copied, others
// written out, and of a changed stretch of lines the bytes it starts and
// ends with as before are copied too (a changed summary line costs about
// what changed). Delta(nil, new) is new whole.
func Delta(old, new []byte) []byte {
	var ops []op
	if len(old) > 0 && len(new) > 0 {
		ops = delta(old, new)
	} else if len(new) > 0 {
		ops = []op{{copy: false, from: 0, n: len(new)}}
	}
	out := make([]byte, 0, 16+len(new)/8)
	out = append(out, tag...)
	out = strconv.AppendInt(out, int64(len(new)), 10)
	for _, o := range ops {
		if o.copy {
			out = append(out, '=')
			out = strconv.AppendInt(out, int64(o.from), 10)
			out = append(out, ',')
			out = strconv.AppendInt(out, int64(o.n), 10)
		} else {
			out = append(out, '+')
			out = strconv.AppendInt(out, int64(o.n), 10)
			out = append(out, ':')
			out = appendEscaped(out, new[o.from:o.from+o.n])
		}
	}
	return out
}

// An op is a copy of old[from:from+n] or an insert of new[from:from+n].
type op struct {
	copy    bool
	from, n int
}

// delta returns the ops that make new from old.
func delta(old, new []byte) []op {
	var ops []op
	add := func(o op) {
		if o.n == 0 {
			return
		}
		if k := len(ops) - 1; k >= 0 && ops[k].copy == o.copy && ops[k].from+ops[k].n == o.from {
			ops[k].n += o.n
			return
		}
		ops = append(ops, o)
	}
	// The whole lines both start and end with are copied as they are, and
	// only those between are split and compared: an append, or a change of
	// a line, costs what changed more than the file's size.
	pre, suf := sameLines(old, new)
	o, n := old[pre:len(old)-suf], new[pre:len(new)-suf]
	add(op{true, 0, pre})
	if len(o) == 0 || len(n) == 0 {
		add(op{false, pre, len(n)})
	} else {
		lo, ln := lines(string(o)), lines(string(n))
		runs := compare(lo, ln)
		offO, offN := offsets(lo), offsets(ln)
		ea, eb := 0, 0
		for _, r := range runs {
			// The changed stretch between runs: o[o0:o1] became n[n0:n1].
			o0, o1, n0, n1 := offO[ea], offO[r.a], offN[eb], offN[r.b]
			if n1 > n0 {
				p, s := common(o[o0:o1], n[n0:n1])
				add(op{true, pre + o0, p})
				add(op{false, pre + n0 + p, n1 - n0 - p - s})
				add(op{true, pre + o1 - s, s})
			}
			add(op{true, pre + offO[r.a], offO[r.a+r.n] - offO[r.a]})
			ea, eb = r.a+r.n, r.b+r.n
		}
	}
	add(op{true, len(old) - suf, suf})
	return inline(ops, new)
}

// sameLines returns the lengths of the whole lines a and b start with
// alike, and of those they then end with alike.
func sameLines(a, b []byte) (pre, suf int) {
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	if pre < len(a) || pre < len(b) {
		pre = bytes.LastIndexByte(a[:pre], '\n') + 1
	}
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	// Where the lines end alike start in both.
	for suf > 0 && !(lineStart(a, len(a)-suf, pre) && lineStart(b, len(b)-suf, pre)) {
		suf--
	}
	return pre, suf
}

// lineStart reports whether a line of s starts at i, from is where the
// text compared starts.
func lineStart(s []byte, i, from int) bool {
	return i == from || s[i-1] == '\n'
}

// offsets returns where each line starts, and the end.
func offsets(ls []string) []int {
	off := make([]int, len(ls)+1)
	for i, l := range ls {
		off[i+1] = off[i] + len(l)
	}
	return off
}

// common returns the lengths of the prefix and the suffix a and b share,
// not overlapping, cut where b's UTF-8 characters start so that the
// text between stays whole characters.
func common(a, b []byte) (p, s int) {
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	for p > 0 && p < len(b) && !utf8.RuneStart(b[p]) {
		p--
	}
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for s > 0 && len(b)-s > p && !utf8.RuneStart(b[len(b)-s]) {
		s--
	}
	return p, s
}

// inline writes out, as part of the text around them, the copies shorter
// than their own encoding, new being what the ops make.
func inline(ops []op, new []byte) []op {
	out := ops[:0]
	at := 0 // where in new the op starts
	for _, o := range ops {
		if o.copy && o.n < 2+digits(o.from)+digits(o.n) {
			o = op{false, at, o.n}
		}
		if k := len(out) - 1; k >= 0 && !o.copy && !out[k].copy {
			out[k].n += o.n
		} else if !o.copy {
			out = append(out, op{false, at, o.n})
		} else {
			out = append(out, o)
		}
		at += o.n
	}
	return out
}

// digits returns the number of decimal digits of n ≥ 0.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// appendEscaped appends text to out as an insert writes it.
func appendEscaped(out, text []byte) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if literal(c) {
				out = append(out, c)
			} else {
				out = append(out, '%', hex[c>>4], hex[c&15])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, '%', hex[c>>4], hex[c&15])
		} else {
			out = append(out, text[i:i+size]...)
		}
		i += size
	}
	return out
}

// literal reports whether an insert writes the ASCII byte c as it is.
func literal(c byte) bool {
	return c >= ' ' && c != '%' && c != 0x7f || c == '\n' || c == '\t'
}

// Size returns the length of the text delta makes, as it states it, after
// checking the delta's version and header only.
func Size(delta []byte) (int, error) {
	if len(delta) < len(tag) || string(delta[:len(tag)]) != tag {
		return 0, fmt.Errorf("%w: not a version 1 delta", ErrDelta)
	}
	size, _, err := number(delta, len(tag))
	return size, err
}

// Apply returns the text delta makes from old. A delta that is not
// well-formed, copies outside old, or makes other than the size it states
// is an error wrapping [ErrDelta]; it never allocates more than the
// smaller of the stated size and len(old)+len(delta) bytes, and its work
// is linear in len(old)+len(delta).
func Apply(old, delta []byte) ([]byte, error) {
	size, err := Size(delta)
	if err != nil {
		return nil, err
	}
	if size > len(old)+len(delta) {
		return nil, fmt.Errorf("%w: states %d bytes, more than it could make", ErrDelta, size)
	}
	_, i, _ := number(delta, len(tag))
	out := make([]byte, 0, size)
	from := 0 // copies start at or after it
	for i < len(delta) {
		c := delta[i]
		var n int
		switch c {
		case '=':
			var at int
			if at, i, err = number(delta, i+1); err != nil {
				return nil, err
			}
			if i >= len(delta) || delta[i] != ',' {
				return nil, fmt.Errorf("%w: a copy at byte %d lacks its length", ErrDelta, i)
			}
			if n, i, err = number(delta, i+1); err != nil {
				return nil, err
			}
			if at < from || n == 0 || n > len(old)-at || n > size-len(out) {
				return nil, fmt.Errorf("%w: a copy of bytes %d+%d out of order, empty or out of bounds", ErrDelta, at, n)
			}
			out = append(out, old[at:at+n]...)
			from = at + n
		case '+':
			if n, i, err = number(delta, i+1); err != nil {
				return nil, err
			}
			if i >= len(delta) || delta[i] != ':' {
				return nil, fmt.Errorf("%w: an insert at byte %d lacks its text", ErrDelta, i)
			}
			if n == 0 || n > size-len(out) {
				return nil, fmt.Errorf("%w: an insert of %d bytes is empty or too long", ErrDelta, n)
			}
			if out, i, err = unescape(out, delta, i+1, n); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%w: unexpected %q at byte %d", ErrDelta, c, i)
		}
	}
	if len(out) != size {
		return nil, fmt.Errorf("%w: made %d bytes of the %d it states", ErrDelta, len(out), size)
	}
	return out, nil
}

// number reads the decimal number at d[i:], returning it and where it
// ends.
func number(d []byte, i int) (int, int, error) {
	start := i
	n := 0
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		if n > maxNumber/10 || i > start && d[start] == '0' {
			return 0, i, fmt.Errorf("%w: a number at byte %d too large or with a leading zero", ErrDelta, start)
		}
		n = n*10 + int(d[i]-'0')
		i++
	}
	if i == start {
		return 0, i, fmt.Errorf("%w: a number expected at byte %d", ErrDelta, start)
	}
	return n, i, nil
}

// unescape appends the n bytes of an insert's text at d[i:] to out,
// returning it and where the text ends.
func unescape(out, d []byte, i, n int) ([]byte, int, error) {
	end := len(out) + n
	for len(out) < end {
		if i >= len(d) {
			return nil, i, fmt.Errorf("%w: an insert's text is cut short", ErrDelta)
		}
		c := d[i]
		switch {
		case c == '%':
			if i+2 >= len(d) || !isHex(d[i+1]) || !isHex(d[i+2]) {
				return nil, i, fmt.Errorf("%w: a bad escape at byte %d", ErrDelta, i)
			}
			out = append(out, unhex(d[i+1])<<4|unhex(d[i+2]))
			i += 3
		case c < utf8.RuneSelf:
			if !literal(c) {
				return nil, i, fmt.Errorf("%w: a control character at byte %d", ErrDelta, i)
			}
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 || len(out)+size > end {
				return nil, i, fmt.Errorf("%w: a character at byte %d is not UTF-8 or straddles the insert's end", ErrDelta, i)
			}
			out = append(out, d[i:i+size]...)
			i += size
		}
	}
	return out, i, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}
