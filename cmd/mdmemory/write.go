package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/mdmemory/memory"
)

// The commands that write: add, edit, compact (and import, in import.go).
// Each goes through the library, with the rules the model's tools keep:
// the path grammar, the budgets, the fact guard, the entry format,
// writing only what is still as read.

// maxInput bounds what mdmemory reads as one file's text from a person:
// standard input, an edited file. It is the library's limit for one
// memory file; one byte more is enough to know the text is over it.
const maxInput = 1 << 20

// personaPath is the person's own file, which the tools may not change.
const personaPath = "persona.md"

func cmdAdd() *command {
	return &command{
		name: "add", args: "PATH TEXT", summary: "append a fact line or an episode entry (TEXT - reads standard input)", minArgs: 2, maxArgs: 2,
		about: `Appends TEXT to the file at PATH, as an agent's memory_append does, with the
same refusals: to a fact file (facts/user.md), a world topic (world/TOPIC.md,
with --world) or procedures.md, one or more fact lines; to a month's file
(episodes/YYYY-MM.md), one entry, a "## " heading and its lines, dated in
its month (a "- Date:" line is added with today's date when it has none).
A fact line joins the file's list; an entry is set off by a blank line.
TEXT "-" reads it from standard input (at most 1 MiB).

A single line of text for a file of fact lines that is no list item yet
becomes one: "Name: Zhang San" is added as "- Name: Zhang San".

What the library refuses (a line worded as temporary, a fact already there
or a key restated, the facts over their budget, an entry without its
heading) is said in one line, with what to do; nothing is written. The file
and its folders are created when they do not exist.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				p, text := e.args[0], e.args[1]
				if text == "-" {
					b, err := readBounded(e.stdin, "standard input")
					if err != nil {
						return err
					}
					text = string(b)
				}
				if p == personaPath {
					return fmt.Errorf("%s is yours to write by hand, whole: use 'mdmemory edit %s'", personaPath, personaPath)
				}
				s, close, err := e.open(ctx, true)
				if err != nil {
					return err
				}
				defer close()
				if err := s.Append(ctx, p, asFactLine(p, text), ""); err != nil {
					return personal(err)
				}
				fmt.Fprintf(e.stdout, "Added to %s.\n", shownPath(p))
				return nil
			}
		},
	}
}

// asFactLine makes one line of text for a file of fact lines a list item,
// unless it is one already, or is markdown of another kind (a heading, a
// quote), which the library judges as it is.
func asFactLine(p, text string) string {
	if strings.HasPrefix(p, "episodes/") {
		return text
	}
	line := strings.TrimSpace(text)
	if line == "" || strings.ContainsAny(line, "\n\r") || strings.ContainsRune("-*+#>|`~", rune(line[0])) {
		return text
	}
	if i := strings.IndexAny(line, ".)"); i > 0 && i < 10 && strings.Trim(line[:i], "0123456789") == "" {
		return text // "1. …", an ordered list item
	}
	return "- " + line
}

// personal rewords the library's refusal for a person at the terminal:
// the text the model gets, with the commands a person has in place of the
// model's tools, after the file's path. Other errors are as they are.
func personal(err error) error {
	var me *memory.Error
	if !errors.As(err, &me) || me.Hint == "" {
		return err
	}
	return fmt.Errorf("%s: %s", cmp.Or(me.Path, me.Op), personalHint(me))
}

// personalHint is an Error's hint with the model's tools named as the
// commands a person has.
func personalHint(me *memory.Error) string {
	hint := patchInstead.ReplaceAllString(me.Hint, "change line $1 of $2 instead ('mdmemory edit $2')")
	for _, r := range [][2]string{
		{"memory_read one, then memory_write a shorter version", "open one with 'mdmemory edit' and write a shorter version"},
		{"memory_read the file and close the block with memory_patch", "close the block with 'mdmemory edit'"},
		{"memory_read + memory_write", "'mdmemory edit'"},
		{"memory_patch", "'mdmemory edit'"},
		{"memory_write", "'mdmemory edit'"},
		{"memory_read", "'mdmemory show'"},
		{"memory_append", "'mdmemory add'"},
		{"memory_list", "'mdmemory ls'"},
		{"memory_search", "'mdmemory search'"},
	} {
		hint = strings.ReplaceAll(hint, r[0], r[1])
	}
	return hint
}

// patchInstead is the fact guard's advice to the model to patch a line.
var patchInstead = regexp.MustCompile(`memory_patch line (\d+) of (\S+) instead \(oldText .*?, newText the new line\)`)

// readBounded reads r whole, at most maxInput bytes.
func readBounded(r io.Reader, what string) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("%s: nothing to read", what)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	if len(b) > maxInput {
		return nil, fmt.Errorf("%s holds more than %s bytes, the most one memory file may hold", what, thousands(maxInput))
	}
	return b, nil
}

func cmdEdit() *command {
	return &command{
		name: "edit", args: "PATH", summary: "open a file in $VISUAL or $EDITOR; save writes it if unchanged meanwhile", minArgs: 1, maxArgs: 1,
		about: `Opens a copy of the file at PATH in $VISUAL, else $EDITOR (the command may
hold arguments: EDITOR="code --wait"). When the editor exits, the text is
written through the library, as memory_write with the version read: only
if the file did not change meanwhile, and with the rules of its kind (the
fact guard for the lines it adds, the budgets, the format of procedures.md).
A file that does not exist yet starts empty; persona.md, the agent's
persona that the tools may not change, is written as it is.

When the text cannot be written (the file changed while you edited it, or a
rule refused it), nothing is written, and your text is kept in the file
mdmemory names (readable by you only), to compare and try again; when it was
refused for a credential's value, that file holds the value too: remove it
there, or delete the file. A text left as it was, or empty,
writes nothing. After a save, check's findings for the file are shown.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				editor := cmp.Or(e.getenv("VISUAL"), e.getenv("EDITOR"))
				if strings.TrimSpace(editor) == "" {
					return errors.New(`no editor: set $VISUAL or $EDITOR to one (EDITOR=nano, EDITOR="code --wait")`)
				}
				p := e.args[0]
				s, close, err := e.open(ctx, true)
				if err != nil {
					return err
				}
				defer close()
				f := storeFile{s: s, path: p}
				old, ver, err := f.read(ctx)
				if err != nil {
					return personal(err)
				}
				tmp, err := os.CreateTemp("", "mdmemory-*-"+strings.ReplaceAll(path.Base(p), string(os.PathSeparator), "_"))
				if err != nil {
					return err
				}
				name := tmp.Name()
				_, err = tmp.WriteString(old)
				if cerr := tmp.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					os.Remove(name)
					return err
				}
				if err := runEditor(ctx, e, editor, name); err != nil {
					os.Remove(name)
					return fmt.Errorf("%w; nothing was written", err)
				}
				fh, err := os.Open(name)
				if err != nil {
					return fmt.Errorf("read what the editor saved: %w; nothing was written", err)
				}
				edited, err := readBounded(fh, name)
				fh.Close()
				if err != nil {
					return fmt.Errorf("%w; nothing was written, and your text is kept in %s", err, name)
				}
				switch {
				case string(edited) == old:
					os.Remove(name)
					fmt.Fprintf(e.stdout, "%s is unchanged; nothing written.\n", shownPath(p))
					return nil
				case len(bytes.TrimSpace(edited)) == 0:
					os.Remove(name)
					fmt.Fprintf(e.stdout, "The text is empty; nothing written (to remove %s, delete it by hand).\n", shownPath(p))
					return nil
				}
				if err := f.write(ctx, string(edited), ver); err != nil {
					if errors.Is(err, memory.ErrConflict) || errors.Is(err, memory.ErrChanged) {
						return fmt.Errorf("%s changed while you edited it; nothing was written, and your text is kept in %s: compare the two, then run 'mdmemory edit %s' again", shownPath(p), name, p)
					}
					if errors.Is(err, memory.ErrSecret) {
						// The text kept holds the credential: say so, and
						// keep it to its owner only (CreateTemp made it so).
						os.Chmod(name, 0o600)
						return fmt.Errorf("%s; your text is kept in %s, readable by you only, and holds the credential too: remove the value there and edit again, or delete the file (rm %s)", oneLine(personal(err)), name, name)
					}
					return fmt.Errorf("%s; your text is kept in %s", oneLine(personal(err)), name)
				}
				os.Remove(name)
				fmt.Fprintf(e.stdout, "Saved %s.\n", shownPath(p))
				findings, err := s.Check(ctx)
				if err != nil {
					return err
				}
				findings = slices.DeleteFunc(findings, func(fd memory.Finding) bool { return fd.Path != p })
				if len(findings) == 0 {
					fmt.Fprintf(e.stdout, "No problems found in %s.\n", shownPath(p))
				}
				printFindings(e, findings)
				return nil
			}
		},
	}
}

// storeFile is a file edit reads and writes through the store, with its
// rules, only if still as read; persona.md as the person's own.
type storeFile struct {
	s    *memory.Store
	path string
}

// read returns the file's text and the version to write it back at; a
// file that does not exist is "" at version "".
func (f storeFile) read(ctx context.Context) (text, ver string, err error) {
	text, err = f.s.Read(ctx, f.path)
	if errors.Is(err, memory.ErrNotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return text, memory.Version(text), nil
}

// write writes text only if the file is still at ver: persona.md, the
// person's file, as the person's; any other as Store.WriteIf does.
func (f storeFile) write(ctx context.Context, text, ver string) error {
	if f.path == personaPath {
		return f.s.SetPersona(ctx, text, ver)
	}
	return f.s.WriteIf(ctx, f.path, text, ver)
}

// runEditor runs the person's editor on file, with the terminal mdmemory
// has. editor is a command line, as git takes $EDITOR: on Unix the shell
// runs it, so that "code --wait" or a path with spaces in quotes work.
func runEditor(ctx context.Context, e *env, editor, file string) error {
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		f := strings.Fields(editor)
		cmd = exec.CommandContext(ctx, f[0], append(f[1:], file)...)
	} else {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", editor+` "$@"`, editor, file)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("the editor (%s) exited with status %d", editor, exit.ExitCode())
		}
		return fmt.Errorf("start the editor (%s): %w", editor, err)
	}
	return nil
}

func cmdCompact() *command {
	return &command{
		name: "compact", summary: "condense old months' episodes (the local rule, no model)", json: true,
		about: `Condenses the months before --before (default: six months before this one),
oldest first, as Store.Compact does without a model: each entry is cut to
its heading and its "- Date:", "- Summary:" and "- Lesson:" lines, except
the newest --keep entries of each month, kept whole. Nothing is lost: the
month's files as they were are kept under episodes/archive/, which search
reaches and the index does not list; to undo a month, move its archived
file back. A month compacted before, or changed while compacting, is left
as it is, and said so.

--dry-run lists the months that would be compacted, their entries to
condense and to keep, and the bytes before and after, and writes nothing.

With --json: the library's CompactResult: {"months", "skipped": [{"month",
"reason"}], "entries", "kept", "bytesBefore", "bytesAfter"}.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			var o memory.CompactOptions
			fs.StringVar(&o.Before, "before", "", "the first month kept as it is, YYYY-MM: the months before it are compacted (default six months back)")
			fs.IntVar(&o.KeepLast, "keep", 0, "keep each month's newest N entries whole")
			fs.BoolVar(&o.DryRun, "dry-run", false, "say what would be condensed, and write nothing")
			return func(ctx context.Context, e *env) error {
				s, close, err := e.open(ctx, !o.DryRun)
				if err != nil {
					return err
				}
				defer close()
				res, err := s.Compact(ctx, nil, &o)
				if err != nil {
					return err
				}
				if e.json {
					return writeJSON(e.stdout, res)
				}
				verb := "Compacted"
				if o.DryRun {
					verb = "Would compact"
				}
				if len(res.Months) == 0 {
					fmt.Fprintln(e.stdout, "Nothing to compact.")
				} else {
					if o.DryRun {
						st, err := s.Stats(ctx)
						if err != nil {
							return err
						}
						rows := [][]string{{"MONTH", "ENTRIES", "CONDENSE", "KEEP", "BYTES"}}
						for _, m := range st.Months {
							if slices.Contains(res.Months, m.Month) {
								kept := min(o.KeepLast, m.Entries)
								rows = append(rows, []string{m.Month, strconv.Itoa(m.Entries), strconv.Itoa(m.Entries - kept), strconv.Itoa(kept), thousands(m.Size)})
							}
						}
						slices.SortFunc(rows[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) })
						table(e.stdout, rows, 1, 2, 3, 4)
						fmt.Fprintln(e.stdout)
					}
					fmt.Fprintf(e.stdout, "%s %s (%s): %s condensed, %d kept whole; %s bytes become %s.\n", verb,
						plural(len(res.Months), "month", "months"), strings.Join(res.Months, ", "), plural(res.Entries, "entry", "entries"), res.Kept,
						thousands(res.BytesBefore), thousands(res.BytesAfter))
					if !o.DryRun {
						fmt.Fprintln(e.stdout, "The originals are in episodes/archive/.")
					}
				}
				for _, sk := range res.Skipped {
					fmt.Fprintf(e.stdout, "%s left as it is: %s\n", sk.Month, sk.Reason)
				}
				return nil
			}
		},
	}
}
