package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Month files. A month's episodes are in episodes/YYYY-MM.md. A month that
// grows past partMax bytes is not refused: the file is sealed as a part,
// episodes/YYYY-MM.001.md, .002.md and so on, and appends go on in a new
// episodes/YYYY-MM.md. Names sort as the timeline: the parts of a month in
// order ('0' sorts before 'm'), then the month's file, then the next month.
// memory_list, the index, search and the reflector treat a month's parts
// as one month. Each append rewrites at most the month's file, so its cost
// does not grow with the month.
//
// Compact keeps the originals of a month it condenses under
// episodes/archive/, with the same names: read only, reachable by
// memory_read and search, never listed.

const (
	// partMax is the size past which an append seals the month's file as a
	// part and starts a new one.
	partMax = 16 << 10

	// maxParts bounds the parts of one month, as their three-digit numbers
	// do: 999 × partMax is about 16 MiB of episodes in a month.
	maxParts = paths.MaxPart
)

// monthFiles is what episodes/ (or episodes/archive/) holds of each month:
// the numbers of its sealed parts, ascending, and whether its file exists.
type monthFiles struct {
	month   string
	parts   []int
	current bool
	size    int64 // of its files together
}

// paths returns the month's files, oldest first: its parts, then its file.
func (m monthFiles) paths() []string {
	ps := make([]string, 0, len(m.parts)+1)
	for _, n := range m.parts {
		ps = append(ps, partPath(m.month, n))
	}
	if m.current {
		ps = append(ps, monthPath(m.month))
	}
	return ps
}

// monthsIn lists the months that have files in dir (episodesDir, or its
// archive), newest first, with the size of their files together. A missing
// folder, or one that is a link out of the root, holds none.
func (s *Store) monthsIn(ctx context.Context, dir string) ([]monthFiles, error) {
	entries, err := s.b.List(ctx, dir)
	if errors.Is(err, errOutside) || errors.Is(err, errLinkedFolder) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return monthsFrom(entries, dir), nil
}

// monthsFrom is monthsIn from a listing of dir.
func monthsFrom(entries []Entry, dir string) []monthFiles {
	byMonth := map[string]*monthFiles{}
	for _, e := range entries {
		if path.Dir(e.Name) != dir {
			continue // in a folder under dir: the archive under episodes/
		}
		m, part, ok := paths.EpisodeName(path.Base(e.Name))
		if !ok {
			continue
		}
		mf := byMonth[m]
		if mf == nil {
			mf = &monthFiles{month: m}
			byMonth[m] = mf
		}
		mf.size += e.Size
		if part == 0 {
			mf.current = true
		} else {
			mf.parts = append(mf.parts, part)
		}
	}
	months := make([]monthFiles, 0, len(byMonth))
	for _, mf := range byMonth {
		slices.Sort(mf.parts)
		months = append(months, *mf)
	}
	slices.SortFunc(months, func(a, b monthFiles) int { return strings.Compare(b.month, a.month) })
	return months
}

// olderParts says where the older entries of the month whose file is at p
// are, for memory_read: "" when p is not a month's file or the month has
// no parts.
func (s *Store) olderParts(ctx context.Context, p string) string {
	first, last, n := s.monthParts(ctx, p)
	switch {
	case n == 0:
		return ""
	case n == 1:
		return "the month's older entries are in " + first + "; memory_read it, or find entries with memory_search"
	}
	return fmt.Sprintf("the month's older entries are in %d full parts, %s to %s; memory_read them, or find entries with memory_search", n, first, last)
}

// monthParts gives the first and last of the full parts of the month whose
// file is at p, and how many it has: 0 when p is not a month's file or the
// month has no parts.
func (s *Store) monthParts(ctx context.Context, p string) (first, last string, n int) {
	month, ok := paths.MonthOf(p)
	if !ok {
		return "", "", 0
	}
	months, _ := s.monthsIn(ctx, episodesDir)
	for _, m := range months {
		if m.month == month && len(m.parts) > 0 {
			return partPath(month, m.parts[0]), partPath(month, m.parts[len(m.parts)-1]), len(m.parts)
		}
	}
	return "", "", 0
}

// compactedNote starts the line a compacted month's file carries after its
// summary; compactedMark finds it.
const compactedNote = "> Compacted on "

// compactedMark reports whether a month file's head, as parsed (whole or
// its head only, as List parses it), says it was compacted: a line
// "> Compacted on YYYY-MM-DD: " in the blockquote of its summary.
func compactedMark(d *markdown.Doc) bool {
	if !d.Summary.OK {
		return false
	}
	// The blockquote's lines after the Summary paragraph, up to the first
	// that is not one of them.
	for line := range bytes.Lines(d.Src()[d.Summary.End:]) {
		if !bytes.HasPrefix(line, []byte(">")) {
			return false
		}
		if rest, ok := bytes.CutPrefix(line, []byte(compactedNote)); ok && len(rest) > 12 && string(rest[10:12]) == ": " {
			_, err := time.Parse(time.DateOnly, string(rest[:10]))
			return err == nil
		}
	}
	return false
}
