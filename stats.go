package memory

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
	"github.com/mdmemory/memory/internal/paths"
)

// Stats describes what a store holds and what it puts into prompts.
type Stats struct {
	FactsSize   int64 `json:"factsSize"`   // the fact files' bytes together, against FactsBudget
	FactsBudget int   `json:"factsBudget"` // Options.FactsBudget

	WorldTopics int   `json:"worldTopics,omitempty"` // the shared world topics that can be read; 0 without Options.World
	WorldSize   int64 `json:"worldSize,omitempty"`   // their bytes together, against WorldBudget
	WorldBudget int   `json:"worldBudget,omitempty"` // Options.WorldBudget, when Options.World is set

	PersonaSize      int64 `json:"personaSize,omitempty"`      // persona.md's bytes; 0 when there is none
	ProceduresSize   int64 `json:"proceduresSize,omitempty"`   // procedures.md's bytes, against ProceduresBudget; 0 when there is none
	ProceduresBudget int   `json:"proceduresBudget,omitempty"` // Options.ProceduresBudget

	// Files counts the memory files on disk that can be read: persona.md,
	// the fact files and procedures.md when they exist, the world topics,
	// and every month's file and parts. The archive is not counted, nor is
	// a file List reports as unreadable.
	Files int `json:"files"`

	Months         []MonthStats `json:"months"`         // newest first, empty (not nil) when there is none; a month List reports as unreadable is left out
	ArchivedMonths int          `json:"archivedMonths"` // compacted months, whose originals are in the archive

	IndexMessage    PromptSize `json:"indexMessage"`    // what IndexMessage gives now
	ReflectorPrompt PromptSize `json:"reflectorPrompt"` // the reflector's system prompt now, with persona.md but without ReflectorOptions.Persona
}

// MonthStats describes one month of episodes.
type MonthStats struct {
	Month     string `json:"month"`               // "2026-02"
	Entries   int    `json:"entries"`             // entries in the month's file and its parts
	Size      int64  `json:"size"`                // their bytes together
	Parts     int    `json:"parts,omitempty"`     // full parts besides the month's file
	Compacted bool   `json:"compacted,omitempty"` // compacted: its originals are in the archive
}

// PromptSize is the size of a text that goes into prompts: in bytes, and
// in tokens estimated at 4 characters a token, as the reflector counts
// them when it fits a conversation into the model's window.
type PromptSize struct {
	Size   int `json:"size"`
	Tokens int `json:"tokens"`
}

func promptSize(s string) PromptSize {
	n := utf8.RuneCountInString(s)
	return PromptSize{Size: len(s), Tokens: (n + charsPerToken - 1) / charsPerToken}
}

// Stats reads the whole store (every month's files are parsed to count
// their entries) and renders the prompts to size them. It returns the
// errors of [Store.List] and [Session.IndexMessage]; a month file that cannot
// be read counts no entries.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	st := Stats{FactsBudget: s.opts.FactsBudget, ProceduresBudget: s.opts.ProceduresBudget, Months: []MonthStats{}} // "months": [] in JSON, not null
	if s.opts.World != nil {
		st.WorldBudget = s.opts.WorldBudget
	}
	files, err := s.List(ctx)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		month, isMonth := paths.MonthOf(f.Path)
		switch {
		case f.Error != "":
		case f.Path == personaFile:
			st.PersonaSize = f.Size
			st.Files++
		case f.Path == proceduresFile:
			st.ProceduresSize = f.Size
			st.Files++
		case strings.HasPrefix(f.Path, worldDir+"/"):
			st.WorldTopics++
			st.WorldSize += f.Size
			st.Files++
		case isMonth:
			m := MonthStats{Month: month, Size: f.Size, Parts: f.Parts, Compacted: f.Compacted}
			if m.Compacted {
				st.ArchivedMonths++
			}
			st.Months = append(st.Months, m)
		default:
			st.FactsSize += f.Size
			st.Files++
		}
	}
	end, err := s.begin(ctx, "stats", "")
	if err != nil {
		return st, err
	}
	months, _ := s.monthsIn(ctx, episodesDir)
	end()
	for i := range st.Months {
		for _, m := range months {
			if m.month != st.Months[i].Month {
				continue
			}
			st.Files += len(m.paths())
			for _, p := range m.paths() {
				text, err := s.Read(ctx, p)
				if classify(err) == faultStopped {
					return st, err
				}
				st.Months[i].Entries += len(markdown.Parse([]byte(text)).Entries)
			}
		}
	}
	msg, err := s.indexMessage(ctx)
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
