package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// inspectorVersion is the MCP Inspector the tests run; make mcp-tools
// installs it.
const inspectorVersion = "2.12.0"

// inspectorEnv names the Inspector's command, its mcp-inspector bin. When
// it is unset, the tests look where make mcp-tools installs it:
// <user cache dir>/mdmemory/inspector-VERSION.
const inspectorEnv = "MDMEMORY_INSPECTOR"

// inspectorBound bounds the whole Inspector test: a guard against a hang,
// generous for a loaded machine; the test's outcome does not depend on it.
const inspectorBound = 5 * time.Minute

// inspector runs the MCP Inspector's CLI, a third-party client, one
// process per call, against this test binary run as a stdio server.
type inspector struct {
	t       *testing.T
	ctx     context.Context
	command []string // the Inspector's command and its first arguments
	server  string   // this test binary
	dir     string   // the memory directory
	config  string   // a folder for the Inspector's own files
}

// newInspector finds the Inspector, or skips the test saying how to get
// it. It never installs it: a test does not reach the network, so the
// package comes from make mcp-tools (npm install), not from npx at test
// time.
func newInspector(t *testing.T) *inspector {
	t.Helper()
	p := os.Getenv(inspectorEnv)
	if p == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			p = filepath.Join(cache, "mdmemory", "inspector-"+inspectorVersion, "node_modules", ".bin", "mcp-inspector")
		}
	}
	if _, err := exec.LookPath(p); p == "" || err != nil {
		t.Skipf("the MCP Inspector %s is not installed (%s=%q), so the test is skipped: run make mcp-tools, which installs it with npm", inspectorVersion, inspectorEnv, p)
	}
	command := []string{p}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), inspectorBound)
	t.Cleanup(cancel)
	_, dir := openStore(t)
	return &inspector{t: t, ctx: ctx, command: command, server: exe, dir: dir, config: t.TempDir()}
}

// inspectorRun is what one Inspector call gave.
type inspectorRun struct {
	code   int             // the exit code
	result json.RawMessage // "result" of the JSON on stdout, nil when none
	stderr string
}

// run runs one Inspector call with args after the server's command, and
// env for the server.
func (in *inspector) run(env []string, args ...string) inspectorRun {
	in.t.Helper()
	argv := append([]string{}, in.command[1:]...)
	argv = append(argv, "--cli", in.server, "-e", childDirEnv+"="+in.dir)
	for _, e := range env {
		argv = append(argv, "-e", e)
	}
	argv = append(argv, "--format", "json")
	argv = append(argv, args...)
	cmd := exec.CommandContext(in.ctx, in.command[0], argv...)
	cmd.Env = append(os.Environ(),
		// Keep the Inspector's catalog and client config out of the
		// user's home.
		"MCP_CATALOG_PATH="+filepath.Join(in.config, "mcp.json"),
		"MCP_CLIENT_CONFIG_PATH="+filepath.Join(in.config, "client.json"),
	)
	// node may leave a child holding the pipes when the context kills it.
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if in.ctx.Err() != nil {
		in.t.Fatalf("the MCP Inspector did not finish within %v: %s %s\nstderr: %s", inspectorBound, in.command[0], strings.Join(argv, " "), stderr.String())
	}
	run := inspectorRun{stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
	case err != nil:
		in.t.Fatalf("run the MCP Inspector: %v", err)
	}
	if out := bytes.TrimSpace(stdout.Bytes()); len(out) > 0 {
		var v struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			in.t.Fatalf("the Inspector's output is not JSON: %v\n%s\nstderr: %s", err, out, run.stderr)
		}
		run.result = v.Result
	}
	return run
}

// method runs a method other than a tool call and returns its result.
func (in *inspector) method(args ...string) json.RawMessage {
	in.t.Helper()
	r := in.run(nil, args...)
	if r.code != 0 || r.result == nil {
		in.t.Fatalf("inspector %v: exit %d, result %s\nstderr: %s", args, r.code, r.result, r.stderr)
	}
	return r.result
}

// toolResult is a tools/call result as the Inspector prints it.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// call calls the tool name with its arguments as one JSON object, in a
// new Inspector process (a new MCP session), and returns its text and
// whether it is an error result.
func (in *inspector) call(name string, args map[string]any) (string, bool) {
	in.t.Helper()
	return in.callArgs(name, "--tool-args-json", mustJSON(in.t, args))
}

// callArgs calls the tool name with the Inspector's own argument flags.
func (in *inspector) callArgs(name string, args ...string) (string, bool) {
	in.t.Helper()
	r := in.run(nil, append([]string{"--method", "tools/call", "--tool-name", name}, args...)...)
	var res toolResult
	if r.result != nil {
		if err := json.Unmarshal(r.result, &res); err != nil {
			in.t.Fatal(err)
		}
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" {
		in.t.Fatalf("%s: exit %d, result %s, want one text\nstderr: %s", name, r.code, r.result, r.stderr)
	}
	// The Inspector exits 5 for a result with isError set, and 0 for
	// any other result.
	if want := map[bool]int{false: 0, true: 5}[res.IsError]; r.code != want {
		in.t.Fatalf("%s: exit %d with isError %v\nstderr: %s", name, r.code, res.IsError, r.stderr)
	}
	return res.Content[0].Text, res.IsError
}

// The MCP Inspector's CLI, a third-party client, lists the tools, and edits
// an existing file only through version tokens: each of its calls is a new
// process, a new MCP session, so a new conversation that has read nothing.
// It sees the files as resources and the index as a prompt, and a host
// failure as a protocol error.
func TestInspector(t *testing.T) {
	in := newInspector(t)
	ctx := context.Background()

	var tools struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(in.method("--method", "tools/list"), &tools); err != nil {
		t.Fatal(err)
	}
	store, err := memory.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	want := map[string]string{}
	for _, tool := range store.NewSession().Tools() {
		want[tool.Name] = mustJSON(t, tool.SchemaMap())
	}
	if len(tools.Tools) != len(want) {
		t.Fatalf("the Inspector lists %d tools, want %d", len(tools.Tools), len(want))
	}
	for _, tool := range tools.Tools {
		var got map[string]any
		if err := json.Unmarshal(tool.InputSchema, &got); err != nil {
			t.Fatal(err)
		}
		if mustJSON(t, got) != want[tool.Name] {
			t.Errorf("%s: the Inspector sees the schema %s, want %s", tool.Name, tool.InputSchema, want[tool.Name])
		}
	}

	// Create: a new file needs no version. With --tool-arg, as a person
	// would type it.
	if text, isErr := in.callArgs("memory_write", "--tool-arg", "path=facts/user.md", "content=# User\n\n- Prefers tea.\n- Lives in Lyon.\n", "version=null"); isErr {
		t.Fatalf("create: %s", text)
	}
	text, isErr := in.call("memory_read", read("facts/user.md"))
	if isErr {
		t.Fatalf("read: %s", text)
	}
	v1 := versionOf(t, text)

	// Without a version, the existing file is refused: this process has
	// read nothing.
	if text, isErr := in.call("memory_write", write("facts/user.md", "# User\n\n- Prefers coffee.\n", nil)); !isErr || !strings.Contains(text, "memory_read") {
		t.Fatalf("write without a version: %v %s, want refused", isErr, text)
	}
	if text, isErr := in.callArgs("memory_patch", "--tool-arg", "path=facts/user.md", `patches=[{"oldText":"tea","newText":"coffee"}]`, "version=null"); !isErr || !strings.Contains(text, "memory_read") {
		t.Fatalf("patch without a version: %v %s, want refused", isErr, text)
	}

	// With the version memory_read gave, it is accepted.
	if text, isErr := in.callArgs("memory_patch", "--tool-arg", "path=facts/user.md", `patches=[{"oldText":"tea","newText":"coffee"}]`, "version="+v1); isErr {
		t.Fatalf("patch with the version: %s", text)
	}
	got, err := os.ReadFile(filepath.Join(in.dir, "facts", "user.md"))
	if err != nil || !strings.Contains(string(got), "- Prefers coffee.") {
		t.Fatalf("the file after the patch: %q, %v", got, err)
	}

	// v1 is stale now: refused, and the file is left as it is.
	if text, isErr := in.call("memory_write", write("facts/user.md", "# User\n\n- Lost the patch.\n", v1)); !isErr || !strings.Contains(text, "version") {
		t.Fatalf("write with a stale version: %v %s, want refused", isErr, text)
	}
	if text, isErr := in.call("memory_patch", patch("facts/user.md", "Lyon", "Paris", v1)); !isErr || !strings.Contains(text, "version") {
		t.Fatalf("patch with a stale version: %v %s, want refused", isErr, text)
	}
	if after, _ := os.ReadFile(filepath.Join(in.dir, "facts", "user.md")); !bytes.Equal(after, got) {
		t.Fatalf("a refused call changed the file: %q", after)
	}

	// A fresh read gives the version that is accepted.
	text, _ = in.call("memory_read", read("facts/user.md"))
	v2 := versionOf(t, text)
	if v2 == v1 {
		t.Fatal("the version did not change with the file")
	}
	if text, isErr := in.call("memory_write", write("facts/user.md", "# User\n\n- Prefers coffee.\n- Lives in Paris.\n", v2)); isErr {
		t.Fatalf("write with the fresh version: %s", text)
	}
	content, err := os.ReadFile(filepath.Join(in.dir, "facts", "user.md"))
	if err != nil {
		t.Fatal(err)
	}

	// Resources and the prompt.
	var list struct {
		Resources []struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
			Size int64  `json:"size"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(in.method("--method", "resources/list"), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Resources) != 1 || list.Resources[0].URI != "memory:///facts/user.md" || list.Resources[0].Size != int64(len(content)) {
		t.Errorf("resources/list: %+v", list.Resources)
	}
	var rr struct {
		Contents []struct {
			Text string         `json:"text"`
			Meta map[string]any `json:"_meta"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(in.method("--method", "resources/read", "--uri", "memory:///facts/user.md"), &rr); err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != string(content) || rr.Contents[0].Meta["version"] != memory.Version(string(content)) {
		t.Errorf("resources/read: %+v, want %q", rr.Contents, content)
	}
	if r := in.run(nil, "--method", "resources/read", "--uri", "memory:///facts/other.md"); r.code == 0 || !strings.Contains(r.stderr, "not found") {
		t.Errorf("resources/read of no file: exit %d, result %s, stderr %s", r.code, r.result, r.stderr)
	}
	prompt := string(in.method("--method", "prompts/get", "--prompt-name", "memory_index"))
	index, err := store.NewSession().IndexMessage(ctx) // of the empty store: its framing lines
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt, "facts/user.md") || !strings.Contains(prompt, `"role":"user"`) || strings.Contains(prompt, mustJSON(t, index)) {
		t.Errorf("prompts/get: %s", prompt)
	}

	// A host failure is a protocol error, not a tool result.
	r := in.run([]string{childClosedEnv + "=1"}, "--method", "tools/call", "--tool-name", "memory_list")
	if r.code == 0 || r.code == 5 || r.result != nil || !strings.Contains(r.stderr, "store is closed") || strings.Contains(r.stderr, "tool_is_error") {
		t.Errorf("a call on a closed store: exit %d, result %s, stderr %s; want a protocol error", r.code, r.result, r.stderr)
	}
}
