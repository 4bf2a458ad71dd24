package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mdmemory/memory/internal/markdown"
)

// The two files at the root of a memory, beside facts/ and episodes/.
//
// persona.md is the person's: who the agent is, written by hand. The
// sandbox lets the tools read it and refuses every change to it, as it
// refuses changes to the originals Compact archived. It opens the
// reflector's system prompt, and Store.Persona gives it to a host for its
// own prompts, unframed: it is the person's instruction, not recorded data,
// and only someone with access to the memory's storage can write it. What
// goes into a prompt is cut at personaMax bytes (8 KiB).
//
// procedures.md holds rules learned from experience, one a line, in the
// fixed format "- When <situation>: <action>", enforced on every change the
// library makes. It sits at the root, not under facts/, because it is not a
// fact file: facts are loaded whole into every prompt and share the facts
// budget, while procedures are looked up (memory_search indexes each rule,
// and the index message names the file) and loaded whole only when a host
// wants them; so they have a budget of their own, Options.ProceduresBudget.

// personaMax bounds, in bytes, how much of persona.md [Store.Persona] gives
// and the reflector's system prompt shows: a persona is a few hundred
// words, and a larger file is cut at a line with a note rather than allowed
// to crowd out the rest of a prompt. memory_read shows the whole file, and
// [Store.Check] warns of one over the bound.
const personaMax = 8192

// defaultProceduresBudget is the size, in bytes, procedures.md may have
// when Options.ProceduresBudget is 0: about 40 rules, little enough to load
// whole into a prompt.
const defaultProceduresBudget = 4096

// procedureExample is the rule the model-facing texts show.
const procedureExample = "- When the flight search returns stale prices: cross-check the airline's site"

// personaRefusal is the model error for a change to persona.md.
func (s *Store) personaRefusal(op string) error {
	return modelErr(op, personaFile, ErrInvalidPath, personaFile+" is the person's own file, written by hand only: the memory tools may read it but never change it",
		"; record what you learned in "+s.factList()+", or "+proceduresFile+" instead")
}

// Persona returns the text of persona.md, the agent's persona that the
// person wrote, for a host to render first in its own prompts, before any
// memory. It returns "" and a nil error when the file does not exist or
// holds nothing but white space. A file over 8 KiB (8,192 bytes) is cut at
// the last line that fits, and a line saying so ends the text; bytes that
// are not text are shown as U+FFFD. The text ends with a newline.
//
// Persona returns an error for a closed store, a done context or a file
// that cannot be read (an *[Error] wrapping [ErrInvalidPath] for a symbolic
// link that leads outside the memory). It is safe for concurrent use, and
// reads the file on every call, so a person's edit is seen at once.
func (s *Store) Persona(ctx context.Context) (string, error) {
	end, err := s.begin(ctx, "persona", personaFile)
	if err != nil {
		return "", err
	}
	defer end()
	c, err := s.readContent(ctx, "persona", target{path: personaFile, fact: -1, root: personaFile})
	b := c.Data
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return "", err
	}
	size := c.Size
	if size > personaMax {
		b = b[:bytes.LastIndexByte(b[:min(len(b), personaMax)], '\n')+1]
	}
	text := shownText(b)
	if size > personaMax {
		text += fmt.Sprintf("(%s is %s bytes; only its first %s are shown)\n", personaFile, thousands64(size), thousands(len(b)))
	}
	return strings.TrimRight(text, " \t\r\n") + "\n", nil
}

// SetPersona replaces persona.md, the person's file, with content, only if
// it is at version want (Version of the text the caller read, or "" when
// it does not exist); otherwise it changes nothing and returns an error
// wrapping [ErrConflict]. It is for the person, through a program of
// theirs (the mdmemory command, an editor of their own): no tool and no
// reflection calls it. content is written as it is, held to the rules of
// any memory file's text: UTF-8 without NUL bytes, at most 1 MiB (see
// [Store.Write]).
func (s *Store) SetPersona(ctx context.Context, content, want string) error {
	const op = "persona"
	end, err := s.begin(ctx, op, personaFile)
	if err != nil {
		return err
	}
	defer end()
	if err := checkText(op, personaFile, "content", content); err != nil {
		return err
	}
	t := target{path: personaFile, fact: -1, root: personaFile}
	_, err = s.update(ctx, op, t, versionIs(want), func(context.Context, Held, []byte) ([]byte, error) { return []byte(content), nil })
	return err
}

// proceduresBudget refuses procedures.md over Options.ProceduresBudget.
func (s *Store) proceduresBudget(_ context.Context, c *change, _ *listing) error {
	if len(c.data) <= s.opts.ProceduresBudget {
		return nil
	}
	return modelErr(c.op, c.t.path, ErrBudgetExceeded, fmt.Sprintf("%s would be %s bytes, over its %s-byte budget", c.t.path, thousands(len(c.data)), thousands(s.opts.ProceduresBudget)),
		"; nothing was written. Condense it first: memory_read it, then memory_write it with related rules merged and outdated ones dropped")
}

// procedureLines holds a change of procedures.md to the line format. Only
// the lines the change brings are checked, so a person's line in another
// shape does not block the file.
func (s *Store) procedureLines(_ context.Context, c *change, _ *listing) error {
	op, t, old, data := c.op, c.t, c.old, c.data
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

// rootBody checks persona.md or procedures.md for Store.Check.
func (c *checker) rootBody(t target, d *markdown.Doc) {
	src := d.Src()
	if t.root == personaFile {
		if len(src) > personaMax {
			c.warn(t.path, 0, fmt.Sprintf("%s bytes, over the %s bytes of it that go into prompts: the rest is cut", thousands(len(src)), thousands(personaMax)),
				"Shorten it to what defines the agent: who it is, its role, its manner.")
		}
		return
	}
	c.head(t, d)
	if len(src) > c.s.opts.ProceduresBudget {
		c.add(t.path, 0, fmt.Sprintf("%s bytes, over the %s-byte procedures budget: agents can only shorten it", thousands(len(src)), thousands(c.s.opts.ProceduresBudget)),
			"Merge related rules and drop outdated ones.")
	}
	line := strings.Count(string(src[:d.Body().Start]), "\n")
	for _, l := range strings.Split(string(src[d.Body().Start:]), "\n") {
		line++
		if strings.TrimSpace(l) != "" {
			if _, _, ok := procedure(strings.TrimRight(l, "\r")); !ok {
				c.warn(t.path, line, `not a rule in the form "- When <situation>: <action>": memory_search does not find it as one`,
					"Rewrite it as such a line, for example \""+procedureExample+"\", or move it to the file where it belongs.")
			}
		}
	}
}

// rootFiles reads, for the reflector's system prompt, persona.md (as
// Store.Persona gives it; "" when there is none or it cannot be read, so
// that ReflectorOptions.Persona stands in) and procedures.md, shown whole
// and counted as read when within its budget, only its start otherwise.
func (r *Reflector) rootFiles(ctx context.Context, c *Session) (persona string, pf promptFact, err error) {
	s := r.store
	if persona, err = s.Persona(ctx); classify(err) == faultStopped {
		return "", pf, err
	}
	pf.Path = proceduresFile
	content, err := s.Read(ctx, proceduresFile)
	var me *Error
	switch {
	case err == nil:
		pf.Exists = true
		shown := content
		if len(content) > s.opts.ProceduresBudget {
			shown, pf.Cut = content[:strings.LastIndexByte(content[:s.opts.ProceduresBudget], '\n')+1], thousands(len(content))
		} else {
			c.saw(pf.Path, []byte(content))
		}
		pf.Framed = framedFile(pf.Path, content, shown)
	case errors.Is(err, ErrNotFound):
		pf.Note = "none recorded yet."
	case errors.As(err, &me):
		pf.Note = "cannot be read: " + me.Hint + "."
	case classify(err) == faultStopped:
		return "", pf, err
	default:
		pf.Note = unreadable(pf.Path, err) + "."
	}
	return persona, pf, nil
}
