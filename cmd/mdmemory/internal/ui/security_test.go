package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// The page's defences against a local account, a leaked address, a stale
// session, a crafted redirect and a huge history.

// TestTokenAlways: without a token given, the page makes one (128 bits at
// least) and asks for it; no request gets in without it.
func TestTokenAlways(t *testing.T) {
	p := newPageOut(t, &Options{})
	tok := p.ui.Token()
	if len(tok) < 26 {
		t.Fatalf("the token made is %q: want 26 characters of base32 (130 bits) at least", tok)
	}
	if other := newPageOut(t, &Options{}); other.ui.Token() == tok {
		t.Fatal("two pages made the same token")
	}
	for _, path := range []string{"/", "/facts", "/history", "/search?q=tokyo"} {
		if status, body := p.get(path); status != http.StatusUnauthorized || title(body) != "Log in · mdmemory" {
			t.Errorf("GET %s without the token: %d %q, want 401 and the login page", path, status, title(body))
		}
	}
	status, _, _ := p.post("/save", url.Values{"csrf": {"x"}, "path": {"facts/user.md"}, "mode": {"add"}, "text": {"- Pet: a cat"}})
	if status != http.StatusUnauthorized {
		t.Errorf("POST /save without the token: %d, want 401", status)
	}
	resp, err := p.c.Get(p.srv.URL + "/?token=" + tok)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("the token made: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	if status, _ := p.get("/facts"); status != http.StatusOK {
		t.Errorf("logged in with the token made: %d", status)
	}
}

// TestTokenLeavesAddress: a token in the address is taken out of it by a
// redirect to the same address without it, logged in or not, right or
// wrong; the redirect stays on this server.
func TestTokenLeavesAddress(t *testing.T) {
	p := newPage(t, nil)
	for _, tc := range []struct{ path, want string }{
		{"/facts?token=" + testToken, "/facts"},
		{"/history?path=facts%2Fuser.md&token=whatever-at-all", "/history?path=facts%2Fuser.md"},
		{"/search?token=&q=tokyo", "/search?q=tokyo"},
		{"/login?token=" + testToken, "/"},
		{"//evil.example/?token=" + testToken, "/"},
		{"/%2F/evil.example/?token=" + testToken, "/"},
	} {
		resp, err := p.c.Get(p.srv.URL + tc.path)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != tc.want {
			t.Errorf("logged in, GET %s: %d to %q, want 303 to %q", tc.path, resp.StatusCode, resp.Header.Get("Location"), tc.want)
		}
	}
	q := newPageOut(t, nil)
	resp, err := q.c.Get(q.srv.URL + "/facts?x=1&token=wrong-token-000000")
	must(t, err)
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/login?failed=1&next="+url.QueryEscape("/facts?x=1") {
		t.Fatalf("a wrong token: %d to %q", resp.StatusCode, loc)
	}
	status, body := q.get(resp.Header.Get("Location"))
	if status != http.StatusUnauthorized || !strings.Contains(body, "not the token") || field(t, body, "next") != "/facts?x=1" {
		t.Errorf("the login page after a wrong token: %d, next %q", status, field(t, body, "next"))
	}
}

// TestNextIsLocal: after the login form, only a clean path of this server
// is followed: no scheme, no host, no control character or backslash that
// a browser drops or reads as a slash.
func TestNextIsLocal(t *testing.T) {
	for _, tc := range []struct {
		next string
		ok   bool
		want string
	}{
		{"/facts", true, "/facts"},
		{"/history?path=facts%2Fuser.md&actor=ui", true, "/history?path=facts%2Fuser.md&actor=ui"},
		{"/", true, "/"},
		{"", false, ""},
		{"facts", false, ""},
		{"//evil.example/", false, ""},
		{"/\\evil.example/", false, ""},
		{"/\t/evil.example/", false, ""},
		{"/\n/evil.example/", false, ""},
		{"/\r/evil.example/", false, ""},
		{"/\x00/evil.example/", false, ""},
		{"/\x7f/evil.example/", false, ""},
		{"/%09/evil.example/", false, ""},
		{"/%5C/evil.example/", false, ""},
		{"https://evil.example/", false, ""},
		{"javascript:alert(1)", false, ""},
		{"/facts#x", false, ""},
	} {
		got, ok := localPath(tc.next)
		if ok != tc.ok || got != tc.want {
			t.Errorf("localPath(%q) = %q, %v; want %q, %v", tc.next, got, ok, tc.want, tc.ok)
		}
	}
	for _, next := range []string{"/\t/evil.example/", "//evil.example/", "/\\/evil.example/", "https://evil.example/"} {
		q := newPageOut(t, nil)
		status, _, resp := q.post("/login", url.Values{"csrf": {"x"}, "token": {testToken}, "next": {next}})
		if status != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Errorf("login with next %q: %d to %q, want 303 to /", next, status, resp.Header.Get("Location"))
		}
	}
}

// clock is a test's clock of a page.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestSessionEnds: a session ends an hour after its last request, 12
// hours after its login however busy, and at Log out: its cookie, kept
// and sent again, is no good.
func TestSessionEnds(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	login := func() *page {
		p := newPageOut(t, nil)
		p.ui.h.now = c.now
		resp, err := p.c.Get(p.srv.URL + "/?token=" + testToken)
		must(t, err)
		resp.Body.Close()
		return p
	}
	ok := func(p *page, what string, want int) {
		t.Helper()
		if status, _ := p.get("/facts"); status != want {
			t.Errorf("%s: %d, want %d", what, status, want)
		}
	}
	p := login()
	ok(p, "logged in", http.StatusOK)
	c.add(59 * time.Minute)
	ok(p, "59 minutes later", http.StatusOK)
	c.add(59 * time.Minute)
	ok(p, "59 minutes after the last request", http.StatusOK) // each request refreshes it
	c.add(61 * time.Minute)
	ok(p, "61 minutes unused", http.StatusUnauthorized)

	p = login()
	for range 11 * 2 {
		c.add(30 * time.Minute)
		ok(p, "busy", http.StatusOK)
	}
	c.add(59 * time.Minute) // 11 h 59 after the login
	ok(p, "busy for 11 h 59", http.StatusOK)
	c.add(2 * time.Minute)
	ok(p, "12 hours after the login, busy all along", http.StatusUnauthorized)

	// Log out ends the session on the server: its cookie, sent again,
	// is no good.
	p = login()
	u, _ := url.Parse(p.srv.URL)
	cookies := p.c.Jar.Cookies(u)
	if status, _, _ := p.post("/logout", url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("log out: %d", status)
	}
	req, _ := http.NewRequest(http.MethodGet, p.srv.URL+"/facts", nil)
	for _, ck := range cookies {
		req.AddCookie(ck)
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the cookie after Log out: %d, want 401", resp.StatusCode)
	}
}

// TestSessionsOfAnotherServer: a cookie of another server (a restart, a
// token changed) is no good, even under the same token and address; and a
// forged issued-at time breaks the signature.
func TestSessionsOfAnotherServer(t *testing.T) {
	s, err := memory.Open(t.TempDir(), nil)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	first, second := New(s, &Options{Token: testToken}), New(s, &Options{Token: testToken})
	cookie := session(t, first)
	for _, tc := range []struct {
		name string
		page *Server
		c    *http.Cookie
		want int
	}{
		{"the server that made it", first, cookie, http.StatusOK},
		{"a new server", second, cookie, http.StatusUnauthorized},
		{"a forged time", first, forge(cookie), http.StatusUnauthorized},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7337/facts", nil)
		r.AddCookie(tc.c)
		tc.page.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.want)
		}
	}
}

// forge is c with the issued-at time of its value moved a day later.
func forge(c *http.Cookie) *http.Cookie {
	parts := strings.Split(c.Value, ".")
	var at int64
	fmt.Sscan(parts[1], &at)
	parts[1] = fmt.Sprint(at + 86400)
	f := *c
	f.Value = strings.Join(parts, ".")
	return &f
}

// TestSessionsBounded: the server keeps maxSessions at most; past them a
// login ends the session used least recently, and the newest still work.
func TestSessionsBounded(t *testing.T) {
	s, err := memory.Open(t.TempDir(), nil)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	page := New(s, &Options{Token: testToken})
	c := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	page.h.now = c.now
	var first, last *http.Cookie
	for i := range maxSessions + 50 {
		c.add(time.Second)
		last = session(t, page)
		if i == 0 {
			first = last
		}
	}
	if n := len(page.h.sessions.live); n > maxSessions {
		t.Fatalf("%d sessions kept, want %d at most", n, maxSessions)
	}
	for _, tc := range []struct {
		name string
		c    *http.Cookie
		want int
	}{{"the oldest", first, http.StatusUnauthorized}, {"the newest", last, http.StatusOK}} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7337/", nil)
		r.AddCookie(tc.c)
		page.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s session: %d, want %d", tc.name, w.Code, tc.want)
		}
	}
}

// TestSecureCookie: the session cookie is Secure when the page was reached
// over https, through a proxy that says so; not over plain http, where a
// browser would refuse to keep it.
func TestSecureCookie(t *testing.T) {
	for _, tc := range []struct {
		proto  string
		secure bool
	}{{"", false}, {"http", false}, {"https", true}, {"HTTPS, http", true}} {
		p := newPageOut(t, nil)
		req, _ := http.NewRequest(http.MethodGet, p.srv.URL+"/?token="+testToken, nil)
		if tc.proto != "" {
			req.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		resp, err := p.c.Do(req)
		must(t, err)
		resp.Body.Close()
		c := resp.Cookies()
		if len(c) != 1 || c[0].Secure != tc.secure {
			t.Errorf("X-Forwarded-Proto %q: cookies %+v, want Secure %v", tc.proto, c, tc.secure)
		}
	}
}

// TestRefusalClosesConnection: a 401 or 403 closes its connection.
func TestRefusalClosesConnection(t *testing.T) {
	p := newPageOut(t, nil)
	for _, tc := range []struct {
		name string
		host string
		want int
	}{{"no token", "", http.StatusUnauthorized}, {"another host", "evil.example", http.StatusForbidden}} {
		req, _ := http.NewRequest(http.MethodGet, p.srv.URL+"/", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := p.c.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != tc.want || !resp.Close {
			t.Errorf("%s: %d, Connection: %q; want %d and close", tc.name, resp.StatusCode, resp.Header.Get("Connection"), tc.want)
		}
	}
	q := newPage(t, nil)
	resp, err := q.c.Get(q.srv.URL + "/")
	must(t, err)
	resp.Body.Close()
	if resp.Close {
		t.Error("a page served closes its connection")
	}
}

// TestTextareaKeepsLeadingNewline: a newline right after <textarea> is
// dropped by the HTML parser, so the page writes one of its own: a file
// that starts with a blank line is shown, and saved back, as it is.
func TestTextareaKeepsLeadingNewline(t *testing.T) {
	p := newPage(t, nil)
	must(t, p.s.Write(context.Background(), "procedures.md", "\n# Procedures\n\n- When testing: keep it short\n"))
	_, body := p.get("/facts")
	if !strings.Contains(body, `name="text" rows="12">`+"\n\n# Procedures") {
		t.Errorf("the whole-file textarea loses the leading newline:\n%s", body)
	}
	if strings.Contains(body, `rows="12"># `) {
		t.Error("a textarea's text right after its tag")
	}
}

// TestHistoryBounds: a diff too large is left out for links to the
// versions, a page holds 1 MB of diffs at most, and however many changes
// are asked for, a page lists 200 at most.
func TestHistoryBounds(t *testing.T) {
	p := newPageWith(t, &memory.Options{FactsBudget: 8 << 20}, nil)
	p.login()
	ctx := context.Background()
	var big strings.Builder
	for i := range 300 {
		fmt.Fprintf(&big, "- Note %d: something worth keeping for good\n", i)
	}
	must(t, p.s.Write(ctx, "facts/memory.md", "# Big\n\n> Summary: many lines\n\n"+big.String()))
	status, body := p.get("/history?path=facts/memory.md")
	if status != http.StatusOK || !strings.Contains(body, "The diff is too large to show here") {
		t.Fatalf("a 300-line diff: %d, not left out", status)
	}
	link := regexp.MustCompile(`href="(/version\?path=[^"]+)">After`).FindStringSubmatch(body)
	if link == nil {
		t.Fatalf("no link to the version after the change:\n%s", body)
	}
	status, body = p.get(htmlUnescape(link[1]))
	if status != http.StatusOK || !strings.Contains(body, "- Note 299: something worth keeping") || !strings.Contains(title(body), "facts/memory.md at version") {
		t.Errorf("the version: %d %q", status, title(body))
	}

	// Changes of ~60 KB each (under 200 lines): past 1 MB of diffs, the
	// next changes show none.
	line := strings.Repeat("x", 300)
	for i := range 24 {
		var b strings.Builder
		for j := range 95 {
			fmt.Fprintf(&b, "- Line %d.%d: %s\n", i, j, line)
		}
		must(t, p.s.Write(ctx, "facts/user.md", "# Wide\n\n> Summary: wide lines\n\n"+b.String()))
	}
	status, body = p.get("/history?path=facts/user.md&limit=30")
	if status != http.StatusOK {
		t.Fatalf("history of facts/user.md: %d", status)
	}
	if len(body) > 1<<20+200<<10 {
		t.Errorf("the page is %d bytes: more than 1 MB of diffs", len(body))
	}
	if !strings.Contains(body, "this page shows 1 MB of diffs at most") {
		t.Error("no change says its diff was left out for the page's bound")
	}

	// The most a page lists.
	for i := range historyMost + 5 {
		must(t, p.s.Write(ctx, "procedures.md", fmt.Sprintf("# Procedures\n\n> Summary: one rule\n\n- When counting: start at %d\n", i)))
	}
	_, body = p.get("/history?path=procedures.md&limit=100000")
	if n := strings.Count(body, `<article class="change"`); n != historyMost {
		t.Errorf("limit=100000 lists %d changes, want %d", n, historyMost)
	}
	if !strings.Contains(body, "newest 200 changes at most") {
		t.Error("the page does not say it lists 200 at most")
	}
}

// TestHistoryOneLogUnreadable: when the history of every file cannot be
// read because one file's log cannot, the page lists the others' changes
// and names that file.
func TestHistoryOneLogUnreadable(t *testing.T) {
	p := newPage(t, nil)
	ctx := context.Background()
	must(t, p.s.Write(ctx, "procedures.md", "# Procedures\n\n> Summary: rules\n\n- When testing: keep it short\n"))
	log := filepath.Join(p.dir, ".history", "facts", "user.md", "00000001.log")
	if _, err := os.Stat(log); err != nil {
		t.Fatalf("no log where the test breaks one: %v", err)
	}
	must(t, os.Remove(log))
	must(t, os.Symlink("00000001.log", log)) // a link to itself: the log cannot be read
	if _, err := p.s.History(ctx, "", nil); err == nil {
		t.Fatal("the history of every file reads with a broken log: the test breaks nothing")
	}
	status, body := p.get("/history")
	if status != http.StatusOK {
		t.Fatalf("history with one log broken: %d\n%s", status, body)
	}
	if !strings.Contains(body, "could not be read") || !strings.Contains(body, "<li><code>facts/user.md</code>:") {
		t.Errorf("the page does not name the file whose history could not be read:\n%s", body)
	}
	if !strings.Contains(body, "<code>procedures.md</code>: write") || !strings.Contains(body, "<code>episodes/2026-01.md</code>") {
		t.Errorf("the other files' changes are not listed:\n%s", body)
	}
	if status, _ := p.get("/"); status != http.StatusOK {
		t.Errorf("the overview with one log broken: %d", status)
	}
}

// TestRestoreShowsDiffFirst: Restore on History shows what it would change
// (from the content the page showed to the version), restores nothing
// until that page's Restore is pressed, and refuses when the file changed
// since History showed it.
func TestRestoreShowsDiffFirst(t *testing.T) {
	p := newPage(t, nil)
	ctx := context.Background()
	first, err := p.s.Read(ctx, "facts/user.md")
	must(t, err)
	second := first + "- Tea: longjing\n"
	must(t, p.s.Write(ctx, "facts/user.md", second))
	_, body := p.get("/history?path=facts/user.md")
	link := regexp.MustCompile(`<form method="get" action="/restore"`).FindAllString(body, -1)
	if len(link) < 2 {
		t.Fatalf("%d Restore forms that show the diff first, want one a change", len(link))
	}
	q := url.Values{"path": {"facts/user.md"}, "version": {memory.Version(first)}, "want": {memory.Version(second)}}
	status, body := p.get("/restore?" + q.Encode())
	if status != http.StatusOK || title(body) != "Restore · mdmemory" {
		t.Fatalf("the restore page: %d %q", status, title(body))
	}
	if !strings.Contains(htmlUnescape(body), `<span class="del">-- Tea: longjing</span>`) || !strings.Contains(body, ">Restore</button>") {
		t.Errorf("the restore page does not show what it would remove, or has no Restore button:\n%s", body)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "facts/user.md")); string(b) != second {
		t.Fatal("the restore page restored")
	}
	form := url.Values{"path": {"facts/user.md"}, "version": {field(t, body, "version")}, "want": {field(t, body, "want")}, "csrf": {field(t, body, "csrf")}}

	// The file changes meanwhile: the page refuses, and so does its form.
	third := second + "- Pet: a cat\n"
	must(t, p.s.Write(ctx, "facts/user.md", third))
	if status, body := p.get("/restore?" + q.Encode()); status != http.StatusConflict || !strings.Contains(body, "changed since the History page showed it") {
		t.Errorf("the restore page after a change: %d", status)
	}
	if status, _, _ := p.post("/restore", form); status != http.StatusConflict {
		t.Errorf("restore after a change: %d, want 409", status)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "facts/user.md")); string(b) != third {
		t.Fatal("a change made meanwhile was undone")
	}
}

// TestCompactionAppliesThePreview: the preview settles Before (its
// default, six months before the clock's month) and Keep, and its Compact
// button carries them; apply without them is refused.
func TestCompactionAppliesThePreview(t *testing.T) {
	p := newPageOut(t, nil)
	p.ui.h.now = func() time.Time { return time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC) }
	p.login()
	status, body := p.get("/compact?preview=1")
	if status != http.StatusOK {
		t.Fatalf("preview: %d", status)
	}
	i := strings.Index(body, `aria-label="Apply the compaction"`)
	j := strings.Index(body, `aria-label="Preview a compaction"`)
	if j < 0 || !strings.Contains(body[j:], `name="before" value="2025-09"`) {
		t.Errorf("the preview does not say the month it used:\n%s", body)
	}
	if i >= 0 && (field(t, body[i:], "before") != "2025-09" || field(t, body[i:], "keep") != "0") {
		t.Errorf("the Compact form carries before %q keep %q, want 2025-09 and 0", field(t, body[i:], "before"), field(t, body[i:], "keep"))
	}
	for _, form := range []url.Values{{"before": {""}, "keep": {"0"}}, {"before": {"2021-01"}, "keep": {""}}} {
		if status, _, _ := p.post("/compact", form); status != http.StatusUnprocessableEntity {
			t.Errorf("apply with %v: %d, want 422", form, status)
		}
	}
	must(t, p.s.Append(context.Background(), "episodes/2020-03.md", "## Old task\n- Date: 2020-03-04\n- Summary: it was done\n- Task: many details here\n- Lesson: keep it short\n", ""))
	_, body = p.get("/compact?preview=1&before=2021-01&keep=0")
	i = strings.Index(body, `aria-label="Apply the compaction"`)
	if i < 0 {
		t.Fatalf("no Compact form:\n%s", body)
	}
	status, body, _ = p.post("/compact", url.Values{"before": {field(t, body[i:], "before")}, "keep": {field(t, body[i:], "keep")}})
	if status != http.StatusOK || !strings.Contains(body, "Condensed 1 entries") {
		t.Errorf("apply the preview: %d", status)
	}
}
