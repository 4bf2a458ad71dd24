package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/mdmemory/memory/internal/factguard"
	"github.com/mdmemory/memory/internal/markdown"
)

// The fact guard. Facts are lasting truths loaded into every prompt, so a
// change of a fact file is refused, as a model error, when a line it adds
//
//   - is worded as temporary: "this time", "for now", "just today",
//     "temporarily", "for this task", "这次", "暂时", "今天先", "先不" and the
//     like: an instruction for one task is not a fact ([ErrTemporaryFact]);
//   - says again what a line of the fact files says already, in any fact
//     file: the same text, or nearly: more than 70% of the two lines' words
//     in common (Jaccard similarity of their sets of search terms, so that
//     "reviews" and "reviewed" compare as memory_search matches them;
//     Chinese by its characters), every word of one in the other (a line
//     that swaps a word, "Father lives in Hangzhou" beside "Mother lives in
//     Hangzhou", states another fact), the same numbers in the same order,
//     and the same small words of order and quantity ("before", "all":
//     "prefers Chinese for all conversations" says more than "prefers
//     Chinese conversation") ([ErrDuplicateFact]);
//   - restates the key of a line of the same file ("- Language: English"
//     when a "- Language: …" line is there): a fact that changed replaces its
//     line instead of piling up beside it ([ErrDuplicateFact]). A key is a
//     list, and another line with it allowed, when the file holds it on two
//     or more lines already, or when it names what a person has many of
//     (colleagues, friends, children, lessons, …).
//
// The error names the file and line of the line concerned, quotes it, and
// says what to do: patch that line instead, or leave the new one out.
//
// Only what a change adds is checked: the lines of the new content that
// were not in the file before, so that a memory_write that keeps a person's
// questionable line as it is, or condenses the file, is not held up by it,
// and a change that only removes or reorders lines always passes. The lines
// one change adds are not compared with each other: a list written at once
// is a list. A world topic is guarded as a fact file is, its lines
// compared with those of every topic, the other agents' included. The guard
// applies to every change of a fact file or topic, by the tools
// (memory_write, memory_patch, memory_append) and by [Store.Write],
// [Store.WriteIf], [Store.Patch] and [Store.Append] alike, and never to
// episodes, which are about one task by nature.
//
// The rules are internal/factguard's, which compares lines and words
// nothing; this file gathers the files and words its refusal. The Store
// keeps the parsed and indexed versions of the fact files it has seen
// (factCache), so that a change compares its new lines with only the lines
// that share a word with them, and parses only the content that is new.

// vetFacts refuses a change of the fact file or topic t from old (nil for
// a new file) to data that adds a line that is temporary, repeats a line of
// the files it is compared with or restates a key of t; see the fact guard
// above. list lists t's folder (see commit).
func (s *Store) vetFacts(ctx context.Context, op string, t target, old, data []byte, list func() ([]Entry, error)) error {
	before := s.facts.file(t.path, old, nil, s.docs.get(t.path, old))
	d := s.docs.get(t.path, data)
	if d == nil {
		// A patch's content, which nothing parsed yet: kept, so that the
		// next change reads and parses only what is new.
		d = markdown.Parse(data)
		s.docs.put(t.path, d)
	}
	c := factguard.Diff(before, s.facts.file(t.path, data, before, d))
	if len(c.Added) == 0 {
		return nil
	}
	if r := c.Temporary(); r != nil {
		return refuseFact(op, t, r)
	}
	others, err := s.otherFacts(ctx, op, t, list)
	if err != nil {
		return err
	}
	if r := c.Check(others...); r != nil {
		return refuseFact(op, t, r)
	}
	return nil
}

// refuseFact words the fact guard's refusal r of a change of t for the
// model.
func refuseFact(op string, t target, r *factguard.Refusal) error {
	a, b := r.Line, r.Other
	switch r.Kind {
	case factguard.Temporary:
		return modelErr(op, t.path, ErrTemporaryFact,
			fmt.Sprintf("the new line %s is about this task only (%q marks it as temporary)", quoteLine(a.First), r.Phrase),
			fmt.Sprintf("; nothing was written. Skip it: what holds for one task is not a fact (an episode may record it). If it is meant to last, state it without %q", r.Phrase))
	case factguard.Repeat:
		return modelErr(op, t.path, ErrDuplicateFact,
			fmt.Sprintf("the new line %s is already in %s at line %d", quoteLine(a.First), r.Path, b.Num),
			"; nothing was written. Leave it out: there is nothing to add")
	case factguard.KeyRestated:
		return modelErr(op, t.path, ErrDuplicateFact,
			fmt.Sprintf("the new line %s restates the key of %s line %d, %s", quoteLine(a.First), r.Path, b.Num, quoteLine(b.First)),
			"; nothing was written. If the fact changed, "+replaceInstead(op, true, r.Path, b)+
				", so that the old fact does not stay beside the new one; if both hold, merge them into that line, or give the new line a more specific key. If it adds nothing, leave it out")
	default: // factguard.NearRepeat
		return modelErr(op, t.path, ErrDuplicateFact,
			fmt.Sprintf("the new line %s nearly repeats %s line %d, %s", quoteLine(a.First), r.Path, b.Num, quoteLine(b.First)),
			"; nothing was written. If it corrects or adds to that line, "+replaceInstead(op, r.Path == t.path, r.Path, b)+"; otherwise leave it out")
	}
}

// replaceInstead says how to change line b of the fact file p instead of
// adding a line: a patch, or, when the change is a whole-file write of p
// itself (same), the content written.
func replaceInstead(op string, same bool, p string, b factguard.Line) string {
	if op == "write" && same {
		return "replace that line with the new one in the content instead of keeping both"
	}
	line, _, _ := strings.Cut(b.Src, "\n")
	return fmt.Sprintf("memory_patch line %d of %s instead (oldText %s, newText the new line)", b.Num, p, quoteLine(line))
}

// quoteLine quotes a line of a file for a message, made printable and cut
// when long.
func quoteLine(s string) string {
	return `"` + cut(printable(s), 200) + `"`
}

// otherFacts returns the fact files other than t that list lists: the
// other fact files for a fact file, the other topics for a world topic. A
// file that cannot be listed or read (a person made it unreadable or not a
// file, the backend failed) has none: the comparison with the other files
// is a help, and this change is to t alone. Only a done context or a
// closed store fails it.
func (s *Store) otherFacts(ctx context.Context, op string, t target, list func() ([]Entry, error)) ([]*factguard.File, error) {
	entries, err := list()
	if classify(err) == faultStopped {
		return nil, hostErr(op, t.path, err)
	}
	var out []*factguard.File
	for _, e := range entries {
		if e.Name == t.path {
			continue
		}
		c, ok := s.known(e.Name)
		if !ok {
			var err error
			c, err = s.b.Read(ctx, e.Name, readLimit)
			if classify(err) == faultStopped {
				return nil, hostErr(op, t.path, err)
			}
			if err != nil {
				continue
			}
		}
		out = append(out, s.facts.file(e.Name, c.Data, nil, s.docs.get(e.Name, c.Data)))
	}
	if err == nil {
		s.facts.keep(t.path, entries)
	}
	return out, nil
}

// file returns the File of content src at path, from the cache or parsed
// and kept as the newest version of path. prev is an earlier version the
// parse may take lines from; nil means the newest version of path kept,
// which another writer's change leaves with most lines in common. d, when
// not nil, is the structure of src, which then is not parsed again.
func (fc *factCache) file(path string, src []byte, prev *factguard.File, d *markdown.Doc) *factguard.File {
	fc.mu.Lock()
	v := fc.files[path]
	fc.mu.Unlock()
	for _, f := range v {
		if f != nil && f.Is(src) {
			return f
		}
	}
	if prev == nil {
		prev = v[0]
	}
	var f *factguard.File
	if d != nil {
		f = factguard.FromDoc(path, d, prev)
	} else {
		f = factguard.Parse(path, src, prev)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.files == nil {
		fc.files = map[string][2]*factguard.File{}
	}
	v = fc.files[path]
	fc.files[path] = [2]*factguard.File{f, v[0]}
	return f
}

// keep drops the versions of the files in t's folder that are neither t
// nor listed in entries: files removed since.
func (fc *factCache) keep(t string, entries []Entry) {
	dir := t[:strings.LastIndexByte(t, '/')+1]
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for p := range fc.files {
		if p != t && strings.HasPrefix(p, dir) && !containsEntry(entries, p) {
			delete(fc.files, p)
		}
	}
}

// containsEntry reports whether entries lists the file at p.
func containsEntry(entries []Entry, p string) bool {
	for _, e := range entries {
		if e.Name == p {
			return true
		}
	}
	return false
}
