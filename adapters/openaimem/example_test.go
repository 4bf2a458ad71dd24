package openaimem_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/openaimem"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// ask is the README's loop, line for line but for the directory.
func ask(ctx context.Context, client openai.Client, dir, input string) (string, error) {
	store, err := memory.Open(dir, nil)
	if err != nil {
		return "", err
	}
	defer store.Close()

	conv := store.NewSession() // one conversation: what it reads, it may change
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_4Mini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(input)},
		Tools:    openaimem.Tools(conv),
	}
	for range 10 {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			return "", err
		}
		msg := completion.Choices[0].Message
		if len(msg.ToolCalls) == 0 {
			return msg.Content, nil
		}
		params.Messages = append(params.Messages, msg.ToParam())
		answers, err := openaimem.Dispatch(ctx, conv, msg)
		if err != nil {
			return "", err
		}
		params.Messages = append(params.Messages, answers...)
	}
	return "", errors.New("no answer after 10 model calls")
}

// The README's loop, against a fake Chat Completions server whose model
// appends a fact, then answers.
func ExampleDispatch() {
	api := &fakeAPI{replies: []string{
		`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[` +
			`{"id":"call_1","type":"function","function":{"name":"memory_append","arguments":"{\"path\":\"facts/user.md\",\"entry\":\"- Name: Ada\",\"summary\":null}"}}]}}]}`,
		`{"id":"c2","object":"chat.completion","created":2,"model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Nice to meet you, Ada.","refusal":null}}]}`,
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))

	dir, err := os.MkdirTemp("", "openaimem-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	text, err := ask(context.Background(), client, dir, "I'm Ada.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(text)
	fact, _ := os.ReadFile(filepath.Join(dir, "facts", "user.md"))
	fmt.Print(string(fact))
	// Output:
	// Nice to meet you, Ada.
	// # User
	//
	// > Summary: Name
	//
	// - Name: Ada
}
