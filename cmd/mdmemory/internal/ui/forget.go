package ui

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mdmemory/memory"
)

// Forgetting, from History: a form posts the text (never in a URL, which
// logs and the browser's history keep); "Look for it" lists the files and
// versions that hold it (Store.Locate), and "Forget" takes it out of them
// all (Store.Forget).

type forgetData struct {
	Path   string // the file whose History the form was on, to go back to
	Text   string
	Places []memory.Place
}

// forget shows where a text is, or forgets it and goes back to History.
func (h *server) forget(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d := &forgetData{Path: r.PostFormValue("path"), Text: r.PostFormValue("text")}
	if r.PostFormValue("preview") != "" {
		places, err := h.s.Locate(ctx, d.Text)
		if h.forgetFailed(w, r, d.Path, err) {
			return
		}
		d.Places = places
		h.render(w, r, http.StatusOK, "forget", "Forget", d)
		return
	}
	n, err := h.s.Forget(ctx, d.Text)
	if h.forgetFailed(w, r, d.Path, err) {
		return
	}
	h.changed()
	http.Redirect(w, r, "/history?done=forgot&n="+strconv.Itoa(n)+"&path="+url.QueryEscape(d.Path), http.StatusSeeOther)
}

// forgetFailed renders what went wrong, when err is not nil.
func (h *server) forgetFailed(w http.ResponseWriter, r *http.Request, p string, err error) bool {
	switch {
	case err == nil:
		return false
	case hostError(err):
		h.fail(w, r, http.StatusInternalServerError, "Forget", "The text could not be forgotten everywhere; what was done stays done, and forgetting it again finishes the work.", err)
	case errors.Is(err, memory.ErrInvalidContent):
		var me *memory.Error
		errors.As(err, &me)
		h.historyWith(w, r, http.StatusUnprocessableEntity, p, "Nothing was forgotten: "+me.Hint+".")
	default:
		h.historyWith(w, r, http.StatusUnprocessableEntity, p, personWords(err))
	}
	return true
}
