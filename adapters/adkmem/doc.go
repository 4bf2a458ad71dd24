// Package adkmem gives an adk-go agent (google.golang.org/adk/v2) long-term
// memory kept as markdown files by a memory.Store: a tool.Toolset of the six
// memory tools (memory_list, memory_search, memory_read, memory_write,
// memory_patch, memory_append) for llmagent.Config.Toolsets.
//
//	store, err := memory.Open("data/memory", nil)
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	a, err := llmagent.New(llmagent.Config{
//		Name:     "assistant",
//		Model:    model,
//		Toolsets: []tool.Toolset{adkmem.New(store, &adkmem.Options{Index: true})},
//	})
//
// # Conversations
//
// Each tool call runs in the memory conversation (memory.Session) of the adk
// session it belongs to: one adk session, identified by its app name, user id
// and session id, is one memory conversation, across all its runs. What a
// session read, it may change; a file another session changed, or a person
// edited, since this session read it is refused until it reads the file
// again, and the model is told so. The store keeps
// memory.Options.MaxSessions conversations (1,000 by default) and forgets
// the least recently used; a forgotten one starts over with nothing read. Toolset.Session gives a host the conversation of an adk
// session, to end it when the session is deleted.
//
// All sessions share the one memory of the store: to keep one memory per user,
// open one Store per user and give each its own agent.
//
// # Results and errors
//
// A call's result is {"result": TEXT}, with the tool's text as the library
// wrote it. A mistake the model can fix (a bad path, a budget exceeded, a
// file changed since it was read) is {"error": TEXT}, adk's convention for a
// failed call, with a text that says what to do; Run returns no Go error for
// it. A failure of the host (the disk, a closed store, a cancelled context)
// is a Go error from the tool's Run, wrapping the library's error, so
// llmagent's OnToolErrorCallbacks and plugins see it and errors.Is works.
// Note that adk v2.2.0 then still answers the model, with
// {"error": err.Error()}, unless such a callback returns another response;
// it has no way for a tool to stop the run.
package adkmem
