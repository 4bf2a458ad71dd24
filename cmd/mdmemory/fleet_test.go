package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The fleet test: several "mdmemory mcp --http --users" processes over one
// bucket behind a round-robin proxy. Its small version runs with the
// tests; the operator's run is
//
//	go test -run TestFleet -fleet.users=10000 -timeout=2h
var (
	fleetUsers   = flag.Int("fleet.users", 50, "TestFleet: the users")
	fleetOps     = flag.Int("fleet.ops", 9, "TestFleet: the operations of each user's client (a read, an append and a patch in turn)")
	fleetClients = flag.Int("fleet.clients", 8, "TestFleet: the users' clients at work at once")
	fleetServers = flag.Int("fleet.servers", 3, "TestFleet: the server processes")
)

// proxy sends each request to the next process in turn, and a session's
// requests (Mcp-Session-Id) to the process that made the session.
type proxy struct {
	transport http.RoundTripper

	mu       sync.Mutex
	backends []*url.URL
	next     int
	pinned   map[string]int // a session's id: its process
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	var i int
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		var ok bool
		if i, ok = p.pinned[sid]; !ok {
			p.mu.Unlock()
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	} else {
		i = p.next % len(p.backends)
		p.next++
	}
	target := p.backends[i]
	p.mu.Unlock()
	rp := &httputil.ReverseProxy{
		Transport: p.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host // a loopback name, as the servers take
		},
		ModifyResponse: func(resp *http.Response) error {
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				p.mu.Lock()
				p.pinned[sid] = i
				p.mu.Unlock()
			}
			return nil
		},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0), // a process killed mid-answer is the test's doing
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(w, r)
}

// replace makes process i the one at u, and forgets its sessions.
func (p *proxy) replace(i int, u *url.URL) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends[i] = u
	for sid, j := range p.pinned {
		if j == i {
			delete(p.pinned, sid)
		}
	}
}

// fleetUser is one user of the fleet test, and what its client was told.
type fleetUser struct {
	n      int
	token  string
	marker string // in its memory alone: "fleetuser-000042-"
	prefix string // its memory's prefix in the bucket

	acked     []string // the appends acknowledged, by their ids
	attempted []string // every append sent, acknowledged or not
	patched   []int    // the counter's values the acknowledged patches moved on from
	patchTry  int      // the patches sent
	sessions  bool     // its client speaks 2025-11-25 in a session, not 2026-07-28
}

// caller calls tools of one user's memory.
type caller interface {
	call(ctx context.Context, tool string, args map[string]any) (text string, isError bool, err error)
	close()
}

// sessionCaller is the SDK's client: stateless (2026-07-28), or in one
// session (2025-11-25) pinned by the proxy to one process.
type sessionCaller struct{ cs *mcp.ClientSession }

func (c sessionCaller) call(ctx context.Context, tool string, args map[string]any) (string, bool, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

func (c sessionCaller) close() { c.cs.Close() }

// fleetRun is a run's figures.
type fleetRun struct {
	mu        sync.Mutex
	latencies []time.Duration // of every tool call answered
	failures  int             // calls not answered (a process killed, a 502), retried
	refusals  int             // tool errors: a stale version, retried
}

func (r *fleetRun) answered(d time.Duration) {
	r.mu.Lock()
	r.latencies = append(r.latencies, d)
	r.mu.Unlock()
}

// rss is the resident memory of process pid, from /proc; 0 where there is
// none.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// TestFleet: three "mdmemory mcp --http --users" processes, memories in
// one bucket (a prefix per user), behind a round-robin proxy: every user's
// client reads, appends and patches with the version it read, through the
// proxy; one process is killed (SIGKILL) mid-run and started again. At the
// end every acknowledged append is in its user's memory exactly once, the
// counter every acknowledged patch moved is where they took it, and no
// answer to one token held another user's memory.
func TestFleet(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fleet's processes are killed with SIGKILL")
	}
	needGateway(t)
	awsEnv(t)
	ctx := context.Background()
	c := testClient()
	root := t.TempDir()
	run := "fleet-" + strings.ToLower(rand.Text()[:8])
	month := time.Now().UTC().Format("2006-01")

	// The users, each a prefix of the bucket, with a fact file to patch.
	users := make([]*fleetUser, *fleetUsers)
	var file bytes.Buffer
	file.WriteString("# TOKEN MEMORY: a token's SHA-256, an S3 prefix\n")
	for i := range users {
		u := &fleetUser{n: i, token: rand.Text(), marker: fmt.Sprintf("fleetuser-%06d-", i), prefix: fmt.Sprintf("%s/u%06d", run, i), sessions: i%5 == 0}
		users[i] = u
		sum := sha256.Sum256([]byte(u.token))
		fmt.Fprintf(&file, "sha256:%s s3://%s/%s\n", hex.EncodeToString(sum[:]), testBucket, u.prefix)
	}
	seed := make(chan *fleetUser)
	var seeding sync.WaitGroup
	for range 16 {
		seeding.Go(func() {
			for u := range seed {
				body := fmt.Sprintf("# User\n\n> Summary: fleet user %d\n\n- Marker: %s\n- Counter: 0\n", u.n, u.marker)
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: aws.String(u.prefix + "/facts/user.md"), Body: strings.NewReader(body)})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	for _, u := range users {
		seed <- u
	}
	close(seed)
	seeding.Wait()
	usersFile := filepath.Join(root, "users")
	require.NoError(t, os.WriteFile(usersFile, file.Bytes(), 0o600))

	// The processes, and the proxy in front of them.
	args := []string{"--http", "127.0.0.1:0", "--users", usersFile, "--log-format", "none", "--metrics", "127.0.0.1:0", "--max-sessions", strconv.Itoa(max(1000, *fleetClients))}
	servers := make([]*server, *fleetServers)
	transport := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 256}
	p := &proxy{transport: transport, pinned: make(map[string]int)}
	for i := range servers {
		servers[i] = startServer(t, nil, true, args...)
		u, err := url.Parse(servers[i].url)
		require.NoError(t, err)
		p.backends = append(p.backends, u)
	}
	idleRSS := make([]int64, len(servers))
	for i, s := range servers {
		idleRSS[i] = rss(s.cmd.Process.Pid)
	}
	front := httptest.NewServer(p)
	defer front.Close()
	clientTransport := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024}
	defer clientTransport.CloseIdleConnections()

	var (
		fr    fleetRun
		done  atomic.Int64
		total = int64(len(users) * *fleetOps)
		half  = make(chan struct{})
		once  sync.Once
	)
	// connect gives user u a caller: the SDK's client, which speaks
	// 2026-07-28 in requests of their own, each sent by the proxy to the
	// next process; or for some users a session of 2025-11-25, pinned.
	connect := func(u *fleetUser) (caller, error) {
		var opts *mcp.ClientSessionOptions
		if u.sessions {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
		}
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint:   front.URL,
			HTTPClient: &http.Client{Transport: bearerOn{u.token, clientTransport}},
			MaxRetries: -1,
		}, opts)
		if err != nil {
			return nil, err
		}
		if stateless := cs.ID() == ""; stateless == u.sessions {
			cs.Close()
			return nil, fmt.Errorf("user %d: a session %q of %s", u.n, cs.ID(), cs.InitializeResult().ProtocolVersion)
		}
		return sessionCaller{cs}, nil
	}
	markers := regexp.MustCompile(`fleetuser-\d{6}-`)
	// call calls a tool for u, through a new caller when it has none (the
	// one it had failed: its process killed); it checks that the answer
	// holds no other user's memory. answered false is a call that went
	// unanswered, which may have been done or not.
	call := func(u *fleetUser, cl *caller, tool string, args map[string]any) (text string, isErr, answered bool) {
		for attempt := 0; ; attempt++ {
			if *cl == nil {
				c, err := connect(u)
				if err != nil {
					fr.mu.Lock()
					fr.failures++
					fr.mu.Unlock()
					if attempt > 50 {
						t.Fatalf("user %d: no connection after %d attempts: %v", u.n, attempt, err)
					}
					runtime.Gosched()
					continue
				}
				*cl = c
			}
			start := time.Now()
			text, isErr, err := (*cl).call(ctx, tool, args)
			if err != nil {
				(*cl).close()
				*cl = nil
				fr.mu.Lock()
				fr.failures++
				fr.mu.Unlock()
				return "", false, false
			}
			fr.answered(time.Since(start))
			for _, m := range markers.FindAllString(text, -1) {
				if m != u.marker {
					t.Errorf("user %d was answered with %s's memory: %q", u.n, m, text)
				}
			}
			return text, isErr, true
		}
	}
	counter := regexp.MustCompile(`Counter: (\d+)`)
	work := func(u *fleetUser) {
		var cl caller
		defer func() {
			if cl != nil {
				cl.close()
			}
		}()
		for op := range *fleetOps {
			switch op % 3 {
			case 0: // a read
				if text, isErr, answered := call(u, &cl, "memory_read", map[string]any{"path": "facts/user.md"}); answered && isErr {
					t.Errorf("user %d: read refused: %s", u.n, text)
				}
			case 1: // an append, acknowledged or not; sent again until it is
				for try := 0; ; try++ {
					id := fmt.Sprintf("<%s%d:%d>", u.marker, op, try)
					u.attempted = append(u.attempted, id)
					text, isErr, answered := call(u, &cl, "memory_append", map[string]any{
						"path": "episodes/" + month + ".md", "entry": "## Fleet note " + id + "\n\n- Said by the fleet test, " + id, "summary": nil,
					})
					if !answered {
						continue
					}
					if isErr {
						t.Errorf("user %d: append refused: %s", u.n, text)
					} else {
						u.acked = append(u.acked, id)
					}
					break
				}
			case 2: // a patch with the version read, read again when stale
				for try := 0; ; try++ {
					if try == 100 {
						t.Errorf("user %d: no patch acknowledged in %d tries", u.n, try)
						break
					}
					text, isErr, answered := call(u, &cl, "memory_read", map[string]any{"path": "facts/user.md"})
					if !answered {
						continue
					}
					if isErr {
						t.Errorf("user %d: read refused: %s", u.n, text)
						return
					}
					first, _, _ := strings.Cut(text, "\n")
					version, ok := strings.CutPrefix(first, "version: ")
					m := counter.FindStringSubmatch(text)
					if !ok || m == nil {
						t.Errorf("user %d: read %q", u.n, text)
						return
					}
					n, _ := strconv.Atoi(m[1])
					u.patchTry++
					_, isErr, answered = call(u, &cl, "memory_patch", map[string]any{
						"path": "facts/user.md", "version": version,
						"patches": []map[string]string{{"oldText": "Counter: " + m[1], "newText": "Counter: " + strconv.Itoa(n+1)}},
					})
					if answered && !isErr {
						u.patched = append(u.patched, n)
						break
					}
					if isErr {
						fr.mu.Lock()
						fr.refusals++
						fr.mu.Unlock()
					}
				}
			}
			if done.Add(1) == total/2 {
				once.Do(func() { close(half) })
			}
		}
	}

	// A process killed at half-time, and started again.
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		<-half
		s := servers[1]
		s.cmd.Process.Kill()
		s.cmd.Wait()
		servers[1] = startServer(t, nil, true, args...)
		u, err := url.Parse(servers[1].url)
		if err != nil {
			t.Error(err)
			return
		}
		p.replace(1, u)
	}()

	queue := make(chan *fleetUser)
	var workers sync.WaitGroup
	start := time.Now()
	for range *fleetClients {
		workers.Go(func() {
			for u := range queue {
				work(u)
			}
		})
	}
	for _, u := range users {
		queue <- u
	}
	close(queue)
	workers.Wait()
	elapsed := time.Since(start)
	<-killed
	endRSS := make([]int64, len(servers))
	var stores float64
	for i, s := range servers {
		endRSS[i] = rss(s.cmd.Process.Pid)
		stores += value(scrape(t, s.metrics), "mdmemory_open_stores")
	}

	// Every acknowledged append once, every acknowledged patch counted.
	check := make(chan *fleetUser)
	var checking sync.WaitGroup
	for range 16 {
		checking.Go(func() {
			for u := range check {
				episodes := readAll(t, c, u.prefix+"/episodes/")
				for _, id := range u.attempted {
					n := strings.Count(episodes, "## Fleet note "+id+"\n")
					switch {
					case slices.Contains(u.acked, id) && n != 1:
						t.Errorf("user %d: the acknowledged append %s is there %d times", u.n, id, n)
					case n > 1:
						t.Errorf("user %d: the append %s is there %d times", u.n, id, n)
					}
				}
				if got := strings.Count(episodes, "## Fleet note <"); got > len(u.attempted) {
					t.Errorf("user %d: %d appends for %d sent", u.n, got, len(u.attempted))
				}
				if m := markers.FindAllString(episodes, -1); slices.ContainsFunc(m, func(s string) bool { return s != u.marker }) {
					t.Errorf("user %d's memory holds another's: %v", u.n, m)
				}
				facts := readAll(t, c, u.prefix+"/facts/user.md")
				m := counter.FindStringSubmatch(facts)
				if m == nil {
					t.Errorf("user %d: no counter in %q", u.n, facts)
					continue
				}
				n, _ := strconv.Atoi(m[1])
				sorted := slices.Clone(u.patched)
				slices.Sort(sorted)
				if len(slices.Compact(sorted)) != len(u.patched) {
					t.Errorf("user %d: two acknowledged patches moved the counter from one value: %v", u.n, u.patched)
				}
				if n < len(u.patched) || n > u.patchTry || (len(u.patched) > 0 && sorted[len(sorted)-1] >= n) {
					t.Errorf("user %d: the counter is at %d after %d acknowledged patches (from %v) of %d sent", u.n, n, len(u.patched), u.patched, u.patchTry)
				}
			}
		})
	}
	for _, u := range users {
		check <- u
	}
	close(check)
	checking.Wait()

	// The figures.
	slices.Sort(fr.latencies)
	pct := func(q float64) time.Duration {
		if len(fr.latencies) == 0 {
			return 0
		}
		return fr.latencies[min(len(fr.latencies)-1, int(q*float64(len(fr.latencies))))]
	}
	var idleSum, endSum int64
	for i := range servers {
		idleSum += idleRSS[i]
		endSum += endRSS[i]
	}
	t.Logf("fleet: %d users, %d processes, %d clients at once: %d tool calls answered in %v, %.0f calls/s, p50 %v, p99 %v; %d calls unanswered (a process killed) and %d stale versions, retried",
		len(users), len(servers), *fleetClients, len(fr.latencies), elapsed.Round(time.Millisecond), float64(len(fr.latencies))/elapsed.Seconds(), pct(.5), pct(.99), fr.failures, fr.refusals)
	t.Logf("fleet: RSS per process at start %v MiB, at the end %v MiB with %.0f users' stores open in all: %.1f KB per store open",
		mib(idleRSS), mib(endRSS), stores, float64(endSum-idleSum)/stores/1024)
}

// mib gives sizes in MiB, for a log.
func mib(sizes []int64) []string {
	var s []string
	for _, n := range sizes {
		s = append(s, fmt.Sprintf("%.1f", float64(n)/(1<<20)))
	}
	return s
}

// readAll returns the content of every object under prefix, concatenated.
func readAll(t *testing.T, c *s3.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(testBucket), Prefix: aws.String(prefix)})
	if err != nil {
		t.Error(err)
		return ""
	}
	var b strings.Builder
	for _, o := range out.Contents {
		obj, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: o.Key})
		if err != nil {
			t.Error(err)
			continue
		}
		data, err := io.ReadAll(obj.Body)
		obj.Body.Close()
		if err != nil {
			t.Error(err)
		}
		b.Write(data)
	}
	return b.String()
}

// bearerOn adds a bearer token to every request, sent on transport.
type bearerOn struct {
	token     string
	transport http.RoundTripper
}

func (b bearerOn) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.transport.RoundTrip(r)
}
