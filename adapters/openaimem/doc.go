// Package openaimem wires the memory tools of a memory.Session into the
// official OpenAI Go SDK (github.com/openai/openai-go/v3): Tools gives them as
// strict function tools for a chat completion, and Dispatch answers the memory
// tool calls of the model's message with tool messages.
//
//	conv := store.NewSession() // one conversation: what it reads, it may change
//	params.Tools = openaimem.Tools(conv)
//	for {
//		completion, err := client.Chat.Completions.New(ctx, params)
//		if err != nil {
//			return err
//		}
//		msg := completion.Choices[0].Message
//		if len(msg.ToolCalls) == 0 {
//			return msg.Content
//		}
//		params.Messages = append(params.Messages, msg.ToParam())
//		answers, err := openaimem.Dispatch(ctx, conv, msg)
//		if err != nil {
//			return err
//		}
//		params.Messages = append(params.Messages, answers...)
//	}
//
// The session is the conversation: a write without a version goes ahead
// only for a file this session read (or wrote) and nobody changed since, so
// that the model never overwrites what it has not seen. Use one session per
// conversation: store.NewSession for a conversation the program holds, or
// store.Session(id) for one a host names by id.
//
// A mistake the model can fix comes back to it as a tool message starting
// "Error: ", since tool messages have no error flag; a failure of the host
// (disk, closed store, cancelled context) is a Go error from Dispatch.
//
// Calls to tools whose name does not start with "memory_" are left to the
// caller (IsMemoryTool tells them apart). ResponseTools and DispatchResponse
// do the same for the Responses API.
//
// OpenAI's strict mode is guaranteed only without parallel function calls
// (ChatCompletionNewParams.ParallelToolCalls set to false); with them, a call
// that does not match its schema is still validated by the library and
// answered with an error the model can fix.
package openaimem
