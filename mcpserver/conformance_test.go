package mcpserver_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceVersion is the official MCP conformance suite the tests run,
// @modelcontextprotocol/conformance from npm; make mcp-tools installs it.
// Keep it in step with CONFORMANCE_VERSION in the Makefile.
const conformanceVersion = "0.2.0-alpha.12"

// conformanceEnv names the suite's entry point, its dist/index.js. When it
// is unset, the tests look where make mcp-tools installs it:
// <user cache dir>/mdmemory/conformance-VERSION.
const conformanceEnv = "MDMEMORY_CONFORMANCE"

// conformanceSpec is the protocol revision the suite runs at: the latest
// dated one (2026-07-28 is a draft in this version of the suite).
const conformanceSpec = "2025-11-25"

// conformanceBound bounds one run of the suite: a guard against a hang,
// generous for a loaded machine (a run takes seconds).
const conformanceBound = 5 * time.Minute

// notApplicable are the server scenarios of the suite's active set that
// test what this server does not offer, and why. Every other scenario
// must pass.
var notApplicable = map[string]string{
	"completion-complete":   "the server offers no completions (no completions capability)",
	"resources-subscribe":   "the server offers no resource subscriptions (resources.subscribe is not advertised)",
	"resources-unsubscribe": "the server offers no resource subscriptions (resources.subscribe is not advertised)",
}

// fixtureScenario matches the scenarios that call the suite's fixtures: the
// tools, resources and prompts of its reference "everything" server
// (test_simple_text, test://static-text, test_simple_prompt, ...), which a
// memory server does not have. Its own are tested by tools-list,
// resources-list and prompts-list here, and by the other tests of this
// package.
var fixtureScenario = regexp.MustCompile(`^(tools-call-.*|elicitation-.*|resources-read-.*|resources-templates-read|prompts-get-.*)$`)

// httpOnly are the scenarios about the streamable HTTP transport itself:
// over standard input and output, through the bridge, they would test the
// bridge.
var httpOnly = map[string]bool{
	"server-session-lifecycle":    true,
	"server-sse-multiple-streams": true,
	"dns-rebinding-protection":    true,
}

// mustRun are scenarios that must have run and passed, over both
// transports unless httpOnly: a guard against a run that tests nothing.
var mustRun = []string{
	"server-initialize", "ping", "tools-list", "resources-list", "prompts-list",
	"server-session-lifecycle", "server-sse-multiple-streams", "dns-rebinding-protection",
}

// conformanceSuite finds node and the suite, or skips the test saying how
// to get them. It never installs anything: the package comes from make
// mcp-tools (npm install), not from npx at test time.
func conformanceSuite(t *testing.T) (node, entry, shim string) {
	t.Helper()
	entry = os.Getenv(conformanceEnv)
	if entry == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			entry = filepath.Join(cache, "mdmemory", "conformance-"+conformanceVersion, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed, so the MCP conformance suite %s cannot run: install Node.js 20 or later, then make mcp-tools", conformanceVersion)
	}
	if _, err := os.Stat(entry); entry == "" || err != nil {
		t.Skipf("the MCP conformance suite %s is not installed (%s=%q), so the test is skipped: run make mcp-tools, which installs it with npm", conformanceVersion, conformanceEnv, entry)
	}
	abs, err := filepath.Abs(filepath.Join("testdata", "conformance", "register.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	// node --import takes a URL; a Windows path is not one.
	shim = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	if !strings.HasPrefix(filepath.ToSlash(abs), "/") {
		shim = (&url.URL{Scheme: "file", Path: "/" + filepath.ToSlash(abs)}).String()
	}
	return node, entry, shim
}

// check is one check of a scenario, as the suite writes it in checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO, SKIPPED
	ErrorMessage string `json:"errorMessage"`
}

// runConformance runs the suite's active server scenarios at
// conformanceSpec, or only the scenario scenario when it is not "",
// against the MCP server at serverURL and returns each scenario's checks.
func runConformance(t *testing.T, serverURL, scenario string) map[string][]check {
	t.Helper()
	node, entry, shim := conformanceSuite(t)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceBound)
	defer cancel()
	args := []string{"--import", shim, entry, "server", "--url", serverURL, "--spec-version", conformanceSpec, "--output-dir", out}
	if scenario != "" {
		args = append(args, "--scenario", scenario)
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = out
	// node may leave a child holding the pipes when the context kills it.
	cmd.WaitDelay = 10 * time.Second
	output, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the conformance suite did not finish within %v:\n%s", conformanceBound, output)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the conformance suite: %v\n%s", err, output)
	}
	// The suite exits 1 when a scenario failed, those that do not apply
	// included: the checks say which.
	results := map[string][]check{}
	name := regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT`)
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		m := name.FindStringSubmatch(filepath.Base(filepath.Dir(path)))
		if m == nil {
			t.Errorf("a result the test cannot name: %s", path)
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			return err
		}
		results[m[1]] = append(results[m[1]], checks...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) == 0 {
		t.Fatalf("the conformance suite wrote no results:\n%s", output)
	}
	return results
}

// judge requires every scenario that applies to pass, and logs those that
// do not, with the reason.
func judge(t *testing.T, results map[string][]check, overStdio bool) {
	t.Helper()
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	slices.Sort(names)
	var passed []string
	for _, n := range names {
		reason := notApplicable[n]
		switch {
		case reason != "":
		case fixtureScenario.MatchString(n):
			reason = "it calls the suite's fixtures (the tools, resources or prompts of its reference server), which a memory server does not have"
		case overStdio && httpOnly[n]:
			reason = "it tests the streamable HTTP transport, here the bridge's, not the server on standard input and output"
		}
		if reason != "" {
			t.Logf("not applicable: %s: %s", n, reason)
			continue
		}
		ok := true
		for _, c := range results[n] {
			switch c.Status {
			case "SUCCESS", "INFO", "SKIPPED":
			case "WARNING":
				t.Logf("%s: warning from %s: %s", n, c.ID, c.ErrorMessage)
			default:
				ok = false
				t.Errorf("%s: %s %s: %s", n, c.ID, c.Status, c.ErrorMessage)
			}
		}
		if ok {
			passed = append(passed, n)
		}
	}
	t.Logf("passed: %s", strings.Join(passed, ", "))
	for _, n := range mustRun {
		if overStdio && httpOnly[n] {
			continue
		}
		if _, ran := results[n]; !ran {
			t.Errorf("the scenario %s did not run", n)
		}
	}
}

// The official MCP conformance suite, its active server scenarios at
// 2025-11-25, against Handler over streamable HTTP: every scenario that
// applies passes.
func TestConformanceHTTP(t *testing.T) {
	conformanceSuite(t)
	store, _ := openStore(t)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	judge(t, runConformance(t, srv.URL+"/mcp", ""), false)
}

// stdioScenarios are the scenarios run over standard input and output:
// those of the active set that apply there (the others are in
// notApplicable, fixtureScenario or httpOnly). One run of the suite each,
// since each of its sessions is a server process.
var stdioScenarios = []string{"server-initialize", "logging-set-level", "ping", "tools-list", "resources-list", "prompts-list"}

// The same suite against the server on standard input and output (the
// test binary run as a server process over StdioTransport, as mdmemory mcp
// runs it), through a bridge that relays each HTTP session to a process of
// its own: the suite drives servers by URL only.
func TestConformanceStdio(t *testing.T) {
	conformanceSuite(t)
	_, dir := openStore(t)
	b := &stdioBridge{t: t, dir: dir, sessions: map[string]*bridged{}}
	t.Cleanup(b.closeAll)
	srv := newHTTPServer(t, b)
	results := map[string][]check{}
	for _, sc := range stdioScenarios {
		for n, checks := range runConformance(t, srv.URL+"/mcp", sc) {
			results[n] = append(results[n], checks...)
		}
		if _, ran := results[sc]; !ran {
			t.Errorf("the scenario %s did not run", sc)
		}
	}
	judge(t, results, true)
}

// stdioBridge serves the streamable HTTP transport (the SDK's
// StreamableServerTransport, one per session) and relays the messages of
// each session to and from a server process of its own, on its standard
// input and output, and back: a proxy that understands nothing of MCP.
type stdioBridge struct {
	t   *testing.T
	dir string

	mu       sync.Mutex
	sessions map[string]*bridged
}

// bridged is one session of a stdioBridge.
type bridged struct {
	transport *mcp.StreamableServerTransport
	close     func()
}

func (b *stdioBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "no session", http.StatusBadRequest)
			return
		}
		s, err := b.start()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		s.transport.ServeHTTP(w, r)
		return
	}
	b.mu.Lock()
	s := b.sessions[id]
	if r.Method == http.MethodDelete {
		delete(b.sessions, id)
	}
	b.mu.Unlock()
	switch {
	case s == nil:
		http.Error(w, "session not found", http.StatusNotFound)
	case r.Method == http.MethodDelete:
		s.close()
		w.WriteHeader(http.StatusNoContent)
	default:
		s.transport.ServeHTTP(w, r)
	}
}

// start starts a session: a transport for its HTTP side, a server process
// for the other, and a goroutine relaying each way.
func (b *stdioBridge) start() (*bridged, error) {
	ctx := context.Background()
	t := &mcp.StreamableServerTransport{SessionID: rand.Text()}
	httpSide, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	proc, err := (&mcp.CommandTransport{Command: serverCommand(b.t, b.dir)}).Connect(ctx)
	if err != nil {
		httpSide.Close()
		return nil, err
	}
	var wg sync.WaitGroup
	relay := func(from, to mcp.Connection) {
		defer wg.Done()
		for {
			msg, err := from.Read(ctx)
			if err != nil {
				return
			}
			if err := to.Write(ctx, msg); err != nil && !isClientGone(err) {
				return
			}
		}
	}
	wg.Add(2)
	go relay(httpSide, proc)
	go relay(proc, httpSide)
	var once sync.Once
	s := &bridged{transport: t, close: func() {
		once.Do(func() {
			httpSide.Close()
			proc.Close() // closes the process's input: it ends
			wg.Wait()
		})
	}}
	b.mu.Lock()
	b.sessions[t.SessionID] = s
	b.mu.Unlock()
	return s, nil
}

// isClientGone reports whether err, from writing to the HTTP side, only
// says that the request a message answers is gone.
func isClientGone(err error) bool {
	var jerr *jsonrpc.Error
	return errors.As(err, &jerr)
}

// closeAll ends every session still open.
func (b *stdioBridge) closeAll() {
	b.mu.Lock()
	sessions := b.sessions
	b.sessions = map[string]*bridged{}
	b.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
}
