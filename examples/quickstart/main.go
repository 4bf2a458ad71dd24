// Command quickstart shows the memory store end to end, offline: an agent's
// tool calls write facts and an episode, the process "restarts", a person
// fixes a fact in an editor, and the next task's first message and a
// memory_read see the fix.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdmemory/memory"
)

func main() {
	dir, err := os.MkdirTemp("", "mdmemory-quickstart-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := run(os.Stdout, filepath.Join(dir, "data", "memory")); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// clock is fixed so that the output is the same on every run.
func clock() time.Time { return time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC) }

func run(w io.Writer, dir string) error {
	ctx := context.Background()
	store, err := memory.Open(dir, &memory.Options{Now: clock})
	if err != nil {
		return err
	}

	// 1. An agent registers store.Tools() and the model calls them with JSON
	// arguments. Here the calls are scripted.
	fmt.Fprintln(w, "== the agent's tool calls")
	calls := []struct{ tool, args string }{
		{"memory_write", `{"path": "facts/user.md", "content": "# User\n\n> Summary: Zhang San, prefers Chinese\n\n- Name: Zhang San\n- Language: prefers Chinese conversation\n"}`},
		{"memory_append", `{"path": "facts/memory.md", "entry": "- Flight search results can be stale; cross-check airline sites", "summary": null}`},
		{"memory_append", `{"path": "episodes/2026-02.md", "entry": "## Tokyo flight research\n- Summary: Spring Airlines cheapest for April\n- Task: compare flights to Tokyo in April", "summary": null}`},
		{"memory_read", `{"path": "../../etc/passwd"}`},
		{"memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "Zhang Sam", "newText": "x"}]}`},
	}
	for _, c := range calls {
		if err := callTool(ctx, w, store.Tools(), c.tool, c.args); err != nil {
			return err
		}
	}
	if err := store.Close(); err != nil {
		return err
	}

	// 2. Restart: a new Store on the same directory remembers everything.
	store, err = memory.Open(dir, &memory.Options{Now: clock})
	if err != nil {
		return err
	}
	defer store.Close()

	// 3. A person fixes a fact in an editor; the next call sees it.
	userFile := filepath.Join(dir, "facts", "user.md")
	b, err := os.ReadFile(userFile)
	if err != nil {
		return err
	}
	fixed := strings.Replace(string(b), "- Name: Zhang San\n", "- Name: Zhang San (张三)\n- Birthday: March 15\n", 1)
	if err := os.WriteFile(userFile, []byte(fixed), 0o644); err != nil {
		return err
	}

	// 4. The next task starts with the index as its first user message.
	fmt.Fprintln(w, "\n== first user message of the next task")
	index, err := store.IndexMessage(ctx)
	if err != nil {
		return err
	}
	fmt.Fprint(w, index)
	if err := callTool(ctx, w, store.Tools(), "memory_read", `{"path": "facts/user.md"}`); err != nil {
		return err
	}

	// 5. The files are plain markdown.
	fmt.Fprintln(w, "\n== the files on disk")
	for _, rel := range []string{"facts/memory.md", "episodes/2026-02.md"} {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "--- %s\n%s", rel, b)
	}
	return nil
}

// callTool runs one tool call as an agent loop would and prints it.
func callTool(ctx context.Context, w io.Writer, tools []memory.Tool, name, args string) error {
	for _, t := range tools {
		if t.Name != name {
			continue
		}
		res, err := t.Call(ctx, json.RawMessage(args))
		if err != nil {
			return err // a host failure: stop the agent
		}
		status := "ok"
		if res.IsError {
			status = "model error" // goes back to the model, which can fix its call
		}
		fmt.Fprintf(w, "%s %s\n  -> %s: %s\n", name, compact(args), status, res.Text)
		return nil
	}
	return fmt.Errorf("no tool %s", name)
}

func compact(s string) string {
	if len(s) > 90 {
		return s[:87] + "..."
	}
	return s
}
