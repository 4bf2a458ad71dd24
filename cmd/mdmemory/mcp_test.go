package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
)

// mdmemoryCmd is mdmemory as a process of its own: this test binary,
// which runs main when asMainEnv is set.
func mdmemoryCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// call runs a tool and returns its text, requiring no protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mdmemory-test", Version: "0"}, nil)
}

// TestMCPStdio: "mdmemory mcp" started by a client as MCP servers are (the
// go-sdk's CommandTransport) offers the six tools, and a write through it
// is on disk and read back; closing standard input ends it with status 0.
func TestMCPStdio(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "memory") // mcp creates it
	cmd := mdmemoryCmd("mcp", "--dir", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	require.ElementsMatch(t, []string{"memory_list", "memory_search", "memory_read", "memory_write", "memory_patch", "memory_append"}, names)

	text, isErr := call(t, cs, "memory_write", map[string]any{"path": "facts/user.md", "content": "# User\n\n> Summary: Name\n\n- Name: Jianjun\n", "version": nil})
	require.False(t, isErr, text)
	text, isErr = call(t, cs, "memory_read", map[string]any{"path": "facts/user.md"})
	require.False(t, isErr, text)
	require.Contains(t, text, "- Name: Jianjun")
	text, isErr = call(t, cs, "memory_append", map[string]any{"path": "episodes/2026-02.md", "entry": "## Tokyo flight research\n- Date: 2026-02-26", "summary": nil})
	require.False(t, isErr, text)
	text, isErr = call(t, cs, "memory_read", map[string]any{"path": "facts/notes.md"})
	require.True(t, isErr, "a model's mistake is an error result: %s", text)

	b, err := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
	require.NoError(t, err)
	require.Equal(t, "# User\n\n> Summary: Name\n\n- Name: Jianjun\n", string(b))
	require.NoError(t, cs.Close())
	require.Equal(t, 0, cmd.ProcessState.ExitCode(), "stderr: %s", stderr.String())
	require.Empty(t, stderr.String())

	// What it wrote passes the check.
	require.Equal(t, "No problems found.\n", mdm(t, nil, "check", "--dir", dir).ok(t))
}

// TestMCPHTTP: "mdmemory mcp --http" serves streamable HTTP, one
// conversation per MCP session (2025-11-25): a session may change what it
// has read, and another session may not change it without reading it
// first. On the same endpoint, a client of the stateless revision
// (2026-07-28, the SDK client's default) has no session: each request is
// a conversation of its own, so it changes the file only with the version
// memory_read gave. An interrupt stops it with status 0.
func TestMCPHTTP(t *testing.T) {
	dir := sample(t)
	cmd := mdmemoryCmd("mcp", "--dir", dir, "--http", "127.0.0.1:0")
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(errPipe).ReadString('\n')
	require.NoError(t, err)
	m := regexp.MustCompile(`^mdmemory: serving MCP \(streamable HTTP\) at (http://127\.0\.0\.1:\d+/) for `).FindStringSubmatch(line)
	require.NotNil(t, m, line)

	ctx := context.Background()
	connect := func(version string) *mcp.ClientSession {
		cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m[1], MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
		return cs
	}
	a, b := connect("2025-11-25"), connect("2025-11-25")
	write := func(cs *mcp.ClientSession, content string) (string, bool) {
		return call(t, cs, "memory_write", map[string]any{"path": "facts/user.md", "content": content, "version": nil})
	}
	text, isErr := call(t, a, "memory_read", map[string]any{"path": "facts/user.md"})
	require.False(t, isErr, text)
	text, isErr = write(a, sampleUser+"- Home airport: PVG\n")
	require.False(t, isErr, "session a read the file: %s", text)
	text, isErr = write(b, sampleUser)
	require.True(t, isErr, "session b has not read the file: %s", text)
	text, isErr = call(t, b, "memory_read", map[string]any{"path": "facts/user.md"})
	require.False(t, isErr)
	require.Contains(t, text, "Home airport: PVG")
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())

	c := connect("2026-07-28")
	require.Empty(t, c.ID(), "a stateless client has no session")
	text, isErr = call(t, c, "memory_read", map[string]any{"path": "facts/user.md"})
	require.False(t, isErr, text)
	version := regexp.MustCompile(`version: (\S+)`).FindStringSubmatch(text)
	require.NotNil(t, version, text)
	text, isErr = call(t, c, "memory_patch", map[string]any{"path": "facts/user.md", "patches": []map[string]any{{"oldText": "PVG", "newText": "SHA"}}, "version": nil})
	require.True(t, isErr, "a stateless request has read nothing: %s", text)
	text, isErr = call(t, c, "memory_patch", map[string]any{"path": "facts/user.md", "patches": []map[string]any{{"oldText": "PVG", "newText": "SHA"}}, "version": version[1]})
	require.False(t, isErr, "with the version read: %s", text)
	require.NoError(t, c.Close())

	s, err := memory.Open(dir, nil)
	require.NoError(t, err)
	got, err := s.Read(ctx, "facts/user.md")
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.Contains(t, got, "- Home airport: SHA")

	if runtime.GOOS == "windows" {
		return // no interrupt to send
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.False(t, errors.As(err, &ee), "status 0 after an interrupt: %v", err)
}

// TestMCPUsage: mcp takes no argument and no --json; a bad address fails.
func TestMCPUsage(t *testing.T) {
	dir := t.TempDir()
	require.Equal(t, 2, mdm(t, nil, "mcp", "--dir", dir, "extra").code)
	require.Equal(t, 2, mdm(t, nil, "mcp", "--dir", dir, "--json").code)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := mdmCtx(t, ctx, nil, "mcp", "--dir", dir, "--http", "127.0.0.1:-1")
	require.Contains(t, r.failed(t), "mdmemory: listen tcp")
}

// TestMCPStdioMalformedInput: "mdmemory mcp" answers each line that is not
// a JSON-RPC message it can take with a JSON-RPC error, "id": null, and
// goes on serving; the end of its input still ends it with status 0.
func TestMCPStdioMalformedInput(t *testing.T) {
	dir := sample(t)
	cmd := mdmemoryCmd("mcp", "--dir", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	outPipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewReader(outPipe)
	type message struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	exchange := func(line string) message {
		t.Helper()
		_, err := io.WriteString(in, line+"\n")
		require.NoError(t, err)
		answer, err := out.ReadString('\n')
		require.NoError(t, err, "stderr: %s", stderr.String())
		var m message
		require.NoError(t, json.Unmarshal([]byte(answer), &m), answer)
		return m
	}

	m := exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.Nil(t, m.Error)
	_, err = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)
	for _, c := range []struct {
		line string
		code int
	}{
		{`not json`, -32700},
		{`{}`, -32600},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"`, -32700},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600},
	} {
		m := exchange(c.line)
		require.NotNil(t, m.Error, c.line)
		require.Equal(t, c.code, m.Error.Code, c.line)
		require.Equal(t, "null", string(m.ID), c.line)
		m = exchange(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		require.Nil(t, m.Error, "a ping after %s", c.line)
		require.Equal(t, `"after"`, string(m.ID))
	}
	m = exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_read","arguments":{"path":"facts/user.md"}}}`)
	require.Nil(t, m.Error)
	require.Contains(t, string(m.Result), "Jianjun")

	require.NoError(t, in.Close())
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	require.Empty(t, stderr.String())
}

// TestVersion: "mdmemory --version", "mdmemory -v" and "mdmemory version"
// print one line,
// mdmemory and the version the MCP server reports, and exit 0.
func TestVersion(t *testing.T) {
	want := "mdmemory " + mcpserver.Version() + "\n"
	require.Regexp(t, `^mdmemory (devel|v\S+)\n$`, want)
	require.Equal(t, want, mdm(t, nil, "--version").ok(t))
	require.Equal(t, want, mdm(t, nil, "version").ok(t))
	require.Equal(t, want, mdm(t, nil, "-v").ok(t))
	require.Equal(t, want, mdm(t, nil, "--dir", "x", "--version").ok(t))
	require.Equal(t, 2, mdm(t, nil, "version", "extra").code)
	require.Contains(t, mdm(t, nil, "help").ok(t), "\n  version ")

	// The server says the same in its handshake.
	cmd := mdmemoryCmd("mcp", "--dir", t.TempDir())
	cs, err := newClient().Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, mcpserver.Version(), cs.InitializeResult().ServerInfo.Version)
}
