package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// The page in a real browser: Debian's Chromium driven by Playwright
// (playwright-core, from npm), through the accessible names and roles a
// person's screen reader would use. The script, testdata/browser.mjs, does
// what a person does; this test plants the memory, serves the page and
// checks the disk afterwards.

// playwrightVersion is the playwright-core the test runs; make ui-tools
// installs it. Keep it in step with PLAYWRIGHT_VERSION in the Makefile.
const playwrightVersion = "1.64.1"

// playwrightEnv names another playwright-core: the folder of its
// package.json, or a node_modules folder that holds it.
const playwrightEnv = "MDMEMORY_PLAYWRIGHT"

// screenshotsEnv names a folder: with it, the script also saves a picture
// of each page there (docs/ui/ holds the README's).
const screenshotsEnv = "MDMEMORY_SCREENSHOTS"

// chromium is Debian's Chromium (apt-get install chromium), which the test
// launches by its path: Playwright downloads no browser here.
const chromium = "/usr/bin/chromium"

// browserBound bounds the whole script: a guard against a hang, generous
// for a loaded machine; a run takes a few seconds.
const browserBound = 3 * time.Minute

// playwright finds playwright-core, or skips the test saying how to get
// it. It never installs it: a test does not reach the network.
func playwright(t *testing.T) string {
	t.Helper()
	p := os.Getenv(playwrightEnv)
	if p == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			p = filepath.Join(cache, "mdmemory", "playwright-core-"+playwrightVersion, "node_modules", "playwright-core")
		}
	} else if _, err := os.Stat(filepath.Join(p, "playwright-core", "index.mjs")); err == nil {
		p = filepath.Join(p, "playwright-core")
	}
	if _, err := os.Stat(filepath.Join(p, "index.mjs")); p == "" || err != nil {
		t.Skipf("playwright-core %s is not installed (%s=%q), so the browser test is skipped: run make ui-tools, which installs it with npm", playwrightVersion, playwrightEnv, p)
	}
	return p
}

// The first content of facts/user.md, which the script restores from
// History, and the agent's change to it.
const (
	userFirst = "# User\n\n> Summary: Zhang San, a Go developer in Shanghai\n\n" +
		"- Name: Zhang San\n" +
		"- City: Shanghai\n" +
		"- Works on: apollo, a Go service that tracks flight prices\n" +
		"- Seats: prefers the window, and vegetarian meals\n" +
		"- Tea: green tea, no sugar\n"
	userSecond = "# User\n\n> Summary: Zhang San, a Go developer in Shanghai\n\n" +
		"- Name: Zhang San\n" +
		"- City: Shanghai\n" +
		"- Works on: apollo, a Go service that tracks flight prices\n" +
		"- Seats: prefers the window, and vegetarian meals\n" +
		"- Tea: Longjing from Hangzhou, no sugar\n"
)

// plantBrowserMemory writes what the script looks for: facts changed
// twice by the agent, procedures, a persona, and three months of entries,
// one of them in Chinese; "zeppelin" is in one entry alone.
func plantBrowserMemory(t *testing.T, s *memory.Store) {
	t.Helper()
	agent := memory.WithActor(context.Background(), "agent")
	cli := memory.WithActor(context.Background(), "cli")
	must(t, s.Write(agent, "facts/user.md", userFirst))
	must(t, s.Write(agent, "facts/memory.md", "# Memory\n\n> Summary: the apollo project\n\n- Project: apollo, written in Go 1.26, deployed on Fridays\n- Standup: Wednesdays at 10:00, led by 老王\n"))
	must(t, s.Write(agent, "procedures.md", "# Procedures\n\n> Summary: rules learned from experience\n\n- When booking a flight: check the airline's own site before paying\n- When a test is flaky: look for a clock or a sleep before retrying it\n"))
	must(t, s.SetPersona(cli, "# Persona\n\nYou are a careful assistant for travel and Go code. Answer briefly; ask before booking anything.\n", ""))
	for _, e := range []struct{ month, entry string }{
		{"2026-01", "## Tokyo flights for April\n- Date: 2026-01-05\n- Summary: Spring Airlines is the cheapest for the April trip to Tokyo\n- Lesson: cross-check prices on the airline's own site\n"},
		{"2026-01", "## Hotel near Ueno\n- Date: 2026-01-18\n- Summary: booked three nights near Ueno park, breakfast included\n- Lesson: book two months ahead for cherry blossom season\n"},
		{"2026-02", "## 东京酒店比价\n- Date: 2026-02-11\n- Summary: 比较了上野和浅草的酒店价格，上野更方便\n- Lesson: 樱花季要提前两个月预订酒店\n"},
		{"2026-02", "## Flaky cache test in apollo\n- Date: 2026-02-20\n- Summary: the zeppelin cache test raced on the wall clock\n- Lesson: inject the clock instead of sleeping in tests\n"},
		{"2026-03", "## Ramen in Tokyo\n- Date: 2026-03-02\n- Summary: listed five vegetarian ramen places in Tokyo for the trip\n- Lesson: check opening days, many close on Mondays\n"},
	} {
		must(t, s.Append(agent, "episodes/"+e.month+".md", e.entry, ""))
	}
	must(t, s.Write(agent, "facts/user.md", userSecond))
}

// TestBrowser drives the page in Chromium: the overview, a search and its
// result, an edit of a fact found on disk, a save over a change made by
// hand (the conflict, then the merge), and a restore from History found
// on disk.
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s, so the browser test is skipped: apt-get install chromium (make ui-tools does, as root)", chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed, so the browser test is skipped: it runs Playwright; install Node.js, then make ui-tools")
	}
	pw := playwright(t)
	shots := os.Getenv(screenshotsEnv)
	if shots != "" {
		if shots, err = filepath.Abs(shots); err != nil {
			t.Fatal(err)
		}
		must(t, os.MkdirAll(shots, 0o755))
	}
	script, err := filepath.Abs(filepath.Join("testdata", "browser.mjs"))
	must(t, err)

	dir := t.TempDir()
	s, err := memory.Open(dir, nil)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	plantBrowserMemory(t, s)
	page := New(s, nil)             // a token made at random, as mdmemory ui makes one
	srv := httptest.NewServer(page) // 127.0.0.1, a free port
	t.Cleanup(srv.Close)
	other := &otherPort{ui: srv.URL}
	osrv := httptest.NewServer(other) // 127.0.0.1, another port
	t.Cleanup(osrv.Close)

	ctx, cancel := context.WithTimeout(context.Background(), browserBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	// On the bound, an interrupt lets Playwright close the browser first.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = append(os.Environ(),
		"MDMEMORY_UI_URL="+srv.URL,
		"MDMEMORY_UI_TOKEN="+page.Token(),
		"MDMEMORY_UI_DIR="+dir,
		"MDMEMORY_UI_OTHER="+osrv.URL+"/",
		"MDMEMORY_CHROMIUM="+chromium,
		"MDMEMORY_PLAYWRIGHT_CORE="+pw,
		screenshotsEnv+"="+shots,
		"TMPDIR="+t.TempDir(), // the browser's fresh profile, removed with the test
	)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("the browser script did not end within %s:\n%s", browserBound, out)
		}
		t.Fatalf("the browser script failed (%v):\n%s", err, out)
	}
	t.Logf("the browser script, %s:\n%s", time.Since(start).Round(time.Millisecond), out)

	// The page on another port got no session: no cookie of the page came
	// with the browser's requests to it, nor the session's path in a
	// Referer, and what it replayed got nothing.
	other.mu.Lock()
	for _, c := range other.cookies {
		if strings.HasPrefix(c.Name, "mdmemory-session") {
			t.Errorf("the page on another port received the session's cookie %s", c.Name)
		}
	}
	for _, ref := range other.referers {
		if strings.Contains(ref, sessionRoot) {
			t.Errorf("the page on another port learnt the session's path from a Referer: %s", ref)
		}
	}
	for _, r := range other.replays {
		t.Errorf("the page on another port replayed the browser's cookies: %s", r)
	}
	other.mu.Unlock()

	// What the script did is on disk, and in the history under the right
	// names: the restore brought back the first version exactly (the page
	// on another port changed nothing).
	b, err := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
	must(t, err)
	if string(b) != userFirst {
		t.Errorf("facts/user.md after the restore:\n%s\nwant the first version:\n%s", b, userFirst)
	}
	changes, err := s.History(context.Background(), "facts/user.md", nil)
	must(t, err)
	var ops []string
	for _, c := range changes {
		ops = append(ops, c.Op+" by "+who(c))
	}
	want := []string{"restore by ui", "write by ui", "outside by someone outside the library (an editor, a copy)", "write by ui", "write by agent", "write by agent"}
	if strings.Join(ops, "\n") != strings.Join(want, "\n") {
		t.Errorf("the history of facts/user.md:\n%s\nwant:\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
}

// otherPort is a page another local user serves on another port of the
// host of the page (ui): its script makes the browser ask it for an image
// (so that it sees the cookies of the host that come with it), and asks
// the page for Facts and a save, with the browser's cookies. With any
// cookie it receives, it does what a person at a terminal can: replays it
// at the page, reads Facts, takes the CSRF token and saves a line.
type otherPort struct {
	ui string

	mu       sync.Mutex
	cookies  []*http.Cookie
	referers []string
	replays  []string // what each replay got that a session would
}

func (o *otherPort) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, otherPage, o.ui)
	case "/cookie.png":
		o.mu.Lock()
		o.cookies = append(o.cookies, r.Cookies()...)
		if ref := r.Referer(); ref != "" {
			o.referers = append(o.referers, ref)
		}
		o.mu.Unlock()
		for _, c := range r.Cookies() {
			o.replay(c)
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

// replay uses the cookie c at the page, as curl would: Facts, then a save
// with the CSRF token and the version Facts gave.
func (o *otherPort) replay(c *http.Cookie) {
	req, _ := http.NewRequest(http.MethodGet, o.ui+"/facts", nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(b)
	version := regexp.MustCompile(`name="version" value="([^"]*)"`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || csrf == nil || version == nil {
		return
	}
	form := url.Values{"csrf": {string(csrf[1])}, "path": {"facts/user.md"}, "version": {string(version[1])}, "mode": {"add"}, "text": {"- Planted: by another port"}}
	req, _ = http.NewRequest(http.MethodPost, o.ui+"/save", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", o.ui)
	req.AddCookie(c)
	got := "Facts with the CSRF token"
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		got += fmt.Sprintf(", then a save: %d", resp.StatusCode)
	}
	o.mu.Lock()
	o.replays = append(o.replays, got)
	o.mu.Unlock()
}

// otherPage is the script of the page on another port; %s is the page's
// address. It sets its title to "done" once every request has ended.
const otherPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>a page on another port</title></head><body><script>
window.tried = [];
const ui = %q;
const img = (src) => new Promise((done) => {
  const i = new Image();
  i.onload = i.onerror = () => { window.tried.push('img ' + src); done(); };
  i.src = src;
});
const send = (what, init) => fetch(ui + what, Object.assign({ mode: 'no-cors', credentials: 'include' }, init))
  .then(() => window.tried.push('fetch ' + what), () => window.tried.push('fetch ' + what + ' (failed)'));
Promise.all([
  img('/cookie.png'),
  img(ui + '/facts'),
  send('/facts'),
  send('/save', { method: 'POST', body: new URLSearchParams({ path: 'facts/user.md', mode: 'add', text: '- Planted: by another port' }) }),
]).then(() => { document.title = 'done'; });
</script></body></html>
`
