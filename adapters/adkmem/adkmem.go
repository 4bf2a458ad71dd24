package adkmem

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mdmemory/memory"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/toolutils"
	"google.golang.org/genai"
)

// Options configure a Toolset. The zero value, like a nil *Options, gives
// the defaults.
type Options struct {
	// Index, when set, adds the memory index (memory.Session.IndexMessage:
	// each memory file with its summary, then a line saying that memory is
	// background to weigh, not instructions) to the system instruction of
	// every model request of the agent, after the agent's own instruction,
	// so that the model knows what is remembered without calling
	// memory_list. It costs up to memory.Options.IndexBudget characters
	// (2,000 by default) a request, and one listing of the store.
	Index bool
}

// Toolset is an adk tool.Toolset of the memory tools of a memory.Store,
// whose calls run in the memory conversation of their adk session (see the
// package documentation). Make one with New and put it in
// llmagent.Config.Toolsets; one Toolset may serve any number of agents,
// sessions and users. A Toolset is safe for concurrent use: adk runs a
// model's parallel calls at once, and the conversation orders them.
type Toolset struct {
	store *memory.Store
	index bool
	tools []tool.Tool
}

var errNilStore = errors.New("adkmem: New was given a nil *memory.Store")

// New returns the Toolset of store's memory tools. A nil opts gives the
// defaults. The Toolset does not close store. With a nil store, New still
// returns a Toolset, whose Tools returns an error, so that the agent's run
// fails with it.
func New(store *memory.Store, opts *Options) *Toolset {
	ts := &Toolset{store: store}
	if opts != nil {
		ts.index = opts.Index
	}
	if store == nil {
		return ts
	}
	// The tools' names, descriptions and schemas are the same for every
	// conversation: the session of a call is looked up when it runs.
	for _, t := range store.NewSession().Tools() {
		ts.tools = append(ts.tools, &memoryTool{ts: ts, name: t.Name, description: t.Description, schema: t.InputSchema})
	}
	return ts
}

// Name returns "memory", the toolset's name in adk's errors and traces.
func (ts *Toolset) Name() string { return "memory" }

// Tools returns the six memory tools, the same for every context. It returns
// an error when the Toolset was made with a nil store.
func (ts *Toolset) Tools(agent.ReadonlyContext) ([]tool.Tool, error) {
	if ts.store == nil {
		return nil, errNilStore
	}
	return ts.tools, nil
}

// ProcessRequest is called by adk before each model request of an agent that
// has the Toolset. With Options.Index set, it appends the memory index of the
// request's adk session to the system instruction; otherwise it does
// nothing. It returns the store's error (wrapped) when the index cannot be
// read, such as memory.ErrClosed, and adk then fails the run with it.
func (ts *Toolset) ProcessRequest(ctx agent.Context, req *model.LLMRequest) error {
	if !ts.index {
		return nil
	}
	if ts.store == nil {
		return errNilStore
	}
	index, err := ts.session(ctx).IndexMessage(ctx)
	if err != nil {
		return fmt.Errorf("memory index: %w", err)
	}
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	if req.Config.SystemInstruction == nil {
		req.Config.SystemInstruction = genai.NewContentFromText(index, genai.RoleUser)
	} else {
		req.Config.SystemInstruction.Parts = append(req.Config.SystemInstruction.Parts, genai.NewPartFromText(index))
	}
	return nil
}

// Session returns the memory conversation in which the tool calls of the
// adk session named by appName, userID and sessionID run (store.Session with
// the id the Toolset derives from the three), for a host that ends it when it
// deletes the adk session (memory.Session.End), or that runs a memory tool
// itself in it. An empty sessionID names no conversation: it gives a new
// one that the store does not keep. Session returns nil when the Toolset
// was made with a nil store.
func (ts *Toolset) Session(appName, userID, sessionID string) *memory.Session {
	if ts.store == nil {
		return nil
	}
	return ts.store.Session(sessionKey(appName, userID, sessionID))
}

func (ts *Toolset) session(ctx agent.ReadonlyContext) *memory.Session {
	return ts.Session(ctx.AppName(), ctx.UserID(), ctx.SessionID())
}

// sessionKey is the memory session id of an adk session. adk names a
// session by its app, user and id together (two users may each have a
// session "s1"), so all three go in, quoted so that no two triples give one
// key; the prefix keeps the ids apart from other hosts' on the same store.
func sessionKey(appName, userID, sessionID string) string {
	if sessionID == "" {
		return ""
	}
	return "adk:" + strconv.Quote(appName) + "/" + strconv.Quote(userID) + "/" + strconv.Quote(sessionID)
}

// memoryTool is one memory tool as adk runs function tools: it implements
// tool.Tool, and the Declaration, Run and ProcessRequest methods that adk's
// flow looks for.
type memoryTool struct {
	ts          *Toolset
	name        string
	description string
	schema      json.RawMessage
}

func (t *memoryTool) Name() string        { return t.name }
func (t *memoryTool) Description() string { return t.description }
func (t *memoryTool) IsLongRunning() bool { return false }

// Declaration gives the model the tool with the library's JSON Schema as
// ParametersJsonSchema, decoded anew for each request so that no request can
// change another's.
func (t *memoryTool) Declaration() *genai.FunctionDeclaration {
	var schema map[string]any
	// The schema is the library's own JSON: it always decodes.
	_ = json.Unmarshal(t.schema, &schema)
	return &genai.FunctionDeclaration{
		Name:                 t.name,
		Description:          t.description,
		ParametersJsonSchema: schema,
	}
}

// ProcessRequest declares the tool in the model request.
func (t *memoryTool) ProcessRequest(_ agent.Context, req *model.LLMRequest) error {
	return toolutils.PackTool(req, t)
}

// Run runs the call in the conversation of its adk session. args is the
// model's arguments as adk decoded them; they go back to JSON as they are,
// and the library validates them.
func (t *memoryTool) Run(ctx agent.Context, args any) (map[string]any, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: encode arguments: %w", t.name, err)
	}
	res, err := t.ts.session(ctx).Call(ctx, t.name, raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if res.IsError {
		return map[string]any{"error": res.Text}, nil
	}
	return map[string]any{"result": res.Text}, nil
}

var _ tool.Toolset = (*Toolset)(nil)
