// Command quickstart runs the design's acceptance scenario offline, with
// scripted models in place of real ones: the user says "I'm Zhang San" and
// the reflector records it; the process restarts; a new task asks "What's my
// name?" and the agent answers from the file it reads. Then a bug fix is
// recorded as an episode and recalled, and a person's hand edit of
// facts/user.md shows up in the next answer. Last, what sets the library
// apart, through the tools as a model calls them: a search, a patch, a fact
// refused for the budget, and a write refused after a hand edit the
// conversation had not seen.
//
// The scripted models find what to record in the task they are shown, and
// answer from the text their memory_read calls return, never from a script.
//
//	go run ./examples/quickstart              # in a temporary folder, removed at the end
//	go run ./examples/quickstart -dir mem     # keeps the files in mem/ to open afterwards
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mdmemory/memory"
)

func main() {
	keep := flag.String("dir", "", "run in `DIR` (new or empty) and keep the files there; default: a temporary folder, removed at the end")
	flag.Parse()
	if err := start(os.Stdout, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// start runs the demo in dir, which must be new or empty so that the
// output is the one the README shows, or in a temporary folder it removes
// when dir is "". Either way it ends by saying where the files are or were.
func start(w io.Writer, dir string) error {
	if dir != "" {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return fmt.Errorf("-dir %s: the folder is not empty; give a new or empty one", dir)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("-dir %s: %w", dir, err)
		}
		if err := run(w, dir); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "\nThe files are in %s: open them, edit them, run git init there.\n", dir)
		return err
	}
	tmp, err := os.MkdirTemp("", "mdmemory-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir = filepath.Join(tmp, "data", "memory")
	if err := run(w, dir); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nThe files were in %s, now removed: run with -dir DIR to keep them.\n", dir)
	return err
}

// clock is fixed so that the output is the same on every run.
func clock() time.Time { return time.Date(2026, 2, 26, 10, 0, 0, 0, time.UTC) }

var persona = memory.Persona{Name: "Pegasus", Role: "a personal assistant for software work", Personality: []string{"precise", "brief"}}

func run(w io.Writer, dir string) error {
	ctx := context.Background()
	opts := &memory.Options{Now: clock}
	store, err := memory.Open(dir, opts)
	if err != nil {
		return err
	}
	defer func() { store.Close() }() // the store open at the end; Close is idempotent
	agent := memory.LLMFunc(agentModel)

	fmt.Fprintln(w, "== 1. Task 1: the user says who they are; the reflector records it")
	if err := reflect(ctx, w, store, recordName, memory.Task{
		Input:      "I'm Zhang San. Draft a note to my team: I'm out on Friday.",
		Iterations: 2,
		Actions:    1,
		Result:     `Saved a draft "Out on Friday" to your team, signed Zhang San.`,
		Messages: []memory.Message{
			{Role: "user", Content: "I'm Zhang San. Draft a note to my team: I'm out on Friday."},
			{Role: "assistant", ToolCalls: []memory.ToolCall{{ID: "t1", Name: "draft_email", Arguments: json.RawMessage(`{"to":"team","subject":"Out on Friday"}`)}}},
			{Role: "tool", ToolCallID: "t1", Content: "draft saved"},
			{Role: "assistant", Content: `Saved a draft "Out on Friday" to your team, signed Zhang San.`},
		},
	}); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 2. Restart: the store is closed and the directory opened again")
	fmt.Fprintln(w, "store.Close(); memory.Open(dir, opts): everything remembered is in the files")
	if err := store.Close(); err != nil {
		return err
	}
	if store, err = memory.Open(dir, opts); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 3. Task 2: a new conversation asks for the name")
	if _, err := ask(ctx, w, store, agent, "What's my name?"); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 4. Task 3 fixes a bug; the reflector records it as an episode")
	if err := reflect(ctx, w, store, recordEpisode, memory.Task{
		Input:      "The login fails after an hour. Please fix it.",
		Iterations: 3,
		Actions:    2,
		Result:     "Fixed: tokens expired an hour early because expiry() subtracted an hour from the 2-hour TTL. The tests pass.",
		Messages: []memory.Message{
			{Role: "user", Content: "The login fails after an hour. Please fix it."},
			{Role: "assistant", ToolCalls: []memory.ToolCall{{ID: "t1", Name: "read_file", Arguments: json.RawMessage(`{"path":"auth/token.go"}`)}}},
			{Role: "tool", ToolCallID: "t1", Content: "func expiry(now time.Time) time.Time { return now.Add(ttl - time.Hour) } // ttl = 2h"},
			{Role: "assistant", ToolCalls: []memory.ToolCall{{ID: "t2", Name: "edit_file", Arguments: json.RawMessage(`{"path":"auth/token.go","old":"ttl - time.Hour","new":"ttl"}`)}}},
			{Role: "tool", ToolCallID: "t2", Content: "edited; go test ./auth: ok"},
			{Role: "assistant", Content: "Fixed: tokens expired an hour early because expiry() subtracted an hour from the 2-hour TTL. The tests pass."},
		},
	}); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== 5. Task 4: a new conversation asks about it")
	if _, err := ask(ctx, w, store, agent, "What bug did we fix last time?"); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 6. A person edits facts/user.md; task 5 asks for the name again")
	userFile := filepath.Join(dir, "facts", "user.md")
	b, err := os.ReadFile(userFile)
	if err != nil {
		return err
	}
	edited := strings.Replace(string(b), "- Name: Zhang San\n", "- Name: Zhang San\n- Preferred name: Xiao Zhang\n", 1)
	if err := os.WriteFile(userFile, []byte(edited), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(w, `added the line "- Preferred name: Xiao Zhang" below "- Name: Zhang San"`)
	fmt.Fprintln(w)
	if _, err := ask(ctx, w, store, agent, "What's my name?"); err != nil {
		return err
	}

	if err := apart(ctx, w, store, userFile); err != nil {
		return err
	}
	if err := history(ctx, w, store); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 12. The files on disk")
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != dir && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir // the history's logs, .history/: no memory files
		case d.IsDir() || strings.HasPrefix(d.Name(), "."):
			return nil // dot-files are never memory files
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		fmt.Fprintf(w, "--- %s\n%s", filepath.ToSlash(rel), b)
		return err
	})
}

// history shows what the store recorded of facts/user.md: every change,
// who made it, and any version read back and restored.
func history(ctx context.Context, w io.Writer, store *memory.Store) error {
	fmt.Fprintln(w, "\n== 11. History: every change recorded, and undone")
	changes, err := store.History(ctx, "facts/user.md", nil)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, `store.History(ctx, "facts/user.md", nil), newest first:`)
	for _, c := range changes {
		who := c.Actor
		if who == "" {
			who = "-"
		}
		fmt.Fprintf(w, "  %-8s by %-10s %-24s -> %s\n", c.Op, who, or(c.Old, "(new)"), c.New)
	}
	first := changes[len(changes)-1].New
	text, err := store.ReadVersion(ctx, "facts/user.md", first)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "store.ReadVersion(ctx, \"facts/user.md\", %q):\n%s", first, indent(text, "    "))
	return nil
}

// or is s, or else when it is empty.
func or(s, orElse string) string {
	if s == "" {
		return orElse
	}
	return s
}

// apart shows, through the tools as a model calls them, what the library
// does that a folder of notes does not: it searches, it patches in place,
// it holds the facts to their budget, and it refuses to overwrite what a
// person changed after the conversation read it.
func apart(ctx context.Context, w io.Writer, store *memory.Store, userFile string) error {
	conv := store.NewSession()

	fmt.Fprintln(w, "\n== 7. Search: BM25 over fact lines and entries, the best first")
	if err := use(ctx, w, conv, "memory_search", `{"query":"token expiry","limit":null}`); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 8. Patch: one line changed in place, the rest of the file as it was")
	if err := use(ctx, w, conv, "memory_read", `{"path":"facts/user.md","line":null}`); err != nil {
		return err
	}
	if err := use(ctx, w, conv, "memory_patch", `{"path":"facts/user.md","version":null,"patches":[`+
		`{"oldText":"- Preferred name: Xiao Zhang","newText":"- Preferred name: Xiao Zhang (at work: Zhang)"}]}`); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 9. The facts budget: a model pasting a whole document into facts is refused")
	doc := strings.Repeat("the meeting notes of the quarter, word for word; ", 320)
	if err := use(ctx, w, conv, "memory_append", fmt.Sprintf(`{"path":"facts/memory.md","entry":"- Notes: %s","summary":null}`, doc)); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n== 10. A person edits facts/user.md; the conversation's write from its older read is refused")
	b, err := os.ReadFile(userFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(userFile, append(b, "- Timezone: Asia/Shanghai\n"...), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(w, `added the line "- Timezone: Asia/Shanghai" at the end`)
	fmt.Fprintln(w, "the user gives their birthday; the model rewrites the file from what it read in step 8:")
	stale := "# User\n\n> Summary: Zhang San\n\n- Name: Zhang San\n- Preferred name: Xiao Zhang (at work: Zhang)\n- Birthday: 03-14\n"
	write := `{"path":"facts/user.md","content":` + quote(stale) + `,"version":null}`
	if err := use(ctx, w, conv, "memory_write", write); err != nil {
		return err
	}
	fmt.Fprintln(w, "the model reads the file again and writes what it now knows, the person's line kept:")
	if err := use(ctx, w, conv, "memory_read", `{"path":"facts/user.md","line":null}`); err != nil {
		return err
	}
	fresh := strings.Replace(stale, "- Birthday", "- Timezone: Asia/Shanghai\n- Birthday", 1)
	return use(ctx, w, conv, "memory_write", `{"path":"facts/user.md","content":`+quote(fresh)+`,"version":null}`)
}

// use calls one tool in a conversation as a model would, and shows the
// call and what the model gets back. Only a host failure is an error.
func use(ctx context.Context, w io.Writer, conv *memory.Session, name, args string) error {
	res, err := conv.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		return err
	}
	shown := args
	if len(shown) > 160 {
		shown = shown[:150] + "... (" + fmt.Sprint(len(args)) + " bytes)"
	}
	show(w, "model", memory.Message{ToolCalls: []memory.ToolCall{{Name: name, Arguments: json.RawMessage(shown)}}})
	show(w, "model", memory.Message{Role: "tool", Content: res.Content()})
	return nil
}

// quote is s as a JSON string, written as a model writes it (">" kept).
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// reflect shows a finished task and, when it is worth it, lets the
// reflector's model record what it learned.
func reflect(ctx context.Context, w io.Writer, store *memory.Store, model memory.LLMFunc, task memory.Task) error {
	for _, m := range task.Messages {
		show(w, "agent", m)
	}
	ok := memory.ShouldReflect(task)
	fmt.Fprintf(w, "memory.ShouldReflect(task) = %v (Iterations: %d, Actions: %d)\n", ok, task.Iterations, task.Actions)
	if !ok {
		return nil
	}
	r := memory.NewReflector(store, narrate(w, "reflector", model), &memory.ReflectorOptions{Persona: persona})
	ref, err := r.Reflect(ctx, task)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Reflection:\n  Assessment: %s\n  Rounds: %d, ToolCalls: %d, Changed: %v\n",
		ref.Assessment, ref.Rounds, ref.ToolCalls, ref.Changed)
	return nil
}

// maxIterations bounds the agent's model calls for one question.
const maxIterations = 5

const agentPrompt = "You are Pegasus, a personal assistant with long-term memory. " +
	"The first message lists what you remember; memory_read the files that matter before you answer."

// ask is the agent loop of a new task: the memory index as the first user
// message, then the question, then model calls and memory tool calls until
// the model answers without calling a tool. It returns the answer.
func ask(ctx context.Context, w io.Writer, store *memory.Store, model memory.LLM, question string) (string, error) {
	conv := store.NewSession() // one conversation: what it reads, it may change
	index, err := conv.IndexMessage(ctx)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(w, "first message (conv.IndexMessage):\n%s", indent(index, "    "))
	fmt.Fprintf(w, "user: %s\n", question)
	model = narrate(w, "agent", model)
	tools := conv.Tools()
	msgs := []memory.Message{{Role: "user", Content: index}, {Role: "user", Content: question}}
	for range maxIterations {
		resp, err := model.Complete(ctx, memory.Request{System: agentPrompt, Messages: msgs, Tools: tools})
		if err != nil {
			return "", err
		}
		if len(resp.ToolCalls) == 0 {
			fmt.Fprintf(w, "agent: %s\n", resp.Content)
			return resp.Content, nil
		}
		msgs = append(msgs, memory.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, c := range resp.ToolCalls {
			text, err := callTool(ctx, conv, c)
			if err != nil {
				return "", err // a host failure: stop the agent
			}
			msgs = append(msgs, memory.Message{Role: "tool", Content: text, ToolCallID: c.ID})
		}
	}
	return "", fmt.Errorf("no answer after %d model calls", maxIterations)
}

// callTool runs one memory tool in the conversation. A mistake of the
// model goes back to it as text starting "Error: " (ToolResult.Content), as
// the reflector does; only a host failure is a Go error.
func callTool(ctx context.Context, conv *memory.Session, c memory.ToolCall) (string, error) {
	res, err := conv.Call(ctx, c.Name, c.Arguments)
	return res.Content(), err
}

// narrate wraps a model so that the transcript shows its tool calls and
// their results. A model sees the results of its calls in its next
// request, so that is where they are printed.
func narrate(w io.Writer, who string, model memory.LLM) memory.LLM {
	return memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
		i := len(req.Messages)
		for i > 0 && req.Messages[i-1].Role == "tool" {
			i--
		}
		for _, m := range req.Messages[i:] {
			show(w, who, m)
		}
		resp, err := model.Complete(ctx, req)
		if len(resp.ToolCalls) > 0 {
			show(w, who, memory.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
		}
		return resp, err
	})
}

// show prints one message of a conversation.
func show(w io.Writer, who string, m memory.Message) {
	switch {
	case m.Role == "tool" && strings.HasPrefix(m.Content, "Error: "):
		fmt.Fprintf(w, "  <- model error: %s\n", strings.TrimPrefix(m.Content, "Error: "))
	case m.Role == "tool":
		fmt.Fprintf(w, "  <- %s", strings.TrimPrefix(indent(m.Content, "     "), "     "))
	case m.Role == "user":
		fmt.Fprintf(w, "user: %s\n", m.Content)
	case m.Content != "":
		fmt.Fprintf(w, "%s: %s\n", who, m.Content)
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(w, "%s -> %s %s\n", who, c.Name, c.Arguments)
	}
}

// indent prefixes the lines of s that are not empty and ends s with a
// newline.
func indent(s, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(strings.TrimRight(s, "\n") + "\n") {
		if line != "\n" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	return b.String()
}

// The scripted models. Each reads its request as a model would: the
// reflector's the task header (its first message) and the system prompt,
// the agent's the memory index (its first message), the question and the
// results of its tool calls.

// recordName is the reflector's model for task 1: it records the name the
// user gave, then says what it did.
func recordName(_ context.Context, req memory.Request) (memory.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		return memory.Response{Content: "The user gave their name, which matters in every later task: I added it to facts/user.md."}, nil
	}
	_, rest, _ := strings.Cut(req.Messages[0].Content, "I'm ")
	name, _, _ := strings.Cut(rest, ".")
	return toolCall(req, "memory_append", appendArgs{Path: "facts/user.md", Entry: "- Name: " + name, Summary: &name})
}

// recordEpisode is the reflector's model for task 3: it records the fix as
// an episode in the month file its system prompt names.
func recordEpisode(_ context.Context, req memory.Request) (memory.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
		return memory.Response{Content: "A non-obvious bug was found and fixed; I recorded it as an episode, with the lesson."}, nil
	}
	_, rest, _ := strings.Cut(req.System, "This month's file is ")
	month := strings.TrimSuffix(strings.Fields(rest)[0], ".")
	_, input, _ := strings.Cut(req.Messages[0].Content, "Input:\n")
	task, _, _ := strings.Cut(input, "\n")
	entry := "## Login fails after an hour\n" +
		"- Summary: tokens expired an hour early; fixed expiry() in auth/token.go\n" +
		"- Task: " + task + "\n" +
		"- Lesson: expiry() subtracted an hour from the 2-hour TTL; check time arithmetic first"
	return toolCall(req, "memory_append", appendArgs{Path: month, Entry: entry})
}

// agentModel is the agent's model. It picks the file to read from the
// question and the memory index, then answers from the text memory_read
// returned.
func agentModel(_ context.Context, req memory.Request) (memory.Response, error) {
	index, question := req.Messages[0].Content, req.Messages[1].Content
	bug := strings.Contains(question, "bug")
	last := req.Messages[len(req.Messages)-1]
	if last.Role != "tool" {
		want := "facts/user.md"
		if bug {
			want = "episodes/" // the index lists the newest month first
		}
		for line := range strings.Lines(index) {
			if strings.HasPrefix(line, "- "+want) {
				path := strings.Fields(line)[1]
				return toolCall(req, "memory_read", readArgs{Path: path})
			}
		}
		return memory.Response{Content: "I don't remember that."}, nil
	}
	if strings.HasPrefix(last.Content, "Error: ") {
		return memory.Response{Content: "I could not read my memory."}, nil
	}
	if bug {
		// The newest entry is the last "## " section of the month file.
		i := strings.LastIndex(last.Content, "\n## ")
		if i < 0 {
			return memory.Response{Content: "I don't remember any bug."}, nil
		}
		title, entry, _ := strings.Cut(last.Content[i+4:], "\n")
		return memory.Response{Content: fmt.Sprintf("On %s we fixed %q: %s.", field(entry, "Date"), title, field(entry, "Summary"))}, nil
	}
	answer := "Your name is " + field(last.Content, "Name") + "."
	if p := field(last.Content, "Preferred name"); p != "" {
		answer += " You like to be called " + p + "."
	}
	return memory.Response{Content: answer}, nil
}

// field returns the value of the first "- key: value" line of text.
func field(text, key string) string {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(line, "- "+key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// The arguments of the memory tools, as a model writes them.
type (
	readArgs struct {
		Path string `json:"path"`
	}
	appendArgs struct {
		Path    string  `json:"path"`
		Entry   string  `json:"entry"`
		Summary *string `json:"summary"` // null: let the store derive it
	}
)

// toolCall is a response that calls one tool, with an ID unique in the
// conversation.
func toolCall(req memory.Request, name string, args any) (memory.Response, error) {
	b, err := json.Marshal(args)
	return memory.Response{ToolCalls: []memory.ToolCall{
		{ID: fmt.Sprintf("call_%d", len(req.Messages)), Name: name, Arguments: b},
	}}, err
}
