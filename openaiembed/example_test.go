package openaiembed_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/openaiembed"
)

// A store whose searches are also semantic, with Ollama's
// nomic-embed-text (ollama pull nomic-embed-text). For OpenAI:
// openaiembed.New("https://api.openai.com/v1", "text-embedding-3-small",
// &openaiembed.Options{APIKey: key}).
func ExampleNew() {
	emb, err := openaiembed.New("http://localhost:11434/v1", "nomic-embed-text", nil)
	if err != nil {
		log.Fatal(err)
	}
	store, err := memory.Open("data/memory", &memory.Options{Embedder: emb})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	// memory_search, Store.Search and Store.Context now find "Sold the
	// sedan" for "automobile".
	hits, err := store.Search(context.Background(), "which automobile did I sell?", nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Println(h.Path, h.Line, h.Title)
	}
}
