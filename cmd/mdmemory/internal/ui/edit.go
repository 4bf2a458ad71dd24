package ui

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/diff"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// The pages that change the memory: Facts (with procedures, persona and
// the world topics), the conflict and refusal views of a save, Restore,
// and Compaction. Every change is made with the version of the file the
// page showed.

type factsData struct {
	Groups []fileGroup
}

type fileGroup struct {
	ID, Heading, About string
	Files              []fileView
}

// fileView is one file of the Facts page.
type fileView struct {
	Path, Anchor    string
	Title, Summary  string
	Text, Version   string
	Exists, Persona bool
	Lines           []lineView
	Error           string
}

type lineView struct {
	Line         int
	Text, Anchor string
	Multi        bool // the item has more than one line
}

func (h *server) facts(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	files, err := h.s.List(ctx)
	if err != nil {
		h.fail(w, r, http.StatusInternalServerError, "Facts", "The memory could not be listed.", err)
		return
	}
	facts := fileGroup{ID: "facts", Heading: "Facts", About: "What the agent knows for good, loaded into every conversation. Budget: " + thousands(int64(h.opts.FactsBudget)) + " bytes for all fact files together."}
	for _, name := range h.opts.FactFiles {
		facts.Files = append(facts.Files, h.fileView(ctx, paths.Fact(name)))
	}
	procs := fileGroup{ID: "procedures", Heading: "Procedures", About: "Rules learned from experience, each \"- When <situation>: <action>\". Budget: " + thousands(int64(h.opts.ProceduresBudget)) + " bytes.",
		Files: []fileView{h.fileView(ctx, "procedures.md")}}
	persona := fileGroup{ID: "persona", Heading: "Persona", About: "Yours alone: the agent's tools read it but never change it.",
		Files: []fileView{h.fileView(ctx, "persona.md")}}
	d := &factsData{Groups: []fileGroup{facts, procs, persona}}
	if h.opts.World {
		world := fileGroup{ID: "world", Heading: "World topics", About: "Facts shared with other agents. Budget: " + thousands(int64(h.opts.WorldBudget)) + " bytes for all topics together."}
		for _, f := range files {
			if strings.HasPrefix(f.Path, "world/") && f.Error == "" {
				world.Files = append(world.Files, h.fileView(ctx, f.Path))
			}
		}
		d.Groups = append(d.Groups, world)
	}
	h.render(w, r, http.StatusOK, "facts", "Facts", d)
}

// fileView reads the file at p for the Facts page.
func (h *server) fileView(ctx context.Context, p string) fileView {
	v := fileView{Path: p, Anchor: anchor(p, 0), Persona: p == "persona.md"}
	text, version, exists, err := h.current(ctx, p)
	if err != nil {
		v.Error = personWords(err)
		return v
	}
	v.Text, v.Version, v.Exists = text, version, exists
	d := markdown.Parse([]byte(text))
	v.Title, v.Summary = d.Title.Text, d.Summary.Text
	for _, it := range d.Items {
		t := strings.TrimRight(text[it.Start:it.End], "\n")
		v.Lines = append(v.Lines, lineView{Line: it.Line, Text: t, Anchor: anchor(p, it.Line), Multi: strings.Contains(t, "\n")})
	}
	return v
}

// conflictData is the view of a save made over a change made meanwhile.
type conflictData struct {
	Path, Version string // the version the file is at now: a save of the merge is made against it
	Theirs, Yours string
	Merged        string
	Diff          []diffLine
	Problem       string // a refusal, not a conflict
	Conflict      bool
}

// save saves a line, a new line or a whole file, with the version the page
// showed.
func (h *server) save(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, version, mode := r.PostFormValue("path"), r.PostFormValue("version"), r.PostFormValue("mode")
	line, _ := strconv.Atoi(r.PostFormValue("line"))
	text := strings.ReplaceAll(r.PostFormValue("text"), "\r\n", "\n")
	cur, curVersion, _, err := h.current(ctx, p)
	if err != nil {
		h.readFailed(w, r, "Facts", p, err)
		return
	}
	// What the person's change makes of the text the page showed, and of
	// the text there is now.
	edit := func(base string) (string, bool) {
		switch mode {
		case "file":
			return text, true
		case "add":
			return addLine(base, text), true
		case "line":
			return replaceLine(base, line, text)
		}
		return "", false
	}
	// What the change makes of now, a text it was not made on (base is
	// the one it was): for a line, the same line found by its text, not by
	// its number. When it cannot be carried over, the merge to offer is
	// yours for a whole file, and now, to make the change again on, for a
	// line.
	merge := func(now, base, yours string) string {
		switch mode {
		case "add":
			return addLine(now, text)
		case "line":
			if old, ok := itemAt(base, line); ok {
				if merged, ok := replaceItem(now, old, text); ok {
					return merged
				}
			}
		case "file":
			return yours
		}
		return now
	}
	if version != curVersion {
		base, err := "", error(nil)
		if version != "" {
			base, err = h.s.ReadVersion(ctx, p, version)
		}
		yours, ok := edit(base)
		if err != nil || !ok {
			yours = text // the history does not hold what the page showed: the person's text alone
		}
		h.conflict(w, r, p, curVersion, cur, yours, merge(cur, base, yours))
		return
	}
	content, ok := edit(cur)
	if !ok {
		h.fail(w, r, http.StatusBadRequest, "Facts", "The page asked for a change this server does not know; reload it.", nil)
		return
	}
	if p == "persona.md" {
		err = h.s.SetPersona(ctx, content, version)
	} else {
		err = h.s.WriteIf(ctx, p, content, version)
	}
	switch {
	case errors.Is(err, memory.ErrConflict):
		now, nowVersion, _, rerr := h.current(ctx, p)
		if rerr != nil {
			h.readFailed(w, r, "Facts", p, rerr)
			return
		}
		h.conflict(w, r, p, nowVersion, now, content, merge(now, cur, content))
		return
	case hostError(err):
		h.fail(w, r, http.StatusInternalServerError, "Facts", "The change could not be saved.", err)
		return
	case err != nil:
		d := &conflictData{Path: p, Version: version, Yours: content, Merged: content, Problem: personWords(err)}
		h.render(w, r, http.StatusUnprocessableEntity, "conflict", "Facts", d)
		return
	}
	h.changed()
	at := anchor(p, 0)
	if mode == "line" && text != "" {
		at = anchor(p, line)
	}
	http.Redirect(w, r, base(r)+"/facts?done=saved#"+at, http.StatusSeeOther)
}

// conflict shows the text there is now and the person's, with a merge to
// save against the version there is now.
func (h *server) conflict(w http.ResponseWriter, r *http.Request, p, version, theirs, yours, merged string) {
	d := &conflictData{Path: p, Version: version, Theirs: theirs, Yours: yours, Merged: merged, Conflict: true}
	d.Diff = diffLines(diff.Unified(p+" (now)", p+" (yours)", theirs, yours, 2))
	h.render(w, r, http.StatusConflict, "conflict", "Facts", d)
}

// replaceLine replaces the list item whose first line is line with text,
// or removes it when text is empty.
func replaceLine(base string, line int, text string) (string, bool) {
	d := markdown.Parse([]byte(base))
	for _, it := range d.Items {
		if it.Line != line {
			continue
		}
		text = strings.TrimRight(text, "\n")
		if strings.TrimSpace(text) != "" {
			text += "\n"
		} else {
			text = ""
		}
		return base[:it.Start] + text + base[it.End:], true
	}
	return "", false
}

// itemAt is the text of the list item whose first line is line.
func itemAt(base string, line int) (string, bool) {
	for _, it := range markdown.Parse([]byte(base)).Items {
		if it.Line == line {
			return base[it.Start:it.End], true
		}
	}
	return "", false
}

// replaceItem replaces the one list item of now whose text is old with
// text, or removes it when text is empty; false when no item, or more than
// one, is old.
func replaceItem(now, old, text string) (string, bool) {
	var found *markdown.Item
	d := markdown.Parse([]byte(now))
	for i, it := range d.Items {
		if now[it.Start:it.End] == old {
			if found != nil {
				return "", false
			}
			found = &d.Items[i]
		}
	}
	if found == nil {
		return "", false
	}
	return replaceLine(now, found.Line, text)
}

// addLine adds text to the end of base as a list item: "- " is put before
// a line that is no list item or other markdown already.
func addLine(base, text string) string {
	text = strings.TrimSpace(text)
	if text != "" && !strings.ContainsRune("-*+#>|`~", rune(text[0])) && !strings.Contains(text, "\n") {
		text = "- " + text
	}
	base = string(markdown.TrimTrailingBlankLines([]byte(base)))
	if base != "" && !strings.HasSuffix(base, "\n") {
		base += "\n"
	}
	return base + text + "\n"
}

type restoreData struct {
	Path, Version, Want string // Want is the file's version the History page showed
	Diff                []diffLine
	NoDiff              string
	Versions            bool
	Error               string
}

// restorePage shows what a restore from History would change, from the
// content the History page showed to the version to restore, with the
// button that restores it: only if the file is still at the version
// shown.
func (h *server) restorePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	d := &restoreData{Path: q.Get("path"), Version: q.Get("version"), Want: q.Get("want")}
	_, now, _, err := h.current(ctx, d.Path)
	switch {
	case err != nil:
		h.readFailed(w, r, "Restore", d.Path, err)
		return
	case d.Version == "":
		d.Error = "No version to restore was given: choose one in History."
		h.render(w, r, http.StatusUnprocessableEntity, "restore", "Restore", d)
		return
	case now != d.Want:
		d.Error = d.Path + " changed since the History page showed it, so nothing would be restored: a change made meanwhile is never undone unseen. Go back to History, which shows it as it is now."
		h.render(w, r, http.StatusConflict, "restore", "Restore", d)
		return
	}
	d.Diff, d.NoDiff, d.Versions = h.diffOf(ctx, d.Path, d.Want, d.Version)
	h.render(w, r, http.StatusOK, "restore", "Restore", d)
}

// restore restores a version from History, if the file is still at the
// version the page showed.
func (h *server) restore(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, version, want := r.PostFormValue("path"), r.PostFormValue("version"), r.PostFormValue("want")
	err := h.s.RestoreIf(ctx, p, version, want)
	switch {
	case errors.Is(err, memory.ErrConflict):
		h.historyWith(w, r, http.StatusConflict, p, p+" changed since this page showed it, so nothing was restored: a change made meanwhile is never undone unseen. The history below is as it is now; restore again if you still want to.")
		return
	case hostError(err):
		h.fail(w, r, http.StatusInternalServerError, "History", "The version could not be restored.", err)
		return
	case err != nil:
		h.historyWith(w, r, http.StatusUnprocessableEntity, p, personWords(err))
		return
	}
	h.changed()
	http.Redirect(w, r, base(r)+"/history?done=restored&path="+url.QueryEscape(p), http.StatusSeeOther)
}

type compactData struct {
	Before, Keep string
	Preview      bool
	Applied      bool
	Result       *memory.CompactResult
	Error        string
}

// compact previews a compaction with the local rule (a dry run), and
// applies it. The preview settles the options (Before's default, six
// months ago, becomes a month) and its Compact button carries them, so
// that what is applied is what the preview listed.
func (h *server) compact(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var d compactData
	post := r.Method == http.MethodPost
	if post {
		d.Before, d.Keep = r.PostFormValue("before"), r.PostFormValue("keep")
	} else {
		q := r.URL.Query()
		d.Before, d.Keep, d.Preview = q.Get("before"), q.Get("keep"), q.Has("preview")
	}
	d.Before, d.Keep = strings.TrimSpace(d.Before), strings.TrimSpace(d.Keep)
	keep, err := strconv.Atoi(d.Keep)
	if d.Keep != "" && (err != nil || keep < 0) || post && d.Keep == "" {
		d.Error = "Keep must be a number of entries, 0 or more."
		h.render(w, r, http.StatusUnprocessableEntity, "compact", "Compaction", &d)
		return
	}
	if d.Before == "" && !post {
		y, m, _ := h.now().Date()
		d.Before = time.Date(y, m-6, 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
	}
	if !paths.ValidMonth(d.Before) {
		d.Error = "Before must be a month written YYYY-MM (the months before it are condensed), and Keep 0 or more."
		h.render(w, r, http.StatusUnprocessableEntity, "compact", "Compaction", &d)
		return
	}
	d.Keep = strconv.Itoa(keep)
	opts := &memory.CompactOptions{Before: d.Before, KeepLast: keep, DryRun: !post}
	if d.Preview || post {
		res, err := h.s.Compact(ctx, nil, opts)
		switch {
		case hostError(err):
			h.fail(w, r, http.StatusInternalServerError, "Compaction", "The compaction failed.", err)
			return
		case err != nil:
			d.Error = "Before must be a month written YYYY-MM (the months before it are condensed), and Keep 0 or more."
			h.render(w, r, http.StatusUnprocessableEntity, "compact", "Compaction", &d)
			return
		}
		d.Result, d.Applied = &res, post
		if d.Applied {
			h.changed()
		}
	}
	h.render(w, r, http.StatusOK, "compact", "Compaction", &d)
}

// diffLines splits a unified diff into lines styled by their kind.
func diffLines(u string) []diffLine {
	var out []diffLine
	for l := range strings.Lines(u) {
		l = strings.TrimSuffix(l, "\n")
		class := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			class = "file"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		}
		out = append(out, diffLine{Class: class, Text: l})
	}
	return out
}
