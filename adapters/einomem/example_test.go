package einomem_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/einomem"
)

// replayModel is a stand-in for a real chat model: it answers with its
// replies in turn. Any model.ToolCallingChatModel (openai.NewChatModel,
// ark, ollama, ...) takes its place.
type replayModel []*schema.Message

func (r *replayModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	reply := (*r)[0]
	*r = (*r)[1:]
	return reply, nil
}

func (r *replayModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := r.Generate(ctx, in, opts...)
	return schema.StreamReaderFromArray([]*schema.Message{msg}), err
}

func (r *replayModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return r, nil
}

// The wiring the README shows: a react agent built once, and a
// conversation run through it, with a model that appends a fact.
func Example() {
	dir, _ := os.MkdirTemp("", "einomem-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	llm := &replayModel{
		schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function", Function: schema.FunctionCall{
			Name: "memory_append", Arguments: `{"path": "facts/user.md", "entry": "- Name: Zhang San", "summary": null}`,
		}}}),
		schema.AssistantMessage("Hello, Zhang San.", nil),
	}
	question := "I'm Zhang San."

	// The user's lines:
	store, err := memory.Open(filepath.Join(dir, "memory"), &memory.Options{Now: feb26})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: llm,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: einomem.StoreTools(store)},
	})

	conv := store.Session("conversation-42") // or store.NewSession() per task
	index, _ := conv.IndexMessage(ctx)       // the memory index, to start the task with
	answer, err := agent.Generate(einomem.WithSession(ctx, conv), []*schema.Message{schema.UserMessage(index), schema.UserMessage(question)})

	fmt.Println(answer.Content, err)
	user, _ := store.Read(ctx, "facts/user.md")
	fmt.Println(strings.TrimSpace(user))
	// Output:
	// Hello, Zhang San. <nil>
	// # User
	//
	// > Summary: Name
	//
	// - Name: Zhang San
}
