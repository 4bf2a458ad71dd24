package langchaingomem

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mdmemory/memory"
	"github.com/tmc/langchaingo/tools"
)

// Tools returns the memory tools of the conversation c (memory_list,
// memory_search, memory_read, memory_write, memory_patch, memory_append) as
// langchaingo tools, in that order, ready for agents.NewOneShotAgent,
// agents.NewConversationalAgent or agents.NewOpenAIFunctionsAgent. Each
// tool's Description is the library's, followed by the JSON Schema of its
// arguments and how to write its input; the package doc says how an input
// is read.
//
// A tool's Call returns a mistake of the model as its output text, starting
// with "Error: ", with a nil error; it returns a Go error wrapping the
// library's only for a failure of the host (disk, closed store, cancelled
// context). The tools are safe for concurrent use, as c is.
//
// Make one Session per conversation: the tools of c share its record of
// the files it read. Tools returns nil when c is nil.
func Tools(c *memory.Session) []tools.Tool {
	if c == nil {
		return nil
	}
	mts := c.Tools()
	out := make([]tools.Tool, 0, len(mts))
	for _, mt := range mts {
		out = append(out, newTool(mt))
	}
	return out
}

// tool is one memory tool behind langchaingo's one-string interface.
type tool struct {
	mem  memory.Tool
	desc string
	// names are the argument names, in the schema's order.
	names []string
	// bare names the argument that plain text is taken as: the tool's one
	// argument that may not be null, when it is a string; "" when none.
	bare string
}

var _ tools.Tool = (*tool)(nil)

func newTool(mt memory.Tool) *tool {
	t := &tool{mem: mt}
	var schema struct {
		Properties orderedProps `json:"properties"`
	}
	// The library's schemas are objects whose properties each have a type
	// (a name, or a list of names with "null" when it may be null). A schema
	// this cannot read leaves the tool taking JSON objects only.
	_ = json.Unmarshal(mt.InputSchema, &schema)
	var strict []string // arguments that may not be null
	stringTyped := map[string]bool{}
	for _, p := range schema.Properties {
		t.names = append(t.names, p.name)
		types := p.types()
		if !slices.Contains(types, "null") {
			strict = append(strict, p.name)
			stringTyped[p.name] = slices.Equal(types, []string{"string"})
		}
	}
	if len(strict) == 1 && stringTyped[strict[0]] {
		t.bare = strict[0]
	}
	t.desc = t.describe()
	return t
}

// describe is the model-facing description: the library's, then the input.
func (t *tool) describe() string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(t.mem.Description))
	if len(t.names) == 0 {
		b.WriteString(" Input: none (leave it empty, or {}).")
		return b.String()
	}
	var schema bytes.Buffer
	if err := json.Compact(&schema, t.mem.InputSchema); err != nil {
		schema.Reset()
		schema.Write(t.mem.InputSchema)
	}
	b.WriteString(" Input: one JSON object of this JSON Schema: ")
	b.Write(schema.Bytes())
	b.WriteString(". An argument that may be null may be left out.")
	if t.bare != "" {
		fmt.Fprintf(&b, " Plain text that is not a JSON object is taken as the %s.", t.bare)
	}
	return b.String()
}

// Name returns the memory tool's name, such as "memory_read".
func (t *tool) Name() string { return t.mem.Name }

// Description returns the library's description of the tool followed by the
// JSON Schema of its input.
func (t *tool) Description() string { return t.desc }

// Call runs the memory tool with the model's input. A mistake of the model
// comes back as the output, starting with "Error: "; a host failure as an
// error that wraps the library's.
func (t *tool) Call(ctx context.Context, input string) (string, error) {
	args, mistake := t.args(input)
	if mistake != "" {
		return memory.ToolResult{Text: mistake, IsError: true}.Content(), nil
	}
	res, err := t.mem.Call(ctx, args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.mem.Name, err)
	}
	return res.Content(), nil
}

// args turns the model's input into the tool's JSON arguments, or returns a
// model-facing text saying what is wrong with it.
func (t *tool) args(input string) (json.RawMessage, string) {
	s := unfence(strings.TrimSpace(input))
	if strings.HasPrefix(s, "{") {
		return json.RawMessage(s), ""
	}
	if len(t.names) == 0 {
		return nil, ""
	}
	if t.bare == "" {
		keys := make([]string, len(t.names))
		for i, n := range t.names {
			keys[i] = fmt.Sprintf("%q: …", n)
		}
		return nil, fmt.Sprintf("the input is not a JSON object: give %s its arguments as one JSON object, {%s}, as its description shows",
			t.mem.Name, strings.Join(keys, ", "))
	}
	var v string
	if strings.HasPrefix(s, `"`) && json.Unmarshal([]byte(s), &v) == nil {
		s = v
	}
	// Marshalling a map of strings cannot fail (invalid UTF-8 becomes U+FFFD).
	args, _ := json.Marshal(map[string]string{t.bare: s})
	return args, ""
}

// unfence returns s without one markdown code fence around the whole of it
// (```json … ```), which models often put around a JSON input.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	// The fence's first line may name a language ("json"), and nothing else.
	if info := strings.TrimSpace(body[:nl]); strings.ContainsAny(info, " {\"") {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// orderedProps reads a schema's properties in the order they are written.
type orderedProps []prop

type prop struct {
	name string
	typ  json.RawMessage
}

// types returns the property's type names: ["string"], ["integer", "null"].
func (p prop) types() []string {
	var one string
	if json.Unmarshal(p.typ, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(p.typ, &many)
	return many
}

func (o *orderedProps) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var p struct {
			Type json.RawMessage `json:"type"`
		}
		if err := dec.Decode(&p); err != nil {
			return err
		}
		*o = append(*o, prop{name: name, typ: p.Type})
	}
	return nil
}
