package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/openaiembed"
)

// Meaning-search from the command line: the commands that search (search,
// context, mcp) take an OpenAI-compatible embeddings endpoint, and search
// by meaning as well as by keywords when one is given. The key is read from
// the environment alone, so that it shows in no process list, no --help
// and no error.

// The environment of the embeddings endpoint.
const (
	embedURLEnv   = "MDMEMORY_EMBED_URL"
	embedModelEnv = "MDMEMORY_EMBED_MODEL"
	embedKeyEnv   = "MDMEMORY_EMBED_KEY"
	openAIKeyEnv  = "OPENAI_API_KEY"
)

// embedFlags are --embed-url and --embed-model.
type embedFlags struct {
	url, model string
}

// addEmbedFlags declares --embed-url and --embed-model on fs.
func addEmbedFlags(fs *flag.FlagSet) *embedFlags {
	f := &embedFlags{}
	fs.StringVar(&f.url, "embed-url", "", "search by meaning too, with the OpenAI-compatible embeddings API at URL, such as http://localhost:11434/v1 (default $"+embedURLEnv+"; the key, if it needs one, from $"+embedKeyEnv+" or $"+openAIKeyEnv+")")
	fs.StringVar(&f.model, "embed-model", "", "with --embed-url, the embedding model, such as nomic-embed-text (default $"+embedModelEnv+")")
	return f
}

// use sets e.embedder to the Embedder the flags and the environment name,
// or leaves it nil when they name none.
func (f *embedFlags) use(e *env) error {
	emb, err := f.embedder(e.getenv, e.stderr)
	if err != nil {
		return err
	}
	if emb != nil {
		e.embedder = emb
	}
	return nil
}

// embedder returns the Embedder of the endpoint the flags, or else the
// environment, name: nil when they name none. Its failures are reported on
// stderr (see reporting).
func (f *embedFlags) embedder(getenv func(string) string, stderr io.Writer) (memory.Embedder, error) {
	url := cmp.Or(f.url, getenv(embedURLEnv))
	model := cmp.Or(f.model, getenv(embedModelEnv))
	switch {
	case url == "" && model == "":
		return nil, nil
	case url == "":
		return nil, usageErr{"--embed-model needs --embed-url (or $" + embedURLEnv + "): the embeddings API to ask"}
	case model == "":
		return nil, usageErr{"--embed-url needs --embed-model (or $" + embedModelEnv + "): the model to ask for, such as nomic-embed-text"}
	}
	key := embedKey(url, getenv)
	c, err := openaiembed.New(url, model, &openaiembed.Options{APIKey: key})
	if err != nil {
		return nil, usageErr{"--embed-url: " + strings.TrimPrefix(err.Error(), "openaiembed: ")}
	}
	return &reporting{c: c, key: key, stderr: stderr}, nil
}

// embedKey is the key sent to the embeddings endpoint at url:
// $MDMEMORY_EMBED_KEY, else $OPENAI_API_KEY for an https URL only. The
// latter is often set for other tools: it never goes in clear to a local
// server that needs no key, or to another host on the network.
func embedKey(url string, getenv func(string) string) string {
	if key := getenv(embedKeyEnv); key != "" {
		return key
	}
	if strings.HasPrefix(strings.ToLower(url), "https://") {
		return getenv(openAIKeyEnv)
	}
	return ""
}

// reporting is an Embedder that says on stderr, in one line, when the
// endpoint fails: the library then searches by keywords alone, as it does
// for any Embedder that fails, and the person should know why the results
// are keywords only. It says so once, then again only after the endpoint
// answered in between. The key is never in what it writes.
type reporting struct {
	c      *openaiembed.Client
	key    string
	stderr io.Writer

	mu      sync.Mutex
	failing bool
}

// Embed asks the endpoint, reporting a failure.
func (r *reporting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := r.c.Embed(ctx, texts)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		r.failing = false
	case ctx.Err() != nil:
		// Interrupted: not the endpoint's failure.
	case !r.failing:
		r.failing = true
		msg := oneLine(err)
		if r.key != "" {
			msg = strings.ReplaceAll(msg, r.key, "[key]")
		}
		fmt.Fprintf(r.stderr, "%s: the embeddings endpoint failed, so this searches by keywords alone: %s\n", programName, msg)
	}
	return vs, err
}

// Model is the endpoint's model, which names the cache of its vectors.
func (r *reporting) Model() string { return r.c.Model() }

// Floor is the model's similarity floor.
func (r *reporting) Floor() float64 { return r.c.Floor() }
