package journal

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mdmemory/memory/internal/diff"
)

// Scrub returns content with every occurrence of text taken out, and how
// many there were; content itself when none. A line that held text and is
// left with nothing but white space, or a list or quote marker ("- ",
// "1. ", "> "), goes whole, its newline too: forgetting a fact's value
// leaves no empty bullet behind. An empty text is in no content.
func Scrub(content, text []byte) ([]byte, int) {
	n := 0
	if len(text) > 0 {
		n = bytes.Count(content, text)
	}
	if n == 0 {
		return content, 0
	}
	out := make([]byte, 0, len(content)-n*len(text))
	cuts := make([]int, 0, n) // where in out text was taken out
	for {
		i := bytes.Index(content, text)
		if i < 0 {
			break
		}
		out = append(out, content[:i]...)
		cuts = append(cuts, len(out))
		content = content[i+len(text):]
	}
	out = append(out, content...)
	kept := make([]byte, 0, len(out))
	for start := 0; start < len(out); {
		end := len(out)
		if i := bytes.IndexByte(out[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		touched := false
		for len(cuts) > 0 && cuts[0] < end {
			touched = touched || cuts[0] >= start
			cuts = cuts[1:]
		}
		if len(cuts) > 0 && cuts[0] == end && end == len(out) {
			touched = true // taken out at the very end
		}
		if !touched || !bare(out[start:end]) {
			kept = append(kept, out[start:end]...)
		}
		start = end
	}
	return kept, n
}

// bare reports a line with nothing but white space and a list or quote
// marker.
func bare(line []byte) bool {
	s := strings.TrimSpace(string(line))
	switch s {
	case "", "-", "*", "+", ">", "- [ ]", "- [x]":
		return true
	}
	digits := strings.TrimRight(s, ".)")
	return len(digits) == len(s)-1 && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// Redact returns the records of a log with text taken out of every
// version they hold, as [Scrub] takes it out, and of every actor's name;
// and the indexes of the records that held it. The records keep their
// order, their times and their versions' names, so that the chain of
// versions, [Landed] and the marks are as before; a record whose content
// changed gets the version of its new content as Redacted, and its body
// is written again (a delta against its base's new content, or whole),
// as is every delta whose base changed. records itself is not changed.
//
// starts are the indexes at which the segments of a log start, when its
// records are kept in several objects that are replaced one at a time: a
// delta whose base is in an earlier segment and changed is written whole,
// so that each segment rebuilds its versions whether the segments before
// it are redacted yet or not. nil means one segment.
//
// A record whose content cannot be rebuilt (its base is gone, or the log
// was not written by NewRecord) but whose body holds text is made a
// redacted record of empty content: its version was unreadable already,
// and the text goes with it.
//
// Redact takes time linear in the size of the records, and memory for the
// content of the versions a later delta still starts from: one or two.
func Redact(records []Record, text []byte, starts []int) ([]Record, []int) {
	if len(text) == 0 {
		return records, nil
	}
	type version struct {
		raw, red []byte // the content as it was, and without text
		ok       bool   // rebuilt
		seg      int
	}
	latest := make(map[string]*version) // by name: the content of the latest record making it
	// A version's content is kept while a later delta may start from it:
	// up to the last record whose old version it is.
	lastUse := make(map[string]int)
	for i, r := range records {
		if !IsMark(r) && r.New != "" && !r.Full {
			lastUse[r.Old] = i
		}
	}
	out := slices.Clone(records)
	var held []int
	seg := 0
	for i := range out {
		for seg+1 < len(starts) && starts[seg+1] <= i {
			seg++
		}
		r := &out[i]
		changed := false
		if strings.Contains(r.Actor, string(text)) {
			r.Actor = string(bytes.ReplaceAll([]byte(r.Actor), text, nil))
			changed = true
		}
		if IsMark(*r) || r.New == "" {
			if changed {
				held = append(held, i)
			}
			continue
		}
		var base *version
		if !r.Full {
			base = latest[r.Old]
			if lastUse[r.Old] == i {
				delete(latest, r.Old)
			}
		}
		v := &version{seg: seg}
		if r.Full || base != nil && base.ok {
			var from []byte
			if base != nil {
				from = base.raw
			}
			raw, err := diff.Apply(from, []byte(r.Body))
			v.ok = err == nil && Version(raw) == r.want()
			v.raw = raw
		}
		if !v.ok {
			latest[r.New] = v
			v.raw = nil
			if holds(r.Body, text) {
				r.Full, r.Body, r.Redacted = true, string(diff.Delta(nil, nil)), Version(nil)
				changed = true
			}
			if changed {
				held = append(held, i)
			}
			continue
		}
		v.red, _ = Scrub(v.raw, text)
		own := len(v.red) != len(v.raw)
		baseChanged := base != nil && len(base.red) != len(base.raw)
		switch {
		case !own && !baseChanged:
		case r.Full || baseChanged && base.seg != seg:
			r.Full, r.Body = true, string(diff.Delta(nil, v.red))
		default:
			r.Body = string(diff.Delta(base.red, v.red))
		}
		if own {
			r.Redacted = Version(v.red)
			changed = true
		}
		if !own {
			v.red = v.raw // one copy
		}
		if _, used := lastUse[r.New]; used {
			latest[r.New] = v
		}
		if changed {
			held = append(held, i)
		}
	}
	if held == nil {
		return records, nil
	}
	return out, held
}

// holds reports whether the body of a record holds text, as it is or as
// a delta writes it ("%25" for "%").
func holds(body string, text []byte) bool {
	if strings.Contains(body, string(text)) {
		return true
	}
	if !strings.Contains(body, "%") {
		return false
	}
	var plain []byte
	for i := 0; i < len(body); i++ {
		if body[i] == '%' && i+2 < len(body) && unhexable(body[i+1]) && unhexable(body[i+2]) {
			plain = append(plain, unhex(body[i+1])<<4|unhex(body[i+2]))
			i += 2
			continue
		}
		plain = append(plain, body[i])
	}
	return bytes.Contains(plain, text)
}

func unhexable(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// A Damage is a line of a log that is not a record and holds a text.
type Damage struct {
	Line int       // numbered from 1
	New  string    // the version the line names, as far as it can be read; "" when none
	Time time.Time // the time it names, likewise; zero when none
}

// Damaged returns the lines of log that are not records (one a person
// edited, the last one a crash cut short) and hold text: as it is, or as
// a record writes it, its JSON string escapes and a delta's %XX escapes
// undone as far as they go. Such a line is damage, a record that never
// landed: whatever rewrites the log drops it (Encode writes records
// alone).
func Damaged(log, text []byte) []Damage {
	var out []Damage
	for n := 1; len(log) > 0; n++ {
		l, rest, whole := bytes.Cut(log, []byte{'\n'})
		log = rest
		if len(l) == 0 {
			continue
		}
		if whole {
			if _, err := parse(l); err == nil {
				continue
			}
		}
		if bytes.Contains(l, text) || holds(unquote(l), text) {
			d := Damage{Line: n, New: field(l, "new")}
			d.Time, _ = time.Parse(time.RFC3339Nano, field(l, "t"))
			out = append(out, d)
		}
	}
	return out
}

// unquote undoes the escapes of a JSON string in b, as far as they go:
// one it does not know, or one cut short, stays as it is.
func unquote(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out.WriteByte(b[i])
			continue
		}
		switch c := b[i+1]; c {
		case '"', '\\', '/':
			out.WriteByte(c)
		case 'n':
			out.WriteByte('\n')
		case 't':
			out.WriteByte('\t')
		case 'r':
			out.WriteByte('\r')
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'u':
			r, err := strconv.ParseUint(string(b[i+2:min(i+6, len(b))]), 16, 32)
			if err != nil || i+6 > len(b) {
				out.WriteByte(b[i])
				continue
			}
			out.WriteRune(rune(r))
			i += 4
		default:
			out.WriteByte(b[i])
			continue
		}
		i++
	}
	return out.String()
}

// field is the string the JSON line l gives the key, read loosely (the
// line need not parse), "" when none.
func field(l []byte, key string) string {
	_, v, ok := bytes.Cut(l, []byte(`"`+key+`":"`))
	if !ok {
		return ""
	}
	v, _, ok = bytes.Cut(v, []byte{'"'})
	if !ok || bytes.IndexByte(v, '\\') >= 0 {
		return ""
	}
	return string(v)
}
