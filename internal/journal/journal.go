// Package journal keeps the history of one memory file as a log of
// records, one per change, from which every version the file had can be
// read back byte for byte.
//
// A log is JSON lines, oldest first. A record says when a change was made,
// what it was, who made it, the file's version before and after, and the
// content after: whole, or as a delta against the content before
// (internal/diff). The change path writes a change's record before it
// replaces the file, so a crash can leave a record whose change did not
// land; [Landed] tells the records that landed by the chain of versions.
// [NewRecord] makes a record, choosing between whole content and a delta
// so that rebuilding a version ([Content]) reads a bounded chain, and
// [Prune] bounds a log by age, count and size.
//
// Nothing here does I/O: records and bytes in, records and bytes out.
package journal

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/diff"
)

// Record is one change of a file.
type Record struct {
	Time  time.Time // when the change was recorded, UTC
	Op    string    // "write", "patch", "append", "seal", "compact", "restore", "outside", "remove"
	Actor string    // who made it; "" for a change made outside the library
	Old   string    // the version before; "" when the change created the file
	New   string    // the version after; "" when the change removed it

	// Redacted, when not "", is the version of the content Body rebuilds
	// now: [Redact] took text out of New's content, and New stays the
	// name of the version the file had, so that the chain still links.
	Redacted string

	// Body rebuilds New's content: a delta (internal/diff) against Old's
	// content, or against nothing when Full. A removal has none.
	Full bool
	Body string
}

// Outside is the operation of a change made outside the library: a
// person's editor, a copy into the bucket.
const Outside = "outside"

// MaxLine bounds a line of a log. A record of a memory file's content
// (at most 1 MiB) fits: a byte costs at most 3 in a delta ("%XX"), and
// neither '%' nor hex digits are escaped in JSON. A longer line is
// reported as malformed and skipped.
const MaxLine = 8 << 20

// minLine is the length of the shortest line Append writes.
const minLine = len(`{"t":"2006-01-02T15:04:05Z","op":"x","actor":"","old":"","new":""}`)

// versionLen is the length of a version: 24 hex digits.
const versionLen = 24

// Version returns the version of content as the library names it: the
// first 12 bytes of its SHA-256 in hex (memory.Version).
func Version(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:versionLen/2])
}

// ReadVersion returns the Version of the content r holds, hashed as it is
// read: a large file takes time, but no memory.
func ReadVersion(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)[:versionLen/2]), nil
}

// ErrRecord is wrapped by the errors [Decode] reports for lines that are
// not records.
var ErrRecord = errors.New("malformed record")

// ErrNoContent is returned by [Content] for a version the log cannot
// rebuild.
var ErrNoContent = errors.New("version not in the log")

// LineError reports a line of a log that is not a record.
type LineError struct {
	Line int   // numbered from 1
	Err  error // wraps ErrRecord
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns e.Err.
func (e *LineError) Unwrap() error { return e.Err }

// Cut reports whether line, one that Decode does not take, is the start
// of a record whose write a kill cut short (a kill can stop a write
// between two pages): the change it recorded was never made, since the
// change path makes it only once its record is whole, so nothing of it
// is lost.
func Cut(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if !bytes.HasPrefix(line, []byte(`{"t":"`)) {
		return false
	}
	var v any
	var se *json.SyntaxError
	err := json.Unmarshal(line, &v)
	return errors.As(err, &se) && se.Offset >= int64(len(line))
}

// FirstTime returns the time of the record the log b starts with, from
// the line's first bytes alone (Append writes the time first): the age of
// a log's oldest record, without reading the record.
func FirstTime(b []byte) (time.Time, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(`{"t":"`))
	if !ok {
		return time.Time{}, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(rest[:end]))
	return t.UTC(), err == nil
}

// line is a record as a line of a log holds it.
type line struct {
	T     string `json:"t"`
	Op    string `json:"op"`
	Actor string `json:"actor"`
	Old   string `json:"old"`
	New   string `json:"new"`
	Red   string `json:"redacted,omitempty"`
	Full  bool   `json:"full,omitempty"`
	Body  string `json:"body,omitempty"`
}

// Append appends r to log as a line of it, and returns the log. A writer
// that finds its log does not end with a newline (a crash cut the last
// line) writes one first, so that the cut line stays a line of its own.
func Append(log []byte, r Record) []byte {
	log = append(log, `{"t":"`...)
	log = r.Time.UTC().AppendFormat(log, time.RFC3339Nano)
	log = append(log, `","op":`...)
	log = appendString(log, r.Op)
	log = append(log, `,"actor":`...)
	log = appendString(log, r.Actor)
	log = append(log, `,"old":`...)
	log = appendString(log, r.Old)
	log = append(log, `,"new":`...)
	log = appendString(log, r.New)
	if r.Redacted != "" {
		log = append(log, `,"redacted":`...)
		log = appendString(log, r.Redacted)
	}
	if r.Full {
		log = append(log, `,"full":true`...)
	}
	if r.Body != "" {
		log = append(log, `,"body":`...)
		log = appendString(log, r.Body)
	}
	return append(log, "}\n"...)
}

// Encode returns the log of records.
func Encode(records []Record) []byte {
	var log []byte
	for _, r := range records {
		log = Append(log, r)
	}
	return log
}

// appendString appends s as a JSON string, as encoding/json writes it
// without its HTML escapes.
func appendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Decode returns the records of log, oldest first. A last line without
// its newline, cut by a crash, is left out: its change had not been made.
// A line that is not a record, or is longer than MaxLine, is left out and
// reported with its number in a [LineError]; the others are still read.
func Decode(log []byte) ([]Record, []error) {
	// A record's line is at least minLine bytes: a log of empty lines
	// reserves no more than its size.
	records := make([]Record, 0, min(bytes.Count(log, []byte{'\n'}), len(log)/minLine, 1024))
	var errs []error
	n := 0
	for len(log) > 0 {
		i := bytes.IndexByte(log, '\n')
		if i < 0 {
			break // cut by a crash
		}
		l := log[:i]
		log = log[i+1:]
		n++
		if len(l) == 0 {
			continue
		}
		r, err := parse(l)
		if err != nil {
			errs = append(errs, &LineError{Line: n, Err: err})
			continue
		}
		records = append(records, r)
	}
	return records, errs
}

// parse reads one line of a log.
func parse(b []byte) (Record, error) {
	if len(b) > MaxLine {
		return Record{}, fmt.Errorf("%w: %d bytes, over %d", ErrRecord, len(b), MaxLine)
	}
	l, ok := parseOwn(b)
	if !ok {
		if err := json.Unmarshal(b, &l); err != nil {
			return Record{}, fmt.Errorf("%w: %v", ErrRecord, err)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, l.T)
	if err != nil {
		return Record{}, fmt.Errorf("%w: time: %v", ErrRecord, err)
	}
	r := Record{Time: t.UTC(), Op: l.Op, Actor: l.Actor, Old: l.Old, New: l.New, Redacted: l.Red, Full: l.Full, Body: l.Body}
	return r, r.check()
}

// check reports whether r is a record NewRecord could have made.
func (r *Record) check() error {
	if r.Op == "" || len(r.Op) > 16 {
		return fmt.Errorf("%w: operation %q", ErrRecord, r.Op)
	}
	for _, c := range []byte(r.Op) {
		if c < 'a' || c > 'z' {
			return fmt.Errorf("%w: operation %q", ErrRecord, r.Op)
		}
	}
	if !validVersion(r.Old) || !validVersion(r.New) || !validVersion(r.Redacted) {
		return fmt.Errorf("%w: versions %q, %q and %q", ErrRecord, r.Old, r.New, r.Redacted)
	}
	if r.Redacted != "" && (IsMark(*r) || r.New == "") {
		return fmt.Errorf("%w: a redacted version of no content", ErrRecord)
	}
	if IsMark(*r) {
		if r.Body != "" || r.Full {
			return fmt.Errorf("%w: a mark with a body", ErrRecord)
		}
		return nil
	}
	switch {
	case r.New == "" && (r.Body != "" || r.Full):
		return fmt.Errorf("%w: a removal with a body", ErrRecord)
	case r.New != "" && r.Body == "":
		return fmt.Errorf("%w: no body", ErrRecord)
	case r.New != "" && !r.Full && r.Old == "":
		return fmt.Errorf("%w: a delta against no content", ErrRecord)
	}
	if r.Body != "" {
		if _, err := diff.Size([]byte(r.Body[:min(len(r.Body), 32)])); err != nil {
			return fmt.Errorf("%w: body: %v", ErrRecord, err)
		}
	}
	return nil
}

// validVersion reports whether v is "" or 24 lower-case hex digits.
func validVersion(v string) bool {
	if v == "" {
		return true
	}
	if len(v) != versionLen {
		return false
	}
	for _, c := range []byte(v) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseOwn reads a line as Append writes it, many times faster than
// encoding/json, which reads the others: fields in another order, spaces,
// fields added by a later version, escapes Append does not write.
func parseOwn(b []byte) (l line, ok bool) {
	fields := [...]struct {
		name string
		to   *string
	}{{`{"t":`, &l.T}, {`,"op":`, &l.Op}, {`,"actor":`, &l.Actor}, {`,"old":`, &l.Old}, {`,"new":`, &l.New}}
	for _, f := range fields {
		if b, ok = bytes.CutPrefix(b, []byte(f.name)); !ok {
			return l, false
		}
		if *f.to, b, ok = jsonString(b); !ok {
			return l, false
		}
	}
	if rest, found := bytes.CutPrefix(b, []byte(`,"redacted":`)); found {
		if l.Red, b, ok = jsonString(rest); !ok {
			return l, false
		}
	}
	b, l.Full = bytes.CutPrefix(b, []byte(`,"full":true`))
	if rest, found := bytes.CutPrefix(b, []byte(`,"body":`)); found {
		if l.Body, b, ok = jsonString(rest); !ok {
			return l, false
		}
	}
	return l, len(b) == 1 && b[0] == '}'
}

// jsonString reads the JSON string b starts with, if it has only the
// escapes Append writes but \u00XX and is UTF-8, and returns it and what
// follows.
func jsonString(b []byte) (string, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	b = b[1:]
	end := bytes.IndexByte(b, '"')
	if end < 0 {
		return "", nil, false
	}
	esc := bytes.IndexByte(b[:end], '\\')
	if esc < 0 { // the common case: nothing escaped
		raw := b[:end]
		if !valid(raw) {
			return "", nil, false
		}
		return string(raw), b[end+1:], true
	}
	var out strings.Builder
	out.Grow(end)
	q := end // where the next '"' is, escaped or not
	for i := 0; ; {
		if q < i {
			if q = bytes.IndexByte(b[i:], '"'); q < 0 {
				return "", nil, false
			}
			q += i
		}
		j := q
		if k := bytes.IndexByte(b[i:q], '\\'); k >= 0 {
			j = i + k
		}
		if !valid(b[i:j]) {
			return "", nil, false
		}
		out.Write(b[i:j])
		i = j
		if b[i] == '"' {
			return out.String(), b[i+1:], true
		}
		if i+1 >= len(b) {
			return "", nil, false
		}
		switch c := b[i+1]; c {
		case '"', '\\', '/':
			out.WriteByte(c)
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		default:
			return "", nil, false
		}
		i += 2
	}
}

// valid reports whether s is UTF-8 without control characters, as a JSON
// string's text must be. It reads eight bytes at a time.
func valid(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var high uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		if (x-ones*' ')&^x&highs != 0 { // a byte under ' '
			return false
		}
		high |= x & highs
	}
	for _, c := range s[i:] {
		if c < ' ' {
			return false
		}
		high |= uint64(c) & 0x80
	}
	return high == 0 || utf8.Valid(s)
}
