package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mdmemory/memory"
)

func cmdForget() *command {
	return &command{
		name: "forget", args: "TEXT", summary: "take TEXT out of every file and every version the history keeps", minArgs: 1, maxArgs: 1, json: true,
		about: `Takes every occurrence of TEXT out of memory (Store.Forget): out of every
memory file (the fact files, the months with their parts and archived
originals, procedures.md, persona.md, and with --world the shared world
topics, for every agent sharing them), as a change of its own recorded as a
"forget" that does not hold the text, and out of every version the history
keeps: those keep their names in log, marked "(redacted)", and read back
without the text (diff, restore). The caches of vectors go too; the next
search makes them again. It says in how many places it took TEXT out: each
file that held it, and each version in the history.

TEXT is matched byte for byte, and must have at least 4 characters besides
white space at its ends; it may span lines. The bytes go; a line left with
nothing but white space or a list marker ("- ") goes whole. TEXT "-" reads it from standard
input (one newline at its end left out), so that it stays out of the
shell's history.

--dry-run lists where TEXT is, and changes nothing: each file with the lines
it is on, then each version in the history, by file, as log shows it.
TEXT itself is never printed.

Forgetting cannot reach copies kept elsewhere: an S3 bucket's own object
versions (when versioning is on), a git repository or backup the folder was
copied to, and what a model provider kept of the prompts memory was in.

With --json: {"forgot": N}, or with --dry-run {"places": [{"path", "version",
"time", "lines"}]} (version "" for a file as it is now).`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			dry := fs.Bool("dry-run", false, "list where TEXT is, and change nothing")
			return func(ctx context.Context, e *env) error {
				text := e.args[0]
				if text == "-" {
					b, err := readBounded(e.stdin, "standard input")
					if err != nil {
						return err
					}
					text = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
				}
				s, close, err := e.open(ctx, !*dry)
				if err != nil {
					return err
				}
				defer close()
				var places []memory.Place
				n := 0
				if *dry {
					places, err = s.Locate(ctx, text)
				} else {
					n, err = s.Forget(ctx, text)
				}
				if err != nil {
					return personal(err)
				}
				switch {
				case e.json && *dry:
					out := make([]jsonPlace, 0, len(places))
					for _, p := range places {
						out = append(out, jsonPlace{p.Path, p.Version, p.Time, p.Lines})
					}
					return writeJSON(e.stdout, struct {
						Places []jsonPlace `json:"places"`
					}{out})
				case e.json:
					return writeJSON(e.stdout, struct {
						Forgot int `json:"forgot"`
					}{n})
				}
				if len(places) == 0 && n == 0 {
					fmt.Fprintln(e.stdout, "Not in memory, nor in its history: nothing to forget.")
					return nil
				}
				if *dry {
					printPlaces(e.stdout, places)
					fmt.Fprintf(e.stdout, "\n%s; nothing changed. 'mdmemory forget' without --dry-run takes it out.\n", plural(len(places), "place", "places"))
					return nil
				}
				fmt.Fprintf(e.stdout, "Forgot it in %s: no file and no version in the history holds it now.\n", plural(n, "place", "places"))
				return nil
			}
		},
	}
}

// jsonPlace is a memory.Place as forget --json writes it.
type jsonPlace struct {
	Path    string    `json:"path"`
	Version string    `json:"version"`
	Time    time.Time `json:"time,omitzero"`
	Lines   []int     `json:"lines"`
}

// printPlaces writes where a text is: each file with its lines, then
// each version by file, as log shows it.
func printPlaces(w io.Writer, places []memory.Place) {
	rows := [][]string{{"PATH", "VERSION", "TIME", "LINES"}}
	for _, p := range places {
		version, when := "now", ""
		if p.Version != "" {
			version, when = short(p.Version), p.Time.Local().Format(time.DateTime)
		}
		lines := make([]string, len(p.Lines))
		for i, l := range p.Lines {
			lines[i] = fmt.Sprint(l)
		}
		rows = append(rows, []string{shownPath(p.Path), version, when, strings.Join(lines, ", ")})
	}
	table(w, rows)
}
