package memory

import (
	"fmt"
	"strings"

	"github.com/mdmemory/memory/internal/markdown"
)

// procedureExample is the rule the model-facing texts show.
const procedureExample = "- When the flight search returns stale prices: cross-check the airline's site"

// proceduresBudget refuses procedures.md over Options.ProceduresBudget.
func (s *Store) proceduresBudget(op string, t target, data []byte) error {
	if len(data) <= s.opts.ProceduresBudget {
		return nil
	}
	return modelErr(op, t.path, ErrBudgetExceeded, fmt.Sprintf("%s would be %s bytes, over its %s-byte budget", t.path, thousands(len(data)), thousands(s.opts.ProceduresBudget)),
		"; nothing was written. Condense it first: memory_read it, then memory_write it with related rules merged and outdated ones dropped")
}

// procedureLines holds a change of procedures.md to the line format. Only
// the lines the change brings are checked, so a person's line in another
// shape does not block the file.
func procedureLines(op string, t target, old, data []byte) error {
	had := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		had[l] = true
	}
	d := markdown.Parse(data)
	body := string(data[d.Body().Start:])
	line := strings.Count(string(data[:d.Body().Start]), "\n")
	for _, l := range strings.Split(body, "\n") {
		line++
		if had[l] || strings.TrimSpace(l) == "" {
			continue
		}
		if _, _, ok := procedure(l); !ok {
			return modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("line %d, %q, is not a procedure", line, cut(printable(l), 80)),
				"; each line of "+proceduresFile+" is one rule in the form \"- When <situation>: <action>\", such as \""+procedureExample+
					"\". A fact about the person belongs in a fact file, a task's story in an episode. Nothing was written")
		}
	}
	return nil
}

// procedure splits a line "- When <situation>: <action>" into its
// situation and action.
func procedure(line string) (situation, action string, ok bool) {
	rest, ok := strings.CutPrefix(line, "- When ")
	if !ok {
		return "", "", false
	}
	situation, action, ok = strings.Cut(rest, ": ")
	situation, action = strings.TrimSpace(situation), strings.TrimSpace(action)
	return situation, action, ok && situation != "" && action != ""
}

// proceduresSummary names the situations of the rules, the first ones that
// fit: "the flight search returns stale prices; a deploy fails".
func proceduresSummary(d *markdown.Doc) string {
	var situations []string
	for _, it := range d.Items {
		if sit, _, ok := procedure("- " + printable(it.Text)); ok {
			situations = append(situations, sit)
		}
	}
	return joinFit(situations, "; ", false, "no procedures yet")
}
