// Package ui is mdmemory's page for people: one memory shown in a browser,
// to browse, search, fix and undo. Everything is rendered on the server
// with html/template from files embedded in the binary; every page reads
// without JavaScript, and the little script there is only helps.
//
// Every change goes through the library with the version of the file the
// page showed (WriteIf, SetPersona, RestoreIf), so a change made meanwhile
// by the agent or in an editor is never overwritten: the page shows both
// texts instead and lets the person merge them. Every change is recorded
// in the history as made by "ui".
//
// Security: the handler checks every request's Host and Origin as
// mdmemory mcp --http does (mcpserver.Guard); it always asks for a token
// (one made at random when none is given): a browser logs in once, with
// the token in the address (?token=...) or typed into the login form, and
// gets a session cookie (HttpOnly, SameSite=Strict) in exchange, good for
// 12 hours at most and 1 hour unused, until Log out; the session's pages
// are under a path of its own, which its cookie is scoped to, so that no
// other port of the host gets it (see sessionRoot); a request the browser
// marks as made by another site or port is refused; every form carries
// the session's CSRF token; and every answer forbids framing, sniffing and
// any script, style or image from elsewhere.
package ui

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
)

// Actor is the name the history records for the changes made on the page.
const Actor = "ui"

// Options configure [New]. The zero value serves a memory with the
// library's default fact files and budgets, behind a token made at random
// ([Server.Token]).
type Options struct {
	// Token is the secret a browser logs in with (see the package
	// documentation); a script may send it as "Authorization: Bearer
	// TOKEN" instead. "" makes one at random: 128 bits from crypto/rand.
	Token string

	// AllowedHosts and AllowedOrigins are those of mcpserver.Options: the
	// other names the server is reached by, and the other origins whose
	// pages may post to it.
	AllowedHosts, AllowedOrigins []string

	// FactFiles are the names of the fact files under facts/ ("user.md"),
	// as the program using the memory configures them; nil means user.md
	// and memory.md.
	FactFiles []string

	// The budgets of the program using the memory, in bytes; 0 means the
	// library's defaults (15,360, 4,096 and 15,360). World is set when
	// the memory shares world topics.
	FactsBudget, ProceduresBudget, WorldBudget int
	World                                      bool

	// Logger receives the errors of the host (a disk, a network) that a
	// page shows only briefly. nil logs nothing.
	Logger *slog.Logger
}

//go:embed templates/*.html static/*
var files embed.FS

// server is the handler of one memory.
type server struct {
	s      *memory.Store
	opts   Options
	key    []byte // signs session ids and derives CSRF tokens; new for each handler
	pages  map[string]*template.Template
	static http.Handler
	months monthCache
	check  checkCache

	sessions sessions
	now      func() time.Time // the clock of sessions and compaction's default; time.Now
}

// Server is the page for one memory: an http.Handler.
type Server struct {
	h       *server
	guarded http.Handler
}

// New returns the page for the memory s. It does not close s.
func New(s *memory.Store, opts *Options) *Server {
	h := newServer(s, opts)
	return &Server{h: h, guarded: mcpserver.Guard(h, &mcpserver.Options{AllowedHosts: h.opts.AllowedHosts, AllowedOrigins: h.opts.AllowedOrigins})}
}

// ServeHTTP serves the page, behind the Host and Origin checks.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guarded.ServeHTTP(&closeOnRefusal{ResponseWriter: w}, r)
}

// Token is the token a browser logs in with: the one of [Options], or the
// one made at random when it gave none.
func (s *Server) Token() string { return s.h.opts.Token }

// closeOnRefusal closes the connection after a refusal (401, 403): a
// client without the token, or from another site, keeps no connection
// open.
type closeOnRefusal struct {
	http.ResponseWriter
}

func (w *closeOnRefusal) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		w.Header().Set("Connection", "close")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeOnRefusal) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Warm builds what the first pages would wait for (the search index, the
// parsed months, Check's findings) before a person asks; it returns when
// done, or when ctx is.
func (s *Server) Warm(ctx context.Context) { s.h.warm(ctx) }

func newServer(s *memory.Store, opts *Options) *server {
	h := &server{s: s, key: make([]byte, 32), now: time.Now, sessions: sessions{live: map[string]*liveSession{}}}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.Token == "" {
		h.opts.Token = rand.Text()
	}
	if h.opts.FactFiles == nil {
		h.opts.FactFiles = []string{"user.md", "memory.md"}
	}
	if h.opts.FactsBudget == 0 {
		h.opts.FactsBudget = 15360
	}
	if h.opts.ProceduresBudget == 0 {
		h.opts.ProceduresBudget = 4096
	}
	if h.opts.WorldBudget == 0 {
		h.opts.WorldBudget = 15360
	}
	rand.Read(h.key)
	h.pages = parsePages()
	st, _ := fs.Sub(files, "static")
	h.static = http.StripPrefix("/static/", http.FileServerFS(st))
	return h
}

// ServeHTTP sets the security headers, authenticates the request, checks
// the CSRF token of every form sent, and serves the page.
func (h *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the page's own forms, which the Origin check
	// refuses; same-origin still tells no other site where a link came
	// from.
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	if strings.HasPrefix(r.URL.Path, "/static/") && r.Method == http.MethodGet {
		hd.Set("Cache-Control", "max-age=3600")
		h.static.ServeHTTP(w, r)
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "same-site" || site == "cross-site" {
		// A page of another site, or of another port of this host (which
		// browsers count as the same site), made the browser send this:
		// it gets nothing, whatever cookie came with it.
		w.Header().Set("Connection", "close")
		http.Error(w, "Forbidden: a request made by a page of another site or port; open the page's own address instead", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	key, r := sessionPath(r)
	sid, base, bearer, ok := h.authenticate(w, r, key)
	if !ok {
		return
	}
	if r.Method == http.MethodPost && !bearer {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read: "+err.Error(), http.StatusBadRequest)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(h.csrf(sid))) != 1 {
			http.Error(w, "Forbidden: the form has no valid CSRF token; reload the page and try again", http.StatusForbidden)
			return
		}
	}
	ctx := context.WithValue(r.Context(), sessionKey{}, sid)
	ctx = context.WithValue(ctx, baseKey{}, base)
	h.route(w, r.WithContext(memory.WithActor(ctx, Actor)))
}

// maxForm bounds a request's body: a whole file (1 MiB) and the rest of
// its form.
const maxForm = 3 << 20

// sessionKey holds a request's session id in its context ("bearer" for
// the token in an Authorization header), baseKey the path its pages are
// under ("" for the bearer).
type (
	sessionKey struct{}
	baseKey    struct{}
)

// sessionRoot starts the path of every page of a session: a session's
// pages are under /s/KEY/, where KEY is the session's own (pathKey), and
// its cookie is scoped to that path.
//
// This is what keeps a session to the page's own origin. Browsers scope
// cookies by host, not by port, and count 127.0.0.1:9999 as the same site
// as 127.0.0.1:7337 (SameSite does not help): a cookie scoped to "/" goes
// with every request the browser makes to any port of the host, so a
// page another local user serves on another port would receive it, and
// could replay it. A cookie scoped to /s/KEY/ goes only to paths under
// it, which nobody without KEY can name; and a request needs both the
// cookie and KEY, so neither alone (a cookie seen, an address seen) is a
// session.
const sessionRoot = "/s/"

// sessionPath splits a request's path under a session's (/s/KEY/REST)
// into KEY and a request for /REST; any other request is returned as it
// is, with no key.
func sessionPath(r *http.Request) (string, *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, sessionRoot)
	if !ok {
		return "", r
	}
	key, rest, _ := strings.Cut(rest, "/")
	u := *r.URL
	u.Path, u.RawPath = "/"+rest, ""
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = &u
	return key, r2
}

// base is the path the pages of r's session are under: "/s/KEY", or ""
// for a request with the token in an Authorization header.
func base(r *http.Request) string {
	b, _ := r.Context().Value(baseKey{}).(string)
	return b
}

// pathKey is the key of the path of the session id: a signature of the
// id, which nobody can make without the server's key.
func (h *server) pathKey(id string) string { return h.sign("path", id) }

// authenticate returns the request's session and the path its pages are
// under: from its cookie and the key in its path (key, see sessionRoot),
// or a new one for the token given in the address or the login form.
// bearer reports a request that carried the token in an Authorization
// header, which no other site can make a browser send, and so needs no
// CSRF token. When it reports false, it has answered the request (the
// login page, or a redirect).
//
// A token in the address is always taken out of it: the answer is a
// redirect to the same address without it, so that it stays in no
// history, bookmark or Referer, even when the browser was logged in
// already.
func (h *server) authenticate(w http.ResponseWriter, r *http.Request, key string) (sid, base string, bearer, ok bool) {
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	if q := r.URL.Query(); get && q.Has("token") {
		tok := q.Get("token")
		q.Del("token")
		target := "/"
		if p, ok := localPath(r.URL.EscapedPath()); ok && p != "/login" {
			target = p
		}
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		if id, in := h.session(r, key); in {
			target = sessionRoot + h.pathKey(id) + target
		} else if h.tokenOK(tok) {
			target = h.newSession(w, r) + target
		} else {
			target = "/login?failed=1&next=" + url.QueryEscape(target)
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return "", "", false, false
	}
	if sid, ok := h.session(r, key); ok {
		base := sessionRoot + key
		if r.URL.Path == "/login" && r.Method == http.MethodGet {
			http.Redirect(w, r, base+"/", http.StatusSeeOther)
			return "", "", false, false
		}
		return sid, base, false, true
	}
	if scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " "); found && strings.EqualFold(scheme, "Bearer") && h.tokenOK(strings.TrimSpace(tok)) {
		return "bearer", "", true, true
	}
	if r.URL.Path == "/login" && r.Method == http.MethodPost && h.tokenOK(r.PostFormValue("token")) {
		base := h.newSession(w, r)
		next, ok := localPath(r.PostFormValue("next"))
		if !ok {
			next = "/"
		}
		http.Redirect(w, r, base+next, http.StatusSeeOther)
		return "", "", false, false
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mdmemory"`)
	d := &loginData{Next: "/"}
	if r.URL.Path == "/login" {
		d.Failed = r.Method == http.MethodPost || r.URL.Query().Get("failed") == "1"
		if next, ok := localPath(r.URL.Query().Get("next")); ok {
			d.Next = next
		}
	} else if next, ok := localPath(r.URL.RequestURI()); ok {
		d.Next = next
	}
	h.render(w, r, http.StatusUnauthorized, "login", "Log in", d)
	return "", "", false, false
}

type loginData struct {
	Next   string
	Failed bool
}

// localPath returns s as a path of this server, with its query, when it
// is one and nothing else: no scheme, no host, one '/' at its start, no
// control character or backslash (which browsers drop or read as '/', so
// that "/\t/evil.example/" would lead to another site). It is how a
// redirect target from a request (the login form's next, the address a
// token came with) is made safe.
func localPath(s string) (string, bool) {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || !clean(s) {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" ||
		!strings.HasPrefix(u.Path, "/") || strings.HasPrefix(u.Path, "//") || !clean(u.Path) {
		return "", false
	}
	p := u.EscapedPath()
	if strings.HasPrefix(p, "//") {
		return "", false
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, true
}

// clean reports whether s holds no control character and no backslash.
func clean(s string) bool {
	return !strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f || c == '\\' || (c >= 0x80 && c < 0xa0) })
}

// tokenOK compares tok with the token in constant time.
func (h *server) tokenOK(tok string) bool {
	a, b := sha256.Sum256([]byte(tok)), sha256.Sum256([]byte(h.opts.Token))
	return tok != "" && subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// cookieName is the session cookie's name for r's port: two pages served
// from one host on two ports keep their sessions apart.
func cookieName(r *http.Request) string {
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		return "mdmemory-session"
	}
	return "mdmemory-session-" + port
}

// The bounds of a session: it ends sessionLifetime after the login
// whatever happens, and sessionIdle after its last request. The server
// keeps at most maxSessions: past them, a login ends the session used
// least recently.
const (
	sessionLifetime = 12 * time.Hour
	sessionIdle     = time.Hour
	maxSessions     = 256
)

// sessions is the server's set of live sessions: a session is live while
// it is here, so Log out ends it, and a new server (a restart, a new
// token) knows none of the old ones.
type sessions struct {
	mu   sync.Mutex
	live map[string]*liveSession
}

type liveSession struct {
	issued, used time.Time
}

// secure reports whether the session cookie of r's answer is marked
// Secure, sent over https alone: when r came over TLS, or through a proxy
// that says it did (X-Forwarded-Proto: https; a request reaches this far
// only under a host name the server is reached by, its address or
// --allow-host). A browser that reached the page over https keeps its
// cookie off plain http; one that reached it over http still logs in.
func secure(r *http.Request) bool {
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return r.TLS != nil || strings.EqualFold(strings.TrimSpace(proto), "https")
}

// newSession starts a session: a random id and the time it was issued,
// signed, in a cookie that no script reads, no other site's request
// carries and no other path than the session's own (sessionRoot), and in
// the set of live sessions. It returns the path the session's pages are
// under.
func (h *server) newSession(w http.ResponseWriter, r *http.Request) string {
	id := rand.Text()
	now := h.now()
	h.sessions.mu.Lock()
	if len(h.sessions.live) >= maxSessions {
		h.sweep(now)
	}
	h.sessions.live[id] = &liveSession{issued: now, used: now}
	h.sessions.mu.Unlock()
	v := id + "." + strconv.FormatInt(now.Unix(), 10)
	base := sessionRoot + h.pathKey(id)
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName(r),
		Value:    v + "." + h.sign("session", v),
		Path:     base,
		MaxAge:   int(sessionLifetime / time.Second),
		HttpOnly: true,
		Secure:   secure(r),
		SameSite: http.SameSiteStrictMode,
	})
	return base
}

// sweep removes the sessions that have ended and, if the set is still
// full, the one used least recently. It is called with the lock held.
func (h *server) sweep(now time.Time) {
	var oldest string
	for id, s := range h.sessions.live {
		if !s.alive(now) {
			delete(h.sessions.live, id)
		} else if oldest == "" || s.used.Before(h.sessions.live[oldest].used) {
			oldest = id
		}
	}
	if len(h.sessions.live) >= maxSessions {
		delete(h.sessions.live, oldest)
	}
}

func (s *liveSession) alive(now time.Time) bool {
	return now.Sub(s.issued) < sessionLifetime && now.Sub(s.used) < sessionIdle && !now.Before(s.issued.Add(-time.Minute))
}

// session returns the id of r's session when its cookie is one this
// handler signed, of a session still live: logged in less than
// sessionLifetime ago, used less than sessionIdle ago, not logged out;
// and when key, from r's path, is the session's (pathKey): the cookie
// alone is no session. A request made with it counts as a use.
func (h *server) session(r *http.Request, key string) (string, bool) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || key == "" {
		return "", false
	}
	i := strings.LastIndexByte(c.Value, '.')
	if i < 0 {
		return "", false
	}
	v, sig := c.Value[:i], c.Value[i+1:]
	id, issued, ok := strings.Cut(v, ".")
	if !ok || id == "" || !hmac.Equal([]byte(sig), []byte(h.sign("session", v))) || !hmac.Equal([]byte(key), []byte(h.pathKey(id))) {
		return "", false
	}
	at, err := strconv.ParseInt(issued, 10, 64)
	now := h.now()
	if err != nil || now.Sub(time.Unix(at, 0)) >= sessionLifetime {
		return "", false
	}
	h.sessions.mu.Lock()
	defer h.sessions.mu.Unlock()
	s, ok := h.sessions.live[id]
	if !ok || s.issued.Unix() != at || !s.alive(now) {
		delete(h.sessions.live, id)
		return "", false
	}
	s.used = now
	return id, true
}

// endSession ends the session sid: its cookie is no good any more.
func (h *server) endSession(sid string) {
	h.sessions.mu.Lock()
	delete(h.sessions.live, sid)
	h.sessions.mu.Unlock()
}

// csrf is the CSRF token of the session sid: every form carries it.
func (h *server) csrf(sid string) string { return h.sign("csrf", sid) }

func (h *server) sign(purpose, id string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(purpose + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// route serves the pages.
func (h *server) route(w http.ResponseWriter, r *http.Request) {
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	post := r.Method == http.MethodPost
	switch {
	case r.URL.Path == "/" && get:
		h.overview(w, r)
	case r.URL.Path == "/facts" && get:
		h.facts(w, r)
	case r.URL.Path == "/save" && post:
		h.save(w, r)
	case r.URL.Path == "/timeline" && get:
		h.timeline(w, r)
	case r.URL.Path == "/entry" && get:
		h.entry(w, r)
	case r.URL.Path == "/file" && get:
		h.file(w, r)
	case r.URL.Path == "/search" && get:
		h.searchPage(w, r)
	case r.URL.Path == "/history" && get:
		h.history(w, r)
	case r.URL.Path == "/restore" && get:
		h.restorePage(w, r)
	case r.URL.Path == "/restore" && post:
		h.restore(w, r)
	case r.URL.Path == "/forget" && post:
		h.forget(w, r)
	case r.URL.Path == "/version" && get:
		h.version(w, r)
	case r.URL.Path == "/compact" && (get || post):
		h.compact(w, r)
	case r.URL.Path == "/logout" && post:
		if sid, ok := r.Context().Value(sessionKey{}).(string); ok {
			h.endSession(sid)
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: cmp.Or(base(r), "/"), MaxAge: -1, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	case r.URL.Path == "/login":
		http.Redirect(w, r, base(r)+"/", http.StatusSeeOther)
	default:
		h.fail(w, r, http.StatusNotFound, "Not found", "There is no page at "+r.URL.Path+".", nil)
	}
}

// view is what every page's template gets.
type view struct {
	Title  string // the page's name, first in <title>
	Base   string // the path the session's pages are under (base)
	Nav    string // the page of the navigation bar that is this one
	CSRF   string
	Login  bool // the page is behind a login: offer to log out
	Notice string
	Data   any
}

// render renders the page name with data.
func (h *server) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	v := &view{Title: title, Nav: name, Data: data, Login: true, Base: base(r)}
	if sid, ok := r.Context().Value(sessionKey{}).(string); ok {
		v.CSRF = h.csrf(sid)
	}
	switch r.URL.Query().Get("done") {
	case "saved":
		v.Notice = "Saved."
	case "restored":
		v.Notice = "Restored: the file holds that version again, and the history records the restore."
	case "forgot":
		v.Notice = "Forgotten: the text is out of every file and every version the history keeps (" + r.URL.Query().Get("n") + " places)."
	}
	var b strings.Builder
	if err := h.pages[name].ExecuteTemplate(&b, "layout", v); err != nil {
		h.log("render "+name, err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		fmt.Fprint(w, b.String())
	}
}

type failData struct {
	Heading, Message string
	Err              string
}

// fail renders a page that says what went wrong.
func (h *server) fail(w http.ResponseWriter, r *http.Request, status int, heading, msg string, err error) {
	d := &failData{Heading: heading, Message: msg}
	if err != nil {
		h.log(heading, err)
		d.Err = err.Error()
	}
	h.render(w, r, status, "fail", heading, d)
}

func (h *server) log(what string, err error) {
	if h.opts.Logger != nil {
		h.opts.Logger.Error("mdmemory ui: "+what, slog.Any("err", err))
	}
}

func parsePages() map[string]*template.Template {
	pages := map[string]*template.Template{}
	for _, name := range []string{"overview", "facts", "conflict", "timeline", "entry", "file", "search", "history", "restore", "forget", "compact", "login", "fail"} {
		t := template.New(name).Funcs(funcs)
		pages[name] = template.Must(t.ParseFS(files, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

var funcs = template.FuncMap{
	"anchor":  anchor,
	"bytes":   thousands,
	"percent": func(a, b int64) int64 { return a * 100 / max(b, 1) },
	"who":     who,
	"ninety":  func(a int64) int64 { return a * 9 / 10 },
	"short":   func(v string) string { return v[:min(len(v), 8)] },
	"when":    func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
}

// anchor is an id for a file's line: "facts-user-md-L5".
func anchor(p string, line int) string {
	r := strings.NewReplacer("/", "-", ".", "-")
	if line == 0 {
		return r.Replace(p)
	}
	return fmt.Sprintf("%s-L%d", r.Replace(p), line)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// hostError reports whether err is a failure of the host rather than a
// refusal of the request.
func hostError(err error) bool {
	var me *memory.Error
	return err != nil && !errors.As(err, &me)
}

// who says who made the change c.
func who(c memory.Change) string {
	switch {
	case c.Op == "outside":
		return "someone outside the library (an editor, a copy)"
	case c.Actor == "":
		return "a program that gave no name"
	}
	return c.Actor
}
