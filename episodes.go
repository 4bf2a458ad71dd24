package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/mdmemory/memory/internal/markdown"
)

// Append adds entry at the end of the file at path and refreshes the file's
// summary line, creating the file with its title when it does not exist.
//
// The entry's leading and trailing blank lines are dropped; exactly one
// blank line separates it from what the file held, and the file ends with
// one newline. In a fact file, a world topic or procedures.md, an entry
// that opens with a list item ("- Language: …") follows a file whose last
// block is a list with no blank line between, so that the facts stay one
// tight list; what the file held is kept byte for byte. For a month file (episodes/YYYY-MM.md) the entry must be one
// "## " section (a Setext heading counts) with no "# " title inside, dated
// inside its month: when it has no "- Date:" bullet, one with the store
// clock's date is added after the heading (after a leading "- Summary:"
// bullet, when there is one), and when that date is not in the file's month
// the entry is refused, as is an entry whose own date is not. For a fact
// file the entry is one or more lines with no heading.
//
// When the month's file would pass 16 KiB, it is first renamed, as it is,
// to the month's next part (episodes/YYYY-MM.001.md, .002.md, …), and the
// entry starts the month's file anew; a month may have 999 parts.
//
// summary, when not empty, becomes the file's "> Summary:" line; it must be
// one line of at most 200 characters. When empty, the summary is derived
// from the content: a month file lists its entry titles, newest kept when
// they do not all fit in 100 characters; a fact file names its first facts
// that fit.
//
// Append returns an error wrapping [ErrInvalidPath] (a part, or a path
// outside the grammar), [ErrInvalidContent] for a malformed entry or
// summary (see [Store.Write]'s rules for text, and the dates above) or a
// month that has 999 parts already, [ErrBudgetExceeded], or for a fact
// file [ErrTemporaryFact] or [ErrDuplicateFact] when a line of the entry is
// worded as temporary, repeats a fact or restates a key of the file, and
// [ErrSecret] when the entry holds a credential's value.
func (s *Store) Append(ctx context.Context, path, entry, summary string) error {
	_, _, err := s.append(ctx, path, entry, summary, nil)
	return err
}

// append is Append, for the tool too: check vets the file before the
// change, and sealed is the part the month's file became, when it was full.
func (s *Store) append(ctx context.Context, p, entry, summary string, check guard) (data []byte, sealed string, err error) {
	const op = "append"
	t, end, err := s.start(ctx, op, p)
	if err != nil {
		return nil, "", err
	}
	defer end()
	if summary, err = checkSummary(op, t.path, summary); err != nil {
		return nil, "", err
	}
	ed, err := checkEntry(op, t.path, entry)
	if err != nil {
		return nil, "", err
	}
	body := ed.Src()
	if t.factual() {
		err = checkFactEntry(op, t, ed)
	} else if t.isEpisode() {
		body, err = s.episodeEntry(op, t, ed)
	}
	if err != nil {
		return nil, "", err
	}

	data, err = s.update(ctx, op, t, check, func(ctx context.Context, h Held, old []byte) ([]byte, error) {
		full := len(old)+len(body) > partMax
		if t.isEpisode() && len(old) > 0 && (full || sealed != "") {
			// The month's file is full: it becomes a part, kept as it is,
			// and the entry starts the month's file anew. Or this append
			// sealed it in an earlier round, and lost the race to rewrite
			// it: the part's entries are dropped from it now.
			if err := ctx.Err(); err != nil {
				return nil, hostErr(op, t.path, err)
			}
			var err error
			if sealed, old, err = s.seal(ctx, h, op, t, old, full); err != nil {
				return nil, err
			}
		}
		return s.appendTo(op, t, old, body, ed, summary)
	})
	return data, sealed, err
}

// seal stores old, the full content of the month's file t, as the month's
// next part, and returns the part's path and what remains of old for the
// month's file: nothing. The caller then replaces the month's file, only if
// it is still as read, so that the two steps leave every entry in one file
// or the other. When the second did not happen (another writer's append in
// between, on a backend without locks, or a crash), the month's file starts
// with the entries of its newest part, and seal, called again, returns the
// entries after those instead of sealing them twice: at once in the first
// case (the append goes round again), at the month's next seal after a
// crash, which until then shows those entries twice. When the month is not
// full and was sealed already, seal returns old as it is.
func (s *Store) seal(ctx context.Context, h Held, op string, t target, old []byte, full bool) (part string, rest []byte, err error) {
	// The month's newest part: as this Store last sealed or listed it,
	// when the month is full (a part numbered past it makes the seal
	// below lose its race, and the next round list them), else listed.
	hint := full
	var c Content
	last := 0
	for {
		if last, err = s.lastPart(ctx, t.month, hint); err != nil {
			return "", nil, hostErr(op, t.path, err)
		}
		if last == 0 {
			break
		}
		part = partPath(t.month, last)
		c, err = s.b.Read(ctx, part, readLimit)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", nil, hostErr(op, part, err)
		}
		if err == nil || !hint {
			break
		}
		hint = false // the part went (Compact, a person): list them
	}
	if last > 0 {
		if k, at := sealedPrefix(c.Data, old, s.docs.get(t.path, old)); k > 0 {
			return part, old[at:], nil
		}
	}
	if !full {
		return "", old, nil
	}
	if last >= maxParts {
		return "", nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("%s has %d full parts, as many as a month may have", t.month, maxParts),
			"; keep episodes condensed, or compact the month")
	}
	part = partPath(t.month, last+1)
	if _, err := s.commit(ctx, h, &change{op: op, as: "seal", t: target{path: part, fact: -1, month: t.month, part: last + 1}, data: old}); err != nil {
		s.sealed.Delete(t.month)
		return "", nil, err // ErrChanged: another writer sealed it; update reads again
	}
	s.sealed.Store(t.month, last+1)
	return part, nil, nil
}

// lastPart returns the number of the newest sealed part of month (0 when
// it has none): with hint, as this Store last sealed or listed it, so that
// a seal does not list episodes/, whose parts grow with the months; else,
// or when not known, from a listing.
func (s *Store) lastPart(ctx context.Context, month string, hint bool) (int, error) {
	if n, ok := s.sealed.Load(month); ok && hint {
		return n.(int), nil
	}
	months, err := s.monthsIn(ctx, episodesDir)
	if err != nil {
		return 0, err
	}
	last := 0
	for _, m := range months {
		if m.month == month && len(m.parts) > 0 {
			last = m.parts[len(m.parts)-1]
		}
	}
	s.sealed.Store(month, last)
	return last, nil
}

// sealedPrefix reports whether the month's file, month, starts with the
// entries of its newest part, all of them and in order: k is their number
// (0 when it does not), at where the month's entries after them start. md
// is month's Doc when the caller has it (nil when not): when the part does
// not hold the month's first entry, as after every seal that landed whole,
// the part is not parsed.
func sealedPrefix(part, month []byte, md *markdown.Doc) (k, at int) {
	if len(part) == 0 {
		return 0, 0
	}
	if md == nil {
		md = markdown.Parse(month)
	}
	me := md.Entries
	if len(me) == 0 || !bytes.Contains(part, markdown.TrimTrailingBlankLines(month[me[0].Start:me[0].End])) {
		return 0, 0
	}
	pe := markdown.Parse(part).Entries
	if len(pe) == 0 || len(pe) > len(me) {
		return 0, 0
	}
	for i, e := range pe {
		if !bytes.Equal(markdown.TrimTrailingBlankLines(part[e.Start:e.End]), markdown.TrimTrailingBlankLines(month[me[i].Start:me[i].End])) {
			return 0, 0
		}
	}
	if len(pe) == len(me) {
		return len(pe), len(month)
	}
	return len(pe), me[len(pe)].Start
}

// appendTo returns old with body appended and the summary refreshed. ed
// is the Doc of the entry as checkEntry parsed it.
func (s *Store) appendTo(op string, t target, old, body []byte, ed *markdown.Doc, summary string) ([]byte, error) {
	prev := s.docs.get(t.path, old) // old's structure, when this Store made it
	base := markdown.TrimTrailingBlankLines(old)
	if prev != nil && !(prev.Title.OK && prev.Summary.OK) || prev == nil && !hasHead(base) {
		// Give the file its head first, so that the entry can never be
		// read as the title or summary line, and then replaced by it.
		base = markdown.TrimTrailingBlankLines(markdown.Parse(base).SetHead(s.title(t), "-"))
		prev = nil
	}
	out := make([]byte, 0, len(base)+len(body)+3)
	out = append(out, base...)
	switch {
	case len(base) == 0:
	case !t.isEpisode() && startsWithItem(body, ed) && (prev != nil && prev.EndsWithList() || prev == nil && endsWithList(base)):
		// Fact lines stay one tight list, as in the seed's files: a
		// blank line between items would make the list loose.
		out = append(out, '\n')
	default:
		out = append(out, "\n\n"...)
	}
	at := len(out)
	out = append(out, body...)
	if out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}

	// Only what is appended is parsed, when old's structure is at hand,
	// and not even that when it is the entry as checkEntry parsed it.
	d := markdown.ParseAfter(prev, out, ed)
	if !d.StartsBlock(at) || t.isEpisode() && (len(d.Entries) == 0 || d.Entries[len(d.Entries)-1].Start != at) {
		return nil, modelErr(op, t.path, ErrInvalidContent, t.path+" ends inside an unclosed block (such as a ``` code fence), so the entry would not stand on its own", "; memory_read the file and close the block with memory_patch, then append again")
	}
	if summary == "" {
		summary = s.deriveSummary(t, d)
	}
	data, dd := d.SetHeadDoc(s.title(t), summary)
	s.docs.put(t.path, dd) // for the fact guard, and the next append
	return data, nil
}

// endsWithList reports whether the last top-level block of src is a list.
func endsWithList(src []byte) bool {
	d := markdown.Parse(src)
	if len(d.Blocks) == 0 || len(d.Items) == 0 {
		return false
	}
	return d.Items[len(d.Items)-1].Start >= d.Blocks[len(d.Blocks)-1]
}

// startsWithItem reports whether body opens with a list item. ed is the
// Doc of the entry, which is body's when the entry went in as it is.
func startsWithItem(body []byte, ed *markdown.Doc) bool {
	d := ed
	if d == nil || !bytes.Equal(d.Src(), body) {
		d = markdown.Parse(body)
	}
	return len(d.Items) > 0 && d.Items[0].Start == 0
}

// episodeEntry checks an episode entry's shape and adds its Date line when
// it has none.
func (s *Store) episodeEntry(op string, t target, d *markdown.Doc) ([]byte, error) {
	src := d.Src()
	if len(d.Headings) == 0 || d.Headings[0].Start != 0 || d.Headings[0].Level != 2 {
		return nil, modelErr(op, t.path, ErrInvalidContent, "an episode entry must start with a \"## \" heading", " that names the task, such as \"## Tokyo flight research\", followed by \"- Summary: …\" and other bullets")
	}
	if d.Level1() {
		return nil, modelErr(op, t.path, ErrInvalidContent, "an episode entry may not contain a \"# \" title", "; the file's title is added for you. Start the entry with \"## \"")
	}
	if n := len(d.Entries); n > 1 {
		return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the entry has %d \"## \" headings", n), "; append one entry at a time")
	}
	e := d.Entries[0]
	if e.Title == "" {
		return nil, modelErr(op, t.path, ErrInvalidContent, "the entry's \"## \" heading is empty", "; name the task in it")
	}
	if e.Date != "" {
		day, err := time.Parse(time.DateOnly, e.Date)
		switch {
		case err != nil:
			return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the entry's date %q is not a date written YYYY-MM-DD", cut(printable(e.Date), 40)),
				"; write it as \"- Date: "+t.month+"-DD\" with the day the task happened")
		case day.Format("2006-01") != t.month:
			return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the entry is dated %s, outside %s", e.Date, t.path),
				"; append it to "+monthPath(day.Format("2006-01"))+", or correct its \"- Date:\" line")
		}
		return src, nil
	}
	today := s.now().Format("2006-01-02")
	if !strings.HasPrefix(today, t.month+"-") {
		// The clock's date would put the entry outside its month.
		return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the entry has no \"- Date:\" line and today, %s, is outside %s", today, t.path),
			fmt.Sprintf("; append it to %s, or give it a \"- Date: %s-DD\" line with the day it happened", monthPath(today[:7]), t.month))
	}

	at := d.Headings[0].End
	if it, ok := itemAt(d, at); ok && strings.HasPrefix(it.Text, "Summary:") {
		next := nextLine(src, at)
		if _, ok := itemAt(d, next); ok || next == len(src) || isBlankAt(src, next) {
			at = next
		}
	}
	var b bytes.Buffer
	b.Write(src[:at])
	if at > 0 && src[at-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("- Date: " + today)
	if rest := src[at:]; len(rest) > 0 {
		b.WriteByte('\n')
		if _, ok := itemAt(d, at); !ok && !isBlankAt(src, at) {
			// A paragraph right after a bullet would continue it.
			b.WriteByte('\n')
		}
		b.Write(rest)
	}
	return b.Bytes(), nil
}

// hasHead reports whether src has its title and summary line. Only its
// head is parsed, as List does, unless the summary may go on past it.
func hasHead(src []byte) bool {
	cut := markdown.HeadLen(src)
	d := markdown.Parse(src[:cut])
	if d.Summary.OK && d.Summary.End == cut && cut < len(src) {
		d = markdown.Parse(src)
	}
	return d.Title.OK && d.Summary.OK
}

func itemAt(d *markdown.Doc, at int) (markdown.Item, bool) {
	for _, it := range d.Items {
		if it.Start == at {
			return it, true
		}
	}
	return markdown.Item{}, false
}

// nextLine returns the offset of the line after the one starting at at.
func nextLine(src []byte, at int) int {
	if i := bytes.IndexByte(src[at:], '\n'); i >= 0 {
		return at + i + 1
	}
	return len(src)
}

func isBlankAt(src []byte, at int) bool {
	line := src[at:nextLine(src, at)]
	return len(bytes.TrimSpace(line)) == 0
}

// checkFactEntry refuses an entry for a fact file that holds a heading: a
// fact entry is one or more lines, usually "- " bullets.
func checkFactEntry(op string, t target, d *markdown.Doc) error {
	if len(d.Headings) > 0 {
		return modelErr(op, t.path, ErrInvalidContent, "an entry for a fact file may not contain a heading", "; add facts as bullet lines such as \"- Language: prefers Chinese\"")
	}
	return nil
}
