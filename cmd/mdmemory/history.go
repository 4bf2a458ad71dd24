package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/diff"
)

// The history (Store.History): log lists the recorded changes, diff shows
// what one version of a file has that another has not, restore brings a
// version back as a change of its own. A version is given whole, as --json
// and memory_read give it, or by the first characters log shows, as git
// takes a commit's.

const (
	// actorEnv names who the changes the command line makes are recorded
	// as made by; defaultActor when it is empty.
	actorEnv     = "MDMEMORY_ACTOR"
	defaultActor = "cli"

	// shortVersion is how many characters of a version log shows;
	// minVersion the fewest a version may be given by.
	shortVersion = 8
	minVersion   = 4

	// diffContext is the lines of context around each change of a diff.
	diffContext = 3
)

// testHookRestore, when set, runs between restore's read of the file and
// its restore: the tests change the file there.
var testHookRestore func()

func cmdLog() *command {
	return &command{
		name: "log", args: "[PATH]", summary: "the recorded changes, newest first, of one file or all", reads: true, maxArgs: 1,
		about: `Lists the changes the history records (Store.History) of the file at PATH, or
of every file, newest first: when (local time), the operation (write, patch,
append, seal, compact, restore, forget, remove, or outside for a change made by a
person's editor or another program), the file, who made it (a conversation's
id, a host's name such as "cli", marked "reflector (...)" or "compaction
(...)" when they made it; "-" for a change made outside the library), and the
versions before and after, by their first 8 characters ("(none)": the file
did not exist). diff and restore take a version as log shows it.

A version "forget" took a text out of is marked "(redacted)": it keeps its
name, and reads back without the text.

A file changed outside the library since its last recorded version starts with
a change marked "pending": the library records it, with its content, at its
next change of the file.

--actor keeps the changes of one actor (and those the reflector or compaction
made for it); --since and --until bound the time: YYYY-MM-DD (local
midnight), an RFC 3339 time, or a span back from now (90m, 36h, 7d, 2w).

With --json: [{"time", "path", "op", "actor", "old", "new", "redacted",
"pending"}], the versions whole, "redacted" and "pending" only when true.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			limit := fs.Int("limit", 0, "the most changes to show, the newest (0: all)")
			actor := fs.String("actor", "", `only the changes of this actor: "cli", a conversation's id`)
			since := fs.String("since", "", "only changes at or after this: YYYY-MM-DD, an RFC 3339 time, or a span back (7d)")
			until := fs.String("until", "", "only changes before this: YYYY-MM-DD, an RFC 3339 time, or a span back (7d)")
			return func(ctx context.Context, e *env) error {
				if *limit < 0 {
					return usageErr{"--limit may not be negative"}
				}
				o := memory.HistoryOptions{Limit: *limit, Actor: *actor}
				var err error
				now := time.Now()
				if o.Since, err = parseWhen("--since", *since, now); err != nil {
					return err
				}
				if o.Until, err = parseWhen("--until", *until, now); err != nil {
					return err
				}
				p := ""
				if len(e.args) > 0 {
					p = e.args[0]
				}
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				changes, err := s.History(ctx, p, &o)
				if err != nil {
					return err
				}
				if e.json {
					out := make([]jsonChange, 0, len(changes))
					for _, c := range changes {
						out = append(out, jsonChange{c.Time, c.Path, c.Op, c.Actor, c.Old, c.New, c.Redacted, c.Pending})
					}
					return writeJSON(e.stdout, out)
				}
				printLog(e.stdout, changes)
				return nil
			}
		},
	}
}

// jsonChange is a memory.Change as log --json writes it, in the names
// the other commands' JSON uses.
type jsonChange struct {
	Time     time.Time `json:"time"`
	Path     string    `json:"path"`
	Op       string    `json:"op"`
	Actor    string    `json:"actor"`
	Old      string    `json:"old"`
	New      string    `json:"new"`
	Redacted bool      `json:"redacted,omitempty"`
	Pending  bool      `json:"pending,omitempty"`
}

// printLog writes changes as aligned columns, and what a pending change
// is when there is one.
func printLog(w io.Writer, changes []memory.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "No changes recorded.")
		return
	}
	rows := [][]string{{"TIME", "OP", "PATH", "ACTOR", "VERSIONS"}}
	pending := false
	for _, c := range changes {
		when := c.Time.Local().Format(time.DateTime)
		if c.Pending {
			when, pending = "pending", true
		}
		actor := printable(c.Actor)
		if actor == "" {
			actor = "-"
		}
		versions := short(c.Old) + " -> " + short(c.New)
		if c.Redacted {
			versions += " (redacted)"
		}
		rows = append(rows, []string{when, printable(c.Op), shownPath(c.Path), actor, versions})
	}
	table(w, rows)
	if pending {
		fmt.Fprintln(w, "\npending: changed outside the library since its last recorded version; the library\nrecords the change, with its content, at its next change of the file.")
	}
}

// short is the first characters of a version, as log shows it; "(none)"
// for the version of a file that does not exist.
func short(v string) string {
	if v == "" {
		return "(none)"
	}
	return v[:min(len(v), shortVersion)]
}

// span is a time back from now: "90m", "36h", "7d", "2w".
var span = regexp.MustCompile(`^(\d{1,6})([mhdw])$`)

// parseWhen reads the time a --since or --until gives: a date (local
// midnight), an RFC 3339 time, or a span back from now; "" is no bound.
func parseWhen(flagName, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if m := span.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		return now.Add(-time.Duration(n) * unit), nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339Nano, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usageErr{fmt.Sprintf("%s %q is not YYYY-MM-DD, an RFC 3339 time, or a span back from now (90m, 36h, 7d, 2w)", flagName, s)}
}

func cmdDiff() *command {
	return &command{
		name: "diff", args: "PATH VERSION [VERSION]", summary: "what changed in a file between two versions, or since one", reads: true, minArgs: 2, maxArgs: 3,
		about: `Prints the difference between two versions of the file at PATH as a unified
diff ("diff -u", with 3 lines of context), or between VERSION and the file's
current content when one version is given. A version is one the history
records (as log lists it: whole, or its first characters, at least 4) or the
file's current one. The same content twice prints nothing. On a terminal,
removed lines are red and added ones green, as git shows them.

With --json: {"path", "from", "to", "diff"}, the versions whole; "to" is ""
when the file does not exist now.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				p := e.args[0]
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				h := history{s: s, path: p}
				from, err := h.resolve(ctx, e.args[1])
				if err != nil {
					return err
				}
				a, err := h.read(ctx, from)
				if err != nil {
					return err
				}
				var to, b, label string
				if len(e.args) == 3 {
					if to, err = h.resolve(ctx, e.args[2]); err != nil {
						return err
					}
					if b, err = h.read(ctx, to); err != nil {
						return err
					}
					label = short(to)
				} else {
					if b, to, err = h.current(ctx); err != nil {
						return err
					}
					label = "current (" + short(to) + ")"
				}
				d := diff.Unified(p+"\t"+short(from), p+"\t"+label, a, b, diffContext)
				if e.json {
					return writeJSON(e.stdout, struct {
						Path string `json:"path"`
						From string `json:"from"`
						To   string `json:"to"`
						Diff string `json:"diff"`
					}{p, from, to, d})
				}
				_, err = io.WriteString(e.stdout, colorDiff(e.color, printableText(d)))
				return err
			}
		},
	}
}

// colorDiff paints a unified diff as git does: the file lines bold, the
// hunk heads cyan, removed lines red and added ones green.
func colorDiff(on bool, d string) string {
	if !on {
		return d
	}
	var b strings.Builder
	i := 0
	for line := range strings.Lines(d) {
		text, nl := strings.CutSuffix(line, "\n")
		code := ""
		switch {
		case i < 2:
			code = bold
		case strings.HasPrefix(text, "@@"):
			code = cyan
		case strings.HasPrefix(text, "-"):
			code = red
		case strings.HasPrefix(text, "+"):
			code = green
		}
		b.WriteString(paint(code != "", code, text))
		if nl {
			b.WriteByte('\n')
		}
		i++
	}
	return b.String()
}

func cmdRestore() *command {
	return &command{
		name: "restore", args: "PATH VERSION", summary: "bring back a recorded version of a file, if unchanged meanwhile", minArgs: 2, maxArgs: 2,
		about: `Makes the file at PATH hold again the content it had at VERSION (as log lists
it: whole, or its first characters, at least 4), through the library
(Store.RestoreIf): as a change of its own, recorded as a "restore", with the
rules of any change of the file (the budgets, the fact guard). Nothing is
lost: the content it replaces stays in the history, and restore says how to
bring it back.

restore reads the file first, and restores only if the file is still at that
version: a change made meanwhile (by an agent, a person) is never undone
unseen. Then nothing is changed, and the exit status is 1.

--diff prints what the restore changed, as diff does.`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			showDiff := fs.Bool("diff", false, "print what the restore changed, as a unified diff")
			return func(ctx context.Context, e *env) error {
				p := e.args[0]
				s, close, err := e.open(ctx, false)
				if err != nil {
					return err
				}
				defer close()
				h := history{s: s, path: p}
				before, at, err := h.current(ctx)
				if err != nil {
					return err
				}
				v, err := h.resolve(ctx, e.args[1])
				if err != nil {
					return err
				}
				if v == at {
					fmt.Fprintf(e.stdout, "%s is at version %s already; nothing restored.\n", shownPath(p), short(v))
					return nil
				}
				restored, err := h.read(ctx, v)
				if err != nil {
					return err
				}
				if testHookRestore != nil {
					testHookRestore()
				}
				if err := s.RestoreIf(ctx, p, v, at); err != nil {
					if errors.Is(err, memory.ErrConflict) || errors.Is(err, memory.ErrChanged) {
						now := "it is now at another"
						if _, cur, err := h.current(ctx); err == nil {
							now = "it is now at " + short(cur)
						}
						return fmt.Errorf("%s changed since restore read it at version %s (%s); nothing was restored: see 'mdmemory log %s', then run restore again", shownPath(p), short(at), now, p)
					}
					return personal(err)
				}
				undo := "it did not exist before"
				if at != "" {
					undo = fmt.Sprintf("it was at %s: 'mdmemory restore %s %s' brings that back", short(at), p, short(at))
				}
				fmt.Fprintf(e.stdout, "Restored %s to version %s (%s).\n", shownPath(p), short(v), undo)
				if *showDiff {
					d := diff.Unified(p+"\t"+short(at), p+"\t"+short(v), before, restored, diffContext)
					_, err = io.WriteString(e.stdout, colorDiff(e.color, printableText(d)))
				}
				return err
			}
		},
	}
}

// history is the history of one file, as diff and restore read it.
type history struct {
	s    *memory.Store
	path string
}

// current returns the file's content and version now; "" and "" when it
// does not exist.
func (h history) current(ctx context.Context) (text, version string, err error) {
	text, err = h.s.Read(ctx, h.path)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return "", "", nil
	case err != nil:
		return "", "", personal(err)
	}
	return text, memory.Version(text), nil
}

// read returns the content of the file at version v.
func (h history) read(ctx context.Context, v string) (string, error) {
	text, err := h.s.ReadVersion(ctx, h.path, v)
	if errors.Is(err, memory.ErrNotFound) {
		return "", h.unknown(v)
	}
	return text, err
}

// resolve returns the whole version that v names: itself, or the one
// version of the file's history or its current one that starts with it.
func (h history) resolve(ctx context.Context, v string) (string, error) {
	if len(v) < minVersion {
		return "", fmt.Errorf("%s: the version %q is too short: give at least %d of its characters, as 'mdmemory log %s' lists it", shownPath(h.path), v, minVersion, h.path)
	}
	changes, err := h.s.History(ctx, h.path, nil)
	if err != nil {
		return "", personal(err)
	}
	seen := map[string]bool{}
	var found []string
	add := func(version string) {
		if version != "" && !seen[version] && strings.HasPrefix(version, v) {
			seen[version] = true
			found = append(found, version)
		}
	}
	for _, c := range changes {
		add(c.New)
		add(c.Old)
	}
	_, cur, err := h.current(ctx)
	if err != nil {
		return "", err
	}
	add(cur)
	switch {
	case seen[v]:
		return v, nil
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		for i, f := range found {
			found[i] = f[:min(len(f), len(v)+4)]
		}
		return "", fmt.Errorf("%s: the version %q is more than one of its history's (%s): give more of its characters", shownPath(h.path), v, strings.Join(found, ", "))
	}
	return "", h.unknown(v)
}

// unknown says that the file's history holds no version v.
func (h history) unknown(v string) error {
	return fmt.Errorf("%s: its history holds no version %q: 'mdmemory log %s' lists the versions there are", shownPath(h.path), v, h.path)
}
