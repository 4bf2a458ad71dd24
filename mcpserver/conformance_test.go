package mcpserver_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
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

// conformanceRevisions are the protocol revisions the suite is run at,
// once each, with the scenarios each requires (--requirements): the last
// revision with sessions, and the stateless one. Each runs at its own wire
// version: an initialize and a session, or requests that carry their
// version.
var conformanceRevisions = []string{"2025-11-25", "2026-07-28"}

// conformanceBound bounds one run of the suite: a guard against a hang,
// generous for a loaded machine (a run takes seconds).
const conformanceBound = 5 * time.Minute

// notApplicable are the server scenarios the revisions require that test
// what this server does not offer, and why. Every other required scenario
// must pass.
var notApplicable = map[string]string{
	"completion-complete":   "the server offers no completions (no completions capability)",
	"resources-subscribe":   "the server offers no resource subscriptions (resources.subscribe is not advertised)",
	"resources-unsubscribe": "the server offers no resource subscriptions (resources.subscribe is not advertised)",
}

// fixtureScenario matches the scenarios that call the suite's fixtures: the
// tools, resources and prompts of its reference "everything" server
// (test_simple_text, test://static-text, test_simple_prompt,
// test_input_required_result_elicitation, ...), which a memory server does
// not have. Its own are tested by tools-list, resources-list and
// prompts-list here, and by the other tests of this package. The
// input-required-result scenarios among them call tools and prompts that
// ask the client for input in the middle of a request (elicitation,
// sampling, roots: multi round-trip requests), which a memory server never
// does; those that do not need such a fixture run, and pass.
var fixtureScenario = regexp.MustCompile(`^(tools-call-.*|elicitation-.*|resources-read-.*|resources-templates-read|prompts-get-.*|input-required-result-(basic-.*|request-state|multiple-input-requests|multi-round|non-tool-request|result-type|tampered-state|capability-check))$`)

// notApplicableCheck are checks, within scenarios that apply, that need a
// diagnostic tool of the suite's reference server, and why they do not
// apply to a memory server.
var notApplicableCheck = map[string]string{
	"sep-2575-server-rejects-undeclared-capability":          "the server needs no client capability for any request (it asks the client for nothing); the check calls the suite's tool test_missing_capability",
	"sep-2575-missing-capability-http-400":                   "the server needs no client capability for any request (it asks the client for nothing); the check calls the suite's tool test_missing_capability",
	"sep-2575-http-server-no-independent-requests-on-stream": "the server sends no request to the client, on any stream; the check calls the suite's tool test_streaming_elicitation",
	"sep-2575-server-no-log-without-loglevel":                "the server sends no log messages at all; the check calls the suite's tool test_logging_tool",
}

// httpOnly are the scenarios about the streamable HTTP transport itself:
// over standard input and output, through the bridge, they would test the
// bridge.
var httpOnly = map[string]bool{
	"server-session-lifecycle":             true,
	"server-sse-multiple-streams":          true,
	"server-sse-polling":                   true,
	"dns-rebinding-protection":             true,
	"http-header-validation":               true,
	"http-custom-header-server-validation": true,
}

// httpCheck matches the checks, within scenarios that apply over standard
// input and output too, of what the HTTP transport adds: statuses and
// headers, which through the bridge would test the bridge.
var httpCheck = regexp.MustCompile(`-http-`)

// mustRun are scenarios that must have run and passed at each revision,
// over both transports unless httpOnly: a guard against a run that tests
// nothing.
var mustRun = map[string][]string{
	"2025-11-25": {"server-initialize", "ping", "tools-list", "resources-list", "prompts-list", "server-sse-multiple-streams", "dns-rebinding-protection"},
	"2026-07-28": {"server-stateless", "tools-list", "resources-list", "prompts-list", "caching", "sep-2164-resource-not-found", "server-sse-multiple-streams", "dns-rebinding-protection", "http-header-validation"},
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

// runConformance runs the server scenarios the suite requires at the
// protocol revision revision (--requirements) against the MCP server at
// serverURL, and returns each scenario's checks and the revision's
// requirements.
func runConformance(t *testing.T, serverURL, revision string) (map[string][]check, requirements) {
	t.Helper()
	node, entry, shim := conformanceSuite(t)
	req := readRequirements(t, entry, revision)
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), conformanceBound)
	defer cancel()
	args := []string{"--import", shim, entry, "server", "--url", serverURL, "--requirements", revision, "--output-dir", out}
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
	return results, req
}

// requirements are the server scenarios the suite requires at a revision,
// and those it runs without scoring them, with the reason (a pending
// scenario, an extension).
type requirements struct {
	revision  string
	required  []string
	notScored map[string]string
}

// readRequirements reads the suite's frozen requirements for revision,
// requirements/REVISION.yaml beside its dist folder: the names under
// "server:", and the entries of "not_scored:" whose leg is the server.
func readRequirements(t *testing.T, entry, revision string) requirements {
	t.Helper()
	path := filepath.Join(filepath.Dir(filepath.Dir(entry)), "requirements", revision+".yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the suite's requirements for %s: %v", revision, err)
	}
	req := requirements{revision: revision, notScored: map[string]string{}}
	var section, scenario, leg string
	flush := func(reason string) {
		if section == "not_scored" && scenario != "" && leg == "server" && reason != "" {
			req.notScored[scenario] = reason
		}
	}
	for _, l := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case !strings.HasPrefix(l, " "):
			section, scenario, leg = strings.TrimSuffix(trimmed, ":"), "", ""
		case section == "server" && strings.HasPrefix(trimmed, "- "):
			req.required = append(req.required, strings.TrimPrefix(trimmed, "- "))
		case section == "not_scored" && strings.HasPrefix(trimmed, "- scenario:"):
			scenario, leg = strings.TrimSpace(strings.TrimPrefix(trimmed, "- scenario:")), ""
		case section == "not_scored" && strings.HasPrefix(trimmed, "leg:"):
			leg = strings.TrimSpace(strings.TrimPrefix(trimmed, "leg:"))
		case section == "not_scored" && strings.HasPrefix(trimmed, "reason:"):
			flush(strings.TrimSpace(strings.TrimPrefix(trimmed, "reason:")))
		}
	}
	if len(req.required) == 0 {
		t.Fatalf("no server scenarios in %s", path)
	}
	return req
}

// judge requires every scenario the revision requires to have run, and
// to pass when it applies; it logs those that do not apply, with the
// reason, and how those the suite does not score fared.
func judge(t *testing.T, results map[string][]check, req requirements, overStdio bool) {
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
			t.Logf("%s: not applicable: %s: %s", req.revision, n, reason)
			continue
		}
		ok := true
		var unscored []string // the checks failed of a scenario the suite does not score
		for _, c := range results[n] {
			if why := notApplicableCheck[c.ID]; why != "" {
				t.Logf("%s: %s: check %s not applicable: %s", req.revision, n, c.ID, why)
				continue
			}
			if overStdio && httpCheck.MatchString(c.ID) {
				continue
			}
			switch c.Status {
			case "SUCCESS", "INFO", "SKIPPED":
			case "WARNING":
				t.Logf("%s: %s: warning from %s: %s", req.revision, n, c.ID, c.ErrorMessage)
			default:
				ok = false
				if _, no := req.notScored[n]; no {
					unscored = append(unscored, c.ID)
				} else {
					t.Errorf("%s: %s: %s %s: %s", req.revision, n, c.ID, c.Status, c.ErrorMessage)
				}
			}
		}
		if len(unscored) > 0 {
			t.Logf("%s: %s, not scored by the suite (%s), failed %s", req.revision, n, req.notScored[n], strings.Join(unscored, ", "))
		}
		if ok {
			passed = append(passed, n)
		}
	}
	t.Logf("%s: passed: %s", req.revision, strings.Join(passed, ", "))
	for _, n := range req.required {
		if _, ran := results[n]; !ran {
			t.Errorf("%s: the required scenario %s did not run", req.revision, n)
		}
	}
	for _, n := range mustRun[req.revision] {
		if !(overStdio && httpOnly[n]) && !slices.Contains(passed, n) {
			t.Errorf("%s: the scenario %s did not pass", req.revision, n)
		}
	}
}

// seedMemory gives the store in dir a memory file, so that the scenarios
// that read a resource the server lists (caching's resources/read) have
// one.
func seedMemory(t *testing.T, store *memory.Store) {
	t.Helper()
	res, err := store.NewSession().Call(context.Background(), "memory_append", json.RawMessage(`{"path":"facts/user.md","entry":"- Likes tea.","summary":"The user"}`))
	if err != nil || res.IsError {
		t.Fatalf("seed the memory: %v %+v", err, res)
	}
}

// The official MCP conformance suite, the server scenarios each revision
// requires, against Handler over streamable HTTP: one run at 2025-11-25
// (sessions) and one at 2026-07-28 (stateless), on the same handler; every
// scenario that applies passes.
func TestConformanceHTTP(t *testing.T) {
	conformanceSuite(t)
	store, _ := openStore(t)
	seedMemory(t, store)
	srv := newHTTPServer(t, mcpserver.Handler(store, nil))
	for _, rev := range conformanceRevisions {
		results, req := runConformance(t, srv.URL+"/mcp", rev)
		judge(t, results, req, false)
	}
}

// The same suite against the server on standard input and output (the
// test binary run as a server process over StdioTransport, as mdmemory mcp
// runs it), through a bridge: the suite drives servers by URL only. The
// bridge relays each HTTP session (2025-11-25) to a process of its own,
// and each request of 2026-07-28 to one process that serves them all.
func TestConformanceStdio(t *testing.T) {
	conformanceSuite(t)
	store, dir := openStore(t)
	seedMemory(t, store)
	b := &stdioBridge{t: t, dir: dir, sessions: map[string]*bridged{}}
	t.Cleanup(b.closeAll)
	srv := newHTTPServer(t, b)
	for _, rev := range conformanceRevisions {
		results, req := runConformance(t, srv.URL+"/mcp", rev)
		judge(t, results, req, true)
	}
}

// stdioBridge serves the streamable HTTP transport (the SDK's
// StreamableServerTransport, one per session) and relays the messages of
// each session to and from a server process of its own, on its standard
// input and output, and back: a proxy that understands nothing of MCP. A
// request of the stateless revision (its MCP-Protocol-Version header
// names 2026-07-28) goes to one process that serves all such requests, under
// an id of the bridge's (the suite's requests at once may share ids); its
// answer comes back under the request's id, a JSON-RPC error with the
// HTTP status that revision gives it.
type stdioBridge struct {
	t   *testing.T
	dir string

	mu       sync.Mutex
	sessions map[string]*bridged

	shared  mcp.Connection                   // the process of stateless requests, once started
	nextID  int64                            // numbers the requests relayed to it
	waiting map[int64]chan *jsonrpc.Response // the answer awaited by each
	// the notifications awaited by each subscriptions/listen
	listeners map[int64]chan *jsonrpc.Request
	stop      func() // ends shared
}

// bridged is one session of a stdioBridge.
type bridged struct {
	transport *mcp.StreamableServerTransport
	close     func()
}

func (b *stdioBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Protocol-Version") >= mcpserver.StatelessRevision {
		b.relay(w, r)
		return
	}
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

// closeAll ends every session still open, and the process of stateless
// requests.
func (b *stdioBridge) closeAll() {
	b.mu.Lock()
	sessions := b.sessions
	b.sessions = map[string]*bridged{}
	stop := b.stop
	b.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
	if stop != nil {
		stop()
	}
}

// relay serves a request of the stateless revision through the shared
// process: a POST of one message, a notification accepted with 202, a
// request answered in JSON; anything else, 405.
func (b *stdioBridge) relay(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, isReq := msg.(*jsonrpc.Request)
	if err != nil || !isReq {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"not a JSON-RPC request"}}`))
		return
	}
	conn, err := b.sharedProcess()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if !req.IsCall() {
		if err := conn.Write(r.Context(), req); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	orig := req.ID
	answer := make(chan *jsonrpc.Response, 1)
	b.mu.Lock()
	b.nextID++
	n := b.nextID
	b.waiting[n] = answer
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, n)
		b.mu.Unlock()
	}()
	if req.ID, err = jsonrpc.MakeID(fmt.Sprintf("bridge-%d", n)); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if req.Method == "subscriptions/listen" {
		b.listen(w, r, conn, req, orig, n)
		return
	}
	if err := conn.Write(r.Context(), req); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var resp *jsonrpc.Response
	select {
	case resp = <-answer:
	case <-r.Context().Done():
		return
	}
	resp.ID = orig
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	status := http.StatusOK
	var jerr *jsonrpc.Error
	if errors.As(resp.Error, &jerr) {
		switch jerr.Code {
		case jsonrpc.CodeMethodNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
			status = http.StatusBadRequest
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// listen relays a subscriptions/listen request, sent to the process under
// the bridge's id n, as an event stream of the notifications the process
// tags with that subscription (under the request's own id, orig), until
// the client goes away, which cancels the request.
func (b *stdioBridge) listen(w http.ResponseWriter, r *http.Request, conn mcp.Connection, req *jsonrpc.Request, orig jsonrpc.ID, n int64) {
	notes := make(chan *jsonrpc.Request, 16)
	b.mu.Lock()
	b.listeners[n] = notes
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.listeners, n)
		b.mu.Unlock()
		cancel := &jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(fmt.Sprintf(`{"requestId":"bridge-%d"}`, n))}
		_ = conn.Write(context.Background(), cancel)
	}()
	if err := conn.Write(r.Context(), req); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case note := <-notes:
			var params map[string]any
			if json.Unmarshal(note.Params, &params) != nil {
				continue
			}
			if meta, ok := params["_meta"].(map[string]any); ok {
				meta[mcp.MetaKeySubscriptionID] = orig.Raw()
			}
			note.Params, _ = json.Marshal(params)
			data, err := jsonrpc.EncodeMessage(note)
			if err != nil {
				continue
			}
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
			http.NewResponseController(w).Flush()
		}
	}
}

// bridgeID returns n of the bridge's request id "bridge-n", as a JSON
// value (a string), or false.
func bridgeID(v any) (int64, bool) {
	id, _ := v.(string)
	n, err := strconv.ParseInt(strings.TrimPrefix(id, "bridge-"), 10, 64)
	return n, err == nil && strings.HasPrefix(id, "bridge-")
}

// sharedProcess returns the connection to the process of stateless
// requests, starting it and the goroutine that hands out its answers on
// first use.
func (b *stdioBridge) sharedProcess() (mcp.Connection, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shared != nil {
		return b.shared, nil
	}
	ctx := context.Background()
	conn, err := (&mcp.CommandTransport{Command: serverCommand(b.t, b.dir)}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	b.shared, b.waiting, b.listeners = conn, map[int64]chan *jsonrpc.Response{}, map[int64]chan *jsonrpc.Request{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			// A notification of a subscription goes to its stream; others
			// (progress, log messages) are dropped: the bridge answers
			// other requests in JSON, not in an event stream.
			if note, ok := msg.(*jsonrpc.Request); ok {
				var p struct {
					Meta map[string]any `json:"_meta"`
				}
				if json.Unmarshal(note.Params, &p) != nil {
					continue
				}
				if n, ok := bridgeID(p.Meta[mcp.MetaKeySubscriptionID]); ok {
					b.mu.Lock()
					ch := b.listeners[n]
					b.mu.Unlock()
					if ch != nil {
						select {
						case ch <- note:
						default: // a stream not read: the note is lost, as on a slow network
						}
					}
				}
				continue
			}
			resp, ok := msg.(*jsonrpc.Response)
			if !ok {
				continue
			}
			n, ok := bridgeID(resp.ID.Raw())
			if !ok {
				continue
			}
			b.mu.Lock()
			ch := b.waiting[n]
			b.mu.Unlock()
			if ch != nil {
				ch <- resp
			}
		}
	}()
	b.stop = func() {
		conn.Close() // closes the process's input: it ends
		<-done
	}
	return conn, nil
}
