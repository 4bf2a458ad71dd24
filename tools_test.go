package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// TestToolsGolden pins the tool definitions the model reads: names,
// descriptions and schemas are a prompt contract.
func TestToolsGolden(t *testing.T) {
	s, _ := open(t, nil)
	golden(t, "tools.golden.json", toolDefs(t, s))

	var names []string
	for _, tl := range s.NewSession().Tools() {
		names = append(names, tl.Name)
	}
	require.Equal(t, []string{"memory_list", "memory_search", "memory_read", "memory_write", "memory_patch", "memory_append"}, names)
	names = names[:0]
	for _, tl := range s.NewSession().ReflectionTools() {
		names = append(names, tl.Name)
	}
	require.Equal(t, []string{"memory_read", "memory_write", "memory_patch", "memory_append"}, names)
}

// TestToolSchemasStrict checks every schema is strict-mode friendly: an
// object, every property required, no others allowed, at every level.
func TestToolSchemasStrict(t *testing.T) {
	s, _ := open(t, nil)
	var check func(t *testing.T, where string, sch map[string]any)
	check = func(t *testing.T, where string, sch map[string]any) {
		switch sch["type"] {
		case "object":
			require.Equal(t, false, sch["additionalProperties"], where)
			props, _ := sch["properties"].(map[string]any)
			req, _ := sch["required"].([]any)
			require.Len(t, req, len(props), where)
			for _, r := range req {
				p, ok := props[r.(string)].(map[string]any)
				require.True(t, ok, "%s: required %s is not a property", where, r)
				check(t, where+"."+r.(string), p)
			}
		case "array":
			check(t, where+"[]", sch["items"].(map[string]any))
		}
	}
	for _, tl := range s.NewSession().Tools() {
		var sch map[string]any
		require.NoError(t, json.Unmarshal(tl.InputSchema, &sch), tl.Name)
		require.Equal(t, "object", sch["type"], tl.Name)
		check(t, tl.Name, sch)
		require.NotEmpty(t, tl.Description)
	}
}

func TestToolDescriptionsFollowOptions(t *testing.T) {
	s, _ := open(t, &memory.Options{FactsBudget: 4096, FactFiles: []memory.FactFile{{Name: "persona.md", Purpose: "who the agent is"}}})
	w := tool(t, s.NewSession().Tools(), "memory_write")
	require.Contains(t, w.Description, "facts/persona.md (who the agent is)")
	require.Contains(t, w.Description, "at most 4,096 bytes")
	require.Contains(t, string(w.InputSchema), "facts/persona.md, procedures.md for rules learned from experience, or episodes/YYYY-MM.md")
}

func TestToolArgumentErrors(t *testing.T) {
	s, _ := open(t, nil)
	tests := []struct{ tool, args, text string }{
		{"memory_read", `{"path": `, "the arguments are not valid JSON (unexpected end of JSON input); send a JSON object"},
		{"memory_read", `{"path": "facts/user.md"} x`, "not valid JSON"},
		{"memory_read", `[1]`, "the arguments must be a JSON object, not an array"},
		{"memory_read", `"facts/user.md"`, "the arguments must be a JSON object, not a string"},
		{"memory_read", `{}`, "missing required argument path"},
		{"memory_read", `{"path": null}`, "missing required argument path"},
		{"memory_read", `{"path": 3}`, "path must be a string, not a number"},
		{"memory_read", `{"Path": "facts/user.md"}`, `unknown argument "Path"; this tool takes only path`},
		{"memory_read", `{"path": "facts/user.md", "offset": 1}`, `unknown argument "offset"; this tool takes only path`},
		{"memory_list", `{"path": "x"}`, `unknown argument "path"; this tool takes no arguments`},
		{"memory_write", `{"path": "facts/user.md"}`, "missing required argument content"},
		{"memory_write", `{"content": "x"}`, "missing required argument path"},
		{"memory_write", `{"path": "facts/user.md", "content": ["x"]}`, "content must be a string, not an array"},
		{"memory_patch", `{"path": "facts/user.md"}`, "missing required argument patches"},
		{"memory_patch", `{"path": "facts/user.md", "patches": {}}`, "patches must be an array, not an object"},
		{"memory_patch", `{"patches": []}`, "missing required argument path"},
		{"memory_patch", `{"path": "facts/user.md", "patches": []}`, "patches is empty"},
		{"memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "a"}]}`, `missing required argument patches[0].newText (use "" to delete the old text)`},
		{"memory_patch", `{"path": "facts/user.md", "patches": [{"newText": "a"}]}`, "missing required argument patches[0].oldText"},
		{"memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "a", "newText": "b", "all": true}]}`, `patches[0]: unknown argument "all"`},
		{"memory_patch", `{"path": "facts/user.md", "patches": [7]}`, "patches[0]: the arguments must be a JSON object, not a number"},
		{"memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": true, "newText": "b"}]}`, "patches[0].oldText must be a string, not a bool"},
		{"memory_patch", `{"path": "facts/user.md", "patches": [{"oldText": "a", "newText": "b"}]}`, "facts/user.md does not exist; create it with memory_write or memory_append"},
		{"memory_append", `{"path": "episodes/2026-02.md"}`, "missing required argument entry"},
		{"memory_append", `{"entry": "## x"}`, "missing required argument path"},
		{"memory_append", `{"path": "episodes/2026-02.md", "entry": "## x", "summary": 5}`, "summary must be a string, not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.args, func(t *testing.T) {
			r := call(t, s, tt.tool, tt.args)
			require.True(t, r.IsError, r.Text)
			require.Contains(t, r.Text, tt.text)
			require.NotContains(t, r.Text, "memory.", "no Go type names")
			require.NotContains(t, r.Text, "json:")
		})
	}
}

func TestToolListAcceptsNoArguments(t *testing.T) {
	s, _ := open(t, nil)
	for _, args := range []string{"", " ", "null", "{}"} {
		r := call(t, s, "memory_list", args)
		require.Equal(t, memory.ToolResult{Text: "[]"}, r, "%q", args)
	}
}

func TestToolResults(t *testing.T) {
	s, dir := open(t, nil)
	r := call(t, s, "memory_append", `{"path": "episodes/2026-02.md", "entry": "## Fix login bug\n- Summary: token expiry off by one", "summary": null}`)
	require.False(t, r.IsError, r.Text)
	size := len(readFile(t, dir, "episodes/2026-02.md"))
	month := readFile(t, dir, "episodes/2026-02.md")
	require.JSONEq(t, fmt.Sprintf(`{"path": "episodes/2026-02.md", "size": %d, "version": %q}`, size, memory.Version(month)), r.Text)

	r = call(t, s, "memory_patch", `{"path": "episodes/2026-02.md", "patches": [{"oldText": "off by one", "newText": "off by one hour"}, {"oldText": "## Fix login", "newText": "## Fixed login"}]}`)
	require.False(t, r.IsError, r.Text)
	size = len(readFile(t, dir, "episodes/2026-02.md"))
	month = readFile(t, dir, "episodes/2026-02.md")
	require.JSONEq(t, fmt.Sprintf(`{"path": "episodes/2026-02.md", "size": %d, "appliedCount": 2, "version": %q}`, size, memory.Version(month)), r.Text)

	r = call(t, s, "memory_read", `{"path": "episodes/2026-02.md"}`)
	require.Equal(t, memory.ToolResult{Text: "version: " + memory.Version(month) + "\n\n" + month}, r)
	require.Contains(t, r.Text, "## Fixed login bug\n- Summary: token expiry off by one hour\n- Date: 2026-02-26\n")
}

func TestZeroToolCall(t *testing.T) {
	_, err := memory.Tool{Name: "x"}.Call(context.Background(), nil)
	require.ErrorContains(t, err, `tool "x" was not made by a Store`)
}

func seedIndex(t *testing.T, s *memory.Store, months int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.Write(ctx, "facts/user.md", "# User\n\n> Summary: 建军, Chinese, wife birthday Mar 15, standup with 老王 Wed\n\n- Name: 建军 (Jianjun)\n"))
	require.NoError(t, s.Write(ctx, "facts/memory.md", "# Memory\n\n> Summary: Tavily search returns stale prices\n\n- Tavily search returns stale prices; cross-check airline sites\n"+strings.Repeat("- padding fact\n", 80)))
	for m := range months {
		path := fmt.Sprintf("episodes/%04d-%02d.md", 2020+m/12, m%12+1)
		entry := fmt.Sprintf("## Task of month %d\n- Summary: something done\n- Date: %s-01", m, path[len("episodes/"):len("episodes/2020-01")])
		require.NoError(t, s.Append(ctx, path, entry, fmt.Sprintf("work of month %d: flights, gifts, bugs", m)))
	}
}

func TestIndexMessageGolden(t *testing.T) {
	s, _ := open(t, nil)
	seedIndex(t, s, 3)
	msg, err := s.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	golden(t, "index_message.golden", []byte(msg))
}

func TestIndexMessageBudget(t *testing.T) {
	s, _ := open(t, &memory.Options{IndexBudget: 700})
	seedIndex(t, s, 30)
	msg, err := s.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	require.LessOrEqual(t, len([]rune(msg)), 700)
	require.Contains(t, msg, "- facts/user.md (")
	require.Contains(t, msg, "- facts/memory.md (")
	require.Contains(t, msg, "- episodes/2022-06.md (", "the newest month is kept")
	require.NotContains(t, msg, "2020-01", "the oldest month is dropped")
	lines := strings.Split(msg, "\n")
	shown := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "- episodes/") {
			shown++
		}
	}
	require.Contains(t, msg, fmt.Sprintf("- (%d older episode files not shown; memory_list lists them all, and memory_search searches them)\n", 30-shown))
	golden(t, "index_message_cut.golden", []byte(msg))

	// A budget too small for anything still keeps the facts and the newest month.
	s2, _ := open(t, &memory.Options{IndexBudget: 10})
	seedIndex(t, s2, 2)
	msg, err = s2.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	require.Contains(t, msg, "- facts/user.md (")
	require.Contains(t, msg, "- facts/memory.md (")
	require.Contains(t, msg, "- episodes/2020-02.md (")
	require.Contains(t, msg, "- (1 older episode file not shown; memory_list lists them all, and memory_search searches them)\n")
}

func TestIndexMessageEmptyAndLong(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "its months are a person's, without heads")
	msg, err := s.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	require.Equal(t, "Available memory: none yet.\n\nNothing has been remembered so far.\n", msg)

	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: "+strings.Repeat("x", 300)+"\n")
	writeFile(t, dir, "episodes/2026-02.md", "no summary here\n")
	writeFile(t, dir, "episodes/2026-01.md", strings.Repeat("y", 3000))
	msg, err = s.NewSession().IndexMessage(context.Background())
	require.NoError(t, err)
	require.Contains(t, msg, "- facts/user.md (320B): "+strings.Repeat("x", 199)+"…\n")
	require.Contains(t, msg, "- episodes/2026-02.md (16B)\n")
	require.Contains(t, msg, "- episodes/2026-01.md (2.9KB)\n")
}

// toolDefs renders s's tool definitions as JSON, for a golden file.
func toolDefs(t *testing.T, s *memory.Store) []byte {
	type def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var defs []def
	for _, tl := range s.NewSession().Tools() {
		defs = append(defs, def{tl.Name, tl.Description, tl.InputSchema})
	}
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(defs))
	return got.Bytes()
}
