// Command openai is a small agent with long-term memory, talking to any
// OpenAI-compatible Chat Completions endpoint (OpenAI, Ollama, vLLM,
// llama.cpp server). It answers one request with the memory tools at hand,
// then lets the reflector record what is worth keeping.
//
//	MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... go run ./examples/openai "I'm Zhang San. What should I cook tonight?"
//	MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... go run ./examples/openai "What's my name?"
//
// Environment:
//
//	MODEL            the model name (required)
//	OPENAI_BASE_URL  the API's base URL; default https://api.openai.com/v1
//	OPENAI_API_KEY   the API key; required for the default base URL only,
//	                 since local servers often need none
//	MEMORY_DIR       the memory directory; default data/memory
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"github.com/mdmemory/memory"
)

const defaultBaseURL = "https://api.openai.com/v1"

// maxIterations bounds the agent's model calls for one request.
const maxIterations = 10

const systemPrompt = "You are a helpful assistant with long-term memory. " +
	"The first message lists what you remember; read the files that matter for the request before you answer."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Getenv, os.Args[1:], os.Stdout, http.DefaultClient); err != nil {
		fmt.Fprintln(os.Stderr, "openai:", err)
		os.Exit(1)
	}
}

type config struct {
	baseURL, apiKey, model, dir string
}

func configFrom(getenv func(string) string) (config, error) {
	c := config{
		baseURL: getenv("OPENAI_BASE_URL"),
		apiKey:  getenv("OPENAI_API_KEY"),
		model:   getenv("MODEL"),
		dir:     getenv("MEMORY_DIR"),
	}
	var missing []string
	if c.model == "" {
		missing = append(missing, "MODEL (the model name, such as gpt-4o-mini)")
	}
	if c.baseURL == "" {
		c.baseURL = defaultBaseURL
		if c.apiKey == "" {
			missing = append(missing, "OPENAI_API_KEY (or set OPENAI_BASE_URL to a server that needs no key)")
		}
	}
	if c.dir == "" {
		c.dir = "data/memory"
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("set %s", strings.Join(missing, " and "))
	}
	return c, nil
}

// run answers one request, prints the answer, then reflects on the task.
func run(ctx context.Context, getenv func(string) string, args []string, out io.Writer, hc *http.Client) error {
	cfg, err := configFrom(getenv)
	if err != nil {
		return err
	}
	input := strings.TrimSpace(strings.Join(args, " "))
	if input == "" {
		return errors.New(`usage: go run ./examples/openai "your request"`)
	}
	store, err := memory.Open(cfg.dir, nil)
	if err != nil {
		return err
	}
	defer store.Close()
	llm := &chatClient{baseURL: cfg.baseURL, apiKey: cfg.apiKey, model: cfg.model, http: hc}

	task, err := answer(ctx, store, llm, input)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, task.Result)

	if !memory.ShouldReflect(task) {
		fmt.Fprintln(out, "\n[memory] a trivial task: nothing to reflect on")
		return nil
	}
	ref, err := memory.NewReflector(store, llm, nil).Reflect(ctx, task)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n[memory] %s\n[memory] changed: %v\n", ref.Assessment, ref.Changed)
	return nil
}

// answer is the agent loop: the memory index as the first user message,
// then model calls and tool calls until the model answers in text.
func answer(ctx context.Context, store *memory.Store, llm memory.LLM, input string) (memory.Task, error) {
	conv := store.NewSession() // one conversation: what it reads, it may change
	index, err := conv.IndexMessage(ctx)
	if err != nil {
		return memory.Task{}, err
	}
	tools := conv.Tools()
	// The reflector sees the task from the request on; it gets the memory
	// itself in its system prompt.
	msgs := []memory.Message{{Role: "user", Content: index}, {Role: "user", Content: input}}
	task := memory.Task{Input: input}
	for task.Iterations < maxIterations {
		resp, err := llm.Complete(ctx, memory.Request{System: systemPrompt, Messages: msgs, Tools: tools})
		if err != nil {
			return task, err
		}
		task.Iterations++
		msgs = append(msgs, memory.Message{Role: "assistant", Content: resp.Content, ToolCalls: resp.ToolCalls})
		if len(resp.ToolCalls) == 0 {
			task.Result = resp.Content
			task.Messages = msgs[1:]
			return task, nil
		}
		for _, c := range resp.ToolCalls {
			text, err := callTool(ctx, conv, c)
			if err != nil {
				return task, err
			}
			task.Actions++
			msgs = append(msgs, memory.Message{Role: "tool", Content: text, ToolCallID: c.ID})
		}
	}
	return task, fmt.Errorf("no answer after %d model calls", maxIterations)
}

// callTool runs one memory tool in the conversation. A mistake of the
// model goes back to it as text starting "Error: " (ToolResult.Content), as
// the reflector does; only a host failure is a Go error.
func callTool(ctx context.Context, conv *memory.Session, c memory.ToolCall) (string, error) {
	res, err := conv.Call(ctx, c.Name, c.Arguments)
	return res.Content(), err
}
