package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The server offers exactly the library's six tools: the same names,
// descriptions and input schemas, byte for byte once decoded, each schema
// strict (every property required, no others), with annotations that say
// which tools only read.
func TestToolsAreTheLibrarys(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	want := store.NewSession().Tools()
	if len(res.Tools) != len(want) || len(want) != 6 {
		t.Fatalf("server lists %d tools, the store has %d (want 6)", len(res.Tools), len(want))
	}
	readOnly := map[string]bool{"memory_list": true, "memory_search": true, "memory_read": true}
	for _, w := range want {
		g := got[w.Name]
		if g == nil {
			t.Fatalf("tool %s not listed", w.Name)
		}
		if g.Description != w.Description {
			t.Errorf("%s: description %q, want the library's %q", w.Name, g.Description, w.Description)
		}
		var wantSchema, gotSchema any
		if err := json.Unmarshal(w.InputSchema, &wantSchema); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(mustJSON(t, g.InputSchema)), &gotSchema); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotSchema, wantSchema) {
			t.Errorf("%s: schema\n%s\nwant the library's\n%s", w.Name, mustJSON(t, gotSchema), w.InputSchema)
		}
		schema := gotSchema.(map[string]any)
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: schema is not a closed object: %s", w.Name, mustJSON(t, schema))
		}
		var props []string
		for p := range schema["properties"].(map[string]any) {
			props = append(props, p)
		}
		var required []string
		for _, r := range schema["required"].([]any) {
			required = append(required, r.(string))
		}
		slices.Sort(props)
		slices.Sort(required)
		if !slices.Equal(props, required) {
			t.Errorf("%s: required %v, want every property %v", w.Name, required, props)
		}
		a := g.Annotations
		if a == nil {
			t.Fatalf("%s has no annotations", w.Name)
		}
		if a.ReadOnlyHint != readOnly[w.Name] {
			t.Errorf("%s: readOnlyHint %v, want %v", w.Name, a.ReadOnlyHint, readOnly[w.Name])
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: openWorldHint not false", w.Name)
		}
		if !readOnly[w.Name] && (a.DestructiveHint == nil || *a.DestructiveHint != (w.Name != "memory_append")) {
			t.Errorf("%s: destructiveHint %v", w.Name, a.DestructiveHint)
		}
	}
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "mdmemory" || init.ServerInfo.Version == "" || !strings.Contains(init.Instructions, "memory_read") {
		t.Errorf("server info %+v, instructions %q", init.ServerInfo, init.Instructions)
	}
}

// Options name the server and replace its instructions.
func TestOptions(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, &mcpserver.Options{Name: "team-memory", Version: "1.2.3", Instructions: "Remember the team's decisions."}))
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "team-memory" || init.ServerInfo.Version != "1.2.3" || init.Instructions != "Remember the team's decisions." {
		t.Errorf("server info %+v, instructions %q", init.ServerInfo, init.Instructions)
	}
}

// One MCP session is one conversation: what it wrote or read it may change
// without a version; a change made by anyone else since is refused until it
// reads again, and a version token from memory_read is accepted while the
// file is at it.
func TestSessionIsAConversation(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	ctx := context.Background()

	ok(t, call(t, cs, "memory_write", write("facts/user.md", "# User\n\n- Prefers tea.\n", nil)))
	// Its own write: no version needed.
	ok(t, call(t, cs, "memory_patch", patch("facts/user.md", "tea", "green tea", nil)))

	// A person's edit, outside the conversation.
	if err := store.Write(ctx, "facts/user.md", "# User\n\n- Prefers green tea.\n- Lives in Lyon.\n"); err != nil {
		t.Fatal(err)
	}
	refused(t, call(t, cs, "memory_patch", patch("facts/user.md", "Lyon", "Paris", nil)), "memory_read")
	refused(t, call(t, cs, "memory_write", write("facts/user.md", "# User\n\n- Lost the edit.\n", nil)), "memory_read")

	v := versionOf(t, ok(t, call(t, cs, "memory_read", read("facts/user.md"))))
	edited, err := store.Read(ctx, "facts/user.md")
	if err != nil {
		t.Fatal(err)
	}
	if v != memory.Version(edited) {
		t.Errorf("memory_read states version %s, want the content's, %s", v, memory.Version(edited))
	}
	ok(t, call(t, cs, "memory_patch", patch("facts/user.md", "Lyon", "Paris", nil)))
	got, err := store.Read(ctx, "facts/user.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Lives in Paris.") || !strings.Contains(got, "green tea") {
		t.Errorf("file after the patch: %q", got)
	}
}

// Two MCP sessions on one server are two conversations: what one read does
// not let the other overwrite.
func TestSessionsAreSeparate(t *testing.T) {
	store, _ := openStore(t)
	srv := mcpserver.New(store, nil)
	a, b := connect(t, srv), connect(t, srv)
	ok(t, call(t, a, "memory_write", write("facts/memory.md", "# Memory\n\n- Deploys go out on Tuesdays.\n", nil)))
	refused(t, call(t, b, "memory_write", write("facts/memory.md", "# Memory\n\n- Overwritten.\n", nil)), "memory_read")
	ok(t, call(t, b, "memory_read", read("facts/memory.md")))
	ok(t, call(t, b, "memory_patch", patch("facts/memory.md", "Tuesdays", "Wednesdays", nil)))
	// a's knowledge of the file is now out of date.
	refused(t, call(t, a, "memory_patch", patch("facts/memory.md", "Wednesdays", "Fridays", nil)), "memory_read")
}

// A mistake of the model is a tool result with isError set and a text that
// says what to do, never a protocol error.
func TestModelMistakesAreErrorResults(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"bad path", "memory_read", read("../etc/passwd"), "path"},
		{"missing file", "memory_read", read("facts/user.md"), "does not exist"},
		{"unknown argument", "memory_read", map[string]any{"path": "facts/user.md", "line": nil, "mode": "fast"}, "mode"},
		{"missing argument", "memory_write", map[string]any{"path": "facts/user.md"}, "content"},
		{"other folder", "memory_write", write("notes/todo.md", "# Todo\n", nil), "path"},
		{"episode without heading", "memory_append", map[string]any{"path": "episodes/2026-02.md", "entry": "did a thing", "summary": nil}, "## "},
		{"stale version", "memory_write", write("facts/user.md", "# User\n", "0123456789abcdef01234567"), "version"},
		{"empty patches", "memory_patch", map[string]any{"path": "facts/user.md", "patches": []any{}, "version": nil}, "patch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error %v, want an isError result", err)
			}
			refused(t, res, tc.want)
		})
	}
	// The budget: a fact that would take facts/ over it.
	big := "# User\n\n- " + strings.Repeat("x", 15360) + "\n" // the default budget, 15,360 bytes
	refused(t, call(t, cs, "memory_write", write("facts/user.md", big, nil)), "budget")
}

// A failure of the host (here a closed store) is a protocol error: the
// client's call fails, with no result for the model; so are a resource
// read and the prompt.
func TestHostFailuresAreProtocolErrors(t *testing.T) {
	store, _ := openStore(t)
	if err := store.Write(context.Background(), "facts/user.md", "# User\n\n- Prefers tea.\n"); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.New(store, nil))
	ctx := context.Background()
	ok(t, call(t, cs, "memory_list", nil))
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"memory_list", nil},
		{"memory_read", read("facts/user.md")},
		{"memory_write", write("facts/user.md", "# User\n", nil)},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.name, Arguments: tool.args})
		if err == nil {
			t.Fatalf("%s on a closed store: result %+v, want a protocol error", tool.name, res)
		}
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || !strings.Contains(werr.Message, "closed") || werr.Code != jsonrpc.CodeInternalError {
			t.Errorf("%s: error %v (%T), want a JSON-RPC internal error (-32603) saying the store is closed", tool.name, err, err)
		}
	}
	if _, err := cs.ListResources(ctx, nil); err == nil {
		t.Error("resources/list on a closed store did not fail")
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///facts/user.md"}); err == nil || strings.Contains(err.Error(), "not found") {
		t.Errorf("resources/read on a closed store: %v, want a host error", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt}); err == nil {
		t.Error("prompts/get on a closed store did not fail")
	}
	// Each with the code of an internal error, not 0.
	for name, f := range map[string]func() error{
		"resources/list": func() error { _, err := cs.ListResources(ctx, nil); return err },
		"resources/read": func() error {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///facts/user.md"})
			return err
		},
		"prompts/get": func() error {
			_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt})
			return err
		},
	} {
		var werr *jsonrpc.Error
		if err := f(); !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError {
			t.Errorf("%s on a closed store: %v, want the code %d", name, err, jsonrpc.CodeInternalError)
		}
	}
}

// A cancelled request is a protocol error, and changes nothing.
func TestCancelledCallIsProtocolError(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_write", Arguments: write("facts/user.md", "# User\n", nil)}); err == nil {
		t.Fatalf("cancelled call gave %+v, want an error", res)
	}
	if _, err := store.Read(context.Background(), "facts/user.md"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("after a cancelled write: %v, want ErrNotFound", err)
	}
}

// resources/list lists the memory files as they are at each request,
// changes by hand included; resources/read gives each file's text and
// version.
func TestResources(t *testing.T) {
	store, dir := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	ctx := context.Background()

	list := func() []*mcp.Resource {
		t.Helper()
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Resources
	}
	if got := list(); len(got) != 0 {
		t.Fatalf("empty store lists %d resources: %s", len(got), mustJSON(t, got))
	}

	if err := store.Write(ctx, "facts/user.md", "# User\n\n> Summary: The person: tea, Lyon.\n\n- Prefers tea.\n"); err != nil {
		t.Fatal(err)
	}
	if err := store.Append(ctx, "episodes/2026-02.md", "## Tokyo flight research\n\n- Lesson: book early.", ""); err != nil {
		t.Fatal(err)
	}
	// A file a person wrote by hand.
	if err := os.WriteFile(filepath.Join(dir, "facts", "memory.md"), []byte("# Memory\n\n> Summary: How work goes.\n\n- Tests first.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := list()
	if res, err := cs.ListResources(ctx, nil); err != nil || res.CacheScope != "private" {
		t.Errorf("resources/list: cache scope %+v, %v; want private", res, err)
	}
	files, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) || len(got) != 3 {
		t.Fatalf("resources %s, want one per file of %s", mustJSON(t, got), mustJSON(t, files))
	}
	for i, f := range files {
		r := got[i]
		want := mcp.Resource{URI: "memory:///" + f.Path, Name: f.Path, Description: f.Summary, MIMEType: "text/markdown", Size: f.Size}
		if r.URI != want.URI || r.Name != want.Name || r.Description != want.Description || r.MIMEType != want.MIMEType || r.Size != want.Size {
			t.Errorf("resource %d: %s, want %s", i, mustJSON(t, r), mustJSON(t, want))
		}
		content, err := store.Read(ctx, f.Path)
		if err != nil {
			t.Fatal(err)
		}
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Fatalf("read %s: %v", r.URI, err)
		}
		if len(rr.Contents) != 1 || rr.Contents[0].Text != content || rr.Contents[0].URI != r.URI || rr.Contents[0].MIMEType != "text/markdown" {
			t.Errorf("read %s: %s, want its text %q", r.URI, mustJSON(t, rr.Contents), content)
		}
		if rr.CacheScope != "private" {
			t.Errorf("read %s: cache scope %q, want private", r.URI, rr.CacheScope)
		}
		if v := rr.Contents[0].Meta["version"]; v != memory.Version(content) {
			t.Errorf("read %s: version %v, want %s", r.URI, v, memory.Version(content))
		}
		if int64(len(content)) != r.Size {
			t.Errorf("%s: size %d, its text is %d bytes", r.URI, r.Size, len(content))
		}
	}
	if got[0].URI != "memory:///facts/user.md" || got[1].URI != "memory:///facts/memory.md" || got[2].URI != "memory:///episodes/2026-02.md" {
		t.Errorf("resources in the order %s, %s, %s", got[0].URI, got[1].URI, got[2].URI)
	}

	// A file removed by hand is gone from the next list.
	if err := os.Remove(filepath.Join(dir, "facts", "memory.md")); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 2 || slices.ContainsFunc(got, func(r *mcp.Resource) bool { return r.Name == "facts/memory.md" }) {
		t.Errorf("after removing facts/memory.md: %s", mustJSON(t, got))
	}

	for _, uri := range []string{
		"memory:///facts/memory.md",    // removed
		"memory:///facts/other.md",     // not a fact file
		"memory:///../facts/user.md",   // not canonical
		"memory:///episodes/2026-2.md", // not a month
		"memory://facts/user.md",       // facts is a host
		"memory:///facts/user.md?x=1",  // a query
		"file:///facts/user.md",        // another scheme
		"memory:///",                   // no path
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("read %s: %v, want resource not found", uri, err)
		}
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "memory:///{+path}" {
		t.Errorf("templates %s", mustJSON(t, templates.ResourceTemplates))
	}
}

// A busy month's parts are readable by their URIs; the month's resource
// names them, and leaves its size out, since the month's size counts them.
func TestResourcesMonthParts(t *testing.T) {
	store, _ := openStore(t)
	ctx := context.Background()
	for i := range 6 {
		entry := "## Entry " + string(rune('A'+i)) + "\n\n" + strings.Repeat("- A long line of notes about the day's work.\n", 90)
		if err := store.Append(ctx, "episodes/2026-02.md", entry, ""); err != nil {
			t.Fatal(err)
		}
	}
	files, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Parts == 0 {
		t.Fatalf("the month has no parts: %s", mustJSON(t, files))
	}
	cs := connect(t, mcpserver.New(store, nil))
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 {
		t.Fatalf("resources %s", mustJSON(t, res.Resources))
	}
	r := res.Resources[0]
	if r.Size != 0 || !strings.Contains(r.Description, "older parts, episodes/2026-02.NNN.md") || !strings.HasPrefix(r.Description, files[0].Summary) {
		t.Errorf("month resource %s", mustJSON(t, r))
	}
	part, err := store.Read(ctx, "episodes/2026-02.001.md")
	if err != nil {
		t.Fatal(err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///episodes/2026-02.001.md"})
	if err != nil {
		t.Fatal(err)
	}
	if rr.Contents[0].Text != part {
		t.Errorf("part read as %q, want %q", rr.Contents[0].Text, part)
	}
}

// The prompt gives the memory index as one user message.
func TestIndexPrompt(t *testing.T) {
	store, _ := openStore(t)
	ctx := context.Background()
	if err := store.Append(ctx, "episodes/2026-02.md", "## Birthday gift brainstorm\n\n- Lesson: ask early.", ""); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, mcpserver.New(store, nil))
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != mcpserver.IndexPrompt || len(prompts.Prompts[0].Arguments) != 0 {
		t.Fatalf("prompts %s", mustJSON(t, prompts.Prompts))
	}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: mcpserver.IndexPrompt})
	if err != nil {
		t.Fatal(err)
	}
	want, err := store.NewSession().IndexMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompt messages %s", mustJSON(t, res.Messages))
	}
	if tc, isText := res.Messages[0].Content.(*mcp.TextContent); !isText || tc.Text != want || !strings.Contains(want, "Birthday gift brainstorm") {
		t.Errorf("prompt message %s, want %q", mustJSON(t, res.Messages[0].Content), want)
	}
}

// When an MCP session closes, its conversation ends: the store forgets
// what it read and wrote, so the same conversation id must read again.
func TestConversationEndsWithSession(t *testing.T) {
	store, _ := openStore(t)
	hook, next := endedHook(t)
	var opts mcpserver.Options
	mcpserver.SetEnded(&opts, hook)
	srv := mcpserver.New(store, &opts)

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
	ok(t, call(t, cs, "memory_write", write("facts/user.md", "# User\n\n- Prefers tea.\n", nil)))
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	ss.Wait()
	id := next()
	if !strings.HasPrefix(id, "mcp:") || len(id) < 20 {
		t.Errorf("conversation id %q, want mcp: and a random id", id)
	}
	// Had the conversation been kept, it could rewrite the file it wrote.
	res, err := store.Session(id).Call(ctx, "memory_write", json.RawMessage(`{"path":"facts/user.md","content":"# User\n","version":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "memory_read") {
		t.Errorf("the ended conversation could still write: %+v", res)
	}
}

// unreadable is a Backend on a directory whose facts/memory.md cannot be
// read and whose episodes/ cannot be listed, as when a person set their
// permissions wrong.
type unreadable struct{ *memory.Dir }

func (u unreadable) Read(ctx context.Context, name string, limit int64) (memory.Content, error) {
	if name == "facts/memory.md" {
		return memory.Content{}, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return u.Dir.Read(ctx, name, limit)
}

func (u unreadable) List(ctx context.Context, dir string) ([]memory.Entry, error) {
	if dir == "" || dir == "episodes" {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
	}
	return u.Dir.List(ctx, dir)
}

// A file that cannot be read is listed with a description that says so, and
// a folder that cannot be listed is left out of the resources (it is not a
// file); reading the file is a host error, not "not found".
func TestResourcesUnreadable(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"facts/user.md":   "# User\n\n> Summary: The person.\n\n- Prefers tea.\n",
		"facts/memory.md": "# Memory\n\n> Summary: Experience.\n\n- Tests first.\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := memory.OpenDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	store, err := memory.OpenBackend(unreadable{d}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	files, err := store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || files[1].Error == "" || files[2].Path != "episodes/" {
		t.Fatalf("the store lists %s; want user.md, memory.md unreadable, episodes/ unlistable", mustJSON(t, files))
	}

	cs := connect(t, mcpserver.New(store, nil))
	res, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 2 {
		t.Fatalf("resources %s, want the two fact files", mustJSON(t, res.Resources))
	}
	if r := res.Resources[0]; r.Name != "facts/user.md" || r.Description != "The person." || r.Size == 0 {
		t.Errorf("readable file: %s", mustJSON(t, r))
	}
	if r := res.Resources[1]; r.Name != "facts/memory.md" || r.Description != files[1].Error || r.Size != 0 {
		t.Errorf("unreadable file: %s, want the description %q", mustJSON(t, r), files[1].Error)
	}
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memory:///facts/memory.md"})
	var werr *jsonrpc.Error
	if err == nil || (errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams) {
		t.Errorf("reading the unreadable file: %v, want a host error", err)
	}
}

// A compacted month's resource says where its originals are, and they are
// readable by their URI.
func TestResourcesCompacted(t *testing.T) {
	store, _ := openStore(t)
	ctx := context.Background()
	if err := store.Append(ctx, "episodes/2025-06.md", "## Lisbon trip\n\n- Date: 2025-06-10\n- Lesson: pack light.\n- Notes: many details that compaction drops.", ""); err != nil {
		t.Fatal(err)
	}
	result, err := store.Compact(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(result.Months) != 1 {
		t.Fatalf("compact: %+v", result)
	}
	cs := connect(t, mcpserver.New(store, nil))
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != 1 || !strings.Contains(res.Resources[0].Description, "compacted: the originals are under episodes/archive/") {
		t.Fatalf("resources %s", mustJSON(t, res.Resources))
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memory:///episodes/archive/2025-06.md"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rr.Contents[0].Text, "many details that compaction drops") {
		t.Errorf("archived original: %q", rr.Contents[0].Text)
	}
}

// A session's calls may run at once, as a client's parallel tool calls do:
// every append lands, and the conversation's own rewrites are never
// refused.
func TestParallelCallsInOneSession(t *testing.T) {
	store, _ := openStore(t)
	cs := connect(t, mcpserver.New(store, nil))
	ctx := context.Background()
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			entry := fmt.Sprintf("## Task %02d\n\n- Outcome: done.", i)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_append", Arguments: map[string]any{"path": "episodes/2026-02.md", "entry": entry, "summary": nil}})
			if err != nil || res.IsError {
				t.Errorf("append %d: %v %s", i, err, mustJSON(t, res))
			}
			w := write("facts/memory.md", fmt.Sprintf("# Memory\n\n- Rewrite number %d.\n", i), nil)
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_write", Arguments: w}); err != nil || res.IsError {
				t.Errorf("rewrite %d: %v %s", i, err, mustJSON(t, res))
			}
		})
	}
	wg.Wait()
	month, err := store.Read(ctx, "episodes/2026-02.md")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if want := fmt.Sprintf("## Task %02d\n", i); strings.Count(month, want) != 1 {
			t.Errorf("%q is in the month %d times, want once", want, strings.Count(month, want))
		}
	}
}
