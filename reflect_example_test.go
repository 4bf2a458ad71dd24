package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mdmemory/memory"
)

// A scripted model stands in for a real one: it records the user's name,
// then, once it sees the tool's result, says what it did.
func ExampleReflector_Reflect() {
	dir, err := os.MkdirTemp("", "memory-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := memory.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	llm := memory.LLMFunc(func(ctx context.Context, req memory.Request) (memory.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return memory.Response{Content: "Recorded the user's name."}, nil
		}
		return memory.Response{ToolCalls: []memory.ToolCall{{
			ID:        "call_1",
			Name:      "memory_append",
			Arguments: json.RawMessage(`{"path": "facts/user.md", "entry": "- Name: Zhang San", "summary": null}`),
		}}}, nil
	})

	task := memory.Task{
		Input:      "I'm Zhang San. Plan my week.",
		Iterations: 3,
		Actions:    2,
		Result:     "Here is your week: ...",
	}
	if !memory.ShouldReflect(task) {
		return
	}
	r := memory.NewReflector(store, llm, &memory.ReflectorOptions{
		Persona: memory.Persona{Name: "Pegasus", Role: "a personal assistant"},
	})
	ref, err := r.Reflect(context.Background(), task)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ref.Assessment)
	fmt.Println("changed:", ref.Changed)

	text, err := store.Read(context.Background(), "facts/user.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(text)
	// Output:
	// Recorded the user's name.
	// changed: [facts/user.md]
	// # User
	//
	// > Summary: Name
	//
	// - Name: Zhang San
}
