package einomem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"
	"github.com/mdmemory/memory"
)

// ErrNoSession is returned by a tool of [StoreTools] called with a context
// that [WithSession] did not give a Session.
var ErrNoSession = errors.New("einomem: no memory.Session in the context: call the agent with einomem.WithSession(ctx, session)")

// Tools returns the memory tools of the conversation c (memory_list,
// memory_search, memory_read, memory_write, memory_patch, memory_append) as
// eino tools, in that order, each a [tool.InvokableTool], ready for
// compose.ToolsNodeConfig.Tools or react.AgentConfig.ToolsConfig.
//
// A tool's InvokableRun returns a mistake of the model as its result text,
// starting with "Error: ", with a nil error; it returns a Go error wrapping
// the library's only for a failure of the host (disk, closed store,
// cancelled context). The tools are safe for concurrent use, as c is.
//
// Make one Session per conversation: the tools of c share its record of the
// files it read. Tools returns nil when c is nil.
func Tools(c *memory.Session) []tool.BaseTool {
	if c == nil {
		return nil
	}
	return wrap(c.Tools(), func(context.Context) (*memory.Session, error) { return c, nil })
}

// StoreTools returns the memory tools of s as eino tools, for an agent or
// graph built once and run for many conversations. Each call runs in the
// Session that [WithSession] put in its context, or fails with an error
// wrapping [ErrNoSession] when there is none; otherwise they behave as the
// tools of [Tools]. StoreTools returns nil when s is nil.
func StoreTools(s *memory.Store) []tool.BaseTool {
	if s == nil {
		return nil
	}
	// The definitions do not depend on the session: those of a throwaway
	// one describe every session's tools.
	return wrap(s.NewSession().Tools(), func(ctx context.Context) (*memory.Session, error) {
		if c, ok := ctx.Value(sessionKey{}).(*memory.Session); ok {
			return c, nil
		}
		return nil, ErrNoSession
	})
}

// WithSession returns a copy of ctx that carries c, the conversation the
// tools of [StoreTools] run their calls in. Pass it to the agent's Generate
// or Stream, or to a graph's Invoke. A nil c leaves ctx without one.
func WithSession(ctx context.Context, c *memory.Session) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, c)
}

// sessionKey is the context key of WithSession.
type sessionKey struct{}

func wrap(mts []memory.Tool, session func(context.Context) (*memory.Session, error)) []tool.BaseTool {
	out := make([]tool.BaseTool, 0, len(mts))
	for _, mt := range mts {
		out = append(out, &invokable{mem: mt, session: session})
	}
	return out
}

// invokable is one memory tool as an eino tool.
type invokable struct {
	mem     memory.Tool // its name, description and schema
	session func(context.Context) (*memory.Session, error)
}

var _ tool.InvokableTool = (*invokable)(nil)

// Info returns the tool's name, description and parameters: the library's
// JSON Schema, as eino's jsonschema.Schema. Each call returns a new value.
func (t *invokable) Info(context.Context) (*schema.ToolInfo, error) {
	js := new(jsonschema.Schema)
	if err := json.Unmarshal(t.mem.InputSchema, js); err != nil {
		return nil, fmt.Errorf("%s: schema: %w", t.mem.Name, err)
	}
	if len(js.Required) == 0 {
		// jsonschema leaves out an empty "required"; strict function
		// calling wants it listed, as the library's schema does.
		js.Extras = map[string]any{"required": []string{}}
	}
	return &schema.ToolInfo{
		Name:        t.mem.Name,
		Desc:        t.mem.Description,
		ParamsOneOf: schema.NewParamsOneOfByJSONSchema(js),
	}, nil
}

// InvokableRun runs the tool with the model's JSON arguments in the
// conversation. A mistake of the model comes back as the result, starting
// with "Error: "; a host failure as an error that wraps the library's.
func (t *invokable) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	c, err := t.session(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.mem.Name, err)
	}
	res, err := c.Call(ctx, t.mem.Name, json.RawMessage(argumentsInJSON))
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.mem.Name, err)
	}
	return res.Content(), nil
}
