package memory

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Facts are the closed set of files under facts/ (Options.FactFiles), loaded
// whole into prompts and so held to a budget: the sum of their sizes in
// bytes may not exceed Options.FactsBudget after any change that makes them
// larger. A change that does not make them larger is always allowed, so a
// person's over-budget file can be condensed in steps.

// factSizes returns the configured fact files that exist, in configured
// order, with their sizes; a file that is not a regular file in the root
// is not listed.
func (s *Store) factSizes(ctx context.Context) ([]Entry, error) {
	entries, err := s.b.List(ctx, factsDir)
	if err != nil {
		return nil, err
	}
	sizes := make([]Entry, 0, len(s.opts.FactFiles))
	for _, f := range s.opts.FactFiles {
		if j := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == factPath(f.Name) }); j >= 0 {
			sizes = append(sizes, entries[j])
		}
	}
	return sizes, nil
}

// A budget is the limit on the summed size of the files of a folder: the
// fact files, or the world topics.
type budget struct {
	dir   string                                               // "facts" or "world"
	limit int                                                  // bytes
	files func(s *Store, ctx context.Context) ([]Entry, error) // the files it spans, with their sizes
	what  string                                               // what they are, for messages: "the fact files"
	keep  string                                               // what to keep when condensing
}

// budgetOf returns the budget the fact file or world topic t counts
// against.
func (s *Store) budgetOf(t target) budget {
	if t.topic != "" {
		return budget{worldDir, s.opts.WorldBudget, (*Store).worldSizes, "the world topics", "keep only the facts every agent needs, one short line each"}
	}
	return budget{factsDir, s.opts.FactsBudget, (*Store).factSizes, "the fact files", "keep only the facts worth loading into every prompt, one short line each"}
}

// checkBudget refuses a change of a fact file or world topic from oldSize
// to newSize bytes that would take its folder over its budget bu; list
// lists the folder. The change path calls it for a change that grows the
// file only.
func (s *Store) checkBudget(op string, t target, bu budget, list func() ([]Entry, error), oldSize, newSize int) error {
	listed, err := list()
	if err != nil {
		return hostErr(op, t.path, err)
	}
	files := slices.Clone(listed) // sorted below; the listing is shared
	now := 0
	for _, e := range files {
		now += int(e.Size)
	}
	after := now - oldSize + newSize
	if after <= bu.limit {
		return nil
	}
	what := fmt.Sprintf("%s/ would be %s bytes, over the %s-byte budget", bu.dir, thousands(after), thousands(bu.limit))
	// What the change itself brings: the whole file for a write, what it
	// adds for a patch or an append.
	own := newSize - oldSize
	if op == "write" {
		own = newSize
	}
	if own > bu.limit {
		// Condensing what is there cannot make room: the change is too big.
		if now > 0 {
			what += fmt.Sprintf(" (the change alone is %s bytes)", thousands(own))
		}
		return modelErr(op, t.path, ErrBudgetExceeded, what,
			"; nothing was written. Make this change shorter: "+bu.keep)
	}
	// Name the files that hold the most: they are the ones to condense.
	slices.SortStableFunc(files, func(a, b Entry) int { return int(b.Size - a.Size) })
	var held []string
	for i, e := range files {
		if e.Size == 0 {
			continue
		}
		if i == maxNamed {
			held = append(held, "…")
			break
		}
		held = append(held, fmt.Sprintf("%s has %s", e.Name, thousands(int(e.Size))))
	}
	what += fmt.Sprintf(" (it is %s bytes now: %s)", thousands(now), strings.Join(held, ", "))
	return modelErr(op, t.path, ErrBudgetExceeded, what,
		"; nothing was written. Condense "+bu.what+" first: memory_read one, then memory_write a shorter version that merges or drops outdated facts")
}

// maxNamed bounds the files a budget's error names, the largest first:
// the world may have many topics.
const maxNamed = 8

// title is the "# " heading the library gives a file that has none:
// "User" for facts/user.md, "Project apollo" for world/project-apollo.md,
// "2026-02 Episodes" for episodes/2026-02.md.
func (s *Store) title(t target) string {
	if t.root == proceduresFile {
		return "Procedures"
	}
	if t.isEpisode() {
		return t.month + " Episodes"
	}
	stem := strings.TrimSuffix(path.Base(t.path), ".md")
	stem = strings.NewReplacer("-", " ", "_", " ").Replace(stem)
	r := []rune(stem)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func (s *Store) deriveSummary(t target, d *markdown.Doc) string {
	if t.root == proceduresFile {
		return proceduresSummary(d)
	}
	if t.isEpisode() {
		titles := make([]string, 0, len(d.Entries))
		for _, e := range d.Entries {
			if title := printable(e.Title); title != "" {
				titles = append(titles, title)
			}
		}
		return joinFit(titles, ", ", true, "no entries yet")
	}
	// The labels in order, each once, until they fill more than the
	// summary holds: joinFit keeps the first that fit.
	var facts []string
	seen := map[string]bool{}
	size := 0
	for _, it := range d.Items {
		if size > summaryMax {
			break
		}
		if l := factLabel(printable(it.Text)); l != "" && !seen[l] {
			seen[l] = true
			facts = append(facts, l)
			size += utf8.RuneCountInString(l) + len("; ")
		}
	}
	return joinFit(facts, "; ", false, "no facts yet")
}

// factLabel is how a derived summary names a fact: by its label, the one
// to three words before a colon that ends a word ("Name" for "Name: Zhang
// San", "姓名" for "姓名：张三"), or else by its first words and "…"
// ("Tavily returns stale…"; a fact of one word, its first characters:
// "vegetaria…"). A summary line made of labels never repeats a whole fact
// line, so a memory_patch of that line matches once.
func factLabel(text string) string {
	for i, r := range text {
		if r == '：' || r == ':' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t') {
			if label := strings.TrimSpace(text[:i]); label != "" && len(strings.Fields(label)) <= 3 {
				return label
			}
			break
		}
	}
	words := strings.Fields(text)
	switch {
	case len(words) > 1:
		return strings.Join(words[:min(3, len(words)-1)], " ") + "…"
	case len(words) == 1 && utf8.RuneCountInString(words[0]) > 1:
		r := []rune(words[0])
		return string(r[:min(20, len(r)-1)]) + "…"
	}
	return strings.Join(words, "")
}

// worldSizes lists the topics in world/ with their sizes, in name order.
func (s *Store) worldSizes(ctx context.Context) ([]Entry, error) {
	entries, err := s.b.List(ctx, worldDir)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(entries, func(e Entry) bool { return !paths.IsTopic(e.Name) }), nil
}
