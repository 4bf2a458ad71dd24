package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// What the pages read, and what they keep between two renders: the parsed
// months (a month is parsed again only when its text changed) and Check's
// findings (run again in the background once the memory changed).

// entryView is one episode entry as the Timeline shows it.
type entryView struct {
	Path    string // the file that holds it: the month's file or a part
	Line    int    // 1-based line of its heading
	Title   string
	Date    string
	Summary string
	Lesson  string
}

// parsedFile is a month's file or part, parsed.
type parsedFile struct {
	text    string
	entries []entryView
}

// monthCache keeps the parsed month files, by path.
type monthCache struct {
	mu sync.Mutex
	by map[string]*parsedFile
}

// entriesOf returns the entries of the episode file at p, oldest first,
// parsing it only when its text changed since the last time; ok is false
// when it does not exist.
func (h *server) entriesOf(ctx context.Context, p string) (entries []entryView, ok bool, err error) {
	text, err := h.s.Read(ctx, p)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	c := &h.months
	c.mu.Lock()
	f := c.by[p]
	c.mu.Unlock()
	if f != nil && f.text == text {
		return f.entries, true, nil
	}
	f = &parsedFile{text: text, entries: parseEntries(p, text)}
	c.mu.Lock()
	if c.by == nil {
		c.by = map[string]*parsedFile{}
	}
	c.by[p] = f
	c.mu.Unlock()
	return f.entries, true, nil
}

// parseEntries reads the entries of an episode file as the library does
// (internal/markdown): each "## " section with its "- Date:" and
// "- Summary:" values, and its "- Lesson:" line.
func parseEntries(p, text string) []entryView {
	d := markdown.Parse([]byte(text))
	out := make([]entryView, 0, len(d.Entries))
	items := d.Items
	for _, e := range d.Entries {
		v := entryView{Path: p, Line: e.Line, Title: e.Title, Date: e.Date, Summary: e.Summary}
		// The items are in source order: skip those before the entry.
		for len(items) > 0 && items[0].Start < e.Start {
			items = items[1:]
		}
		for _, it := range items {
			if it.Start >= e.End {
				break
			}
			if l, ok := strings.CutPrefix(it.Text, "Lesson:"); ok && v.Lesson == "" {
				v.Lesson = strings.TrimSpace(l)
			}
		}
		out = append(out, v)
	}
	return out
}

// monthView is one month of the Timeline: its file and parts as one.
type monthView struct {
	Month     string
	Entries   []entryView // newest first
	Count     int
	Parts     int
	Compacted bool
	Archive   string // the archived original, for a compacted month
	Error     string // why it cannot be read
}

// months lists the months, newest first, as List gives them.
func months(files []memory.FileInfo) []monthView {
	var out []monthView
	for _, f := range files {
		m, ok := paths.MonthOf(f.Path)
		if !ok {
			continue
		}
		v := monthView{Month: m, Parts: f.Parts, Compacted: f.Compacted, Error: f.Error}
		if f.Compacted {
			v.Archive = paths.Archive(f.Path)
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b monthView) int { return strings.Compare(b.Month, a.Month) })
	return out
}

// fill reads the entries of the month m, its parts first: newest first
// when entries is set, else only counted.
func (h *server) fill(ctx context.Context, m *monthView, entries bool) error {
	if m.Error != "" {
		return nil
	}
	files := make([]string, 0, m.Parts+1)
	for i := 1; i <= m.Parts; i++ {
		files = append(files, paths.Part(m.Month, i))
	}
	files = append(files, paths.Month(m.Month))
	m.Count = 0
	for _, p := range files {
		es, _, err := h.entriesOf(ctx, p)
		if err != nil {
			return err
		}
		m.Count += len(es)
		if entries {
			m.Entries = append(m.Entries, es...)
		}
	}
	slices.Reverse(m.Entries)
	return nil
}

// checkCache keeps Check's findings, and runs Check again in the
// background when they may be stale: Check reads every file, which takes
// longer than a page may.
type checkCache struct {
	mu       sync.Mutex
	findings []memory.Finding
	err      error
	at       time.Time     // when the findings were made; zero before the first run
	stale    bool          // a change was made on the page since
	running  chan struct{} // closed when the run under way ends
}

// checkAge is how long findings are shown before Check runs again.
const checkAge = time.Minute

// findings returns the findings, when they were made, and whether a newer
// run is under way. The first call waits for Check.
func (h *server) findings(ctx context.Context) ([]memory.Finding, time.Time, bool, error) {
	c := &h.check
	c.mu.Lock()
	if c.at.IsZero() {
		ch := h.runCheck()
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, time.Time{}, true, ctx.Err()
		}
		c.mu.Lock()
	} else if c.stale || time.Since(c.at) > checkAge {
		h.runCheck()
	}
	defer c.mu.Unlock()
	return c.findings, c.at, c.running != nil, c.err
}

// runCheck starts Check unless it runs, and returns the channel closed
// when it ends. The caller holds h.check.mu.
func (h *server) runCheck() chan struct{} {
	c := &h.check
	if c.running != nil {
		return c.running
	}
	ch := make(chan struct{})
	c.running = ch
	c.stale = false
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		f, err := h.s.Check(ctx)
		cancel()
		c.mu.Lock()
		c.findings, c.err, c.at, c.running = f, err, time.Now(), nil
		c.mu.Unlock()
		close(ch)
	}()
	return ch
}

// changed notes a change made on the page: Check runs again.
func (h *server) changed() {
	h.check.mu.Lock()
	h.check.stale = true
	h.check.mu.Unlock()
}

// warm builds the search index, parses every month and runs Check.
func (h *server) warm(ctx context.Context) {
	h.check.mu.Lock()
	ch := h.runCheck()
	h.check.mu.Unlock()
	h.s.Search(ctx, "", &memory.SearchOptions{Limit: 1})
	if files, err := h.s.List(ctx); err == nil {
		for _, m := range months(files) {
			if ctx.Err() != nil {
				return
			}
			h.fill(ctx, &m, false)
		}
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// current reads the file at p as the page shows it: its text and
// version, "" for a file that does not exist.
func (h *server) current(ctx context.Context, p string) (text, version string, exists bool, err error) {
	text, err = h.s.Read(ctx, p)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return "", "", false, nil
	case err != nil:
		return "", "", false, err
	}
	return text, memory.Version(text), true, nil
}
