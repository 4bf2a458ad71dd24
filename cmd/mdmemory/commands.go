package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory"
)

// The commands that read. Each opens the store, does one thing, and
// prints it as text for a person or, with --json, as JSON.

func cmdLs() *command {
	return &command{
		name: "ls", summary: "the files, with sizes and summaries, and the facts budget", reads: true,
		about: `Lists the memory files as an agent's memory_list sees them: persona.md, the
fact files, the world topics shared with other agents (with --world),
procedures.md, then one line a month, newest first (a month's full parts are
counted in its size), each with its size in bytes and its summary line; then
the fact files' bytes against the facts budget, and the world topics' against
theirs. A file that cannot be read says why.

With --json: {"files": [{"path", "summary", "size", "error", "parts",
"compacted"}], "factsSize": N, "factsBudget": N}, and with --world
"worldSize": N, "worldBudget": N.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				files, err := s.List(ctx)
				if err != nil {
					return err
				}
				var facts, world int64
				for _, f := range files {
					switch {
					case f.Error != "":
					case strings.HasPrefix(f.Path, "facts/"):
						facts += f.Size
					case strings.HasPrefix(f.Path, "world/"):
						world += f.Size
					}
				}
				worldBudget := 0
				if e.store.worldWhere(e.getenv) != "" {
					worldBudget = cmp.Or(e.store.worldBudget, defaultWorldBudget)
				}
				if e.json {
					return writeJSON(e.stdout, struct {
						Files       []memory.FileInfo `json:"files"`
						FactsSize   int64             `json:"factsSize"`
						FactsBudget int               `json:"factsBudget"`
						WorldSize   int64             `json:"worldSize,omitempty"`
						WorldBudget int               `json:"worldBudget,omitempty"`
					}{files, facts, e.store.budget(), world, worldBudget})
				}
				if len(files) == 0 {
					fmt.Fprintln(e.stdout, "No memory files yet.")
				} else {
					rows := [][]string{{"PATH", "SIZE", "SUMMARY"}}
					for _, f := range files {
						size, summary := thousands(f.Size), printable(f.Summary)
						switch {
						case f.Error != "":
							size, summary = "-", "error: "+f.Error
						case f.Compacted && f.Parts > 0:
							summary += fmt.Sprintf(" (compacted; %s)", plural(f.Parts, "part", "parts"))
						case f.Compacted:
							summary += " (compacted)"
						case f.Parts > 0:
							summary += fmt.Sprintf(" (%s)", plural(f.Parts, "full part", "full parts"))
						}
						rows = append(rows, []string{shownPath(f.Path), size, summary})
					}
					table(e.stdout, rows, 1)
				}
				fmt.Fprintln(e.stdout)
				fmt.Fprintln(e.stdout, "facts  "+budgetLine(facts, e.store.budget(), e.color))
				if worldBudget > 0 {
					fmt.Fprintln(e.stdout, "world  "+budgetLine(world, worldBudget, e.color))
				}
				return nil
			}
		},
	}
}

func cmdShow() *command {
	return &command{
		name: "show", args: "PATH", summary: "the content of one file", reads: true, minArgs: 1, maxArgs: 1,
		about: `Prints the file at PATH (facts/user.md, episodes/2026-02.md, a month's part
episodes/2026-02.001.md, an archived original episodes/archive/2025-03.md) as
it is, but for a control character (an escape sequence a model wrote), a
mark that reorders text on screen and a byte that is not UTF-8, which are
shown escaped (\x1b), as diff, search, context, log and import show them;
--json gives the content exactly.

With --json: {"path", "version", "content"}; version is the token an agent's
memory_write takes to change the file only if it is still this content.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				text, err := s.Read(ctx, e.args[0])
				if err != nil {
					return err
				}
				if e.json {
					return writeJSON(e.stdout, struct {
						Path    string `json:"path"`
						Version string `json:"version"`
						Content string `json:"content"`
					}{e.args[0], memory.Version(text), text})
				}
				_, err = io.WriteString(e.stdout, printableText(text))
				return err
			}
		},
	}
}

func cmdSearch() *command {
	return &command{
		name: "search", args: "[QUERY]", summary: "the fact lines and entries that match, best first", reads: true, maxArgs: -1,
		about: `Finds the fact lines and episode entries that match QUERY (its words
together, BM25 over words, English stems and CJK bigrams), best first, as
an agent's memory_search does. Without QUERY, the newest dated entries,
newest first. Each hit shows PATH:LINE, the entry's date, its title, and
the line that matches best.

With --json: [{"path", "line", "title", "date", "snippet", "score"}].`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			var o memory.SearchOptions
			fs.IntVar(&o.Limit, "limit", defaultSearchLimit, "the most hits to show")
			fs.StringVar(&o.Path, "path", "", `only files whose path starts with this: "facts/", "episodes/2026-"`)
			fs.StringVar(&o.Since, "since", "", "only entries dated on or after this: YYYY, YYYY-MM or YYYY-MM-DD")
			fs.StringVar(&o.Until, "until", "", "only entries dated on or before this: YYYY, YYYY-MM or YYYY-MM-DD")
			embed := addEmbedFlags(fs)
			return func(ctx context.Context, e *env) error {
				if err := embed.use(e); err != nil {
					return err
				}
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				hits, err := s.Search(ctx, strings.Join(e.args, " "), &o)
				if err != nil {
					return err
				}
				if e.json {
					return writeJSON(e.stdout, hits)
				}
				if len(hits) == 0 {
					fmt.Fprintln(e.stdout, "Nothing found.")
				}
				for _, h := range hits {
					head := fmt.Sprintf("%s:%d", shownPath(h.Path), h.Line)
					if h.Date != "" {
						head += "  " + h.Date
					}
					fmt.Fprintf(e.stdout, "%s  %s\n", head, printable(h.Title))
					if h.Snippet != "" && h.Snippet != h.Title {
						fmt.Fprintf(e.stdout, "    %s\n", printable(h.Snippet))
					}
				}
				return nil
			}
		},
	}
}

func cmdContext() *command {
	return &command{
		name: "context", args: "QUERY", summary: "what memory gives a prompt about QUERY", reads: true, minArgs: 1, maxArgs: -1,
		about: `Prints what memory puts into a prompt about QUERY (Store.Context), for a
program that injects memory instead of giving the model tools: the fact
files in full within half the budget, with the world topics (with --world) and
procedures.md whose lines match QUERY, then the entries that match QUERY best,
whole, as many as fit in --budget characters.

With --json: {"query", "budget", "text"}.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			budget := fs.Int("budget", 4000, "the most characters to give, at least 200")
			embed := addEmbedFlags(fs)
			return func(ctx context.Context, e *env) error {
				if err := embed.use(e); err != nil {
					return err
				}
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				query := strings.Join(e.args, " ")
				text, err := s.Context(ctx, query, *budget)
				if err != nil {
					return err
				}
				if e.json {
					return writeJSON(e.stdout, struct {
						Query  string `json:"query"`
						Budget int    `json:"budget"`
						Text   string `json:"text"`
					}{query, *budget, text})
				}
				if text == "" {
					fmt.Fprintln(e.stderr, "mdmemory: memory is empty, or nothing in it fits the budget")
				}
				_, err = io.WriteString(e.stdout, printableText(text))
				return err
			}
		},
	}
}

func cmdCheck() *command {
	return &command{
		name: "check", summary: "lint what a person edited; exit 1 when something needs fixing", reads: true,
		about: `Checks the memory files as the library reads them (Store.Check), for after a
person edited them: files the library ignores (facts/notes.md,
episodes/2026-13.md), entries without a "- Date:" line or dated outside their
month, text in no entry, missing "# " titles or "> Summary:" lines, blocks left
open, files over the size limit, the facts over their budget, a credential's
value in a file or in a version of its history (by its kind, never shown),
and more. Each
finding gives PATH:LINE, what is wrong, and what to do.

The exit status is 1 when a finding needs fixing. Warnings (a file outside
facts/ and episodes/, which the library leaves alone by design; fact text
outside bullets) are shown but do not change it.

With --json: {"findings": [{"path", "line", "problem", "fix", "warning"}],
"problems": N, "warnings": N}; line 0 means the whole file.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				findings, err := s.Check(ctx)
				if err != nil {
					return err
				}
				problems, warnings := 0, 0
				for _, f := range findings {
					if f.Warning {
						warnings++
					} else {
						problems++
					}
				}
				if e.json {
					if err := writeJSON(e.stdout, struct {
						Findings []memory.Finding `json:"findings"`
						Problems int              `json:"problems"`
						Warnings int              `json:"warnings"`
					}{findings, problems, warnings}); err != nil {
						return err
					}
				} else {
					printFindings(e, findings)
					switch {
					case len(findings) == 0:
						fmt.Fprintln(e.stdout, "No problems found.")
					default:
						fmt.Fprintf(e.stdout, "\n%s, %s.\n", plural(problems, "problem", "problems"), plural(warnings, "warning", "warnings"))
					}
				}
				if problems > 0 {
					return errProblems
				}
				return nil
			}
		},
	}
}

func cmdStats() *command {
	return &command{
		name: "stats", summary: "the facts against their budget, entries per month, prompt sizes", reads: true,
		about: `Shows what the memory holds and what it puts into prompts (Store.Stats): the
fact files' bytes against the facts budget, the files, the entries and bytes
of each month, and the size of the index message (the first user message of a
task) and of the reflector's system prompt (which holds the fact files in
full), in bytes and in tokens estimated at one token per 4 characters, as the
reflector counts them when it fits a conversation into a model's window. A
model's own tokenizer gives other figures: take these as an estimate.

Stats reads every file.

With --json: the library's Stats: {"factsSize", "factsBudget", "worldTopics",
"worldSize", "worldBudget" (with --world), "files",
"months": [{"month", "entries", "size", "parts", "compacted"}],
"archivedMonths", "indexMessage": {"size", "tokens"}, "reflectorPrompt":
{"size", "tokens"}}.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				st, err := s.Stats(ctx)
				if err != nil {
					return err
				}
				if e.json {
					return writeJSON(e.stdout, st)
				}
				w := e.stdout
				fmt.Fprintf(w, "facts   %s\n", budgetLine(st.FactsSize, st.FactsBudget, e.color))
				if st.WorldBudget > 0 {
					fmt.Fprintf(w, "world   %s in %s\n", budgetLine(st.WorldSize, st.WorldBudget, e.color), plural(st.WorldTopics, "topic", "topics"))
				}
				fmt.Fprintf(w, "files   %d\n", st.Files)
				entries := 0
				for _, m := range st.Months {
					entries += m.Entries
				}
				fmt.Fprintf(w, "months  %d, %s", len(st.Months), plural(entries, "entry", "entries"))
				if st.ArchivedMonths > 0 {
					fmt.Fprintf(w, ", %d compacted (originals in episodes/archive/)", st.ArchivedMonths)
				}
				fmt.Fprintln(w)
				if len(st.Months) > 0 {
					fmt.Fprintln(w)
					rows := [][]string{{"MONTH", "ENTRIES", "BYTES", ""}}
					for _, m := range st.Months {
						note := ""
						if m.Parts > 0 {
							note = plural(m.Parts, "full part", "full parts")
						}
						if m.Compacted {
							note = strings.TrimPrefix(note+", compacted", ", ")
						}
						rows = append(rows, []string{m.Month, strconv.Itoa(m.Entries), thousands(m.Size), note})
					}
					table(w, rows, 1, 2)
				}
				fmt.Fprintln(w)
				fmt.Fprintln(w, "Into prompts (tokens estimated at 4 characters a token):")
				table(w, [][]string{
					{"  index message (a task's first user message)", thousands(int64(st.IndexMessage.Size)) + " bytes", "~" + thousands(int64(st.IndexMessage.Tokens)) + " tokens"},
					{"  reflector system prompt (facts in full)", thousands(int64(st.ReflectorPrompt.Size)) + " bytes", "~" + thousands(int64(st.ReflectorPrompt.Tokens)) + " tokens"},
				}, 1, 2)
				return nil
			}
		},
	}
}

// printFindings writes Check's findings, each PATH:LINE, what is wrong and
// what to do; with colour, a problem's words in red and a warning's in
// yellow.
func printFindings(e *env, findings []memory.Finding) {
	for _, f := range findings {
		where := shownPath(f.Path)
		if f.Line > 0 {
			where += ":" + strconv.Itoa(f.Line)
		}
		problem := paint(e.color, red, printable(f.Problem))
		if f.Warning {
			problem = paint(e.color, yellow, "warning: "+printable(f.Problem))
		}
		fmt.Fprintf(e.stdout, "%s: %s\n    %s\n", paint(e.color, bold, where), problem, printable(f.Fix))
	}
}

// writeJSON writes v as indented JSON and a newline. Besides what JSON
// escapes (the C0 controls, ESC among them), DEL and the C1 controls
// (U+0080 to U+009F, which some terminals act on as CSI and the like) are
// written escaped too: the same strings, read by any JSON reader, and
// nothing a terminal acts on.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := b.Bytes()
	if bytes.IndexByte(out, 0x7f) >= 0 || bytes.IndexByte(out, 0xc2) >= 0 {
		var e bytes.Buffer
		for len(out) > 0 {
			r, n := utf8.DecodeRune(out)
			if r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				fmt.Fprintf(&e, `\u%04x`, r)
			} else {
				e.Write(out[:n])
			}
			out = out[n:]
		}
		out = e.Bytes()
	}
	_, err := w.Write(out)
	return err
}

// budgetLine renders size against budget as a bar:
// "[#########...........] 6,912 / 15,360 bytes (45%)".
// With color, the bar is green, yellow from 80% of the budget, and red
// over it.
func budgetLine(size int64, budget int, color bool) string {
	const width = 20
	b := int64(max(budget, 1))
	filled := min(width, (size*width+b/2)/b)
	if filled == 0 && size > 0 {
		filled = 1 // something is there
	}
	code := green
	switch {
	case size > int64(budget):
		code = red
	case size*5 >= b*4:
		code = yellow
	}
	line := fmt.Sprintf("[%s%s] %s / %s bytes (%d%%)", paint(color, code, strings.Repeat("#", int(filled))), strings.Repeat(".", width-int(filled)), thousands(size), thousands(int64(budget)), size*100/b)
	if size > int64(budget) {
		line += paint(color, red, ", over the budget")
	}
	return line
}

// table writes rows as aligned columns separated by two spaces; the
// columns numbered in right are aligned right, and the last is not padded.
func table(w io.Writer, rows [][]string, right ...int) {
	if len(rows) == 0 {
		return
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case slices.Contains(right, i):
				b.WriteString(pad + c)
			case i < len(r)-1:
				b.WriteString(c + pad)
			default:
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// thousands formats n with comma separators: 15360 → "15,360".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// shownPath shows a path as it is, or quoted when it holds what printable
// escapes (needsEscape: control characters, bidirectional marks, bytes
// that are not UTF-8).
func shownPath(p string) string {
	if needsEscape(p, false) {
		return strconv.Quote(p)
	}
	return p
}

// printable shows one line of text a model or a file gave with what a
// terminal would act on escaped: control characters (ESC, CR, BEL, the C1
// ones), the marks that reorder text on screen (bidirectional overrides
// and isolates), and bytes that are not UTF-8, as Go writes them in a
// string: \x1b, \u202e. The rest, a backslash included, is as it is. It is
// the one rule for everything the commands print of a memory's content
// (show, diff, search, context, log, import); --json gives the content
// exactly.
func printable(s string) string { return escapeControls(s, false) }

// printableText is printable for text of many lines: its newlines and
// tabs are kept, and so is a carriage return before a newline (a CRLF
// line end); a lone one is escaped.
func printableText(s string) string { return escapeControls(s, true) }

// shownRune reports whether the rune r at s[i:] is shown as it is:
// printable's rule, with lines (printableText's) newlines, tabs and a CR
// before LF kept.
func shownRune(s string, i int, r rune, lines bool) bool {
	if lines && (r == '\n' || r == '\t' || (r == '\r' && strings.HasPrefix(s[i+1:], "\n"))) {
		return true
	}
	return !(unicode.IsControl(r) || bidi(r))
}

// needsEscape reports whether s holds anything printable (or with lines,
// printableText) would escape: the one test of what a terminal would act
// on, for text and paths alike.
func needsEscape(s string, lines bool) bool {
	for i, r := range s {
		if r == utf8.RuneError || !shownRune(s, i, r, lines) {
			return true
		}
	}
	return false
}

func escapeControls(s string, lines bool) string {
	if !needsEscape(s, lines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case shownRune(s, i, r, lines):
			b.WriteString(s[i : i+n])
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// bidi reports whether r is a mark that reorders the text around it on
// screen (an embedding, override or isolate), with which a line can show
// other than what it holds.
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}
