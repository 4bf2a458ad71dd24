package memory

import (
	"bytes"
	"context"
	"fmt"
	"strings"
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
