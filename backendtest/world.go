package backendtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mdmemory/memory"
)

const topic = "world/project-apollo.md"

// agents opens two Stores, each on a Backend of its own, sharing the world
// topics of a third, with opts; it returns them and the shared Backend. The
// first agent's Backend is the case's.
func (e *env) agents(opts memory.Options) (a, b *memory.Store, world memory.Backend) {
	e.t.Helper()
	world = e.open()
	opts.World = world
	a = e.store(&opts)
	own := e.b
	e.b = e.open()
	b = e.store(&opts)
	e.b = own
	return a, b, world
}

func testSharedWorld(t *testing.T, e *env) {
	a, b, world := e.agents(memory.Options{})

	// What one agent records in a topic, the other sees by every way in.
	e.appendTo(a, topic, "- Launch: 2026-03-01 from the north pad\n- Lead: Li Wei")
	if fi := info(t, e.list(b), topic); fi.Summary != "Launch; Lead" || fi.Size == 0 {
		t.Fatalf("the other agent lists %+v, want the summary %q", fi, "Launch; Lead")
	}
	if got := e.read(b, topic); !strings.Contains(got, "- Lead: Li Wei\n") || !strings.HasPrefix(got, "# Project apollo\n") {
		t.Fatalf("the other agent reads %q", got)
	}
	if hits := e.search(b, "north pad"); len(hits) == 0 || hits[0].Path != topic {
		t.Fatalf("the other agent's search: %v, want %s first", hitPaths(hits), topic)
	}
	msg, err := b.NewSession().IndexMessage(e.ctx)
	if err != nil || !strings.Contains(msg, "- "+topic+" (") || !strings.Contains(msg, "): Launch; Lead\n") {
		t.Fatalf("the other agent's index message (%v):\n%s", err, msg)
	}

	// The topic is the shared Backend's, and only there; each agent's own
	// facts stay its own.
	if c, err := world.Read(e.ctx, topic, -1); err != nil || !strings.Contains(string(c.Data), "Li Wei") {
		t.Fatalf("the shared Backend holds %q (%v)", c.Data, err)
	}
	if e.rawExists(topic) {
		t.Fatalf("%s is in the agent's own Backend too", topic)
	}
	e.write(a, userFile, "# User\n\n> Summary: who\n\n- Name: Zhang San\n")
	if slices.ContainsFunc(e.list(b), func(f memory.FileInfo) bool { return f.Path == userFile }) {
		t.Fatal("one agent's fact file is listed by the other")
	}

	// The fact guard compares a new line with every topic, whoever wrote it.
	wantErr(t, "the other agent repeating a world fact", b.Append(e.ctx, topic, "- Launch: 2026-03-01 from the north pad", ""), memory.ErrDuplicateFact)
	wantErr(t, "a temporary world fact", b.Append(e.ctx, "world/office.md", "- Parking: closed for now", ""), memory.ErrTemporaryFact)
	wantErr(t, "a repeat in another topic", b.Append(e.ctx, "world/launches.md", "- Launch: 2026-03-01 from the north pad", ""), memory.ErrDuplicateFact)

	// A conversation of one agent does not overwrite what the other changed
	// since it read the topic.
	conv := a.NewSession()
	v, text := e.readTool(conv, topic)
	if _, err := b.Patch(e.ctx, topic, []memory.Patch{{OldText: "Li Wei", NewText: "Wang Fang"}}); err != nil {
		t.Fatal(err)
	}
	for _, version := range []any{v, nil} {
		r := e.call(conv, "memory_write", map[string]any{"path": topic, "content": text + "- Budget: 3 million\n", "version": version})
		wantConflict(t, fmt.Sprintf("memory_write (version %v) after the other agent's patch", version), r, "changed since")
	}
	if got := e.read(a, topic); !strings.Contains(got, "Wang Fang") || strings.Contains(got, "Budget") {
		t.Fatalf("after the refused write: %q", got)
	}

	// A change made through the shared Backend (a person, another client)
	// is seen by both agents' next read, list and search.
	c, err := world.Read(e.ctx, topic, -1)
	if err != nil {
		t.Fatal(err)
	}
	hand := strings.Replace(string(c.Data), "north pad", "south pad", 1)
	if _, err := Put(e.ctx, world, topic, []byte(hand), c.Version); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*memory.Store{a, b} {
		if got := e.read(s, topic); got != hand {
			t.Fatalf("after the change through the shared Backend, Read gives %q", got)
		}
		if hits := e.search(s, "south pad"); len(hits) == 0 || hits[0].Path != topic {
			t.Fatalf("after the change through the shared Backend, search gives %v", hitPaths(hits))
		}
		if hits := e.search(s, "north"); slices.Contains(hitPaths(hits), topic) {
			t.Fatalf("after the change through the shared Backend, search still finds the old text in %s", topic)
		}
	}
}

func testSharedWorldBudget(t *testing.T, e *env) {
	const budget, workers, each = 1200, 4, 12
	a, b, world := e.agents(memory.Options{WorldBudget: budget})

	// Two agents, several writers each, add distinct facts to topics at
	// once: together they fill the budget and never pass it.
	var wg sync.WaitGroup
	var mu sync.Mutex
	written, refused := 0, 0
	errs := make(chan error, 2*workers)
	for si, s := range []*memory.Store{a, b} {
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					id := si*workers + w
					line := fmt.Sprintf("- Site %s: %s", token(id, i), strings.Repeat("z", 20))
					err := s.Append(e.ctx, fmt.Sprintf("world/region-%d.md", i%3), line, "")
					mu.Lock()
					switch {
					case err == nil:
						written++
					case errors.Is(err, memory.ErrBudgetExceeded):
						refused++
					default:
						errs <- fmt.Errorf("agent %d, writer %d, append %d: %w", si, w, i, err)
					}
					mu.Unlock()
					if err != nil && !errors.Is(err, memory.ErrBudgetExceeded) {
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, err := world.List(e.ctx, "world")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, en := range entries {
		total += en.Size
	}
	if total > budget || written == 0 || refused == 0 {
		t.Fatalf("the topics hold %d bytes (budget %d) after %d appends written and %d refused", total, budget, written, refused)
	}
	// Every fact written is in a topic once.
	var all strings.Builder
	for _, en := range entries {
		all.WriteString(e.read(a, en.Name))
	}
	if n := strings.Count(all.String(), "- Site "); n != written {
		t.Fatalf("the topics hold %d facts, want the %d written", n, written)
	}
	wantErr(t, "an append over the budget", b.Append(e.ctx, "world/region-0.md", "- Another: "+strings.Repeat("q", 40), ""), memory.ErrBudgetExceeded)
}
