// Package anthropicmem wires a conversation of a memory store
// (github.com/mdmemory/memory) into github.com/anthropics/anthropic-sdk-go:
// tool definitions for the Messages API, tools for the SDK's tool runner,
// Claude's own memory tool (memory_20250818) served by the store, and the
// answers to a message's tool calls for a loop of your own.
//
// Two sets of tools can be offered, alone or together:
//
//   - the store's six memory tools, memory_list, memory_search,
//     memory_read, memory_write, memory_patch and memory_append
//     ([ToolParams], [BetaToolParams], [BetaTools]);
//   - Claude's memory tool, which Claude models are trained on: type
//     memory_20250818, named "memory", with the commands view, create,
//     str_replace, insert, delete and rename on paths under /memories
//     ([MemoryToolParam], [BetaMemoryToolParam], [BetaMemoryTool]). The
//     store answers it through [memory.Session.ClaudeMemory]: /memories is
//     its directory seen through its grammar, so the closed set of files,
//     the facts budget and the conversation's guard hold.
//
// Each call runs in the [memory.Session] given, one conversation: what it
// has read or viewed, it may change. A mistake the model can fix comes back
// to it as a tool result with is_error set; a failure of the host (disk,
// closed store, cancelled context) is a Go error for the program, never
// text for the model: [Answer] and [Result] return it, and the tools of
// [BetaTools] and [BetaMemoryTool] hand it to their onHostFailure function.
package anthropicmem

import (
	"context"
	"encoding/json"
	"errors"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	"github.com/mdmemory/memory"
)

// memoryTool is the name of Claude's memory tool in tool_use blocks.
const memoryTool = "memory"

// ToolParams returns the six memory tools of the conversation c as tool
// definitions for client.Messages.New: name, description and input schema
// (every property required, no others). Each call returns new values.
func ToolParams(c *memory.Session) []anthropic.ToolUnionParam {
	tools := c.Tools()
	out := make([]anthropic.ToolUnionParam, len(tools))
	for i, t := range tools {
		props, required, extra := schemaParts(t)
		out[i] = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: props, Required: required, ExtraFields: extra},
		}}
	}
	return out
}

// BetaToolParams is [ToolParams] for client.Beta.Messages.New.
func BetaToolParams(c *memory.Session) []anthropic.BetaToolUnionParam {
	tools := c.Tools()
	out := make([]anthropic.BetaToolUnionParam, len(tools))
	for i, t := range tools {
		out[i] = anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: betaSchema(t),
		}}
	}
	return out
}

// MemoryToolParam returns the definition of Claude's memory tool
// (memory_20250818) for client.Messages.New. Answer its calls with
// [Answer] or [Result].
func MemoryToolParam() anthropic.ToolUnionParam {
	return anthropic.ToolUnionParam{OfMemoryTool20250818: &anthropic.MemoryTool20250818Param{}}
}

// BetaMemoryToolParam is [MemoryToolParam] for client.Beta.Messages.New:
// an anthropic.BetaMemoryTool20250818Param. Answer its calls with
// [BetaAnswer] or [BetaResult].
func BetaMemoryToolParam() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// Result answers one tool call of a message from client.Messages.New in
// the conversation c: a call of Claude's memory tool (named "memory") with
// [memory.Session.ClaudeMemory], a call of a memory_* tool with
// [memory.Session.Call]. A call of any other tool gets an is_error result
// that names the memory tools. A mistake the model made is a result with
// is_error set; a failure of the host is a non-nil error, and no result.
func Result(ctx context.Context, c *memory.Session, call anthropic.ToolUseBlock) (anthropic.ToolResultBlockParam, error) {
	res, err := run(ctx, c, call.Name, call.Input)
	if err != nil {
		return anthropic.ToolResultBlockParam{}, err
	}
	out := anthropic.ToolResultBlockParam{
		ToolUseID: call.ID,
		Content:   []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: res.Text}}},
	}
	if res.IsError {
		out.IsError = anthropic.Bool(true)
	}
	return out, nil
}

// Answer answers every tool call of msg, a message from
// client.Messages.New that stopped for tool use, with [Result], in order,
// and returns the user message that carries the results: append msg.ToParam()
// and it to the conversation's messages and call the API again. It stops
// at the first failure of the host and returns it. A message without tool
// calls gives a user message without content, which the API refuses: call
// Answer only when msg.StopReason is tool_use.
func Answer(ctx context.Context, c *memory.Session, msg anthropic.Message) (anthropic.MessageParam, error) {
	var blocks []anthropic.ContentBlockParamUnion
	for _, b := range msg.Content {
		if b.Type != "tool_use" {
			continue
		}
		r, err := Result(ctx, c, b.AsToolUse())
		if err != nil {
			return anthropic.MessageParam{}, err
		}
		blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &r})
	}
	return anthropic.NewUserMessage(blocks...), nil
}

// BetaResult is [Result] for a message from client.Beta.Messages.New.
func BetaResult(ctx context.Context, c *memory.Session, call anthropic.BetaToolUseBlock) (anthropic.BetaToolResultBlockParam, error) {
	input, err := betaInput(call)
	if err != nil {
		return anthropic.BetaToolResultBlockParam{}, err
	}
	res, err := run(ctx, c, call.Name, input)
	if err != nil {
		return anthropic.BetaToolResultBlockParam{}, err
	}
	out := anthropic.BetaToolResultBlockParam{
		ToolUseID: call.ID,
		Content:   []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: res.Text}}},
	}
	if res.IsError {
		out.IsError = anthropic.Bool(true)
	}
	return out, nil
}

// BetaAnswer is [Answer] for a message from client.Beta.Messages.New.
func BetaAnswer(ctx context.Context, c *memory.Session, msg anthropic.BetaMessage) (anthropic.BetaMessageParam, error) {
	var blocks []anthropic.BetaContentBlockParamUnion
	for _, b := range msg.Content {
		if b.Type != "tool_use" {
			continue
		}
		r, err := BetaResult(ctx, c, b.AsToolUse())
		if err != nil {
			return anthropic.BetaMessageParam{}, err
		}
		blocks = append(blocks, anthropic.BetaContentBlockParamUnion{OfToolResult: &r})
	}
	return anthropic.NewBetaUserMessage(blocks...), nil
}

// BetaTools returns the six memory tools of the conversation c as tools for
// the SDK's tool runner (client.Beta.Messages.NewToolRunner).
//
// The runner turns an error from a tool into an is_error result and goes
// on; it has no way for a tool to stop it. So a mistake the model made is
// such an error, and the model reads "Error: " and the text that says what
// to do. A failure of the host is handed to onHostFailure, and the model
// is told only that memory failed on the host's side: pass the cancel
// function of context.WithCancelCause, whose context runs the runner, and
// the runner stops with an error at its next step, context.Cause giving
// the failure. With a nil onHostFailure the failure is the tool's error as
// it is, which the runner shows the model, as it does any tool's error.
// onHostFailure may be called from several goroutines at once, as the
// runner runs a message's tool calls in parallel.
func BetaTools(c *memory.Session, onHostFailure func(error)) []anthropic.BetaTool {
	tools := c.Tools()
	out := make([]anthropic.BetaTool, len(tools))
	for i, t := range tools {
		out[i] = &betaTool{name: t.Name, description: t.Description, schema: betaSchema(t), run: t.Call, onHostFailure: onHostFailure}
	}
	return out
}

// BetaMemoryTool returns Claude's memory tool, answered by c's
// [memory.Session.ClaudeMemory], as a tool for the SDK's tool runner. The
// runner declares every tool it runs as a custom tool, so call
// [UseMemoryTool] on the runner's Params after NewToolRunner: the model
// then gets the memory_20250818 tool it was trained on. onHostFailure is
// as for [BetaTools].
func BetaMemoryTool(c *memory.Session, onHostFailure func(error)) anthropic.BetaTool {
	return &betaTool{
		name: memoryTool,
		description: "Claude's memory tool (memory_20250818): view, create, str_replace and insert the memory files under /memories. " +
			"Declare it with anthropicmem.UseMemoryTool so that the model gets the memory tool it was trained on.",
		schema:        memoryToolSchema(),
		run:           c.ClaudeMemory,
		onHostFailure: onHostFailure,
	}
}

// UseMemoryTool declares Claude's memory tool in p.Tools, the tools a tool
// runner sends: the custom definition of the tool named "memory" that
// [BetaMemoryTool] gave the runner becomes [BetaMemoryToolParam]. The
// runner still runs BetaMemoryTool for the model's calls. Call it on
// runner.Params after client.Beta.Messages.NewToolRunner. p.Tools without
// that definition is left as it is.
func UseMemoryTool(p *anthropic.BetaToolRunnerParams) {
	for i, t := range p.Tools {
		if t.OfTool != nil && t.OfTool.Name == memoryTool {
			p.Tools[i] = BetaMemoryToolParam()
		}
	}
}

// betaTool is a memory tool for the SDK's tool runner.
type betaTool struct {
	name, description string
	schema            anthropic.BetaToolInputSchemaParam
	run               func(ctx context.Context, input json.RawMessage) (memory.ToolResult, error)
	onHostFailure     func(error)
}

func (t *betaTool) Name() string                                    { return t.name }
func (t *betaTool) Description() string                             { return t.description }
func (t *betaTool) InputSchema() anthropic.BetaToolInputSchemaParam { return t.schema }

// errHostFailure is what the model reads when the host failed and the
// program was told.
var errHostFailure = errors.New("memory failed on the host's side (not a mistake in this call); go on without memory")

// Execute runs the tool with the model's input: the runner sends back a
// result, or for an error an is_error result with "Error: " and its text.
func (t *betaTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	res, err := t.run(ctx, input)
	switch {
	case err != nil && t.onHostFailure != nil:
		t.onHostFailure(err)
		return nil, errHostFailure
	case err != nil:
		return nil, err
	case res.IsError:
		return nil, errors.New(res.Text)
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: res.Text}}}, nil
}

// run runs one tool call in c.
func run(ctx context.Context, c *memory.Session, name string, input json.RawMessage) (memory.ToolResult, error) {
	if name == memoryTool {
		return c.ClaudeMemory(ctx, input)
	}
	return c.Call(ctx, name, input)
}

// betaInput is the input of a tool call as JSON: as the API sent it, or
// encoded from Input for a block made in code.
func betaInput(call anthropic.BetaToolUseBlock) (json.RawMessage, error) {
	if raw := call.JSON.Input.Raw(); raw != "" {
		return json.RawMessage(raw), nil
	}
	return json.Marshal(call.Input)
}

// schemaParts splits a tool's schema into the SDK's fields: properties,
// required, and the rest (additionalProperties) as extra fields.
func schemaParts(t memory.Tool) (props any, required []string, extra map[string]any) {
	m := t.SchemaMap()
	props = m["properties"]
	list, _ := m["required"].([]any)
	required = []string{}
	for _, r := range list {
		if name, ok := r.(string); ok {
			required = append(required, name)
		}
	}
	extra = map[string]any{}
	for k, v := range m {
		if k != "type" && k != "properties" && k != "required" {
			extra[k] = v
		}
	}
	return props, required, extra
}

func betaSchema(t memory.Tool) anthropic.BetaToolInputSchemaParam {
	props, required, extra := schemaParts(t)
	return anthropic.BetaToolInputSchemaParam{Properties: props, Required: required, ExtraFields: extra}
}

// memoryToolSchema describes the memory tool's input, for a runner that
// sends it as a custom tool because UseMemoryTool was not called.
func memoryToolSchema() anthropic.BetaToolInputSchemaParam {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"command":     map[string]any{"type": "string", "enum": []string{"view", "create", "str_replace", "insert", "delete", "rename"}},
			"path":        str("A path under /memories."),
			"view_range":  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "view: [first line, last line], -1 for the end."},
			"file_text":   str("create: the whole text of the file."),
			"old_str":     str("str_replace: the text to replace, which must occur once."),
			"new_str":     str("str_replace: the replacement."),
			"insert_line": map[string]any{"type": "integer", "description": "insert: the line after which to insert, 0 for the top."},
			"insert_text": str("insert: the lines to insert."),
			"old_path":    str("rename: the current path."),
			"new_path":    str("rename: the new path."),
		},
		Required: []string{"command"},
	}
}
