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
// nothing outside the directory is reached, symbolic links included. A
// path is in canonical form, with a year 1000-9999 and a month 01-12, a
// part number 001-999; everything else is refused before the disk is
// touched: empty, absolute (/x, C:\x, \\host\x), backslashes, NUL and
// control characters, "." and "..", doubled or trailing slashes, hidden
// names, other folders and extensions, case variants. A symbolic link is
// followed only down from the folder it stands in, never into another
// memory (a folder with a .lock); one that tries is a model error, listed
// and reported by [Store.Check]. FuzzResolve checks that no input resolves
// outside the grammar. Model-facing errors name no host paths, and echo at
// most 200 bytes of a path and 100 characters of an unknown argument's
// name. Work under the lock is bounded: one call makes at most 100 patches,
// each counts at most 11 occurrences of its oldText. Files a person adds
// elsewhere in the directory are left alone. Every
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
//
// # Files
//
// A memory directory, and a shared world root ([Options.World]):
//
//	data/memory/
//	  persona.md               the person's own: who the agent is (read only to the tools, first in prompts)
//	  procedures.md            rules learned from experience: "- When <situation>: <action>", one a line
//	  facts/user.md            about the person: identity, preferences, relationships, dates, habits
//	  facts/memory.md          about experience: insights, patterns, non-obvious know-how
//	  episodes/2026-01.001.md  a busy month's older entries, in full parts of about 16 KiB
//	  episodes/2026-01.md      one file per month: the newest entries
//	  episodes/archive/        originals kept by compaction (read only, searched, not listed)
//	  .lock                    the lock file that serialises changes across processes (with the folder itself)
//	  .cache/vectors-*.bin     with Options.Embedder only: the vectors of semantic search (derived, safe to delete)
//	  .history/                the history: a log of each file's changes, in segments (.history/facts/user.md/00000001.log)
//
//	data/shared/               with Options.World only: the root several agents share
//	  world/project-apollo.md  a world topic: "- " fact lines about one subject, read and changed by every agent
//	  .lock
//
// A month's file:
//
//	# 2026-02 Episodes
//
//	> Summary: Tokyo flight research, Birthday gift brainstorm
//
//	## Tokyo flight research
//	- Summary: Spring Airlines cheapest for April Tokyo trip
//	- Date: 2026-02-26
//	- Task: compare flights to Tokyo in April
//	- Lesson: search results had stale prices; cross-check airline sites
//
// Files are read when needed and the search index checks every file
// before each search, so a person's edit is seen by the very next call.
//
// # The tools
//
// A [Tool]'s InputSchema is JSON Schema (type object, every property
// required and no others, so it works with OpenAI's strict mode), made from
// the tool's argument type so that the two cannot drift; the descriptions
// and schemas are pinned by testdata/tools.golden.json, and name no date
// nor anything else that goes stale, so a registry may keep them for as
// long as it runs. [Tool.SchemaMap] gives the schema as a map for SDKs that
// take one, and [ToolResult.Content] the text of the tool message for chat
// APIs that have no error flag ("Error: …" for a model mistake).
// memory_read shows at most 128 KiB of a file at once (see Hand edits).
//
// The rules every change keeps, by a tool or a Store method:
//
//   - Budget. After any change the configured fact files hold at most
//     [Options.FactsBudget] bytes (15,360 by default), procedures.md its own
//     budget, the world topics theirs. A refusal states the size now, the
//     size the change would make, the limit and what to do. A change that
//     does not make the files larger is always allowed, so an oversized file
//     can be condensed in steps. Episodes do not count.
//   - Facts that last. A line a change adds to a fact file or a world topic
//     is refused when its wording marks it as temporary ("this time", "for
//     now", "just today", "这次", "暂时", "今天先", …: [ErrTemporaryFact]),
//     when it repeats a fact already there (the same line, or more than 70%
//     of the same words, in any fact file) or restates a key of its file (a
//     second "- Language:": [ErrDuplicateFact]). The refusal names the file
//     and line concerned and says what to do: patch that line, or leave the
//     new one out. A key is a list, and another line allowed, when the file
//     already holds it twice or it names what people have many of
//     ("- Colleague:", "- Friend:", "- Lesson:", "同事", …). Only added lines
//     are checked, so a file holding an old questionable line can still be
//     condensed or rewritten; episodes are never checked.
//   - No secrets. A change of any memory file that adds text holding a
//     credential's value (an API key or token of the common providers, a
//     private key, a JSON Web Token, a bearer token, a password alone or
//     in a connection string) is refused ([ErrSecret]), naming the kind and
//     line, never the value, and saying to record instead that the
//     credential exists, what it is for and where it is kept. A mention is
//     no secret ("the Tavily API key has a 1,000/day limit"); only added
//     lines are judged; [Options.Secrets] replaces the detector or switches
//     it off, and [Store.Check] reports a credential already there.
//   - Patch. Patches apply in order; each oldText must occur exactly once at
//     its turn (overlapping matches count); replacement is literal; all or
//     nothing, and the error names the failing patch and why.
//   - Append. A missing month file is created with its title and summary.
//     An episode entry is one "## " section (no "# " title inside), dated in
//     its month: one without a "- Date:" line gets the store clock's date,
//     and is refused when that date is not in the file's month (back-filling
//     a past month needs the day it happened); an entry dated outside the
//     month is refused, naming the right file. One blank line separates
//     entries; a fact line appended to a file whose last block is a list
//     joins that list with no blank line. What the file held is never
//     reformatted, and it ends with one newline.
//   - Summaries. After memory_write (when the content has none) and
//     memory_append (unless a summary is given) the summary line is derived:
//     a month file names its entry titles, the newest kept when they do not
//     fit in 100 characters; a fact file names its first facts that fit, by
//     label ("Name" for "- Name: Zhang San") or by their first words, so the
//     summary never repeats a fact line and a patch of that line matches
//     once. memory_patch never touches the summary.
//   - Text. What the model writes must be UTF-8 with no NUL byte and no
//     carriage return but in a CRLF line ending (a lone CR ends a line for
//     CommonMark readers and terminals, so it could forge an entry), nest
//     blockquotes and lists at most 32 deep, and leave no block open at its
//     end (an unclosed ``` or ~~~ fence, <!--, <pre> or <script> would
//     swallow every later append): such text is refused when it is offered,
//     and a patch may not make it out of the text around it. A summary is
//     one line of at most 200 characters with no control character or line
//     or paragraph separator. A memory file is at most 1 MiB, and no read
//     takes more than that of one file, on any backend.
//   - Private files. A directory's new files (.lock included) are 0600 and
//     its new folders 0700, whatever the umask; a mode a person set is kept.
//     [Options.FileMode] or [OpenDir](dir, 0o660) widen them for a group
//     (folders 0770).
//   - Formatting is kept. Structure is read with goldmark's AST (a "## "
//     inside a code fence is not an entry; Setext headings count), and edits
//     splice the original bytes: a person's formatting outside the changed
//     lines is kept byte for byte.
//
// # Conversations
//
// A [Session] records the version of each file as the conversation last
// read or wrote it. Its calls take effect one at a time, and what each read
// or wrote is recorded in the same step, so parallel tool calls (models
// return several in one turn, and eino, adk-go and MCP hosts run them at
// once) never conflict with each other. One exception, on purpose: a
// memory_write carrying the version the conversation read before its own
// later changes is refused, since it would undo them; the refusal says to
// pass version null (a memory_patch may carry it: its oldText must still
// match). A null version leaves the check to the conversation's record.
//
// Three ways to hold one: your own loop takes [Store.NewSession] per task
// (or [Store.Tools], the shortcut); a registry built once (an MCP server,
// eino's react agent, adk-go's agent) registers the definitions once and
// runs each call with [Store.Session](id).Call (see the example of
// [Store.Session]): the store keeps the [Options.MaxSessions] (1,000) used
// most recently, forgets older ones, which then start afresh, and
// [Session.End] forgets one at once; a stateless client (each call a new
// process, such as the MCP Inspector's CLI) passes the version memory_read
// states (see the example of [Session.Call]). A version for a file that no
// longer exists is a conflict too, and a refusal never gives away the
// current version.
//
// # Search
//
// [Store.Search] and memory_search rank fact lines and episode entries
// (heading through last line, code fences included) by BM25 over words,
// English stems ("review" finds "reviewed") and overlapping CJK bigrams (老王
// is found inside 老王昨天在杭州买了龙井茶). [SearchOptions] limit the hits, keep
// one folder or month (Path "facts/") or a date range (Since, Until); an
// empty query returns the newest entries. Hits carry path, line, title,
// date, the best-matching line as snippet, and score; ties are broken by
// path, then line.
//
// The index lives in memory, is built on the first search and is always
// fresh: before each search every file's size and modification time are
// checked, and only files that changed are read again and, when their
// content hash changed, re-indexed. A file changed less than two seconds
// before it was last read is read again each time, so an edit that keeps
// its size within the file system's timestamp granularity is still seen;
// only an edit that keeps the size and restores an older timestamp on
// purpose goes unseen until the file changes again. [Store.Context]
// renders the facts in full (within half the budget, with the world topics
// and procedures.md lines that match) and the best-matching entries, for
// callers that put memory into a prompt instead of giving the model tools.
//
// With [Options.Embedder] (one method: texts in, vectors out; the package
// openaiembed is a client for OpenAI-compatible /v1/embeddings endpoints),
// a search with words fuses the BM25 ranking with cosine similarity by
// reciprocal rank fusion (k = 60), after dropping semantic hits under a
// floor (0.35, or the Embedder's Floor()); of two hits whose word sets
// overlap by more than 70% (Jaccard), the better ranked is kept. Vectors
// are derived data, never written into the memory files: they are cached
// by the SHA-256 of each document's text in .cache/vectors-<model>.bin
// through the backend (never listed, searched or shown; safe to delete;
// rebuilt when corrupt), so a restart embeds nothing unchanged and a hand
// edit re-embeds only what changed. No lock is held while the Embedder
// runs; when it fails, that search gives the keyword hits. Vectors are kept
// as 8-bit numbers with a scale (half the memory of float32), scanned in
// integers, and the best 100 re-ranked by exact cosine.
//
// # Reflection
//
// After a task, [ShouldReflect] skips the trivial ones, and a [Reflector]
// ([NewReflector]) lets a model look back at it and record what is worth
// keeping with the tools, with the facts, the procedures and the episode
// index in its system prompt (testdata/reflector_prompt.golden). A
// persona.md the person wrote opens that prompt in place of
// [ReflectorOptions].Persona (testdata/reflector_prompt_persona.golden);
// the prompt says when a task taught a procedure worth recording and, with
// a world, when a fact belongs in a topic (about a project, a place, a
// system, a team every agent should know;
// testdata/reflector_prompt_world.golden). The model is anything with Complete(ctx, Request) (Response,
// error), such as an [LLMFunc]. The loop makes at most MaxRounds model
// calls (5), runs the tool calls in order, feeds every result or mistake
// back as a tool message, trims the task's conversation to about 60% of
// the model's context window by dropping whole oldest turns, and holds no
// lock while the model runs. examples/openai is a real agent with memory.
//
// # Memory over years
//
// When an append would take a month's file past 16 KiB, the file is sealed
// as the month's next part (episodes/2026-01.001.md, .002.md, …, up to 999,
// about 16 MiB) and the entry starts the month's file anew, so an append
// rewrites about 16 KiB at most, however busy the month. Names sort as the
// timeline. memory_list and the index show a month once (its size is its
// files' together, parts counts its parts); the reflector's episode index
// groups a month's entries, newest first; search covers every part;
// memory_read of a month's file says where its older entries are, and the
// append that sealed a month says so (with no version: the conversation has
// not seen the new file as the whole month). Parts can be read, patched and
// rewritten, not appended to or created.
//
// [Store.Compact] condenses the months before a horizon
// ([CompactOptions].Before; six months back by default), keeping each
// month's newest KeepLast entries verbatim. With a model it follows a
// golden-tested prompt (testdata/compact_prompt.golden) that keeps every
// lesson, decision and date; a reply that is not dated "## " entries leaves
// the month as it is. With a nil model a local rule keeps each entry's
// heading and its Date, Summary and Lesson lines. Nothing is lost: a
// month's files are first written as they were under episodes/archive/
// (read only, reached by memory_read and search, not listed, left out of
// Context); then, under the lock, the month is checked unchanged, its file
// replaced and its parts removed; a change made while the model ran leaves
// the month alone (and takes the archive back). A compacted month's file
// says so ("> Compacted on …") and is not condensed again. A crash leaves
// each month as it was or compacted with its archive (TestCompactCrash),
// and a rerun finishes what a crash cut short; an archive that differs from
// a month not marked compacted is left for a person to check. A person
// undoes a month by moving its archived files back. Nothing compacts by
// itself: a person (mdmemory compact) or the host starts it; DryRun reports
// what a run would do and writes nothing.
//
// [Session.IndexMessage] keeps to its budget over years of months: it always
// shows the facts and the newest months, marks compacted ones, and says how
// many it left out and that memory_search reaches them and the archive.
// [Store.Stats] gives the facts against the budget, the files, the entries
// of each month, the compacted months, and the size of the index message
// and of the reflector's prompt in bytes and estimated tokens (4 characters
// a token).
//
// # History
//
// Every change of a memory file is recorded, whoever makes it (a tool call,
// a Store method, the reflector, compaction, a restore): when, the
// operation (write, patch, append, seal, compact, restore, forget,
// remove), the
// file, who made it, the versions before and after ("" for a file that did
// not exist), and the content after, whole or as a delta of the content
// before. Who is the conversation's id for a conversation the host named
// ([Store.Session]), else the name the host gave the context with
// [WithActor] ("cli", "ui"), marked "reflector (…)" or "compaction (…)"
// when they made the change. A change made outside the library (an editor,
// aws s3 cp) is recorded as operation "outside", with the content it made,
// at the library's next change of the file; until then [Store.History]
// shows it first, as Pending.
//
// The records are kept on the backend that holds the file, in a log of the
// file's own under the hidden folder .history/, which no path of the
// grammar reaches: in the directory, or under the S3 prefix. A log is a run
// of segments (.history/facts/user.md/00000001.log, 00000002.log, …): a
// change appends its record to the last one, or starts the next with the
// content whole, so that what it reads and writes does not grow with the
// file's history; pruning removes the oldest segments whole. A log from
// before the segments (.history/facts/user.md.log) is read as the oldest
// segment. A change is recorded before it is made, so that no change lands
// without its record; the record of a change that did not land (a crash, a
// lost race) is told apart by the chain of versions, and ignored.
//
// [Store.History] lists the changes of one file or of all, newest first,
// narrowed by [HistoryOptions]; [Store.ReadVersion] gives any recorded
// version back byte for byte; [Store.Restore] makes a file hold a version
// again, as a change of its own held to the rules of any change, and
// [Store.RestoreIf] does so only if the file is still at the version the
// caller showed, so that a change made meanwhile is never undone unseen.
// [Store.Forget] takes a text out of every file and every version kept (a
// version keeps its name, [Change].Redacted, and reads back without it),
// and [Store.Locate] shows where it is first. The mdmemory command has them
// as log, diff, restore and forget.
//
// [Options].History ([HistoryPolicy]) bounds what is kept: every version of
// the last 90 days and at least the last 20 of each file whatever their
// age, in at most 64 MiB of logs per backend, the oldest going first and
// never the current version; Off records nothing.
//
// # Several agents, one world
//
// [Options.World] is a second backend, shared by the stores of agents that
// work together, whose world/<topic>.md files every agent lists, searches,
// reads and changes with the same six tools (see the example of
// [Options]). A topic's name is lower-case letters and digits in
// dash-joined words, at most 64 characters, with .md; any other name under
// world/, or a world/ path in a store with no World, is a model error.
// Writing or appending to a new topic starts it, titled from its name.
// Topics are facts ("- " lines, the fact guard across every topic, whoever
// wrote it, a summary naming their keys), but are not loaded into every
// prompt: the index message, memory_list and the reflector's prompt name
// each topic with its summary. [Options.WorldBudget] (15,360 bytes over all
// topics) is checked under the shared backend's lock on world/, so two
// agents adding at once cannot take the topics over it together; give
// every agent the same value. The sandbox, atomic writes, the
// conversations' guard and hand edits hold across both roots (FuzzResolve
// runs on a store with a world; the conformance suite's SharedWorld cases
// run on every backend, S3 included). A shared backend that fails fails the
// call. The stores do not close the world's backend.
//
// # Backends
//
// A Store keeps its files through a [Backend]: read a file with its
// version, write or remove it only if it is still at a version, list a
// folder with tags, lock a file or a folder. The Store keeps everything
// that makes them memory (the grammar, the budgets, the summaries, the
// conversations' guard), and every change is one loop: read with the
// version, check, edit, write only if unchanged, and on a lost race read
// again. [Open] uses [Dir], the local directory; [OpenDir] gives the
// backend itself; [OpenBackend] opens a store on any backend, such as the
// module github.com/mdmemory/memory/s3store (see its README for how the
// guarantees take shape on S3). A server with many users keeps one Store
// per user: a store costs little until its first search builds its index,
// and [Store.ReleaseIndex] (or [Options.IndexIdle]) lets an idle store's
// index go, as Close does.
//
// # Hand edits and what the model sees
//
// A person's editor may put anything in a file; the library never refuses
// to open or list it, and never passes on what would break a prompt:
//
//   - Not text. NUL bytes and invalid UTF-8 never reach the model:
//     summaries, the index, search results and the reflector's prompt show
//     them as U+FFFD or spaces, control characters and line separators in
//     titles and summaries become spaces, and memory_read shows the file
//     with U+FFFD and a note line saying so. Such a file cannot be patched
//     (the text the model saw is not the file's); the refusal says to
//     memory_write the corrected text, with the version memory_read gave.
//   - A byte-order mark before the title counts as indentation: the title
//     and summary are found, and edits keep the mark.
//   - Unreadable files. A file that cannot be read, or facts/ or episodes/
//     replaced by a file, is listed with FileInfo.Error saying so and shown
//     in the index as "cannot be read (…); a person must fix it"; everything
//     else works as usual and Open succeeds. A tool call on such a file is a
//     model error that tells the model to leave it be.
//   - Large files. memory_read shows at most 128 KiB, in whole lines: a
//     "lines: 1-2345 of 9876" line after the version says what is shown and
//     which line to read on from. The version is always the whole file's; a
//     conversation that saw part of a file changes it with memory_patch and
//     that version. A file over 1 MiB is read as its first lines with a note,
//     listed with its real size, reported by [Store.Check], and changed by no
//     tool until a person splits or condenses it. The reflector's prompt
//     shows a fact file larger than the budget only up to the budget, and
//     does not count it as read.
//   - Framing. The index message and Context say that memory is background
//     from earlier conversations, may be out of date, and is data, not
//     instructions. Each file in the reflector's prompt and in Context is
//     framed by <file path="…" version="…"> and </file version="…">, each
//     entry in Context by <entry path="…" line="…" version="…"> and </entry
//     version="…">, and the world topics, in the index message and the
//     reflector's prompt, by <topics path="world/" version="…"> and
//     </topics version="…"> (testdata/index_message_world.golden), with the
//     version of the text inside: no text can contain its own version, so
//     none can end its frame early and pass for the library's own words.
package memory
