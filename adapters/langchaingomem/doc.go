// Package langchaingomem gives a langchaingo agent the memory tools of
// github.com/mdmemory/memory as langchaingo tools ([tools.Tool] of
// github.com/tmc/langchaingo v0.1.14).
//
//	conv := store.NewSession() // one per conversation (task)
//	agent := agents.NewOneShotAgent(llm, langchaingomem.Tools(conv))
//	executor := agents.NewExecutor(agent)
//
// # One string in, one string out
//
// A langchaingo tool takes one string. Its ReAct agents (the one-shot and
// conversational agents) pass the text the model wrote after "Action
// Input:", and its OpenAI functions agent offers every tool a single string
// argument. So each memory tool's description ends with the JSON Schema of
// its arguments and says that the input is a JSON object of that schema; the
// tool parses the input as those arguments. Beyond that, an input is read so:
//
//   - Whitespace around it and one markdown code fence around the whole
//     (```json … ```) are dropped.
//   - An input that starts with "{" is the arguments, passed on as they are:
//     an argument whose type allows null may be left out, and invalid JSON or
//     an unknown argument is a mistake the model is told about.
//   - For memory_read and memory_search, whose one argument that may not be
//     null is a string (path, query), any other input is that argument, as
//     plain text or as a JSON string ("facts/user.md" or facts/user.md), and
//     the other argument is null. Models often write a bare path here; a path
//     or a query cannot be mistaken for anything else, so this is sound.
//   - memory_list takes no arguments: any input other than a JSON object
//     (an empty one, "None") is ignored.
//   - For memory_write, memory_patch and memory_append, an input other than
//     a JSON object is a mistake the model is told about.
//
// # Mistakes and failures
//
// langchaingo's executor stops the whole run when a tool returns an error,
// and shows the model whatever a tool returns as text. So a mistake the
// model can fix (invalid arguments, a bad path, a budget exceeded, a change
// refused because the file changed since the conversation read it) is
// returned as the tool's output, starting with "Error: " and saying what to
// do, with a nil error: the model sees it as the observation and can try
// again. A failure of the host (a disk error, a closed store, a cancelled
// context) is returned as a Go error that wraps the library's, and ends the
// executor's run.
//
// # Conversations
//
// The tools belong to the [memory.Session] they are made from, which records
// what the conversation has read. That record is what lets memory_write and
// memory_patch change a file the conversation read without a version token,
// and refuse to overwrite a change it has not seen (a person's edit, another
// conversation's change). Make one Session per conversation or task with
// [memory.Store.NewSession] (or [memory.Store.Session] for a conversation
// the host names by id) and the tools from it; do not share one Session
// between unrelated conversations, nor make a new one for each call.
package langchaingomem
