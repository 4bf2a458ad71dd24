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
		{Name: "Facts", Link: "/facts#facts", Used: facts, Limit: int64(h.opts.FactsBudget)},
		{Name: "Procedures", Link: "/facts#procedures-md", Used: procs, Limit: int64(h.opts.ProceduresBudget)},
	}
	if h.opts.World {
		d.Gauges = append(d.Gauges, gauge{Name: "World topics", Link: "/facts#world", Used: world, Limit: int64(h.opts.WorldBudget)})
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
	changes, err := h.s.History(ctx, "", &memory.HistoryOptions{Limit: 10})
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
		http.Redirect(w, r, "/facts#"+anchor(p, line), http.StatusSeeOther)
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
	http.Redirect(w, r, "/file?path="+pathEscape(p), http.StatusSeeOther)
}

type fileData struct {
	Path, Text string
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
				v.Link = fmt.Sprintf("/entry?path=%s&line=%d", pathEscape(hit.Path), hit.Line)
			} else {
				v.Link = "/facts#" + anchor(hit.Path, hit.Line)
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
	More        int // the limit that shows more; 0 when all are shown
	Error       string
}

type changeView struct {
	memory.Change
	Diff       []diffLine
	NoDiff     string // why no diff is shown
	Want       string // the file's current version, for RestoreIf
	Current    bool   // the change made the file's current version
	CanRestore bool
}

type diffLine struct {
	Class, Text string
}

// historyPage is how many changes History shows at first.
const historyPage = 20

func (h *server) history(w http.ResponseWriter, r *http.Request) {
	h.historyWith(w, r, http.StatusOK, r.URL.Query().Get("path"), "")
}

func (h *server) historyWith(w http.ResponseWriter, r *http.Request, status int, p, msg string) {
	ctx := r.Context()
	q := r.URL.Query()
	d := &historyData{Path: p, Actor: q.Get("actor"), Error: msg}
	limit, _ := strconv.Atoi(q.Get("limit"))
	limit = min(max(limit, historyPage), 1000)
	changes, err := h.s.History(ctx, p, &memory.HistoryOptions{Actor: d.Actor, Limit: limit + 1})
	switch {
	case hostError(err):
		h.fail(w, r, http.StatusInternalServerError, "History", "The history could not be read.", err)
		return
	case err != nil:
		d.Error = personWords(err)
	}
	if len(changes) > limit {
		changes, d.More = changes[:limit], limit*2
	}
	if files, err := h.s.List(ctx); err == nil {
		for _, f := range files {
			if f.Error == "" {
				d.Files = append(d.Files, f.Path)
			}
		}
	}
	current := map[string]string{}
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
		v.Diff, v.NoDiff = h.diffOf(ctx, c)
		d.Changes = append(d.Changes, v)
	}
	slices.Sort(d.Actors)
	h.render(w, r, status, "history", "History", d)
}

// diffOf is the change c as a unified diff, line by line.
func (h *server) diffOf(ctx context.Context, c memory.Change) ([]diffLine, string) {
	var before, after string
	var err error
	if c.Old != "" {
		if before, err = h.s.ReadVersion(ctx, c.Path, c.Old); err != nil {
			return nil, "The content before this change is no longer kept."
		}
	}
	if c.New != "" {
		if after, err = h.s.ReadVersion(ctx, c.Path, c.New); err != nil {
			return nil, "The content this change made is no longer kept."
		}
	}
	u := diff.Unified(c.Path+"@"+short(c.Old), c.Path+"@"+short(c.New), before, after, 2)
	if u == "" {
		return nil, "No difference in content."
	}
	return diffLines(u), ""
}

func short(v string) string {
	if v == "" {
		return "none"
	}
	return v[:min(len(v), 8)]
}
