package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverCommand returns the command that runs this test binary as an MCP
// server on standard input and output over the memory directory dir.
func serverCommand(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	cmd.Stderr = &testWriter{t: t}
	return cmd
}

// testWriter logs what a child writes to its standard error.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// stdioSession starts a server process over dir and connects the SDK's
// client to it over the command transport. Closing the session ends the
// process.
func stdioSession(t *testing.T, dir string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: serverCommand(t, dir)}, inSession)
	if err != nil {
		t.Fatalf("connect to the server process: %v", err)
	}
	// Closing it again after the test closed it does nothing.
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Over standard input and output, a server process is one session, so one
// conversation: its own writes need no version. A second process is a new
// conversation: it changes the existing file only with the version
// memory_read gave, and a stale version is refused.
func TestStdio(t *testing.T) {
	_, dir := openStore(t)

	first := stdioSession(t, dir)
	tools, err := first.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if len(names) != 6 {
		t.Fatalf("tools %v, want the six memory tools", names)
	}
	ok(t, call(t, first, "memory_write", write("facts/user.md", "# User\n\n- Prefers tea.\n", nil)))
	ok(t, call(t, first, "memory_patch", patch("facts/user.md", "tea", "green tea", nil)))
	if err := first.Close(); err != nil {
		t.Fatalf("close the first server process: %v", err)
	}

	second := stdioSession(t, dir)
	refused(t, call(t, second, "memory_patch", patch("facts/user.md", "green tea", "coffee", nil)), "memory_read")
	v := versionOf(t, ok(t, call(t, second, "memory_read", read("facts/user.md"))))

	third := stdioSession(t, dir)
	refused(t, call(t, third, "memory_write", write("facts/user.md", "# User\n\n- Prefers water.\n", nil)), "memory_read")
	ok(t, call(t, third, "memory_write", write("facts/user.md", "# User\n\n- Prefers water.\n", v)))

	// second's version is stale now: refused, with or without it.
	refused(t, call(t, second, "memory_patch", patch("facts/user.md", "green tea", "coffee", v)), "version")
	refused(t, call(t, second, "memory_patch", patch("facts/user.md", "water", "coffee", nil)), "memory_read")

	res, err := second.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory:///facts/user.md"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Contents[0].Text, "- Prefers water.") {
		t.Errorf("the file after the third process's write: %q", res.Contents[0].Text)
	}
}
