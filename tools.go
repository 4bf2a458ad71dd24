package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Tool is one memory tool, ready to register in an agent's tool registry:
// a name, a model-facing description that says when to use it, a JSON
// Schema for its arguments, and [Tool.Call] to run it.
type Tool struct {
	Name        string          // e.g. "memory_read"
	Description string          // model-facing; says what the tool does and when to use it
	InputSchema json.RawMessage // JSON Schema of the arguments: type object, every property required, no others

	call func(ctx context.Context, args json.RawMessage) (ToolResult, error)
}

// ToolResult is what a tool call gives back to the model.
type ToolResult struct {
	Text    string // what the model sees: JSON or plain text
	IsError bool   // the model made a mistake it can fix; Text says what and how
}

// Call runs the tool with the model's JSON arguments. Empty or null args
// count as {}. A mistake the model can fix (invalid JSON, an unknown or
// missing argument, a bad path, a budget exceeded, patch text not found)
// returns a ToolResult with IsError set and a nil error. A failure of the
// host (disk, cancelled context, closed store) returns a non-nil error.
func (t Tool) Call(ctx context.Context, args json.RawMessage) (ToolResult, error) {
	if t.call == nil {
		return ToolResult{}, fmt.Errorf("memory: tool %q was not made by a Store", t.Name)
	}
	return t.call(ctx, args)
}

// Tools returns the agent's memory tools: memory_list, memory_search,
// memory_read, memory_write, memory_patch and memory_append. Their descriptions name the
// configured fact files and budget.
//
// The tools of one call share a record of the version of each file they
// have read or written, so that a change made on disk since (a person's
// edit, another agent) is never overwritten unseen: memory_write and
// memory_patch refuse to change an existing file that this tool set has not
// read, or that changed since it last read or wrote it, and tell the model
// to read it again. memory_append needs no read: it never rewrites what is
// there. Call Tools once per conversation (task), and again for the next.
func (s *Store) Tools() []Tool {
	ts := s.newToolset()
	return []Tool{ts.listTool(), ts.searchTool(), ts.readTool(), ts.writeTool(), ts.patchTool(), ts.appendTool()}
}

// ReflectionTools returns the tools the post-task reflector uses:
// memory_read, memory_write, memory_patch and memory_append, with a record
// of their own, as [Store.Tools] describes.
func (s *Store) ReflectionTools() []Tool { return s.newToolset().reflectionTools() }

// toolset is one conversation's view of the store: the version of each file
// as the model last read or wrote it.
type toolset struct {
	s    *Store
	mu   sync.Mutex
	seen map[string]string // path → version
}

func (s *Store) newToolset() *toolset { return &toolset{s: s, seen: map[string]string{}} }

func (ts *toolset) reflectionTools() []Tool {
	return []Tool{ts.readTool(), ts.writeTool(), ts.patchTool(), ts.appendTool()}
}

// saw records that the model has seen path with this content.
func (ts *toolset) saw(path string, content []byte) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.seen[path] = version(content)
}

// check is the guard of memory_write and memory_patch: an existing file
// must be the version the model last saw.
func (ts *toolset) check(op string, t target, old []byte) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	v, ok := ts.seen[t.path]
	switch {
	case old == nil && ok && v != "":
		// Deleted since it was read, by a person or another agent: say so
		// once; a second call creates the file anew.
		delete(ts.seen, t.path)
		return modelErr(op, t.path, ErrConflict, "%s was deleted since you last read it; nothing was changed. If it should exist again, call memory_%s again", t.path, op)
	case old == nil:
		return nil // nothing to overwrite
	case !ok:
		return modelErr(op, t.path, ErrConflict, "%s already exists and was not read in this conversation; nothing was changed. Call memory_read first so nothing in it is lost, then memory_%s again", t.path, op)
	case v != version(old):
		return modelErr(op, t.path, ErrConflict, "%s changed since you last read it (edited by a person or another agent); nothing was changed. Call memory_read to see the current text, then redo the change on it", t.path)
	}
	return nil
}

const pathProperty = `"path": {"type": "string", "description": "A memory file: %s."}`

// pathList names the valid paths for descriptions and schemas.
func (s *Store) pathList() string {
	var b strings.Builder
	for _, f := range s.opts.FactFiles {
		b.WriteString(factPath(f.Name) + ", ")
	}
	b.WriteString("or " + episodesDir + "/YYYY-MM.md for a month's episodes")
	return b.String()
}

// factList describes the fact files and their purposes.
func (s *Store) factList() string {
	parts := make([]string, len(s.opts.FactFiles))
	for i, f := range s.opts.FactFiles {
		parts[i] = factPath(f.Name)
		if f.Purpose != "" {
			parts[i] += " (" + f.Purpose + ")"
		}
	}
	return strings.Join(parts, "; ")
}

func (ts *toolset) listTool() Tool {
	s := ts.s
	return Tool{
		Name: "memory_list",
		Description: "List the saved memory files with their one-line summaries and sizes in bytes: " +
			"the fact files first, then the episode files, newest month first. " +
			"Use it to see what is remembered, then memory_read the files that matter for the task.",
		InputSchema: schema(`{"type": "object", "properties": {}, "required": [], "additionalProperties": false}`),
		call: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var a struct{}
			if msg := decodeArgs(args, &a); msg != "" {
				return ToolResult{Text: msg, IsError: true}, nil
			}
			files, err := s.List(ctx)
			return jsonResult(files, err)
		},
	}
}

type searchArgs struct {
	Query *string `json:"query"`
	Limit *int    `json:"limit"`
}

func (ts *toolset) searchTool() Tool {
	s := ts.s
	return Tool{
		Name: "memory_search",
		Description: "Search memory by keywords: the fact lines and episode entries that match, best first, " +
			"each with its path and line and the best-matching line as snippet; memory_read the file for the whole entry. " +
			"Matches word forms (review, reviewed) and Chinese text. An empty query lists the most recent episodes.",
		InputSchema: schema(`{"type": "object", "properties": {
			"query": {"type": "string", "description": "A few keywords, such as a name, a place or a topic; empty for the latest episodes."},
			"limit": {"type": ["integer", "null"], "description": "Hits at most, 1 to 50; null for 10."}
			}, "required": ["query", "limit"], "additionalProperties": false}`),
		call: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var a searchArgs
			if msg := decodeArgs(args, &a, "query", "limit"); msg != "" {
				return ToolResult{Text: msg, IsError: true}, nil
			}
			if a.Query == nil {
				return missing("query")
			}
			limit := DefaultSearchLimit
			if a.Limit != nil {
				if limit = *a.Limit; limit < 1 || limit > 50 {
					return ToolResult{Text: "limit must be from 1 to 50, or null for 10", IsError: true}, nil
				}
			}
			hits, err := s.Search(ctx, *a.Query, &SearchOptions{Limit: limit})
			if err != nil {
				return errResult(err)
			}
			for i := range hits {
				hits[i].Score = math.Round(hits[i].Score*100) / 100
			}
			return jsonResult(hits, nil)
		},
	}
}

type readArgs struct {
	Path *string `json:"path"`
}

func (ts *toolset) readTool() Tool {
	s := ts.s
	return Tool{
		Name: "memory_read",
		Description: "Read one memory file in full. Use it when the memory index or memory_list shows a file " +
			"that may help with the task, and before changing a file with memory_write or memory_patch.",
		InputSchema: schema(`{"type": "object", "properties": {` + fmt.Sprintf(pathProperty, s.pathList()) +
			`}, "required": ["path"], "additionalProperties": false}`),
		call: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var a readArgs
			if msg := decodeArgs(args, &a, "path"); msg != "" {
				return ToolResult{Text: msg, IsError: true}, nil
			}
			if a.Path == nil {
				return missing("path")
			}
			text, err := s.Read(ctx, *a.Path)
			if err != nil {
				return errResult(err)
			}
			ts.saw(*a.Path, []byte(text))
			return ToolResult{Text: text}, nil
		},
	}
}

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

type sizeResult struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

func (ts *toolset) writeTool() Tool {
	s := ts.s
	return Tool{
		Name: "memory_write",
		Description: "Create or replace a whole memory file. Use it to rewrite a fact file after reading it: " +
			"to merge a new fact into the right place, correct an outdated one, or condense the file. " +
			"The fact files are " + s.factList() + ". " +
			"Together they may hold at most " + thousands(s.opts.FactsBudget) + " bytes, so keep them condensed. " +
			"Start the content with a \"# \" title and a \"> Summary: \" line of under 10 words; a missing title or summary line is added. " +
			"To replace a file that exists, memory_read it first in this conversation. " +
			"To change a few lines use memory_patch; to add an episode use memory_append.",
		InputSchema: schema(`{"type": "object", "properties": {` + fmt.Sprintf(pathProperty, s.pathList()) + `,
			"content": {"type": "string", "description": "The whole new content of the file, in markdown."}
			}, "required": ["path", "content"], "additionalProperties": false}`),
		call: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var a writeArgs
			if msg := decodeArgs(args, &a, "path", "content"); msg != "" {
				return ToolResult{Text: msg, IsError: true}, nil
			}
			switch {
			case a.Path == nil:
				return missing("path")
			case a.Content == nil:
				return missing("content")
			}
			data, err := s.write(ctx, *a.Path, *a.Content, ts.check)
			if err != nil {
				return errResult(err)
			}
			ts.saw(*a.Path, data)
			return jsonResult(sizeResult{Path: *a.Path, Size: len(data)}, nil)
		},
	}
}

type patchArgs struct {
	Path    *string           `json:"path"`
	Patches []json.RawMessage `json:"patches"`
}

type patchArg struct {
	OldText *string `json:"oldText"`
	NewText *string `json:"newText"`
}

func (ts *toolset) patchTool() Tool {
	s := ts.s
	return Tool{
		Name: "memory_patch",
		Description: "Change part of a memory file by exact text replacement, without rewriting the rest. " +
			"Each patch replaces oldText, which must occur exactly once in the file, with newText (empty to delete it). " +
			"Patches apply in order, all or nothing. memory_read the file first and copy oldText exactly from it. " +
			"The summary line is not updated for you: patch it too when it no longer fits.",
		InputSchema: schema(`{"type": "object", "properties": {` + fmt.Sprintf(pathProperty, s.pathList()) + `,
			"patches": {"type": "array", "description": "One or more replacements, applied in order.", "items": {
				"type": "object", "properties": {
					"oldText": {"type": "string", "description": "Text to find; must occur exactly once."},
					"newText": {"type": "string", "description": "Replacement text; empty to delete oldText."}
				}, "required": ["oldText", "newText"], "additionalProperties": false}}
			}, "required": ["path", "patches"], "additionalProperties": false}`),
		call: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var a patchArgs
			if msg := decodeArgs(args, &a, "path", "patches"); msg != "" {
				return ToolResult{Text: msg, IsError: true}, nil
			}
			switch {
			case a.Path == nil:
				return missing("path")
			case a.Patches == nil:
				return missing("patches")
			}
			patches := make([]Patch, len(a.Patches))
			for i, raw := range a.Patches {
				var p patchArg
				if msg := decodeArgs(raw, &p, "oldText", "newText"); msg != "" {
					return ToolResult{Text: fmt.Sprintf("patches[%d]: %s", i, msg), IsError: true}, nil
				}
				switch {
				case p.OldText == nil:
					return missing(fmt.Sprintf("patches[%d].oldText", i))
				case p.NewText == nil:
					return missing(fmt.Sprintf("patches[%d].newText (use \"\" to delete the old text)", i))
				}
				patches[i] = Patch{OldText: *p.OldText, NewText: *p.NewText}
			}
			data, err := s.patch(ctx, *a.Path, patches, ts.check)
			if err != nil {
				return errResult(err)
			}
			ts.saw(*a.Path, data)
			return jsonResult(struct {
				Path         string `json:"path"`
				Size         int    `json:"size"`
				AppliedCount int    `json:"appliedCount"`
			}{*a.Path, len(data), len(patches)}, nil)
		},
	}
}

type appendArgs struct {
	Path    *string `json:"path"`
	Entry   *string `json:"entry"`
	Summary *string `json:"summary"`
}

func (ts *toolset) appendTool() Tool {
	s := ts.s
	return Tool{
		Name: "memory_append",
		Description: "Add an entry at the end of a memory file, creating the file if needed. " +
			"For an episode (a significant task and its outcome) the path is this month's file, " + episodesDir + "/" + s.now().Format("2006-01") + ".md, " +
			"and the entry is one section: a \"## \" heading naming the task, then bullets such as " +
			"\"- Summary: \" (under 10 words), \"- Date: YYYY-MM-DD\" (added if missing), \"- Task: \", \"- Outcome: \", \"- Lesson: \". " +
			"For a fact file the entry is one or more \"- \" bullet lines, checked against the facts budget. " +
			"The file's summary line is refreshed: pass summary to set it, or null to derive it from the content.",
		InputSchema: schema(`{"type": "object", "properties": {` + fmt.Sprintf(pathProperty, s.pathList()) + `,
			"entry": {"type": "string", "description": "The markdown to add."},
			"summary": {"type": ["string", "null"], "description": "New one-line summary of the whole file, under 10 words; null to derive it."}
			}, "required": ["path", "entry", "summary"], "additionalProperties": false}`),
		call: func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			var a appendArgs
			if msg := decodeArgs(args, &a, "path", "entry", "summary"); msg != "" {
				return ToolResult{Text: msg, IsError: true}, nil
			}
			switch {
			case a.Path == nil:
				return missing("path")
			case a.Entry == nil:
				return missing("entry")
			}
			summary := ""
			if a.Summary != nil {
				summary = *a.Summary
			}
			// The model keeps a current view of the file when it had one, or
			// when this append created the file.
			var current bool
			note := func(op string, t target, old []byte) error {
				ts.mu.Lock()
				v, ok := ts.seen[t.path]
				ts.mu.Unlock()
				current = old == nil || ok && v == version(old)
				return nil
			}
			data, err := s.append(ctx, *a.Path, *a.Entry, summary, note)
			if err != nil {
				return errResult(err)
			}
			if current {
				ts.saw(*a.Path, data)
			}
			return jsonResult(sizeResult{Path: *a.Path, Size: len(data)}, nil)
		},
	}
}

// schema compacts a JSON Schema literal. The literals are constants of this
// file, so a failure is a bug caught by the tests.
func schema(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic("memory: bad tool schema: " + err.Error())
	}
	return b.Bytes()
}

// decodeArgs decodes a JSON object into v. Unlike encoding/json it refuses
// keys that are not exactly one of names, case included. It returns a
// model-facing description of the problem, or "".
func decodeArgs(raw json.RawMessage, v any, names ...string) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return describeJSONError(err)
	}
	var unknown []string
	for k := range keys {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		want := "no arguments"
		if len(names) > 0 {
			want = "only " + strings.Join(names, ", ")
		}
		return fmt.Sprintf("unknown argument %q; this tool takes %s", unknown[0], want)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return describeJSONError(err)
	}
	return ""
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "the arguments are not valid JSON (" + syn.Error() + "); send a JSON object"
	case errors.As(err, &typ) && typ.Field == "":
		return "the arguments must be a JSON object, not " + article(typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s must be %s, not %s", typ.Field, jsonKind(typ.Type), article(typ.Value))
	default:
		return "the arguments could not be read as JSON; send a JSON object"
	}
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	case reflect.Int:
		return "a whole number"
	default:
		return "an object"
	}
}

func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}

func missing(name string) (ToolResult, error) {
	return ToolResult{Text: "missing required argument " + name, IsError: true}, nil
}

// errResult turns a model error into an IsError result and passes host
// errors through.
func errResult(err error) (ToolResult, error) {
	var me *modelError
	if errors.As(err, &me) {
		return ToolResult{Text: me.msg, IsError: true}, nil
	}
	return ToolResult{}, err
}

// jsonResult renders v as the result text, or err as errResult does.
func jsonResult(v any, err error) (ToolResult, error) {
	if err != nil {
		return errResult(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ToolResult{}, fmt.Errorf("memory: encode result: %w", err)
	}
	return ToolResult{Text: string(b)}, nil
}

// IndexMessage renders the memory list as the first user message of a task
// (the "Available memory" index): one line per file with its size and
// summary, facts first, then months newest first, and a closing line that
// tells the model to memory_read what it needs.
//
// The message aims to fit in Options.IndexBudget characters. When it does
// not, the oldest month files are left out and a line says how many; the
// fact files, the newest month and the framing lines are always kept, so a
// budget smaller than those is exceeded. Summaries over 200 characters are
// cut with "…".
func (s *Store) IndexMessage(ctx context.Context) (string, error) {
	files, err := s.List(ctx)
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "Available memory: none yet.\n\nNothing has been remembered so far.\n", nil
	}
	const (
		header = "Available memory:\n"
		footer = "\nUse memory_read to load relevant files before responding.\n"
	)
	lines := make([]string, len(files))
	facts := 0
	for i, f := range files {
		lines[i] = fmt.Sprintf("- %s (%s)", f.Path, humanSize(f.Size))
		if f.Summary != "" {
			lines[i] += ": " + cut(f.Summary, 200)
		}
		lines[i] += "\n"
		if strings.HasPrefix(f.Path, factsDir+"/") {
			facts++
		}
	}
	omitted := func(n int) string {
		if n == 0 {
			return ""
		}
		noun := "files"
		if n == 1 {
			noun = "file"
		}
		return fmt.Sprintf("- (%d older episode %s not shown; memory_list lists them all)\n", n, noun)
	}
	size := utf8.RuneCountInString(header + footer)
	for _, l := range lines {
		size += utf8.RuneCountInString(l)
	}
	keep := len(lines)
	// Drop the oldest months until the message fits, keeping the newest.
	for keep > facts+1 && size+utf8.RuneCountInString(omitted(len(lines)-keep)) > s.opts.IndexBudget {
		keep--
		size -= utf8.RuneCountInString(lines[keep])
	}
	var b strings.Builder
	b.WriteString(header)
	for _, l := range lines[:keep] {
		b.WriteString(l)
	}
	b.WriteString(omitted(len(lines) - keep))
	b.WriteString(footer)
	return b.String(), nil
}

// humanSize renders a size the way the seed's index does: 420B, 1.2KB.
func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
}

// cut shortens s to at most n characters, marking a cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
