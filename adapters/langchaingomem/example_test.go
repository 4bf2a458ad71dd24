package langchaingomem_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/langchaingomem"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// replayLLM is a stand-in for a real model: it answers with its replies in
// turn. Any llms.Model (openai.New(), ollama.New(), ...) takes its place.
type replayLLM []string

func (r *replayLLM) GenerateContent(_ context.Context, _ []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	reply := (*r)[0]
	*r = (*r)[1:]
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply}}}, nil
}

func (r *replayLLM) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, r, prompt, opts...)
}

// The wiring the README shows, with a model that appends a fact.
func Example() {
	dir, _ := os.MkdirTemp("", "langchaingomem-")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	llm := &replayLLM{
		"Thought: I should remember the name.\nAction: memory_append\nAction Input: " +
			`{"path": "facts/user.md", "entry": "- Name: Zhang San", "summary": null}`,
		"Thought: I now know the final answer\nFinal Answer: Hello, Zhang San.",
	}
	question := "I'm Zhang San."

	// The user's lines:
	store, err := memory.Open(filepath.Join(dir, "memory"), &memory.Options{Now: feb26})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	conv := store.NewSession()         // one per conversation
	index, _ := conv.IndexMessage(ctx) // the memory index, to start the task with
	agent := agents.NewOneShotAgent(llm, langchaingomem.Tools(conv))
	answer, err := chains.Run(ctx, agents.NewExecutor(agent), index+"\n\n"+question)

	fmt.Println(answer, err)
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
