package memory

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/markdown"
)

// Read returns the content of the file at path. It returns an error wrapping
// [ErrInvalidPath] for a path outside the grammar and [ErrNotFound] for a
// file that does not exist. A file a person made larger than 1 MiB (the
// limit for one memory file) is not read whole: Read returns its first
// lines, up to 1 MiB, and a last line saying that it is cut, how large the
// file is and what to do; the Store's changes refuse such a file.
func (s *Store) Read(ctx context.Context, path string) (string, error) {
	t, end, err := s.start(ctx, "read", path)
	if err != nil {
		return "", err
	}
	defer end()
	c, err := s.readContent(ctx, "read", t)
	if err != nil {
		return "", err
	}
	if c.Data == nil {
		if parts := s.olderParts(ctx, t.path); parts != "" {
			return "", modelErr("read", t.path, ErrNotFound, t.path+" does not exist now", "; "+parts)
		}
		return "", modelErr("read", t.path, ErrNotFound, t.path+" does not exist yet", "; call memory_list to see the files there are")
	}
	if cutShort(c) {
		head := c.Data
		if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
			head = head[:i+1]
		}
		return fmt.Sprintf("%s\n(%s is %s bytes, more than the library reads of one memory file (%s bytes): only its first %s are shown, and no tool can change it until a person splits or condenses it)\n",
			head, t.path, thousands64(c.Size), thousands(readLimit), thousands(len(head))), nil
	}
	return string(c.Data), nil
}

// Write creates or replaces the file at path with content. A content without
// a "# " title gets the file's title; one without a "> Summary:" line gets a
// derived one (see [Store.Append] for the rule); a summary line already in
// content is kept as written. The file always ends with a newline.
//
// Write returns an error wrapping [ErrInvalidPath] for a path outside the
// grammar, persona.md (the person's, changed by hand only), an archived
// original or a part that does not exist (only [Store.Append] makes
// parts); [ErrInvalidContent] for a line it adds to procedures.md that is
// not "- When <situation>: <action>", or for content that is not
// UTF-8, holds a NUL byte or a carriage return that does not end a line,
// nests blockquotes or lists more than 32 deep, ends inside an open block
// (a code fence, an HTML comment or block), has a summary line with a
// control character, or is over 1 MiB, or replaces a file a person made
// larger than 1 MiB, of which only the start is read;
// [ErrBudgetExceeded] when a fact file would take the fact files over the
// budget, or procedures.md would grow over Options.ProceduresBudget; and,
// for a fact file, [ErrTemporaryFact] or [ErrDuplicateFact] when a line the
// content adds (one the file did not hold) is worded as temporary, repeats
// a fact or restates a key of the file; and, for any file, [ErrSecret]
// when a line the content adds holds a credential's value (see
// [SecretDetector]). [Store.Patch] and [Store.Append] hold procedures.md
// to the same rules.
func (s *Store) Write(ctx context.Context, path, content string) error {
	_, err := s.write(ctx, path, content, nil)
	return err
}

// WriteIf is [Store.Write] for a caller that read the file first: it
// writes content only when the file is still as the caller read it, that is
// when want equals Version(the text the caller read), or, when want is "",
// when the file does not exist. Otherwise it changes nothing and returns an
// error wrapping [ErrConflict], so an edit made in the meantime is not lost.
func (s *Store) WriteIf(ctx context.Context, path, content, want string) error {
	_, err := s.write(ctx, path, content, versionIs(want))
	return err
}

// versionIs is the guard of a change made only if the file is at version
// want: "" when it does not exist.
func versionIs(want string) guard {
	return func(op string, t target, old []byte) error {
		if v := version(old); v != want {
			return modelErr(op, t.path, ErrConflict, fmt.Sprintf("%s is at version %q, not %q: it changed since it was read", t.path, v, want), "; nothing was written")
		}
		return nil
	}
}

func (s *Store) write(ctx context.Context, p, content string, check guard) ([]byte, error) {
	const op = "write"
	t, end, err := s.start(ctx, op, p)
	if err != nil {
		return nil, err
	}
	defer end()
	if err := checkText(op, t.path, "content", content); err != nil {
		return nil, err
	}
	data := []byte(content)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	if err := checkClosed(op, t.path, "content", data); err != nil {
		return nil, err
	}
	d := markdown.Parse(data)
	if d.Summary.OK && strings.ContainsFunc(d.Summary.Text, unprintable) {
		return nil, modelErr(op, t.path, ErrInvalidContent, "the content's summary line holds a control character or a line or paragraph separator", "; make it one line of plain text")
	}
	if !d.Title.OK || !d.Summary.OK {
		summary := d.Summary.Text
		if !d.Summary.OK {
			summary = s.deriveSummary(t, d)
		}
		data, d = d.SetHeadDoc(s.title(t), summary)
	}
	// The structure of what is written, for the fact guard and the next
	// append: an entry is used only for the very content it was made of.
	s.docs.put(t.path, d)
	return s.update(ctx, op, t, check, func(ctx context.Context, _ Held, old []byte) ([]byte, error) {
		if old == nil && t.part > 0 {
			return nil, modelErr(op, t.path, ErrInvalidPath, t.path+" does not exist, and only a full month's file becomes a part", "; write to "+monthPath(t.month)+" instead")
		}
		return data, nil
	})
}

// Patch is one literal replacement for [Store.Patch].
type Patch struct {
	OldText string // text to find; must occur exactly once at its turn
	NewText string // replacement; may be empty to delete OldText
}

// Patch applies patches to the file at path, in order, and returns how many
// it applied: all of them, or none when any fails. Each OldText must occur
// exactly once in the text as the earlier patches left it (overlapping
// occurrences count) and is replaced literally by NewText. Patch splices
// only what the patches say: it does not touch the summary line.
//
// Patch returns an error wrapping [ErrPatchFailed] naming the failing patch,
// [ErrInvalidContent] for an empty list, [ErrNotFound] for a missing file,
// and the errors of [Store.Write] for the result.
func (s *Store) Patch(ctx context.Context, path string, patches []Patch) (int, error) {
	if _, err := s.patch(ctx, path, patches, nil); err != nil {
		return 0, err
	}
	return len(patches), nil
}

func (s *Store) patch(ctx context.Context, p string, patches []Patch, check guard) (data []byte, err error) {
	const op = "patch"
	t, end, err := s.start(ctx, op, p)
	if err != nil {
		return nil, err
	}
	defer end()
	if len(patches) == 0 {
		return nil, modelErr(op, t.path, ErrInvalidContent, "patches is empty", "; give at least one {oldText, newText} pair")
	}
	if len(patches) > maxPatches {
		return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("%d patches is more than the %d one call may make", len(patches), maxPatches),
			"; make fewer, larger patches, or memory_write the whole file")
	}
	size := 0
	for _, pt := range patches {
		size += len(pt.OldText) + len(pt.NewText)
	}
	if size > 2*maxFileSize {
		return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the patches hold %s bytes, more than twice the %s-byte limit for one memory file", thousands(size), thousands(maxFileSize)), "; memory_write the whole file instead")
	}
	for i, pt := range patches {
		if err := checkText(op, t.path, fmt.Sprintf("patch %d of %d: newText", i+1, len(patches)), pt.NewText); err != nil {
			return nil, err
		}
	}
	return s.update(ctx, op, t, check, func(ctx context.Context, _ Held, old []byte) ([]byte, error) {
		if old == nil {
			return nil, modelErr(op, t.path, ErrNotFound, t.path+" does not exist", "; create it with memory_write or memory_append")
		}
		if !isText(old) {
			return nil, modelErr(op, t.path, ErrInvalidContent, t.path+" holds bytes that are not text (NUL bytes or invalid UTF-8, from an edit outside the memory tools), so it cannot be patched",
				"; memory_read it and memory_write the whole corrected text with the version memory_read gave")
		}
		data, err := applyPatches(op, t, string(old), patches)
		if err != nil {
			return nil, err
		}
		// What the patches made, together with the text around them, is held
		// to the rules of model text, unless the file broke them already
		// (a person's edit): it can still be patched elsewhere.
		switch {
		case loneCR(string(data)) && !loneCR(string(old)):
			return nil, modelErr(op, t.path, ErrInvalidContent, `the patched file would hold a carriage return (\r) that does not end a line with \n`,
				"; keep line endings as they are around oldText. Nothing was changed")
		case markdown.Nesting(string(data)) > max(maxNesting, markdown.Nesting(string(old))):
			return nil, modelErr(op, t.path, ErrInvalidContent, fmt.Sprintf("the patched file would nest blockquotes or lists more than %d levels deep", maxNesting), ". Nothing was changed")
		case !markdown.Closed(data) && markdown.Closed(old):
			return nil, modelErr(op, t.path, ErrInvalidContent, "the patched file would end inside an open block (a ``` or ~~~ code fence, an HTML comment, or an HTML block such as <pre>)",
				", so anything added after it would fall inside; close the block in newText. Nothing was changed")
		}
		return data, nil
	})
}

// applyPatches applies patches to text in order, all or nothing.
func applyPatches(op string, t target, text string, patches []Patch) ([]byte, error) {
	for i, pt := range patches {
		which := fmt.Sprintf("patch %d of %d", i+1, len(patches))
		if pt.OldText == "" {
			return nil, modelErr(op, t.path, ErrPatchFailed, which+": oldText is empty", "; copy the exact text to replace from memory_read. Nothing was changed")
		}
		switch n := occurrences(text, pt.OldText); n {
		case 1:
			text = strings.Replace(text, pt.OldText, pt.NewText, 1)
		case 0:
			return nil, modelErr(op, t.path, ErrPatchFailed, which+": oldText was not found in "+t.path+afterEarlier(i), "; call memory_read and copy the text exactly. Nothing was changed")
		default:
			times := fmt.Sprintf("%d times", n)
			if n > maxCount {
				times = fmt.Sprintf("more than %d times", maxCount)
			}
			return nil, modelErr(op, t.path, ErrPatchFailed, fmt.Sprintf("%s: oldText was found %s in %s%s", which, times, t.path, afterEarlier(i)), "; include more of the surrounding text so it matches once. Nothing was changed")
		}
	}
	return []byte(text), nil
}

func afterEarlier(i int) string {
	if i == 0 {
		return ""
	}
	return " (after the earlier patches were applied)"
}

// occurrences counts the occurrences of sub in s, overlapping ones
// included ("aa" occurs twice in "aaa"), up to maxCount+1: a patch needs
// no more to say what went wrong, and counting every overlapping occurrence
// of a long self-similar text would cost the product of the two lengths,
// under the lock.
func occurrences(s, sub string) int {
	n := 0
	for n <= maxCount {
		i := strings.Index(s, sub)
		if i < 0 {
			break
		}
		n++
		_, size := utf8.DecodeRuneInString(s[i:])
		s = s[i+size:]
	}
	return n
}

// maxCount is the most occurrences of a patch's oldText that are counted,
// and maxPatches the most patches one call may make: each scans the file
// under the lock.
const (
	maxCount   = 10
	maxPatches = 100
)
