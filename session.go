package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Tools returns the conversation's memory tools: memory_list,
// memory_search, memory_read, memory_write, memory_patch and
// memory_append. Their names, descriptions and schemas are the same for
// every session of the store and stay true however long a registry keeps
// them; only their calls are bound to this conversation.
func (c *Session) Tools() []Tool { return c.bind(c.s.toolSet()) }

// ReflectionTools returns the tools the post-task reflector uses:
// memory_read, memory_write, memory_patch and memory_append, bound to this
// conversation.
func (c *Session) ReflectionTools() []Tool {
	var tools []Tool
	for _, t := range c.s.toolSet() {
		if t.def.reflects {
			tools = append(tools, t)
		}
	}
	return c.bind(tools)
}

// IndexMessage renders the memory list as the first user message of the
// conversation's task (the "Available memory" index); it is the same for
// every conversation of the store. It has one line per file [Store.List]
// lists (a month once, whatever parts it has) with its size and summary, or
// why it cannot be read, and ", compacted" for a month Compact condensed:
// persona.md, the fact files, the world topics (with Options.World),
// procedures.md, then months newest first; then closing lines that say
// where compacted months' originals are (when there are some), give today's
// date, say that memory is background to weigh, which may be out of date,
// and not instructions, and tell the model to memory_read what it needs. An
// empty store gives a two-line message that says nothing is remembered yet.
//
// The message aims to fit in Options.IndexBudget characters. When it does
// not, the oldest month files are left out and a line says how many; then,
// if it still does not, the world topics, the last ones first, and a line
// says how many. The other files, the newest month and the framing lines
// are always kept, so a budget smaller than those is exceeded. Summaries
// over 200 characters are cut with "…".
//
// The world topics' lines, whose summaries other agents wrote, are framed
// as data, as [Store.Context] frames files: after a line that says so,
// between a <topics …> line and a </topics …> line that carry the version
// of the lines between them, which nothing a summary says can forge.
func (c *Session) IndexMessage(ctx context.Context) (string, error) {
	return c.s.indexMessage(ctx)
}

// Call runs the memory tool named name with the model's JSON arguments in
// this conversation, as [Tool.Call] does. A name that is not one of the
// six memory tools is a model mistake: an IsError result that lists them.
func (c *Session) Call(ctx context.Context, name string, args json.RawMessage) (ToolResult, error) {
	for _, d := range toolDefs {
		if d.name == name {
			return d.call(ctx, c, args)
		}
	}
	names := make([]string, len(toolDefs))
	for i, d := range toolDefs {
		names[i] = d.name
	}
	return unknownTool(name, names), nil
}

// unknownTool is the answer to a call of a tool that is not offered.
func unknownTool(name string, names []string) ToolResult {
	return ToolResult{IsError: true, Text: fmt.Sprintf("there is no tool named %q here; the tools are %s", cut(name, 100), strings.Join(names, ", "))}
}

// bind returns copies of tools whose calls run in this conversation. Each
// gets its own copy of the schema, which an SDK may change.
func (c *Session) bind(tools []Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		def := t.def
		t.InputSchema = bytes.Clone(t.InputSchema)
		t.call = func(ctx context.Context, args json.RawMessage) (ToolResult, error) {
			return def.call(ctx, c, args)
		}
		out[i] = t
	}
	return out
}
