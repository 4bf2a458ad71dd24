package adkmem_test

import (
	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/adapters/adkmem"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/tool"
)

// The README's wiring: a memory directory, and the toolset in the agent's
// config. The runner, session service and model are the program's own.
func ExampleNew() {
	var llm model.LLM // the program's model, such as gemini.NewModel's

	newAgent := func() (agent.Agent, error) {
		store, err := memory.Open("data/memory", nil)
		if err != nil {
			return nil, err
		}
		// The store lives as long as the agent; close it where the program ends.
		return llmagent.New(llmagent.Config{
			Name:     "assistant",
			Model:    llm,
			Toolsets: []tool.Toolset{adkmem.New(store, &adkmem.Options{Index: true})},
		})
	}
	_ = newAgent
}
