// Package memory gives an LLM agent long-term memory kept as plain markdown
// files that a person can read, fix and commit to git.
//
// A [Store] is a directory (conventionally data/memory/) holding two kinds of
// memory:
//
//   - facts: a closed set of files under facts/ (by default user.md, about
//     the person, and memory.md, about experience), loaded whole into
//     prompts and so held to a size budget (15,360 bytes in all by default);
//   - episodes: one file per month under episodes/ (episodes/2026-02.md),
//     each entry a "## " section summarising a significant task.
//
// Every file starts with a "# " title and a "> Summary: " line. The summaries
// make the index an agent sees first ([Store.IndexMessage]); the model then
// reads the files it needs.
//
// The agent loop you already have registers [Store.Tools] (memory_list,
// memory_search, memory_read, memory_write, memory_patch, memory_append) in
// its own tool registry, one tool set per conversation: each [Tool] has a
// name, a description, a JSON Schema and [Tool.Call]. The same operations
// are methods for Go code: [Store.List], [Store.Search], [Store.Read],
// [Store.Write], [Store.WriteIf], [Store.Patch], [Store.Append]. After a
// task, a [Reflector] lets a model record what is worth keeping.
//
// # Safety
//
// Paths from the model must match a grammar (facts/<configured name> or
// episodes/YYYY-MM.md) and every file access goes through an [os.Root], so
// nothing outside the directory is reached, symbolic links included. Every
// change replaces its file atomically (temporary file, fsync, rename, fsync
// of the folder). Markdown structure is read with goldmark's AST and edits
// splice the original bytes, so a person's formatting is kept.
//
// # Errors
//
// A mistake the model can fix (a bad path, the budget exceeded, patch text
// not found, malformed arguments) comes back from [Tool.Call] as a
// [ToolResult] with IsError set and a text that says what to do, and a nil
// error. The Store's methods report the same conditions as errors wrapping
// the sentinels in this package ([ErrInvalidPath], [ErrBudgetExceeded], ...),
// for [errors.Is]. Failures of the host (disk, cancelled context, closed
// store, another process holding the lock) are Go errors from both.
package memory
