// Mdmemory reads, checks, writes and serves the long-term memory of an
// agent built with github.com/mdmemory/memory: plain markdown files under
// facts/ and episodes/, in a directory or under a prefix of an S3 bucket.
//
// Usage:
//
//	mdmemory [--dir DIR] [--world DIR] [--json] COMMAND [flags] [arguments]
//
// The commands:
//
//	ls                  the files, with their sizes and summaries, and the facts budget
//	show PATH           the content of one file
//	search [QUERY]      the fact lines and entries that match QUERY, best first
//	context QUERY       what memory gives a prompt about QUERY, within --budget characters
//	check               lint what a person edited; exit status 1 when something needs fixing
//	stats               the facts against their budget, entries per month, prompt sizes
//	log [PATH]          the recorded changes, newest first, of one file or all
//	diff PATH VERSION [VERSION]
//	                    what changed in a file between two versions, or since one
//	add PATH TEXT       append a fact line or an episode entry (TEXT - reads standard input)
//	edit PATH           open a copy in $VISUAL or $EDITOR; save it only if unchanged meanwhile
//	restore PATH VERSION
//	                    bring back a recorded version of a file, if unchanged meanwhile
//	forget TEXT         take TEXT out of every file and every version the history keeps
//	compact             condense old months with the local rule; --dry-run lists what it would
//	import FORMAT DIR   bring in openclaw, claude-code, agnx or toebeans memory; --apply writes
//	mcp                 the MCP server: on standard input and output, or --http ADDR
//	ui                  a page for people to browse, search, fix and undo their memory
//	completion SHELL    a completion script for bash, zsh or fish
//	version             mdmemory's version (also --version, -v)
//	help [COMMAND]      this text, or a command's
//
// Every command takes --dir (default $MDMEMORY_DIR, or data/memory): a
// directory, or s3://BUCKET/PREFIX, reached with the AWS SDK's usual
// configuration from the environment (AWS_ENDPOINT_URL or
// AWS_ENDPOINT_URL_S3 for another S3 server, AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY or AWS_PROFILE, AWS_REGION, ...); and --world
// (default $MDMEMORY_WORLD), the same for the world topics the memory
// shares with other agents, when it shares some. These flags, and --json,
// go before the command or after it. The commands that read take --json
// for machine-readable output, and change no memory file: they never create
// the directory, and write nothing under an S3 prefix; a directory that
// does not exist, or a prefix that holds no file, is an error. They open a
// directory as every Store does, which makes its empty lock file, .lock,
// when it has none yet, and removes the temporary files a crash of a
// writer left behind (.NAME.md.tmp-*, never a person's file).
//
// add, edit, restore, forget, compact and import write through the library, with
// the rules the model's tools keep (the path grammar, the fact guard, the
// budgets, writing only what is still as read); a refusal is said in one
// line, in the library's words with the commands a person has in place of
// the model's tools. The history records their changes as made by "cli",
// or by the name $MDMEMORY_ACTOR gives ("alice", "nightly-import"); log,
// diff and restore read and undo what the history records.
//
// "mdmemory version", "mdmemory --version" and "mdmemory -v" print one
// line, "mdmemory" and the version the binary was built at: the module's
// version, a pseudo-version naming the commit, or "devel" (see
// github.com/mdmemory/memory/mcpserver.Version); the MCP server reports
// the same in its handshake.
//
// Output has colour only on a terminal, and never with $NO_COLOR set or
// TERM=dumb.
//
// The exit status is 0 on success, 1 when the command failed (the message
// is one line, "mdmemory: ...", on standard error) or check found a
// problem, and 2 for a usage mistake (an unknown command or flag, a
// missing argument), said in one line that names the help to read.
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
	"regexp"
	"slices"
	"strings"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/mcpserver"
)

func main() {
	ctx, stop := interruptible()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK      = 0
	exitFailed  = 1 // the command failed, or check found problems
	exitUsage   = 2 // a mistake in the command line
	defaultDir  = "data/memory"
	dirEnv      = "MDMEMORY_DIR"
	worldEnv    = "MDMEMORY_WORLD"
	programName = "mdmemory"
)

// usageErr is a command's report of a mistake in its command line that
// flag parsing cannot see, such as a negative --facts-budget: exit status
// 2, with a pointer to the command's help.
type usageErr struct{ msg string }

func (e usageErr) Error() string { return e.msg }

// errProblems is returned by check when it found something a person must
// fix: the exit status says so, and no message is added.
var errProblems = errors.New("problems found")

// A command is one of mdmemory's commands.
type command struct {
	name    string
	args    string // the arguments, as the usage shows them: "PATH"
	summary string // one line, for the list of commands
	about   string // what the command does, for its --help
	reads   bool   // opens the store only to read, and takes --json
	json    bool   // takes --json, though it may write

	// minArgs and maxArgs bound the number of arguments; maxArgs -1 means
	// no bound.
	minArgs, maxArgs int

	// setup declares the command's own flags on fs and returns the
	// function that runs it with the values they got.
	setup func(fs *flag.FlagSet) func(ctx context.Context, e *env) error
}

// takesJSON reports whether the command has --json.
func (c *command) takesJSON() bool { return c.reads || c.json }

// env is what a command runs with.
type env struct {
	args   []string
	json   bool
	color  bool // standard output is a terminal, and $NO_COLOR is not set
	store  storeFlags
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	embedder memory.Embedder // the commands that search: --embed-url (embed.go)
}

func commands() []*command {
	return []*command{
		cmdLs(), cmdShow(), cmdSearch(), cmdContext(), cmdCheck(), cmdStats(), cmdLog(), cmdDiff(),
		cmdAdd(), cmdEdit(), cmdRestore(), cmdForget(), cmdCompact(), cmdImport(), cmdMCP(), cmdUI(), cmdCompletion(),
	}
}

// commandNames are the names run takes as a command: the commands, help
// and version.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return append(names, "help", "version")
}

// run runs mdmemory with the command-line arguments args (without the
// program's name) and returns the exit status. getenv reads the
// environment (MDMEMORY_DIR, MDMEMORY_WORLD, MDMEMORY_ACTOR, NO_COLOR,
// VISUAL, EDITOR); the
// AWS SDK reads the process's own.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	var sf storeFlags
	top := newFlagSet(programName)
	sf.register(top)
	showVersion := top.Bool("version", false, "print mdmemory's version and exit")
	top.BoolVar(showVersion, "v", false, "print mdmemory's version and exit")
	asJSON := top.Bool("json", false, "print machine-readable JSON")
	switch err := top.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, mainUsage())
		return exitOK
	case err != nil:
		return usageError(stderr, "", flagMessage(err))
	}
	args = top.Args()
	if *showVersion {
		fmt.Fprintln(stdout, programName, mcpserver.Version())
		return exitOK
	}
	if len(args) == 0 {
		return usageError(stderr, "", "no command given")
	}
	name, args := args[0], args[1:]
	switch name {
	case "help":
		return help(args, stdout, stderr)
	case "version":
		if len(args) > 0 {
			return usageError(stderr, "version", fmt.Sprintf("too many arguments: %q", strings.Join(args, " ")))
		}
		fmt.Fprintln(stdout, programName, mcpserver.Version())
		return exitOK
	}
	i := slices.IndexFunc(commands(), func(c *command) bool { return c.name == name })
	if i < 0 {
		return usageError(stderr, "", unknownCommand(name))
	}
	c := commands()[i]
	if *asJSON && !c.takesJSON() {
		return usageError(stderr, c.name, "--json: "+c.name+" has no JSON output")
	}

	e := &env{store: sf, stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, json: *asJSON}
	e.color = isTerminal(stdout) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	fs := newFlagSet(programName + " " + c.name)
	e.store.register(fs)
	if c.takesJSON() {
		fs.BoolVar(&e.json, "json", e.json, "print machine-readable JSON")
	}
	exec := c.setup(fs)
	pos, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, commandUsage(c))
		return exitOK
	case err != nil:
		return usageError(stderr, c.name, flagMessage(err))
	case len(pos) < c.minArgs:
		return usageError(stderr, c.name, "missing "+c.args)
	case c.maxArgs >= 0 && len(pos) > c.maxArgs:
		return usageError(stderr, c.name, fmt.Sprintf("too many arguments: %q", strings.Join(pos[c.maxArgs:], " ")))
	}
	e.args = pos
	if c.name != "mcp" {
		// The changes the command line makes are recorded as a person's
		// at it; the MCP server's, as its conversations'.
		ctx = memory.WithActor(ctx, cmp.Or(strings.TrimSpace(getenv(actorEnv)), defaultActor))
	}
	if err := exec(ctx, e); err != nil {
		// A value the library refuses as input (a negative --limit, a
		// --since that is no date, a --budget under 200) is a mistake in
		// the command line like an unknown flag, said in the library's
		// words of what to give instead.
		var me *memory.Error
		var bad usageErr
		switch {
		case errors.As(err, &bad):
			return usageError(stderr, c.name, bad.msg)
		case errors.As(err, &me) && errors.Is(err, memory.ErrInvalidContent) && me.Path == "":
			msg := me.Hint
			if me.Op == "compact" {
				msg = "--before must be a month, YYYY-MM, and --keep not negative"
			}
			return usageError(stderr, c.name, msg)
		}
		if !errors.Is(err, errProblems) {
			fmt.Fprintln(stderr, programName+": "+oneLine(err))
		}
		return exitFailed
	}
	return exitOK
}

// unknownCommand says that name is no command, and which one it may be.
func unknownCommand(name string) string {
	msg := fmt.Sprintf("unknown command %q", name)
	best, dist := "", 3
	for _, n := range commandNames() {
		if d := editDistance(strings.ToLower(name), n); d < dist {
			best, dist = n, d
		}
	}
	if best != "" && dist <= max(1, len(name)/3) {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg
}

// editDistance is the Levenshtein distance of a and b, in bytes; the
// command names are ASCII, and a typed name longer than 64 bytes is no
// typo of one.
func editDistance(a, b string) int {
	if len(a) > 64 {
		return len(a)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// flagMessage is the flag package's error with the flag written as the
// help writes it, "--limit", not "-limit".
func flagMessage(err error) string {
	return flagName.ReplaceAllString(err.Error(), "$1--$2")
}

// flagName finds a flag's name as the flag package's errors write it:
// "not defined: -frob", "an argument: -limit", "for flag -limit", "for -json".
// A one-letter flag keeps its one dash, as -v and -h are written.
var flagName = regexp.MustCompile(`(: |for flag |for )-([A-Za-z][A-Za-z0-9_-])`)

// help prints the usage of mdmemory, or of the command named in args.
func help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, mainUsage())
		return exitOK
	case len(args) > 1:
		return usageError(stderr, "help", "give at most one command")
	}
	for _, c := range commands() {
		if c.name == args[0] {
			fmt.Fprint(stdout, commandUsage(c))
			return exitOK
		}
	}
	return usageError(stderr, "help", fmt.Sprintf("unknown command %q", args[0]))
}

// usageError reports a mistake in the command line in one line on
// stderr, with the help to read.
func usageError(stderr io.Writer, cmd, msg string) int {
	prefix, see := programName, programName+" help"
	if cmd != "" {
		prefix += " " + cmd
		see = programName + " " + cmd + " --help"
	}
	fmt.Fprintf(stderr, "%s: %s; see '%s'\n", prefix, strings.Join(strings.Fields(msg), " "), see)
	return exitUsage
}

// newFlagSet returns a FlagSet that reports its errors to its caller
// only: run prints them, with the usage, where they belong.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterspersed parses flags anywhere among the arguments, as in
// "mdmemory search tokyo --limit 3", and returns the other arguments. An
// argument "--" ends the flags: what follows is arguments. An argument
// that starts with a dash and a space, "- Language: prefers Chinese", is
// text, not a flag.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if isText(args[0]) {
			pos, args = append(pos, args[0]), args[1:]
			continue
		}
		n := slices.IndexFunc(args, isText)
		if n < 0 {
			n = len(args)
		}
		if err := fs.Parse(args[:n]); err != nil {
			return nil, err
		}
		rest := fs.Args()
		used := n - len(rest)
		switch {
		case used > 0 && args[used-1] == "--":
			return append(pos, args[used:]...), nil
		case len(rest) > 0:
			pos, args = append(pos, rest[0]), args[used+1:]
		default:
			args = args[n:]
		}
	}
	return pos, nil
}

// isText reports an argument that starts with dashes but is no flag: a
// list item, "- Name: Zhang San".
func isText(a string) bool {
	t := strings.TrimLeft(a, "-")
	return len(t) < len(a) && len(a)-len(t) <= 2 && t != "" && strings.ContainsRune(" \t\r\n", rune(t[0]))
}

func mainUsage() string {
	var b strings.Builder
	b.WriteString(`mdmemory reads, checks, writes and serves an agent's long-term memory: the
markdown files of github.com/mdmemory/memory.

Usage:
  mdmemory [--dir DIR] [--world DIR] COMMAND [flags] [arguments]

Commands:
`)
	for _, c := range commands() {
		use := strings.TrimSpace(c.name + " " + c.args)
		if len(use) > 22 {
			use += "\n" + strings.Repeat(" ", 25) // a summary under a long usage
		} else {
			use = fmt.Sprintf("%-22s ", use)
		}
		fmt.Fprintf(&b, "  %s%s\n", use, c.summary)
	}
	fmt.Fprintf(&b, "  %-22s %s\n", "version", "mdmemory's version (also --version, -v)")
	fmt.Fprintf(&b, "  %-22s %s\n", "help [COMMAND]", "this text, or a command's")
	b.WriteString(`
Flags of every command:
`)
	b.WriteString(flagDefaults(func(fs *flag.FlagSet) { new(storeFlags).register(fs) }))
	b.WriteString(`
These flags, and --json, go before the command or after it. The commands
that read (ls, show, search, context, check, stats, log, diff) take --json,
and change nothing; add, edit, restore, forget, compact and import write, each
through the library's rules, and the history records their changes as made
by "cli", or by the name in $MDMEMORY_ACTOR. Exit status: 0 on success, 1
when the command failed or check found a problem, 2 for a mistake in the
command line. "mdmemory COMMAND --help" describes one. Colour only on a
terminal, and never with $NO_COLOR set.
`)
	return b.String()
}

func commandUsage(c *command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  mdmemory %s [flags]", c.name)
	if c.args != "" {
		b.WriteString(" " + c.args)
	}
	b.WriteString("\n\n" + c.about + "\n\nFlags:\n")
	b.WriteString(flagDefaults(func(fs *flag.FlagSet) {
		new(storeFlags).register(fs)
		if c.takesJSON() {
			fs.Bool("json", false, "print machine-readable JSON")
		}
		c.setup(fs)
	}))
	return b.String()
}

// flagDefaults renders the flags declared by declare, as flag does.
func flagDefaults(declare func(fs *flag.FlagSet)) string {
	fs := newFlagSet("")
	declare(fs)
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return dashes(b.String())
}

// dashes writes the flags with two dashes, "--dir", as the documentation
// does; flag accepts both.
func dashes(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.HasPrefix(line, "  -") {
			line = "  --" + line[3:]
		}
		b.WriteString(line)
	}
	return b.String()
}

// oneLine makes an error one line of text, without the library's own
// "memory: " prefix after mdmemory's.
func oneLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "memory: ")
	return printable(strings.Join(strings.Fields(s), " "))
}
