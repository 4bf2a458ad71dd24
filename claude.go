package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Claude's memory tool. Claude models are trained on a client-side tool,
// memory_20250818 (tool name "memory"), whose commands view, create,
// str_replace, insert, delete and rename work on files under /memories.
// Session.ClaudeMemory serves it from the store: /memories is the store's
// root seen through its grammar, and every command goes through the same
// operations as the memory_* tools, so the conversation's guard, the facts
// budget, atomic replacement and the closed set of files hold.
//
// Sources followed for the commands' inputs, results and wording:
//   - the command types of the Messages API (anthropic-sdk-go v1.84.0,
//     BetaMemoryTool20250818ViewCommand and its siblings): view {path,
//     view_range}, create {path, file_text}, str_replace {path, old_str,
//     new_str}, insert {path, insert_line, insert_text}, delete {path},
//     rename {old_path, new_path};
//   - Anthropic's reference implementations of the tool,
//     BetaLocalFilesystemMemoryTool in anthropic-sdk-python
//     (src/anthropic/lib/tools/_beta_builtin_memory_tool.py) and
//     anthropic-sdk-typescript (src/tools/memory/node.ts), and the
//     "Memory tool" page of Anthropic's documentation: the directory
//     listing's header and "size<TAB>path" lines with sizes as 0B, 512B,
//     1.5K, 4K; "Here's the content of {path} with line numbers:" and lines
//     numbered right-aligned in six columns and a tab; "The path {path} does
//     not exist. Please provide a valid path."; "File created successfully
//     at: {path}"; "No replacement was performed, old_str `…` did not appear
//     verbatim in {path}."; "No replacement was performed. Multiple
//     occurrences of old_str `…` in lines: 1, 4. Please ensure it is
//     unique"; "The memory file has been edited. Here is the snippet showing
//     the change (with line numbers):"; "Invalid `insert_line` parameter: N.
//     It should be within the range of lines of the file: [0, n]" (the
//     TypeScript wording, which the documentation gives); "The file {path}
//     has been edited."; "The path {path} is not a file."; "Path must
//     start with /memories, got: …"; "Path … would escape /memories
//     directory"; "Path would escape /memories directory via symlink"; and
//     the paths resolved before use (Path.resolve, path.resolve), the keys
//     of the input no command takes ignored;
//   - for view_range, which the memory tool's reference implementations do
//     not check, the checks and wording of Anthropic's text editor tool
//     (anthropic-quickstarts, computer-use-demo tools/edit.py): "Invalid
//     `view_range`: [a, b]. Its first element `a` should be within the range
//     of lines of the file: [1, n]", and so on.
//
// Where this store differs from the reference is listed in the doc comment
// of Session.ClaudeMemory, every difference, as the contract a host reads.

// claudeRoot is where the memory tool's paths start.
const claudeRoot = "/memories"

// claudeFields are the arguments of each command besides "command", in the
// order their errors are reported; view_range alone may be left out.
var claudeFields = map[string][]string{
	"view":        {"path", "view_range"},
	"create":      {"path", "file_text"},
	"str_replace": {"path", "old_str", "new_str"},
	"insert":      {"path", "insert_line", "insert_text"},
	"delete":      {"path"},
	"rename":      {"old_path", "new_path"},
}

// claudeCommands names the commands in the order the tool defines them.
const claudeCommands = "view, create, str_replace, insert, delete and rename"

// claudeCommand is one decoded command of the memory tool.
type claudeCommand struct {
	Command    string
	Path       string
	ViewRange  []int // nil when not given
	FileText   string
	OldStr     string
	NewStr     string
	InsertLine int
	InsertText string
	OldPath    string
	NewPath    string
}

// ClaudeMemory runs one command of Claude's memory tool (type
// memory_20250818, name "memory") in this conversation: input is the
// tool_use block's input, such as {"command":"view","path":"/memories"}.
// /memories is the store's root seen through its grammar: view lists the
// memory files with their sizes or shows a file's numbered lines (honouring
// view_range), create writes a whole file, str_replace is one patch, insert
// adds lines after insert_line; delete and rename are refused, as the files
// are a closed set, with a text that says what to do instead.
//
// It behaves as Anthropic's reference implementation
// (BetaLocalFilesystemMemoryTool of its Python and TypeScript SDKs) behaves
// wherever none of the store's guarantees is at stake: paths are resolved
// as the reference resolves them (doubled slashes, "." segments, a trailing
// slash, ".." that stays inside /memories), keys a command does not take
// are ignored, and results and errors are worded as the reference words
// them: an error starts with the reference's sentence, full stop included,
// when it has one ("The path /memories/x does not exist. Please provide a
// valid path.", "Path would escape /memories directory via symlink"), then
// says what to do here. Every difference that remains:
//   - The files are a closed set: the configured fact files, procedures.md,
//     persona.md (read only), one episodes/YYYY-MM.md a month with its full
//     parts, world/<topic>.md with shared world topics, and the read-only
//     originals of compacted months under episodes/archive/. A directory
//     view lists only the memory files (neither a person's other files nor
//     episodes/archive/), with a note on the set after the listing;
//     create of another path, delete and rename are refused with a model
//     error that explains the set and what to do instead. Any other path,
//     such as a folder not in the set, "does not exist".
//   - create replaces a file that exists (the reference refuses any
//     existing file, "File … already exists"): with a closed set it is the
//     only way to rewrite one. Like memory_write, it may replace only a
//     file this conversation has viewed whole since it last changed;
//     str_replace and insert likewise need such a view, as memory_patch
//     needs a read (the reference has no such guard). A view with a
//     view_range that leaves out lines does not count. create on a folder
//     says the path is a directory.
//   - create of a file without a "# " title or "> Summary:" line gets them,
//     as memory_write does, and the result says so: line numbers shift.
//   - Lines are a file's lines as a person counts them: "a\nb\n" has two
//     lines, not three (the reference splits on "\n" and counts an empty
//     last one). insert_line goes from 0 to that count, and the file keeps
//     ending with a newline. The insert_line error has the TypeScript
//     wording ("… within the range of lines of the file: [0, n]").
//   - str_replace is one literal patch, as memory_patch makes it: old_str
//     must occur exactly once, overlapping occurrences counted (the Python
//     reference counts them apart, the TypeScript one counts lines that
//     hold it), and an empty old_str is refused. Several occurrences name
//     their lines, each line once. The snippet shows the whole replacement
//     with two lines around it.
//   - view_range, which the reference does not check, is checked with the
//     words of Anthropic's text editor tool ("Invalid `view_range`: …").
//   - A view shows at most about 128 KiB of lines at once, then says how to
//     view the rest (the reference has a limit of 999,999 lines instead);
//     a file that is not text (NUL bytes, invalid UTF-8) is shown with
//     U+FFFD and can only be replaced whole.
//   - A folder's size in a directory view is the sum of its memory files'
//     sizes, not the size of the folder's own entry (4.0K on most disks);
//     the header is the TypeScript one ("excluding hidden items and
//     node_modules").
//   - Results name a path as it resolves (/memories/facts/user.md for
//     /memories/facts//user.md; /memories for /memories/), where the
//     reference repeats the path as it was given; errors about a path that
//     names no memory file repeat it as given, as the reference does.
//     ".." is resolved on the path's text, not after following links, and
//     a path such as /memoriesx, which the reference reads as
//     /memories/x, must start with /memories/.
//   - A link that leads out of the memory directory is refused with the
//     reference's sentence followed by the /memories path and what to do;
//     the store follows no other link the reference would (a folder below
//     the top level that is a link).
//   - An input without a required argument, or with one of the wrong type,
//     is a model error that names the argument, where the reference fails
//     with its language's exception. The "Error: " prefix is left to the
//     caller, as ToolResult.Content and the SDKs' tool runners add it.
//
// Changes keep every guarantee of the memory_* tools: the facts budget,
// atomic replacement, the grammar, and the conversation's guard: create
// over an existing file, str_replace and insert go ahead only on a file this
// conversation has viewed whole since it last changed (its own changes
// count as seen), and otherwise tell the model to view it first.
//
// A mistake the model can fix (malformed input, an unknown command, a path
// outside the set, text not found, the budget exceeded) returns a
// ToolResult with IsError set and a nil error; a failure of the host (disk,
// cancelled context, closed store) returns a non-nil error. ClaudeMemory is
// safe for concurrent use, as the Session is.
func (c *Session) ClaudeMemory(ctx context.Context, input json.RawMessage) (ToolResult, error) {
	c.touch()
	ctx = c.acting(ctx)
	cmd, msg := decodeClaude(input)
	if msg != "" {
		return ToolResult{Text: msg, IsError: true}, nil
	}
	switch cmd.Command {
	case "view":
		return c.claudeView(ctx, cmd.Path, cmd.ViewRange)
	case "create":
		return c.claudeCreate(ctx, cmd.Path, cmd.FileText)
	case "str_replace":
		return c.claudeReplace(ctx, cmd.Path, cmd.OldStr, cmd.NewStr)
	case "insert":
		return c.claudeInsert(ctx, cmd.Path, cmd.InsertLine, cmd.InsertText)
	case "delete":
		return claudeFail("Cannot delete " + quoteIfOdd(cmd.Path) + ": memory here is a closed set of files, which are kept and never deleted: " + c.s.claudeFiles() +
			". To forget something, remove its lines with str_replace (an empty new_str), or view the file and create it again with only what should be kept")
	default: // rename
		return claudeFail("Cannot rename " + quoteIfOdd(cmd.OldPath) + " to " + quoteIfOdd(cmd.NewPath) + ": memory here is a closed set of files with fixed names, never renamed or moved: " + c.s.claudeFiles() +
			". To move an entry to another of these files, insert or create it there, then remove it from this one with str_replace (an empty new_str)")
	}
}

func claudeFail(text string) (ToolResult, error) {
	return ToolResult{Text: text, IsError: true}, nil
}

// decodeClaude decodes a command of the memory tool, or returns a
// model-facing description of what is wrong with it.
func decodeClaude(raw json.RawMessage) (claudeCommand, string) {
	var cmd claudeCommand
	raw = bytes.TrimSpace(raw)
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return cmd, describeJSONError(err)
	}
	if keys == nil {
		return cmd, "the input must be a JSON object with a command, not null"
	}
	if v, ok := keys["command"]; !ok || string(bytes.TrimSpace(v)) == "null" {
		return cmd, "missing required argument command: one of " + claudeCommands
	} else if msg := decodeValue(v, reflect.ValueOf(&cmd.Command).Elem(), "command"); msg != "" {
		return cmd, msg
	}
	fields, ok := claudeFields[cmd.Command]
	if !ok {
		return cmd, fmt.Sprintf("Unknown command %q: the memory tool's commands are %s", cut(cmd.Command, 40), claudeCommands)
	}
	// Other keys are ignored, as the reference ignores them: a model may
	// send an argument of another command, or one a later version adds.
	strs := map[string]*string{
		"path": &cmd.Path, "file_text": &cmd.FileText, "old_str": &cmd.OldStr, "new_str": &cmd.NewStr,
		"insert_text": &cmd.InsertText, "old_path": &cmd.OldPath, "new_path": &cmd.NewPath,
	}
	for _, f := range fields {
		v, ok := keys[f]
		missing := !ok || string(bytes.TrimSpace(v)) == "null"
		var msg string
		switch {
		case f == "view_range":
			if !missing {
				cmd.ViewRange, msg = decodeViewRange(v)
			}
		case missing:
			msg = "missing required argument " + f + " for " + cmd.Command
			if f == "new_str" {
				msg += ` (use "" to delete old_str)`
			}
		case f == "insert_line":
			msg = decodeValue(v, reflect.ValueOf(&cmd.InsertLine).Elem(), f)
		default:
			msg = decodeValue(v, reflect.ValueOf(strs[f]).Elem(), f)
		}
		if msg != "" {
			return cmd, msg
		}
	}
	return cmd, ""
}

// decodeViewRange decodes view_range: two whole numbers.
func decodeViewRange(raw json.RawMessage) ([]int, string) {
	const bad = "Invalid `view_range`. It should be a list of two integers."
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || len(items) != 2 {
		return nil, bad
	}
	r := make([]int, 2)
	for i, item := range items {
		if decodeValue(item, reflect.ValueOf(&r[i]).Elem(), "view_range") != "" {
			return nil, bad
		}
	}
	return r, ""
}

// claudePath is a /memories path seen through the store's grammar.
type claudePath struct {
	shown string // the path for messages, resolved: "/memories/facts/user.md"
	rel   string // the store's path: "facts/user.md"; "", "facts", "episodes" or "world" for a folder
	dir   bool
}

// claudeResolve maps a memory tool path to the store, for command cmd; it
// returns a model-facing text when the path is not one. As the reference
// does, it resolves the path first: doubled slashes, "." segments, a
// trailing slash and ".." segments that stay inside /memories are resolved
// (lexically: the store follows no link out of its folder anyway), and a
// path that leaves /memories is refused. What it resolves to must then be
// a memory file or folder, by the store's grammar.
func (s *Store) claudeResolve(cmd, p string) (claudePath, string) {
	shown := quoteIfOdd(p)
	rest, ok := strings.CutPrefix(p, claudeRoot)
	if !ok || (rest != "" && rest[0] != '/') {
		return claudePath{}, "Path must start with " + claudeRoot + ", got: " + shown + ". The memory files are " + s.claudeFiles()
	}
	clean := path.Clean(p)
	rel, ok := strings.CutPrefix(clean, claudeRoot)
	if !ok || (rel != "" && rel[0] != '/') {
		return claudePath{}, "Path " + shown + " would escape " + claudeRoot + " directory"
	}
	switch rel = strings.TrimPrefix(rel, "/"); rel {
	case "":
		return claudePath{shown: claudeRoot, dir: true}, ""
	case factsDir, episodesDir, s.worldFolder():
		return claudePath{shown: claudeRoot + "/" + rel, rel: rel, dir: true}, ""
	}
	op := map[string]string{"view": "read", "create": "write"}[cmd]
	if _, err := s.resolve(cmp.Or(op, "patch"), rel); err != nil {
		var me *Error
		errors.As(err, &me)
		if cmd == "create" {
			return claudePath{}, "File " + shown + " cannot be created: " + me.what + ". Memory here is a closed set of files: " + s.claudeFiles()
		}
		return claudePath{}, "The path " + shown + " does not exist. Please provide a valid path. " + claudeClause(me.what, rel) + ". Memory here is a closed set of files: " + s.claudeFiles()
	}
	return claudePath{shown: claudeRoot + "/" + rel, rel: rel}, ""
}

// claudeClause words a clause of the store's errors about the path rel as
// a sentence of the memory tool: one that starts with the store's path
// starts with the /memories path instead, and "the path" gets a capital.
func claudeClause(what, rel string) string {
	if rest, ok := strings.CutPrefix(what, quoteIfOdd(rel)+" "); ok {
		return quoteIfOdd(claudeRoot+"/"+rel) + " " + rest
	}
	if rest, ok := strings.CutPrefix(what, "the "); ok {
		return "The " + rest
	}
	return what
}

// worldFolder is "world" for a store that shares world topics, and ""
// (which names no folder) for one that does not.
func (s *Store) worldFolder() string {
	if s.opts.World == nil {
		return ""
	}
	return worldDir
}

// claudeFiles names the files memory may hold, as memory tool paths.
func (s *Store) claudeFiles() string {
	var b strings.Builder
	for _, f := range s.opts.FactFiles {
		b.WriteString(claudeRoot + "/" + factPath(f.Name) + ", ")
	}
	if s.opts.World != nil {
		b.WriteString(claudeRoot + "/" + worldDir + "/<topic>.md for a world topic shared with the other agents (lower-case letters, digits and dashes), ")
	}
	b.WriteString(claudeRoot + "/" + proceduresFile + " for rules learned from experience, ")
	month := s.now().Format("2006-01")
	b.WriteString("and one file a month, " + claudeRoot + "/" + episodesDir + "/YYYY-MM.md (this month's is " + claudeRoot + "/" + monthPath(month) + ")")
	return b.String()
}

// view

// claudeView shows a folder's files or a file's numbered lines.
func (c *Session) claudeView(ctx context.Context, p string, rng []int) (ToolResult, error) {
	cp, msg := c.s.claudeResolve("view", p)
	switch {
	case msg != "":
		return claudeFail(msg)
	case cp.dir:
		return c.s.claudeList(ctx, cp)
	}
	return c.do(ctx, "read", func() (ToolResult, error) {
		text, err := c.s.Read(ctx, cp.rel)
		if err != nil {
			return c.claudeError(ctx, cp, err)
		}
		b := []byte(text)
		lines := splitLines(shownText(b))
		first, last := 1, len(lines)
		if rng != nil {
			if msg := checkViewRange(rng, len(lines)); msg != "" {
				return claudeFail(msg)
			}
			first = rng[0]
			if rng[1] != -1 {
				last = rng[1]
			}
		}
		var out strings.Builder
		out.WriteString("Here's the content of " + cp.shown + " with line numbers:")
		size, shown := 0, first-1
		var notes []string
		for i := first; i <= last; i++ {
			line := lines[i-1]
			if size+len(line) > readMax {
				if i == first {
					// One line longer than a view shows: its start.
					cutAt := readMax
					for cutAt > 0 && !utf8.RuneStart(line[cutAt]) {
						cutAt--
					}
					fmt.Fprintf(&out, "\n%6d\t%s", i, line[:cutAt])
					notes = append(notes, fmt.Sprintf("line %d is %s bytes, longer than a view shows at once, so only its first %s are shown", i, thousands(len(line)), thousands(cutAt)))
					shown = i
				}
				break
			}
			size += len(line) + 1
			fmt.Fprintf(&out, "\n%6d\t%s", i, line)
			shown = i
		}
		if shown < last {
			notes = append(notes, fmt.Sprintf("the file has %s lines and a view shows about %s bytes at once: lines %d-%d are shown; view with view_range [%d, %d] for more",
				thousands(len(lines)), thousands(readMax), first, shown, shown+1, last))
		}
		if first == 1 && shown == len(lines) && len(notes) == 0 {
			// Only a view of the whole file lets the conversation replace it
			// or edit it without a version, as a whole memory_read does.
			c.saw(cp.rel, b)
		}
		if !isText(b) {
			notes = append(notes, "the file holds bytes that are not text (NUL bytes or invalid UTF-8, from an edit outside memory), shown as \uFFFD; str_replace and insert cannot change it: create it again with the whole corrected text")
		}
		if parts := c.s.claudeParts(ctx, cp.rel); parts != "" {
			notes = append(notes, parts)
		}
		if len(notes) > 0 {
			out.WriteString("\n\nNote: " + strings.Join(notes, ". ") + ".")
		}
		return ToolResult{Text: out.String()}, nil
	})
}

// checkViewRange checks view_range against a file of n lines, as the text
// editor tool's reference implementation does.
func checkViewRange(r []int, n int) string {
	shown := fmt.Sprintf("[%d, %d]", r[0], r[1])
	switch first, last := r[0], r[1]; {
	case first < 1 || first > n:
		return fmt.Sprintf("Invalid `view_range`: %s. Its first element `%d` should be within the range of lines of the file: [1, %d]", shown, first, n)
	case last > n:
		return fmt.Sprintf("Invalid `view_range`: %s. Its second element `%d` should be smaller than the number of lines in the file: `%d`", shown, last, n)
	case last != -1 && last < first:
		return fmt.Sprintf("Invalid `view_range`: %s. Its second element `%d` should be larger or equal than its first `%d`", shown, last, first)
	}
	return ""
}

// splitLines splits text into its lines, without their "\n": "a\nb\n" and
// "a\nb" are two lines, "" none.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// claudeParts says where the older entries of the month whose file is at
// rel are, as memory tool paths: "" when rel is not a month's file or the
// month has no parts.
func (s *Store) claudeParts(ctx context.Context, rel string) string {
	first, last, n := s.monthParts(ctx, rel)
	switch {
	case n == 0:
		return ""
	case n == 1:
		return "The month's older entries are in " + claudeRoot + "/" + first
	}
	return fmt.Sprintf("The month's older entries are in %d full parts, %s/%s to %s/%s", n, claudeRoot, first, claudeRoot, last)
}

// claudeList renders the memory files in the folder cp (the root, facts,
// episodes or world) as the reference's directory view does, followed by a
// note on the closed set of files. The root's view lists its folders with
// their files, and persona.md and procedures.md when they exist.
func (s *Store) claudeList(ctx context.Context, cp claudePath) (ToolResult, error) {
	const op = "view"
	end, err := s.begin(ctx, op, "")
	if err != nil {
		return ToolResult{}, err
	}
	defer end()
	entries, err := s.files(ctx)
	partial := err != nil
	if err != nil && (classify(err) != faultPerson) {
		return ToolResult{}, hostErr(op, "", err)
	}
	// The folders and their files, by name, as the reference sorts them.
	type item struct {
		name string
		size int64
	}
	folders := map[string][]item{factsDir: nil, episodesDir: nil}
	if s.opts.World != nil {
		folders[worldDir] = nil
	}
	root := map[string]int64{} // the files at the root, for the root's view
	for _, e := range entries {
		dir, name := path.Split(e.Name)
		dir = strings.TrimSuffix(dir, "/")
		if _, ok := folders[dir]; ok {
			folders[dir] = append(folders[dir], item{name, e.Size})
		} else if dir == "" && cp.rel == "" {
			root[name] = e.Size
		}
	}
	if cp.rel == "" {
		switch c, err := s.b.Read(ctx, personaFile, 0); {
		case err == nil:
			root[personaFile] = c.Size
		case classify(err) == faultStopped:
			return ToolResult{}, hostErr(op, personaFile, err)
		}
	}
	var lines []string
	var total int64
	names := append(slices.Collect(maps.Keys(folders)), slices.Collect(maps.Keys(root))...)
	slices.Sort(names)
	for _, dir := range names {
		if size, ok := root[dir]; ok {
			total += size
			lines = append(lines, claudeSize(size)+"\t"+claudeRoot+"/"+dir)
			continue
		}
		if cp.rel != "" && cp.rel != dir {
			continue
		}
		items := folders[dir]
		slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.name, b.name) })
		var sum int64
		var files []string
		for _, it := range items {
			sum += it.size
			files = append(files, claudeSize(it.size)+"\t"+claudeRoot+"/"+dir+"/"+it.name)
		}
		total += sum
		if cp.rel == "" {
			lines = append(lines, claudeSize(sum)+"\t"+claudeRoot+"/"+dir+"/")
		}
		lines = append(lines, files...)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n%s\t%s", cp.shown, claudeSize(total), cp.shown)
	for _, l := range lines {
		b.WriteString("\n" + l)
	}
	b.WriteString("\n\nNote: memory here is a closed set of files. " + s.claudeSet())
	if partial {
		b.WriteString(" Some memory files could not be listed (" + unreadable("the memory folder/", err) + ").")
	}
	return ToolResult{Text: b.String()}, nil
}

// claudeSet describes the closed set of files for a directory view.
func (s *Store) claudeSet() string {
	facts := make([]string, len(s.opts.FactFiles))
	for i, f := range s.opts.FactFiles {
		facts[i] = f.Name
		if f.Purpose != "" {
			facts[i] += " (" + f.Purpose + ")"
		}
	}
	world := ""
	if s.opts.World != nil {
		world = claudeRoot + "/" + worldDir + "/ holds the world topics shared with the other agents, who read and change them too: <topic>.md, one a subject, named in lower-case letters, digits and dashes (such as project-apollo.md), with \"- \" fact lines; together they may hold at most " + thousands(s.opts.WorldBudget) + " bytes. "
	}
	return claudeRoot + "/" + factsDir + "/ holds " + strings.Join(facts, ", ") + ": they are loaded into every prompt and together may hold at most " + thousands(s.opts.FactsBudget) + " bytes, so keep them condensed. " +
		world +
		claudeRoot + "/" + episodesDir + "/ holds one file a month, YYYY-MM.md (this month's is " + s.now().Format("2006-01") + ".md), and a busy month's full older parts (YYYY-MM.001.md, …). " +
		claudeRoot + "/" + proceduresFile + " holds rules learned from experience, one a line: \"- When <situation>: <action>\". " +
		claudeRoot + "/" + personaFile + ", when there is one, is the person's own file: view it; it cannot be created or changed. " +
		"Any other missing one of these files can be made with create; no other file or folder can, and none can be deleted or renamed."
}

// claudeSize renders a size as the reference's listing does: 0B, 512B,
// 1.5K, 4K, 2.3M.
func claudeSize(n int64) string {
	units := []string{"B", "K", "M", "G"}
	i, v := 0, float64(n)
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10) + units[i]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[i]
}

// create

func (c *Session) claudeCreate(ctx context.Context, p, text string) (ToolResult, error) {
	cp, msg := c.s.claudeResolve("create", p)
	switch {
	case msg != "":
		return claudeFail(msg)
	case cp.dir:
		return claudeFail("The path " + cp.shown + " is a directory: create makes a file. The memory files are " + c.s.claudeFiles())
	}
	data := text
	if data != "" && !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	if err := cmp.Or(checkText("write", cp.rel, "file_text", text), checkClosed("write", cp.rel, "file_text", []byte(data))); err != nil {
		return claudeFail(hint(err))
	}
	return c.do(ctx, "write", func() (ToolResult, error) {
		var old []byte
		written, err := c.s.write(ctx, cp.rel, text, c.claudeGuard("create", cp, &old))
		if err != nil {
			return c.claudeError(ctx, cp, err)
		}
		c.changed(cp.rel, old, written)
		res := "File created successfully at: " + cp.shown
		if old != nil {
			res += " (it replaces the text the file held)"
		}
		if string(written) != data {
			res += `. The file was given the "# " title and "> Summary:" line every memory file starts with, so its line numbers differ from file_text's: view it before an insert`
		}
		return ToolResult{Text: res}, nil
	})
}

// str_replace

func (c *Session) claudeReplace(ctx context.Context, p, oldStr, newStr string) (ToolResult, error) {
	cp, msg := c.s.claudeResolve("str_replace", p)
	switch {
	case msg != "":
		return claudeFail(msg)
	case cp.dir:
		return claudeFail(c.s.claudeNoFile(cp))
	case oldStr == "":
		return claudeFail("No replacement was performed, old_str is empty. Copy the exact text to replace from a view of " + cp.shown)
	}
	if err := checkText("patch", cp.rel, "new_str", newStr); err != nil {
		return claudeFail(hint(err))
	}
	return c.do(ctx, "patch", func() (ToolResult, error) {
		var old []byte
		data, err := c.s.patch(ctx, cp.rel, []Patch{{OldText: oldStr, NewText: newStr}}, c.claudeGuard("str_replace", cp, &old))
		if errors.Is(err, ErrPatchFailed) {
			return claudeFail(claudeNoMatch(cp, string(old), oldStr))
		}
		if err != nil {
			return c.claudeError(ctx, cp, err, old)
		}
		c.changed(cp.rel, old, data)
		// The lines the replacement spans, with two lines around them.
		at := strings.Index(string(old), oldStr)
		from := strings.Count(string(old[:at]), "\n") + 1
		to := from + strings.Count(newStr, "\n")
		return ToolResult{Text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):" + numbered(splitLines(string(data)), from-2, to+2)}, nil
	})
}

// claudeNoMatch words a failed str_replace of old_str in text, the file's
// content: not found, or found more than once, with the lines it starts on.
func claudeNoMatch(cp claudePath, text, oldStr string) string {
	const most = 100
	var lines []string
	n, rest, at := 0, text, 0
	for n <= most {
		i := strings.Index(rest, oldStr)
		if i < 0 {
			break
		}
		n++
		line := strconv.Itoa(strings.Count(text[:at+i], "\n") + 1)
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		rest, at = rest[i+size:], at+i+size
	}
	shown := cut(oldStr, 200)
	if n == 0 {
		return "No replacement was performed, old_str `" + shown + "` did not appear verbatim in " + cp.shown + "."
	}
	list := strings.Join(lines, ", ")
	if n > most {
		list += fmt.Sprintf(", … (more than %d occurrences)", most)
	}
	return "No replacement was performed. Multiple occurrences of old_str `" + shown + "` in lines: " + list + ". Please ensure it is unique"
}

// numbered renders lines from to to (1-based, clamped to the file) as a
// view does, each on a line of its own after a newline.
func numbered(lines []string, from, to int) string {
	var b strings.Builder
	for i := max(from, 1); i <= min(to, len(lines)); i++ {
		fmt.Fprintf(&b, "\n%6d\t%s", i, lines[i-1])
	}
	return b.String()
}

// insert

func (c *Session) claudeInsert(ctx context.Context, p string, line int, text string) (ToolResult, error) {
	const op = "insert"
	cp, msg := c.s.claudeResolve(op, p)
	switch {
	case msg != "":
		return claudeFail(msg)
	case cp.dir:
		return claudeFail(c.s.claudeNoFile(cp))
	}
	if err := checkText(op, cp.rel, "insert_text", text); err != nil {
		return claudeFail(hint(err))
	}
	block := strings.TrimSuffix(text, "\n") + "\n"
	return c.do(ctx, op, func() (ToolResult, error) {
		t, end, err := c.s.start(ctx, op, cp.rel)
		if err != nil {
			return c.claudeError(ctx, cp, err)
		}
		defer end()
		var old []byte
		data, err := c.s.update(ctx, op, t, c.claudeGuard(op, cp, &old), func(_ context.Context, _ Held, cur []byte) ([]byte, error) {
			switch {
			case cur == nil:
				return nil, modelErr(op, t.path, ErrNotFound, t.path+" does not exist", "")
			case !isText(cur):
				return nil, claudeError(claudeNotText(cp))
			}
			if n := len(splitLines(string(cur))); line < 0 || line > n {
				return nil, claudeError(fmt.Sprintf("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", line, n))
			}
			at := 0
			for range line {
				if i := bytes.IndexByte(cur[at:], '\n'); i >= 0 {
					at += i + 1
				} else {
					at = len(cur)
				}
			}
			var b bytes.Buffer
			b.Write(cur[:at])
			if at > 0 && cur[at-1] != '\n' {
				// After a last line that has no newline: end it first.
				b.WriteByte('\n')
			}
			b.WriteString(block)
			b.Write(cur[at:])
			data := b.Bytes()
			// The block is whole lines of text checked as model text, put in
			// at a line's start, so it brings no lone carriage return and no
			// deeper nesting (both are a line's own); but an open fence in it
			// would take in every line after it.
			if !markdown.Closed(data) && markdown.Closed(cur) {
				return nil, claudeError("No insertion was performed: the file would end inside an open block (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>), so anything after it would fall inside; close the block in insert_text")
			}
			return data, nil
		})
		if err != nil {
			return c.claudeError(ctx, cp, err, old)
		}
		c.changed(cp.rel, old, data)
		return ToolResult{Text: "The file " + cp.shown + " has been edited."}, nil
	})
}

// errors

// claudeError is a model error worded for the memory tool, passed as it
// is through the store's operations to ClaudeMemory's result.
type claudeError string

func (e claudeError) Error() string { return string(e) }

// claudeNoFile answers str_replace or insert on a folder, with the
// reference's sentence.
func (s *Store) claudeNoFile(cp claudePath) string {
	world := ""
	if s.opts.World != nil {
		world = ", " + claudeRoot + "/" + worldDir + "/<topic>.md"
	}
	return "The path " + cp.shown + " is not a file. It is a directory: give the path of a file in it, one of " + claudeRoot + "/" + factsDir + "/…" + world + " or " + claudeRoot + "/" + episodesDir + "/YYYY-MM.md"
}

// claudeMissing answers a command on a memory file that does not exist:
// the reference's sentence, then where the month's older entries are, or
// whether create can make the file.
func (s *Store) claudeMissing(ctx context.Context, cp claudePath) string {
	msg := "The path " + cp.shown + " does not exist. Please provide a valid path."
	switch parts := s.claudeParts(ctx, cp.rel); {
	case parts != "":
		return msg + " " + parts
	case cp.rel == personaFile:
		return msg + " " + claudeRoot + "/" + personaFile + " is the person's own file, written by hand: there is none, and it cannot be created here"
	case strings.HasPrefix(cp.rel, episodesDir+"/"+archiveDir+"/"):
		return msg + " " + claudeRoot + "/" + episodesDir + "/" + archiveDir + "/ keeps the original entries of the months that were compacted, and nothing can be created there: view " + claudeRoot + "/" + episodesDir + " for the months there are"
	case paths.IsPart(cp.rel):
		return msg + " A month's full parts are made only when its file is full, never by create: view " + claudeRoot + "/" + episodesDir + " for the months and parts there are"
	}
	return msg + " It can be made with create."
}

func claudeNotText(cp claudePath) string {
	return "The file " + cp.shown + " holds bytes that are not text (NUL bytes or invalid UTF-8, from an edit outside memory), so str_replace and insert cannot change it: view it, then create it again with the whole corrected text"
}

// claudeGuard is the conversation's guard (see Session.guard) for a change
// made by the memory tool's command cmd, worded in the memory tool's terms.
// It keeps the content it vetted in *before.
func (c *Session) claudeGuard(cmd string, cp claudePath, before *[]byte) guard {
	check := c.guard(nil, before)
	return func(op string, t target, old []byte) error {
		_, known := c.seen[t.path]
		if check(op, t, old) == nil {
			return nil
		}
		again := "view it (whole, without view_range) to see its current text, then " + cmd + " again"
		switch {
		case old == nil:
			return claudeError("File " + cp.shown + " was deleted since you last viewed it: nothing was changed. If it should exist again, create it")
		case !known && cmd == "create":
			return claudeError("File " + cp.shown + " already exists and was not viewed in this conversation, so create would overwrite text you have not seen: nothing was changed. " +
				"view it first (whole, without view_range), then create it with the whole new text, or change part of it with str_replace or insert")
		case !known:
			return claudeError("File " + cp.shown + " was not viewed in this conversation: nothing was changed. " + again)
		default:
			return claudeError("File " + cp.shown + " changed since you last viewed it (edited by a person or another agent): nothing was changed. " + again)
		}
	}
}

// claudeError turns an error of the store's operations into the memory
// tool's result: a model error worded in its terms, or a host error. old,
// when given, is the file's content the change was made on.
func (c *Session) claudeError(ctx context.Context, cp claudePath, err error, old ...[]byte) (ToolResult, error) {
	var ce claudeError
	var me *Error
	switch {
	case errors.As(err, &ce):
		return claudeFail(string(ce))
	case !errors.As(err, &me):
		return errResult(err)
	case errors.Is(err, ErrNotFound):
		return claudeFail(c.s.claudeMissing(ctx, cp))
	case me.link:
		return claudeFail("Path would escape " + claudeRoot + " directory via symlink: " + cp.shown + " is a symbolic link that leads outside the memory directory, so it cannot be used; nothing was changed. A person must replace the link with the file itself")
	case errors.Is(err, ErrBudgetExceeded):
		return claudeFail(me.what + "; nothing was written. Keep only the facts worth loading into every prompt, one short line each: " +
			"shorten this change, or condense the fact files first (view one, then str_replace its outdated lines or create it again with a shorter text)")
	case errors.Is(err, ErrInvalidContent) && len(old) > 0 && old[0] != nil && !isText(old[0]):
		return claudeFail(claudeNotText(cp))
	case errors.Is(err, ErrInvalidContent):
		// The store's advice may name its own tools: keep what was wrong.
		return claudeFail(me.what + "; nothing was changed")
	}
	return claudeFail(me.Hint)
}

// hint is the model-facing text of a model error of the store.
func hint(err error) string {
	var me *Error
	errors.As(err, &me)
	return me.Hint
}
