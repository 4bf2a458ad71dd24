package ui

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/diff"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// The pages that show: Overview, Timeline, an entry, a file, Search and
// History. The pages that change are in edit.go.

type gauge struct {
	Name, Link  string
	Used, Limit int64
	Over        bool
}

type overviewData struct {
	Gauges                            []gauge
	FactLines, Months, Entries, Files int
	Topics                            int
	World                             bool
	Unreadable                        []memory.FileInfo
	Changes                           []changeView
	Findings                          []memory.Finding
	CheckedAt                         time.Time
	Checking                          bool
	CheckErr                          string
}

func (h *server) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	files, err := h.s.List(ctx)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, "Overview", "The memory could not be listed.", err)
		return
	}
	d := &overviewData{World: h.opts.World}
	var facts, procs, world int64
	for _, f := range files {
		switch {
		case f.Error != "":
			d.Unreadable = append(d.Unreadable, f)
			continue
		case strings.HasPrefix(f.Path, "facts/"):
			facts += f.Size
			text, err := h.s.Read(ctx, f.Path)
			if err == nil {
				d.FactLines += len(markdown.Parse([]byte(text)).Items)
			}
		case f.Path == "procedures.md":
			procs = f.Size
		case strings.HasPrefix(f.Path, "world/"):
			world += f.Size
			d.Topics++
		}
		d.Files++
	}
	d.Gauges = []gauge{
		{Name: "Facts", Link: base(r) + "/facts#facts", Used: facts, Limit: int64(h.opts.FactsBudget)},
		{Name: "Procedures", Link: base(r) + "/facts#procedures-md", Used: procs, Limit: int64(h.opts.ProceduresBudget)},
	}
	if h.opts.World {
		d.Gauges = append(d.Gauges, gauge{Name: "World topics", Link: base(r) + "/facts#world", Used: world, Limit: int64(h.opts.WorldBudget)})
	}
	for i := range d.Gauges {
		d.Gauges[i].Over = d.Gauges[i].Used > d.Gauges[i].Limit
	}
	ms := months(files)
	d.Months = len(ms)
	for i := range ms {
		if err := h.fill(ctx, &ms[i], false); err != nil {
			h.fail(w, r, http.StatusInternalServerError, "Overview", "The months could not be read.", err)
			return
		}
		d.Entries += ms[i].Count
		d.Files += ms[i].Parts
	}
	changes, _, err := h.changes(ctx, "", &memory.HistoryOptions{Limit: 10})
	if err != nil {
		h.log("history", err)
	}
	for _, c := range changes {
		d.Changes = append(d.Changes, changeView{Change: c})
	}
	f, at, running, err := h.findings(ctx)
	d.Findings, d.CheckedAt, d.Checking = f, at, running
	if err != nil {
		d.CheckErr = err.Error()
	}
	h.render(w, r, http.StatusOK, "overview", "Overview", d)
}

type timelineData struct {
	Index         []monthView
	Shown         []monthView
	Newer, Older  string // the from= of the pages around this one
	NewestShowing string
}

// monthsPerPage is how many months the Timeline shows at once: a page of
// a few hundred entries, not ten years of them.
const monthsPerPage = 3

func (h *server) timeline(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	files, err := h.s.List(ctx)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, "Timeline", "The memory could not be listed.", err)
		return
	}
	d := &timelineData{Index: months(files)}
	from := 0
	if m := r.URL.Query().Get("from"); m != "" {
		from = slices.IndexFunc(d.Index, func(v monthView) bool { return v.Month <= m })
		if from < 0 {
			from = len(d.Index)
		}
	}
	to := min(from+monthsPerPage, len(d.Index))
	for i := range d.Index {
		if err := h.fill(ctx, &d.Index[i], i >= from && i < to); err != nil {
			h.fail(w, r, http.StatusInternalServerError, "Timeline", "The months could not be read.", err)
			return
		}
	}
	d.Shown = d.Index[from:to]
	if from > 0 {
		d.Newer = d.Index[max(from-monthsPerPage, 0)].Month
	}
	if to < len(d.Index) {
		d.Older = d.Index[to].Month
	}
	h.render(w, r, http.StatusOK, "timeline", "Timeline", d)
}

type entryData struct {
	Path, Month string
	Entry       entryView
	Text        string
}

// entry shows one episode entry whole; a fact line opens on the Facts
// page.
func (h *server) entry(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p := r.URL.Query().Get("path")
	line, _ := strconv.Atoi(r.URL.Query().Get("line"))
	if !strings.HasPrefix(p, "episodes/") {
		http.Redirect(w, r, base(r)+"/facts#"+anchor(p, line), http.StatusSeeOther)
		return
	}
	text, err := h.s.Read(ctx, p)
	if err != nil {
		h.readFailed(w, r, "Timeline", p, err)
		return
	}
	d := markdown.Parse([]byte(text))
	for _, e := range d.Entries {
		if e.Line != line {
			continue
		}
		month, _, _ := paths.EpisodeName(strings.TrimPrefix(strings.TrimPrefix(p, "episodes/"), "archive/"))
		v := parseEntries(p, text[e.Start:e.End])
		ed := &entryData{Path: p, Month: month, Text: strings.TrimRight(text[e.Start:e.End], "\n")}
		if len(v) > 0 {
			ed.Entry = v[0]
			ed.Entry.Line = line
		}
		h.render(w, r, http.StatusOK, "entry", "Entry", ed)
		return
	}
	http.Redirect(w, r, base(r)+"/file?path="+pathEscape(p), http.StatusSeeOther)
}

type fileData struct {
	Path, Text string
	Version    string // the version shown, not the current content
	Archived   bool
}

// file shows a file as it is, read only: an archived original, a part.
func (h *server) file(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("path")
	text, err := h.s.Read(r.Context(), p)
	if err != nil {
		h.readFailed(w, r, "File", p, err)
		return
	}
	h.render(w, r, http.StatusOK, "file", p, &fileData{Path: p, Text: text, Archived: strings.HasPrefix(p, "episodes/archive/")})
}

// version shows the content the file at path had at version v, read
// only: what a diff too large to show compares.
func (h *server) version(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, v := q.Get("path"), q.Get("v")
	text, err := h.s.ReadVersion(r.Context(), p, v)
	if err != nil {
		h.readFailed(w, r, "Version", p+" at version "+short(v), err)
		return
	}
	h.render(w, r, http.StatusOK, "file", p+" at version "+short(v), &fileData{Path: p, Text: text, Version: v})
}

// readFailed says why the file at p cannot be shown.
func (h *server) readFailed(w http.ResponseWriter, r *http.Request, title, p string, err error) {
	switch {
	case errors.Is(err, memory.ErrNotFound):
		h.fail(w, r, http.StatusNotFound, title, p+" does not exist (any more).", nil)
	case errors.Is(err, memory.ErrInvalidPath):
		h.fail(w, r, http.StatusNotFound, title, fmt.Sprintf("%q is not a file of this memory.", p), nil)
	default:
		h.fail(w, r, http.StatusInternalServerError, title, p+" could not be read.", err)
	}
}

func pathEscape(p string) string {
	return strings.ReplaceAll(strings.ReplaceAll(p, "&", "%26"), "#", "%23")
}

type searchData struct {
	Query string
	Hits  []hitView
	Err   string
}

type hitView struct {
	Link           string
	Path, Date     string
	Line           int
	Title, Snippet template.HTML
}

func (h *server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	d := &searchData{Query: q}
	if strings.TrimSpace(q) != "" {
		hits, err := h.s.Search(r.Context(), q, &memory.SearchOptions{Limit: 20})
		switch {
		case hostError(err):
			h.fail(w, r, http.StatusInternalServerError, "Search", "The memory could not be searched.", err)
			return
		case err != nil:
			d.Err = personWords(err)
		}
		for _, hit := range hits {
			v := hitView{Path: hit.Path, Date: hit.Date, Line: hit.Line, Title: mark(hit.Title, q), Snippet: mark(hit.Snippet, q)}
			if strings.HasPrefix(hit.Path, "episodes/") {
				v.Link = base(r) + fmt.Sprintf("/entry?path=%s&line=%d", pathEscape(hit.Path), hit.Line)
			} else {
				v.Link = base(r) + "/facts#" + anchor(hit.Path, hit.Line)
			}
			d.Hits = append(d.Hits, v)
		}
	}
	h.render(w, r, http.StatusOK, "search", "Search", d)
}

type historyData struct {
	Path, Actor string
	Files       []string
	Actors      []string
	Changes     []changeView
	More        int  // the limit that shows more; 0 when all are shown
	AtMost      bool // more changes than a page shows at most
	Error       string
	Unreadable  []unreadableLog // the files whose history could not be read
}

// unreadableLog is a file whose history could not be read, and why.
type unreadableLog struct {
	Path, Err string
}

type changeView struct {
	memory.Change
	Diff       []diffLine
	NoDiff     string // why no diff is shown
	Versions   bool   // link the versions before and after: the diff is not shown whole
	Want       string // the file's current version, for RestoreIf
	Current    bool   // the change made the file's current version
	CanRestore bool
}

type diffLine struct {
	Class, Text string
}

// historyPage is how many changes History shows at first, and
// historyMost the most it shows at once, however much is asked for.
const (
	historyPage = 20
	historyMost = 200
)

// The bounds of the diffs a page shows: a diff longer than diffLines lines
// or diffBytes bytes is left out for links to the versions, and past
// pageDiffBytes of diffs on one page, the next changes show none. A log
// holds whatever files were written, and a page stays one a browser shows.
const (
	maxDiffLines  = 200
	maxDiffBytes  = 64 << 10
	maxPageDiffs  = 1 << 20
	diffTooLarge  = "The diff is too large to show here (more than 200 lines or 64 KB): view the versions."
	pageDiffsFull = "The diff is left out: this page shows 1 MB of diffs at most. Filter by file, or view the versions."
)

func (h *server) history(w http.ResponseWriter, r *http.Request) {
	h.historyWith(w, r, http.StatusOK, r.URL.Query().Get("path"), "")
}

func (h *server) historyWith(w http.ResponseWriter, r *http.Request, status int, p, msg string) {
	ctx := r.Context()
	q := r.URL.Query()
	d := &historyData{Path: p, Actor: q.Get("actor"), Error: msg}
	limit, _ := strconv.Atoi(q.Get("limit"))
	limit = min(max(limit, historyPage), historyMost)
	changes, unreadable, err := h.changes(ctx, p, &memory.HistoryOptions{Actor: d.Actor, Limit: limit + 1})
	d.Unreadable = unreadable
	switch {
	case hostError(err):
		h.fail(w, r, http.StatusInternalServerError, "History", "The history could not be read.", err)
		return
	case err != nil:
		d.Error = personWords(err)
	}
	if len(changes) > limit {
		changes = changes[:limit]
		if limit < historyMost {
			d.More = min(limit*2, historyMost)
		} else {
			d.AtMost = true
		}
	}
	if files, err := h.s.List(ctx); err == nil {
		for _, f := range files {
			if f.Error == "" {
				d.Files = append(d.Files, f.Path)
			}
		}
	}
	current := map[string]string{}
	budget := maxPageDiffs
	for _, c := range changes {
		if _, ok := current[c.Path]; !ok {
			_, v, _, err := h.current(ctx, c.Path)
			if err != nil {
				v = "?"
			}
			current[c.Path] = v
		}
		if c.Actor != "" && !slices.Contains(d.Actors, c.Actor) {
			d.Actors = append(d.Actors, c.Actor)
		}
		v := changeView{Change: c, Want: current[c.Path]}
		v.Current = c.New == v.Want
		v.CanRestore = c.New != "" && !v.Current && v.Want != "?"
		if budget > 0 {
			v.Diff, v.NoDiff, v.Versions = h.diffOf(ctx, c.Path, c.Old, c.New)
			budget -= diffSize(v.Diff)
		} else {
			v.NoDiff, v.Versions = pageDiffsFull, true
		}
		d.Changes = append(d.Changes, v)
	}
	slices.Sort(d.Actors)
	h.render(w, r, status, "history", "History", d)
}

// changes is the history of the file at p, or of every file for "". When
// the history of every file cannot be read (one log too large or
// unreadable), it is read file by file, and the files whose history could
// not be read are returned with why: the others stay reachable.
func (h *server) changes(ctx context.Context, p string, opts *memory.HistoryOptions) ([]memory.Change, []unreadableLog, error) {
	changes, err := h.s.History(ctx, p, opts)
	if p != "" || !hostError(err) || ctx.Err() != nil {
		return changes, nil, err
	}
	h.log("history", err)
	files, lerr := h.s.List(ctx)
	if lerr != nil {
		return nil, nil, err
	}
	var bad []unreadableLog
	changes = nil
	for _, f := range files {
		cs, err := h.s.History(ctx, f.Path, opts)
		if err != nil {
			bad = append(bad, unreadableLog{Path: f.Path, Err: err.Error()})
			continue
		}
		changes = append(changes, cs...)
	}
	slices.SortStableFunc(changes, func(a, b memory.Change) int { return b.Time.Compare(a.Time) })
	if opts != nil && opts.Limit > 0 && len(changes) > opts.Limit {
		changes = changes[:opts.Limit]
	}
	return changes, bad, nil
}

// diffOf is the change of the file at p from the version old to new as a
// unified diff, line by line; or, when there is none to show, why, and
// whether to link the versions instead.
func (h *server) diffOf(ctx context.Context, p, old, new string) ([]diffLine, string, bool) {
	var before, after string
	var err error
	if old != "" {
		if before, err = h.s.ReadVersion(ctx, p, old); err != nil {
			return nil, "The content before this change is no longer kept.", false
		}
	}
	if new != "" {
		if after, err = h.s.ReadVersion(ctx, p, new); err != nil {
			return nil, "The content this change made is no longer kept.", false
		}
	}
	u := diff.Unified(p+"@"+short(old), p+"@"+short(new), before, after, 2)
	if u == "" {
		return nil, "No difference in content.", false
	}
	if len(u) > maxDiffBytes || strings.Count(u, "\n") > maxDiffLines {
		return nil, diffTooLarge, true
	}
	return diffLines(u), "", false
}

// diffSize is the bytes of the diff d.
func diffSize(d []diffLine) int {
	n := 0
	for _, l := range d {
		n += len(l.Text) + 1
	}
	return n
}

func short(v string) string {
	if v == "" {
		return "none"
	}
	return v[:min(len(v), 8)]
}
