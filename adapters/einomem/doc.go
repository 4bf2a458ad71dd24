// Package einomem gives an eino agent the memory tools of
// github.com/mdmemory/memory as eino tools ([tool.InvokableTool] of
// github.com/cloudwego/eino v0.7.36), for a ToolsNode, a react agent or any
// graph that runs tools.
//
// Each tool's [schema.ToolInfo] carries the library's name, description
// and JSON Schema (every property required, the optional ones nullable, no
// others), so it suits function calling in strict mode. The arguments the
// model wrote reach the library as they are.
//
// # Conversations
//
// The tools run in a [memory.Session], the record of what one conversation
// has read. That record is what lets memory_write and memory_patch change a
// file the conversation read without a version token, and refuse to
// overwrite a change it has not seen (a person's edit, another
// conversation's change). There are two ways to hold one:
//
//   - [Tools] binds the tools to one Session: for an agent or graph built
//     for each conversation.
//   - [StoreTools] gives tools built once, for an agent compiled once at
//     start-up; each call runs in the Session that [WithSession] put in the
//     context the agent was called with (store.Session(id) for the
//     conversation the host names by id, or store.NewSession() per task).
//
// Make one Session per conversation or task; do not share one between
// unrelated conversations, nor make one per call. A Session is safe for
// concurrent use: eino's ToolsNode runs a message's tool calls in
// parallel, and their outcome is that of some sequential order of them.
//
// # Mistakes and failures
//
// eino's ToolsNode stops the graph when a tool returns an error, and its
// tool messages have no error flag. So a mistake the model can fix (invalid
// arguments, a bad path, a budget exceeded, a change refused because the
// file changed since the conversation read it) is the tool's result text,
// starting with "Error: " and saying what to do, with a nil error: it goes
// back to the model as the tool message. A failure of the host (a disk
// error, a closed store, a cancelled context, a call without a Session) is
// a Go error wrapping the library's (or [ErrNoSession]), which ends the
// agent's run.
package einomem
