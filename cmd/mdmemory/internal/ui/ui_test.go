package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
)

// page is a test's view of a running page: its memory and a browser with
// a cookie jar that does not follow redirects.
type page struct {
	t   *testing.T
	dir string
	s   *memory.Store
	ui  *Server
	srv *httptest.Server
	c   *http.Client
	// base is the path the session's pages are under (/s/KEY), once
	// logged in: get and post prefix it to their paths.
	base string
}

// testToken is the token of the pages of the tests.
const testToken = "0123456789abcdef0123"

// newPage serves a small memory, with testToken unless opts gives another,
// and logs in with the token in the address.
func newPage(t *testing.T, opts *Options) *page {
	t.Helper()
	p := newPageOut(t, opts)
	p.login()
	return p
}

// login logs in with the token in the address.
func (p *page) login() {
	t := p.t
	t.Helper()
	resp, err := p.c.Get(p.srv.URL + "/?token=" + url.QueryEscape(p.ui.Token()))
	must(t, err)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("log in: %d to %q", resp.StatusCode, loc)
	}
	p.enter(loc, "/")
}

// sessionAddress is the address of a page of a session: /s/KEY/REST.
var sessionAddress = regexp.MustCompile(`^(/s/[A-Za-z0-9_-]{43})(/.*)$`)

// enter checks that loc, where a login led, is the page want under the
// session's path, and takes that path as the page's base.
func (p *page) enter(loc, want string) {
	p.t.Helper()
	m := sessionAddress.FindStringSubmatch(loc)
	if m == nil || m[2] != want {
		p.t.Fatalf("the login leads to %q, want %s under /s/KEY", loc, want)
	}
	p.base = m[1]
}

// newPageOut is newPage without the login.
func newPageOut(t *testing.T, opts *Options) *page {
	t.Helper()
	return newPageWith(t, nil, opts)
}

// newPageWith is newPageOut of a memory opened with mopts.
func newPageWith(t *testing.T, mopts *memory.Options, opts *Options) *page {
	t.Helper()
	o := Options{Token: testToken}
	if opts != nil {
		o = *opts
	}
	dir := t.TempDir()
	s, err := memory.Open(dir, mopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	must(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- City: Shanghai\n"))
	must(t, s.Append(ctx, "episodes/2026-01.md", "## Tokyo flights\n- Date: 2026-01-05\n- Summary: Spring Airlines is cheapest\n- Lesson: cross-check 东京 prices on the airline's site\n", ""))
	ui := New(s, &o)
	srv := httptest.NewServer(ui)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &page{t: t, dir: dir, s: s, ui: ui, srv: srv, c: c}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// get fetches path and returns the status and body.
func (p *page) get(path string) (int, string) {
	p.t.Helper()
	resp, err := p.c.Get(p.srv.URL + p.base + path)
	must(p.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a form to path, with the session's CSRF token unless the
// form has one.
func (p *page) post(path string, form url.Values) (int, string, *http.Response) {
	p.t.Helper()
	if !form.Has("csrf") {
		_, body := p.get("/facts")
		form.Set("csrf", field(p.t, body, "csrf"))
	}
	req, _ := http.NewRequest(http.MethodPost, p.srv.URL+p.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.srv.URL)
	resp, err := p.c.Do(req)
	must(p.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// field is the value of the first hidden input name in body.
func field(t testing.TB, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no field %s in the page", name)
	}
	return m[1]
}

func title(body string) string {
	m := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

func TestPagesRender(t *testing.T) {
	p := newPage(t, nil)
	for path, want := range map[string]string{
		"/":                                      "Overview · mdmemory",
		"/facts":                                 "Facts · mdmemory",
		"/timeline":                              "Timeline · mdmemory",
		"/search":                                "Search · mdmemory",
		"/search?q=tokyo":                        "Search · mdmemory",
		"/history":                               "History · mdmemory",
		"/compact":                               "Compaction · mdmemory",
		"/compact?preview=1":                     "Compaction · mdmemory",
		"/entry?path=episodes/2026-01.md&line=5": "Entry · mdmemory",
	} {
		status, body := p.get(path)
		if status != http.StatusOK || title(body) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, status, title(body), want)
		}
	}
	_, body := p.get("/")
	for _, want := range []string{"<meter", "15,360 bytes", "Fact lines", "Nothing to fix"} {
		if !strings.Contains(body, want) {
			t.Errorf("the overview lacks %q", want)
		}
	}
	_, body = p.get("/search")
	if !strings.Contains(body, `<label for="q">Search memory</label>`) {
		t.Error("the search box is not labelled Search memory")
	}
	_, body = p.get("/timeline")
	for _, want := range []string{"2026-01", "Tokyo flights", "2026-01-05", "Spring Airlines is cheapest", "cross-check 东京 prices"} {
		if !strings.Contains(body, want) {
			t.Errorf("the timeline lacks %q", want)
		}
	}
	if status, _ := p.get("/nowhere"); status != http.StatusNotFound {
		t.Errorf("GET /nowhere: %d, want 404", status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	p := newPageOut(t, nil)
	resp, err := p.c.Get(p.srv.URL + "/?token=" + testToken)
	must(t, err)
	resp.Body.Close()
	for h, want := range map[string]string{
		"X-Frame-Options":        "DENY",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin", // not no-referrer, under which a browser's forms carry "Origin: null" (TestBrowser)
	} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy: %q", csp)
	}
	c := resp.Cookies()
	if len(c) != 1 || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode || c[0].Secure || c[0].MaxAge != 12*60*60 {
		t.Errorf("session cookie: %+v", c)
	}
}

func TestFormsNeedCSRF(t *testing.T) {
	p := newPage(t, nil)
	_, body := p.get("/facts")
	form := url.Values{"path": {"facts/user.md"}, "version": {field(t, body, "version")}, "mode": {"add"}, "text": {"Tea: longjing"}}
	for _, csrf := range []string{"", "forged"} {
		form.Set("csrf", csrf)
		if status, _, _ := p.post("/save", form); status != http.StatusForbidden {
			t.Errorf("save with CSRF %q: %d, want 403", csrf, status)
		}
		form.Del("csrf")
	}
	for _, path := range []string{"/restore", "/forget", "/compact", "/logout"} {
		if status, _, _ := p.post(path, url.Values{"csrf": {"forged"}}); status != http.StatusForbidden {
			t.Errorf("POST %s with a forged CSRF token: %d, want 403", path, status)
		}
	}
	// Another session's token is no good either.
	other := newPage(t, nil)
	_, obody := other.get("/facts")
	form.Set("csrf", field(t, obody, "csrf"))
	if status, _, _ := p.post("/save", form); status != http.StatusForbidden {
		t.Errorf("save with another server's CSRF token: %d, want 403", status)
	}
	form.Del("csrf")
	status, _, resp := p.post("/save", form)
	if status != http.StatusSeeOther {
		t.Fatalf("save: %d, want 303", status)
	}
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, p.base+"/facts?done=saved") {
		t.Errorf("save redirects to %q", loc)
	}
	b, _ := os.ReadFile(filepath.Join(p.dir, "facts/user.md"))
	if !strings.Contains(string(b), "- Tea: longjing\n") {
		t.Errorf("the line is not on disk:\n%s", b)
	}
	ch, err := p.s.History(context.Background(), "facts/user.md", &memory.HistoryOptions{Limit: 1})
	must(t, err)
	if len(ch) != 1 || ch[0].Actor != "ui" {
		t.Errorf("the change is recorded as %+v, want actor ui", ch)
	}
}

func TestHostAndOrigin(t *testing.T) {
	p := newPage(t, nil)
	for _, tc := range []struct {
		name   string
		header map[string]string
	}{
		{"another host", map[string]string{"Host": "evil.example:80"}},
		{"another origin", map[string]string{"Origin": "http://evil.example"}},
		{"a cross-site request", map[string]string{"Sec-Fetch-Site": "cross-site"}},
	} {
		req, _ := http.NewRequest(http.MethodGet, p.srv.URL+"/", nil)
		for k, v := range tc.header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := p.c.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.name, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, p.srv.URL+"/", nil)
	req.Host = "localhost" + p.srv.URL[strings.LastIndex(p.srv.URL, ":"):]
	req.Header.Set("Origin", "http://"+req.Host)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := p.c.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("localhost, own origin: %d, want 200", resp.StatusCode)
	}
}

func TestToken(t *testing.T) {
	const token = testToken
	p := newPageOut(t, nil)
	status, body := p.get("/")
	if status != http.StatusUnauthorized || title(body) != "Log in · mdmemory" {
		t.Fatalf("without the token: %d %q, want 401 and the login page", status, title(body))
	}
	if status, _ := p.get("/facts?token=wrong-token-0000000"); status != http.StatusSeeOther {
		t.Errorf("a wrong token: %d, want 303 to the login page", status)
	}
	if status, body := p.get("/login?failed=1&next=%2Ffacts"); status != http.StatusUnauthorized || !strings.Contains(body, "not the token") {
		t.Errorf("the login page after a wrong token: %d", status)
	}
	resp, err := p.c.Get(p.srv.URL + "/history?path=facts%2Fuser.md&token=" + token)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("?token=: %d to %q, want 303 to the page without the token", resp.StatusCode, resp.Header.Get("Location"))
	}
	p.enter(resp.Header.Get("Location"), "/history?path=facts%2Fuser.md")
	if status, body := p.get("/"); status != http.StatusOK || title(body) != "Overview · mdmemory" {
		t.Errorf("with the session: %d %q", status, title(body))
	}

	// The login form.
	q := newPageOut(t, nil)
	if status, _, _ := q.post("/login", url.Values{"csrf": {"x"}, "token": {"not-it-at-all-000"}, "next": {"/facts"}}); status != http.StatusUnauthorized {
		t.Errorf("login with a wrong token: %d", status)
	}
	status, _, resp = q.post("/login", url.Values{"csrf": {"x"}, "token": {token}, "next": {"//evil.example/"}})
	if status != http.StatusSeeOther {
		t.Fatalf("login: %d to %q, want 303 to /", status, resp.Header.Get("Location"))
	}
	q.enter(resp.Header.Get("Location"), "/")
	if status, _ := q.get("/facts"); status != http.StatusOK {
		t.Errorf("after login: %d", status)
	}

	// A script sends the token as a bearer token.
	req, _ := http.NewRequest(http.MethodGet, p.srv.URL+"/search?q=tokyo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err = http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("bearer: %d", resp.StatusCode)
	}
}

func TestStaleEditShowsConflict(t *testing.T) {
	p := newPage(t, nil)
	_, body := p.get("/facts")
	version := field(t, body, "version")
	// A person edits the file in an editor meanwhile.
	file := filepath.Join(p.dir, "facts/user.md")
	b, _ := os.ReadFile(file)
	must(t, os.WriteFile(file, []byte(strings.Replace(string(b), "- City: Shanghai\n", "- City: Shanghai\n- Pet: a cat named Mochi\n", 1)), 0o600))

	status, body, _ := p.post("/save", url.Values{"path": {"facts/user.md"}, "version": {version}, "mode": {"line"}, "line": {"5"}, "text": {"- Name: Zhang San (张三)"}})
	if status != http.StatusConflict {
		t.Fatalf("save over a change: %d, want 409", status)
	}
	for _, want := range []string{"changed since you loaded it", "Theirs now", "Yours", "Pet: a cat named Mochi", "Name: Zhang San (张三)", ">Save</button>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the conflict view lacks %q", want)
		}
	}
	if b2, _ := os.ReadFile(file); !strings.Contains(string(b2), "Mochi") || strings.Contains(string(b2), "张三") {
		t.Errorf("the file was overwritten:\n%s", b2)
	}
	// The merge starts with both changes, and saves against the version
	// there is now.
	merged := regexp.MustCompile(`(?s)<textarea id="merged" name="text" rows="16">\n(.*?)</textarea>`).FindStringSubmatch(body)
	if merged == nil || !strings.Contains(merged[1], "Mochi") || !strings.Contains(merged[1], "张三") {
		t.Fatalf("the merge does not hold both changes: %q", merged)
	}
	status, _, _ = p.post("/save", url.Values{"path": {"facts/user.md"}, "version": {field(t, body, "version")}, "mode": {"file"}, "text": {htmlUnescape(merged[1])}})
	if status != http.StatusSeeOther {
		t.Fatalf("save the merge: %d", status)
	}
	if b2, _ := os.ReadFile(file); !strings.Contains(string(b2), "Mochi") || !strings.Contains(string(b2), "张三") {
		t.Errorf("the merge is not on disk:\n%s", b2)
	}
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#43;", "+", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

func TestRefusalInWords(t *testing.T) {
	p := newPage(t, nil)
	_, body := p.get("/facts")
	status, body, _ := p.post("/save", url.Values{"path": {"facts/user.md"}, "version": {field(t, body, "version")}, "mode": {"add"}, "text": {"- City: Beijing for now"}})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "Not saved") {
		t.Fatalf("a refused line: %d\n%s", status, body)
	}
	if strings.Contains(body, "memory_") {
		t.Error("the refusal names the model's tools")
	}
}

func TestRestore(t *testing.T) {
	p := newPage(t, nil)
	ctx := context.Background()
	first, err := p.s.Read(ctx, "facts/user.md")
	must(t, err)
	must(t, p.s.Write(ctx, "facts/user.md", first+"- Tea: longjing\n"))
	status, body := p.get("/history?path=facts/user.md")
	if status != http.StatusOK || !strings.Contains(htmlUnescape(body), `<span class="add">+- Tea: longjing</span>`) {
		t.Fatalf("history: %d, no diff of the change\n%s", status, body)
	}
	if n := strings.Count(body, ">Restore</button>"); n < 2 {
		t.Fatalf("%d Restore buttons, want one on each of the two changes", n)
	}
	form := url.Values{"path": {"facts/user.md"}, "version": {memory.Version(first)}}

	// Shown before a change made meanwhile: refused.
	form.Set("want", memory.Version(first))
	status, body, _ = p.post("/restore", form)
	if status != http.StatusConflict || !strings.Contains(body, "changed since this page showed it") {
		t.Fatalf("restore over a change: %d", status)
	}
	form.Set("want", memory.Version(first+"- Tea: longjing\n"))
	status, _, resp := p.post("/restore", form)
	if status != http.StatusSeeOther {
		t.Fatalf("restore: %d", status)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "facts/user.md")); string(b) != first {
		t.Errorf("after the restore the file holds\n%s\nwant\n%s", b, first)
	}
	_, body = p.get(resp.Header.Get("Location"))
	if !strings.Contains(body, "Restored") || !strings.Contains(body, "restore") {
		t.Error("the history does not show the restore")
	}
	_, body = p.get("/history?actor=ui")
	if !strings.Contains(body, "restore") || strings.Contains(body, ": write</h2>") {
		t.Error("the filter by actor does not keep the page's changes alone")
	}
}

func TestSearchMarks(t *testing.T) {
	p := newPage(t, nil)
	_, body := p.get("/search?q=tokyo+flight")
	if !strings.Contains(body, "<mark>Tokyo</mark> <mark>flights</mark>") {
		t.Errorf("tokyo flight: no marks in\n%s", body)
	}
	if !strings.Contains(body, `href="`+p.base+`/entry?path=episodes/2026-01.md&amp;line=5"`) {
		t.Error("the hit does not open its entry")
	}
	_, body = p.get("/search?q=" + url.QueryEscape("东京"))
	if !strings.Contains(body, "<mark>东京</mark>") {
		t.Errorf("东京: no mark in\n%s", body)
	}
	_, body = p.get("/search?q=" + url.QueryEscape("<script>"))
	if strings.Contains(body, "<script>") && !strings.Contains(body, "&lt;script&gt;") {
		t.Error("the query is not escaped")
	}
}

func TestMark(t *testing.T) {
	for _, tc := range []struct{ text, query, want string }{
		{"Compare flights to Tokyo", "flight", "Compare <mark>flights</mark> to Tokyo"},
		{"老王昨天去了东京", "东京", "老王昨天去了<mark>东京</mark>"},
		{"a <b> & c", "b", "a &lt;<mark>b</mark>&gt; &amp; c"},
		{"王", "王", "<mark>王</mark>"},
	} {
		if got := string(mark(tc.text, tc.query)); got != tc.want {
			t.Errorf("mark(%q, %q) = %q, want %q", tc.text, tc.query, got, tc.want)
		}
	}
}

func TestCompaction(t *testing.T) {
	p := newPage(t, nil)
	ctx := context.Background()
	must(t, p.s.Append(ctx, "episodes/2020-03.md", "## Old task\n- Date: 2020-03-04\n- Summary: it was done\n- Task: many details here\n- Lesson: keep it short\n", ""))
	status, body := p.get("/compact?preview=1&before=2021-01")
	if status != http.StatusOK || !strings.Contains(body, "Would condense 1 entries") || !strings.Contains(body, ">Compact</button>") {
		t.Fatalf("preview: %d\n%s", status, body)
	}
	status, body, _ = p.post("/compact", url.Values{"before": {"2021-01"}, "keep": {"0"}})
	if status != http.StatusOK || !strings.Contains(body, "Condensed 1 entries") {
		t.Fatalf("apply: %d\n%s", status, body)
	}
	_, body = p.get("/timeline?from=2020-03")
	if !strings.Contains(body, "compacted") || !strings.Contains(body, "/file?path=episodes%2farchive%2f2020-03.md") {
		t.Errorf("the timeline does not mark the compacted month with its archive:\n%s", body)
	}
	if status, _ := p.get("/file?path=episodes/archive/2020-03.md"); status != http.StatusOK {
		t.Errorf("the archive: %d", status)
	}
}

// TestPersona: persona.md, which no tool changes, is saved here through
// SetPersona, with the version the page showed.
func TestPersona(t *testing.T) {
	p := newPage(t, nil)
	_, body := p.get("/facts")
	i := strings.Index(body, `aria-label="Whole file persona.md"`)
	if i < 0 {
		t.Fatal("no form for the whole of persona.md")
	}
	form := url.Values{"path": {"persona.md"}, "version": {field(t, body[i:], "version")}, "mode": {"file"}, "text": {"You are patient.\n"}}
	if status, body, _ := p.post("/save", form); status != http.StatusSeeOther {
		t.Fatalf("save persona.md: %d\n%s", status, body)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "persona.md")); string(b) != "You are patient.\n" {
		t.Errorf("persona.md holds %q", b)
	}
	// The same form again: the version it carries is stale now.
	if status, _, _ := p.post("/save", form); status != http.StatusConflict {
		t.Errorf("a stale save of persona.md: %d, want 409", status)
	}
}
