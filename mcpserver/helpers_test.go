package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// childDirEnv, when set, makes the test binary an MCP server on standard
// input and output over the memory directory it names, instead of running
// the tests: the stdio and Inspector tests start it so.
const childDirEnv = "MDMEMORY_MCPSERVER_TEST_DIR"

// childClosedEnv, when set beside childDirEnv, makes the child close its
// store before it serves, so that every call meets a host failure.
const childClosedEnv = "MDMEMORY_MCPSERVER_TEST_CLOSED"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(serveChild(dir))
	}
	os.Exit(m.Run())
}

// serveChild serves the store at dir on standard input and output until
// the client closes them, as `mdmemory mcp` does.
func serveChild(dir string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	store, err := memory.Open(dir, &memory.Options{Now: clock})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver test child:", err)
		return 1
	}
	defer store.Close()
	if os.Getenv(childClosedEnv) != "" {
		store.Close()
	}
	if err := mcpserver.New(store, nil).Run(ctx, mcpserver.StdioTransport(os.Stdin, os.Stdout)); err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "mcpserver test child:", err)
		return 1
	}
	return 0
}

// clock is the stores' clock: the tests' episodes fall in February 2026.
func clock() time.Time { return time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC) }

// openStore opens a store in a new temporary directory, closed when the
// test ends.
func openStore(t testing.TB) (*memory.Store, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := memory.Open(dir, &memory.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, dir
}

// connect runs srv over an in-memory transport and returns a client
// session on it, closed when the test ends.
func connect(t testing.TB, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := newClient().Connect(ctx, ct, inSession)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// inSession makes the SDK's client, which speaks the stateless revision
// 2026-07-28 when the server does, open a session of 2025-11-25 instead:
// the tests of what a session is (a conversation, bounded, closed) use it.
var inSession = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "1"}, nil)
}

// call calls the tool name with args and returns its result; a protocol
// error fails the test.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text returns the text of a tool result, which has one text content.
func text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d contents, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// ok checks that res is not an error result and returns its text.
func ok(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	s := text(t, res)
	if res.IsError {
		t.Fatalf("unexpected isError result: %s", s)
	}
	return s
}

// refused checks that res is an error result whose text contains want.
func refused(t testing.TB, res *mcp.CallToolResult, want string) {
	t.Helper()
	s := text(t, res)
	if !res.IsError {
		t.Fatalf("result is not an error, want one saying %q: %s", want, s)
	}
	if !strings.Contains(s, want) {
		t.Fatalf("error result %q does not say %q", s, want)
	}
}

// versionOf returns the version a memory_read result states on its first
// line, "version: X".
func versionOf(t testing.TB, readText string) string {
	t.Helper()
	first, _, _ := strings.Cut(readText, "\n")
	v, found := strings.CutPrefix(first, "version: ")
	if !found || v == "" {
		t.Fatalf("memory_read result does not start with a version line: %q", readText)
	}
	return v
}

// write is memory_write's arguments.
func write(path, content string, version any) map[string]any {
	return map[string]any{"path": path, "content": content, "version": version}
}

// read is memory_read's arguments.
func read(path string) map[string]any { return map[string]any{"path": path, "line": nil} }

// patch is memory_patch's arguments with one patch.
func patch(path, oldText, newText string, version any) map[string]any {
	return map[string]any{"path": path, "patches": []map[string]string{{"oldText": oldText, "newText": newText}}, "version": version}
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// endedHook returns a hook for mcpserver.SetEnded and a function that
// waits for the next conversation to end and returns its id, failing the
// test when none has after a minute (a guard against a hang, not a timing
// assumption: it ends within milliseconds of its session).
func endedHook(t testing.TB) (hook func(string), next func() string) {
	ch := make(chan string, 16)
	hook = func(id string) { ch <- id }
	next = func() string {
		t.Helper()
		select {
		case id := <-ch:
			return id
		case <-time.After(time.Minute):
			t.Fatal("no conversation ended within a minute of its session")
			return ""
		}
	}
	return hook, next
}
