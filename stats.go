package memory

import (
	"context"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
)

// Stats describes what a store holds and what it puts into prompts: seed
// 004's getStats, with seed 003's accounting of prompt sizes.
type Stats struct {
	FactsBytes  int // the fact files' bytes together, against FactsBudget
	FactsBudget int // Options.FactsBudget

	// Files counts the memory files on disk: the fact files that exist and
	// every month's file and parts. The archive is not counted.
	Files int

	Months         []MonthStats // newest first
	ArchivedMonths int          // months whose originals Compact archived

	IndexMessage    PromptSize // what IndexMessage gives now
	ReflectorPrompt PromptSize // the reflector's system prompt now, without a persona
}

// MonthStats describes one month of episodes.
type MonthStats struct {
	Month     string // "2026-02"
	Entries   int    // entries in the month's file and its parts
	Bytes     int64  // their size together
	Parts     int    // full parts besides the month's file
	Compacted bool   // its originals are in the archive
}

// PromptSize is the size of a text that goes into prompts: in bytes, and
// in tokens estimated at 4 characters a token, as the reflector counts
// them when it fits a conversation into the model's window.
type PromptSize struct {
	Bytes  int
	Tokens int
}

func promptSize(s string) PromptSize {
	n := utf8.RuneCountInString(s)
	return PromptSize{Bytes: len(s), Tokens: (n + charsPerToken - 1) / charsPerToken}
}

// Stats reads the whole store (every month's files are parsed to count
// their entries) and renders the prompts to size them. It returns the
// errors of [Store.List] and [Store.IndexMessage]; a month file that cannot
// be read counts no entries.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{FactsBudget: s.opts.FactsBudget}
	files, err := s.List(ctx)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		switch {
		case f.Error != "":
		case isMonthPath(f.Path):
			m := MonthStats{Month: f.Path[len(episodesDir)+1 : len(episodesDir)+8], Bytes: f.Size, Parts: f.Parts, Compacted: f.Compacted}
			if m.Compacted {
				st.ArchivedMonths++
			}
			st.Months = append(st.Months, m)
		default:
			st.FactsBytes += int(f.Size)
			st.Files++
		}
	}
	end, err := s.begin(ctx, "stats", "")
	if err != nil {
		return st, err
	}
	months, _ := s.monthsIn(episodesDir)
	end()
	for i := range st.Months {
		for _, m := range months {
			if m.month != st.Months[i].Month {
				continue
			}
			st.Files += len(m.paths())
			for _, p := range m.paths() {
				text, err := s.Read(ctx, p)
				if stops(err) {
					return st, err
				}
				st.Months[i].Entries += len(markdown.Parse([]byte(text)).Entries)
			}
		}
	}
	msg, err := s.IndexMessage(ctx)
	if err != nil {
		return st, err
	}
	st.IndexMessage = promptSize(msg)
	r := NewReflector(s, LLMFunc(nil), nil)
	prompt, err := r.systemPrompt(ctx, s.NewSession())
	if err != nil {
		return st, err
	}
	st.ReflectorPrompt = promptSize(prompt)
	return st, nil
}
