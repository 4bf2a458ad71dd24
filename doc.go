// Package memory gives an LLM agent long-term memory kept as plain markdown
// files that a person can read, fix and commit to git.
//
// A [Store] is a directory (conventionally data/memory/), or a key prefix in
// S3-compatible object storage (any [Backend], with [OpenBackend]), holding
// two kinds of memory:
//
//   - facts: a closed set of files under facts/ (by default user.md, about
//     the person, and memory.md, about experience), loaded whole into
//     prompts and so held to a size budget (15,360 bytes in all by default);
//   - episodes: one file per month under episodes/ (episodes/2026-02.md),
//     each entry a "## " section summarising a significant task;
//
// and, at its root, procedures.md, rules learned from experience, one a
// line ("- When <situation>: <action>"), searched rather than loaded into
// every prompt, with a budget of its own; and persona.md, who the agent is,
// which the person writes and no tool may change ([Store.Persona]).
//
// Every file starts with a "# " title and a "> Summary: " line. The summaries
// make the index an agent sees first ([Session.IndexMessage]); the model then
// reads the files it needs.
//
// The agent loop you already have registers the memory tools (memory_list,
// memory_search, memory_read, memory_write, memory_patch, memory_append) in
// its own tool registry: each [Tool] has a name, a description, a JSON
// Schema and [Tool.Call]. The tools belong to a conversation, a [Session]:
// what it has read, it may change, and a change made by anyone else since
// (a person's edit, another conversation) is refused until it reads the
// file again. [Store.NewSession] starts a conversation, and its
// [Session.Tools] are the ones to register; [Store.Session] gives the
// conversation a host names by id, for a registry built once (an MCP
// server, an agent framework), and [Session.Call] runs a tool by name in
// it. A client that keeps no state carries version tokens instead:
// memory_read states the file's [Version], and memory_write and
// memory_patch given it change the file only if it is still at that
// version. A conversation's parallel calls are safe: its own changes never
// conflict with each other (a memory_write carrying a version from before
// the conversation's own later changes is refused, as it would undo them).
//
// The same operations are methods for Go code: [Store.List],
// [Store.Search], [Store.Read], [Store.Write], [Store.WriteIf],
// [Store.Patch], [Store.Append]. After a task, a [Reflector] lets a model
// record what is worth keeping.
//
// Memory lasts for years: a busy month's full files become parts
// (episodes/2026-02.001.md, …, up to 999) so that a month does not fill up
// and no append costs more as it grows; [Store.Compact] condenses old months, keeping
// their originals under episodes/archive/; [Store.Stats] says what the
// store holds and what goes into prompts.
//
// # Safety
//
// Paths from the model must match a grammar (facts/<configured name>,
// episodes/YYYY-MM.md, a month's parts episodes/YYYY-MM.NNN.md, read and
// patched, and the originals under episodes/archive/, read only) and every
// file access goes through an [os.Root], so
// nothing outside the directory is reached, symbolic links included. Every
// change replaces its file atomically (temporary file, fsync, rename, fsync
// of the folder). Markdown structure is read with goldmark's AST and edits
// splice the original bytes, so a person's formatting is kept.
//
// # Errors
//
// A mistake the model can fix (a bad path, the budget exceeded, patch text
// not found, a file changed since it was read, malformed arguments) comes
// back from [Tool.Call] as a [ToolResult] with IsError set and a text that
// says what to do, and a nil error. The Store's methods report the same
// conditions as an [*Error], which carries the operation, the path, the
// sentinel ([ErrInvalidPath], [ErrBudgetExceeded], ..., for [errors.Is])
// and the model-facing hint. Failures of the host (disk, cancelled context,
// closed store, another process holding the lock) are Go errors from both,
// and never an *Error.
package memory
