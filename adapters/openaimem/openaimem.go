package openaimem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mdmemory/memory"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// Prefix begins the name of every memory tool. Dispatch and DispatchResponse
// answer the calls to names with it, and leave all others to the caller.
const Prefix = "memory_"

// IsMemoryTool reports whether name starts with Prefix, so that Dispatch and
// DispatchResponse answer a call to it: the six memory tools, and any other
// memory_ name a model makes up (answered with an error that lists the six).
// A caller with tools of its own answers the calls for which it is false.
func IsMemoryTool(name string) bool { return strings.HasPrefix(name, Prefix) }

var errNilSession = errors.New("openaimem: a nil *memory.Session was given")

// Tools returns c's memory tools as Chat Completions function tools for
// ChatCompletionNewParams.Tools: each with the library's name, description
// and JSON Schema as parameters, and Strict set. The schemas meet OpenAI's
// strict mode: every property is required, optional values are nullable
// (["string","null"]), and every object has additionalProperties false.
// Tools returns nil for a nil c.
func Tools(c *memory.Session) []openai.ChatCompletionToolUnionParam {
	if c == nil {
		return nil
	}
	var tools []openai.ChatCompletionToolUnionParam
	for _, t := range c.Tools() {
		tools = append(tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(t.SchemaMap()),
			Strict:      openai.Bool(true),
		}))
	}
	return tools
}

// Dispatch runs, in c, the memory tool calls of msg, the assistant message
// of a chat completion, one after the other in their order, and returns a
// tool message answering each, in the same order, for the caller to append
// after msg.ToParam(). A tool message's content is the tool's text; as
// OpenAI's tool messages have no error flag, a mistake the model can fix
// (bad arguments, a bad path, a file changed since it was read) is the
// text prefixed "Error: " (memory.ToolResult.Content), and is no Go error.
//
// Only the function calls whose name starts with Prefix are answered: calls
// to other tools, and custom tool calls, are the caller's to answer (use
// IsMemoryTool), before the next request, since the API needs an answer to
// every call. A message without tool calls gives none.
//
// A failure of the host (the disk, a closed store, a cancelled ctx) stops
// Dispatch: it returns nil and an error that names the tool and call and
// wraps the library's, so that errors.Is(err, memory.ErrClosed) works. The
// calls before it have taken effect. A nil c is an error when msg has a
// memory tool call.
func Dispatch(ctx context.Context, c *memory.Session, msg openai.ChatCompletionMessage) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	for _, tc := range msg.ToolCalls {
		if tc.Type == "custom" || !IsMemoryTool(tc.Function.Name) {
			continue
		}
		text, err := call(ctx, c, tc.ID, tc.Function.Name, tc.Function.Arguments)
		if err != nil {
			return nil, err
		}
		out = append(out, openai.ToolMessage(text, tc.ID))
	}
	return out, nil
}

// ResponseTools returns c's memory tools as Responses API function tools for
// responses.ResponseNewParams.Tools, with Strict set, as Tools does for Chat
// Completions. It returns nil for a nil c.
func ResponseTools(c *memory.Session) []responses.ToolUnionParam {
	if c == nil {
		return nil
	}
	var tools []responses.ToolUnionParam
	for _, t := range c.Tools() {
		tool := responses.ToolParamOfFunction(t.Name, t.SchemaMap(), true)
		tool.OfFunction.Description = openai.String(t.Description)
		tools = append(tools, tool)
	}
	return tools
}

// DispatchResponse is Dispatch for the Responses API: it runs, in c, the
// function_call items of resp's output whose name starts with Prefix, in
// order, and returns a function_call_output item answering each, in the same
// order, for the next request's input (with PreviousResponseID set to
// resp.ID, or after resp's output items when the caller keeps the
// conversation itself). An output is the tool's text, prefixed "Error: " for
// a mistake the model can fix. Other items, and calls to other tools, are
// left to the caller; host failures and a nil c are errors, as in Dispatch.
func DispatchResponse(ctx context.Context, c *memory.Session, resp *responses.Response) ([]responses.ResponseInputItemUnionParam, error) {
	if resp == nil {
		return nil, nil
	}
	var out []responses.ResponseInputItemUnionParam
	for _, item := range resp.Output {
		if item.Type != "function_call" || !IsMemoryTool(item.Name) {
			continue
		}
		fc := item.AsFunctionCall()
		text, err := call(ctx, c, fc.CallID, fc.Name, fc.Arguments)
		if err != nil {
			return nil, err
		}
		answer := responses.ResponseInputItemParamOfFunctionCallOutput(text)
		answer.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
		out = append(out, answer)
	}
	return out, nil
}

// call runs one tool call and returns the text that answers it.
func call(ctx context.Context, c *memory.Session, id, name, args string) (string, error) {
	if c == nil {
		return "", fmt.Errorf("%s (call %s): %w", name, id, errNilSession)
	}
	res, err := c.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		return "", fmt.Errorf("%s (call %s): %w", name, id, err)
	}
	return res.Content(), nil
}
