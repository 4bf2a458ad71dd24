package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

func cmdCompletion() *command {
	return &command{
		name: "completion", args: "SHELL", summary: "a completion script for bash, zsh or fish", minArgs: 1, maxArgs: 1,
		about: `Prints a script that completes mdmemory's commands, flags, the memory's
usual paths (after show, add, edit, log, diff and restore) and import's
formats in the shell named:

  bash  source <(mdmemory completion bash)       (in ~/.bashrc)
  zsh   source <(mdmemory completion zsh)        (in ~/.zshrc, after compinit)
  fish  mdmemory completion fish > ~/.config/fish/completions/mdmemory.fish`,
		setup: func(fs *flag.FlagSet) func(context.Context, *env) error {
			return func(ctx context.Context, e *env) error {
				switch e.args[0] {
				case "bash":
					return completeBash(e.stdout)
				case "zsh":
					return completeZsh(e.stdout)
				case "fish":
					return completeFish(e.stdout)
				}
				return usageErr{fmt.Sprintf("unknown shell %q: give bash, zsh or fish", e.args[0])}
			}
		},
	}
}

// completionPaths are the paths completed after show, add, edit and the
// history's commands.
var completionPaths = "facts/user.md facts/memory.md procedures.md persona.md episodes/"

// flagSpec is a flag as completion shows it.
type flagSpec struct {
	name, usage string
	value       bool // takes a value
}

// globalFlags are the flags taken before the command.
func globalFlags() []flagSpec {
	fs := newFlagSet("")
	new(storeFlags).register(fs)
	fs.Bool("json", false, "print machine-readable JSON")
	fs.Bool("version", false, "print mdmemory's version and exit")
	fs.Bool("help", false, "the usage")
	return specs(fs)
}

// commandFlags are a command's flags, the store's included.
func commandFlags(c *command) []flagSpec {
	fs := newFlagSet("")
	new(storeFlags).register(fs)
	if c.takesJSON() {
		fs.Bool("json", false, "print machine-readable JSON")
	}
	c.setup(fs)
	fs.Bool("help", false, "the command's usage")
	return specs(fs)
}

func specs(fs *flag.FlagSet) []flagSpec {
	var out []flagSpec
	fs.VisitAll(func(f *flag.Flag) {
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		usage, _, _ := strings.Cut(f.Usage, " (")
		usage, _, _ = strings.Cut(usage, ": ")
		out = append(out, flagSpec{f.Name, usage, !ok || !b.IsBoolFlag()})
	})
	return out
}

// valueFlags are the global flags that take a value, "--dir|--world|...",
// as a shell pattern.
func valueFlags() string {
	var v []string
	for _, f := range globalFlags() {
		if f.value {
			v = append(v, "--"+f.name, "-"+f.name)
		}
	}
	return strings.Join(v, "|")
}

// argWords are the words completed as a command's arguments.
func argWords(c *command) string {
	switch c.name {
	case "show", "add", "edit", "log", "diff", "restore":
		return completionPaths
	case "import":
		return strings.Join(importFormats, " ")
	case "completion":
		return "bash zsh fish"
	}
	return ""
}

func completeBash(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`# bash completion for mdmemory: source <(mdmemory completion bash)
_mdmemory() {
    local cur prev cmd i opts words
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            ` + valueFlags() + `) ((i++)) ;;
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    case "$prev" in
        --dir|--world|--users|--token-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ -z "$cmd" ]]; then
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "`)
	for _, f := range globalFlags() {
		b.WriteString("--" + f.name + " ")
	}
	b.WriteString(`-v" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "` + strings.Join(commandNames(), " ") + `" -- "$cur"))
        fi
        return
    fi
    opts=""
    words=""
    case "$cmd" in
`)
	for _, c := range commands() {
		var flags []string
		for _, f := range commandFlags(c) {
			flags = append(flags, "--"+f.name)
		}
		fmt.Fprintf(&b, "        %s) opts=%q; words=%q ;;\n", c.name, strings.Join(flags, " "), argWords(c))
	}
	b.WriteString(`        help) words="` + strings.Join(commandNames(), " ") + `" ;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -n "$words" ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -d -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -o default -F _mdmemory mdmemory
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// zshQuote quotes s for zsh (and fish) in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func completeZsh(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`#compdef mdmemory
# zsh completion for mdmemory: source <(mdmemory completion zsh), after compinit
_mdmemory() {
    local -a commands
    local cmd i
    commands=(
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "        %s\n", shellQuote(c.name+":"+strings.ReplaceAll(c.summary, ":", `\:`)))
	}
	b.WriteString(`        'help:the usage, or a command'"'"'s'
        'version:mdmemory'"'"'s version'
    )
    cmd=""
    for ((i = 2; i < CURRENT; i++)); do
        case "${words[i]}" in
            ` + valueFlags() + `) ((i++)) ;;
            -*) ;;
            *) cmd="${words[i]}"; break ;;
        esac
    done
    if [[ -z "$cmd" ]]; then
        if [[ "${words[CURRENT]}" == -* ]]; then
            compadd -- `)
	for _, f := range globalFlags() {
		b.WriteString("--" + f.name + " ")
	}
	b.WriteString(`-v
        else
            _describe 'command' commands
        fi
        return
    fi
    if [[ "${words[CURRENT]}" == -* ]]; then
        case "$cmd" in
`)
	for _, c := range commands() {
		var flags []string
		for _, f := range commandFlags(c) {
			flags = append(flags, "--"+f.name)
		}
		fmt.Fprintf(&b, "            %s) compadd -- %s ;;\n", c.name, strings.Join(flags, " "))
	}
	b.WriteString(`        esac
        return
    fi
    case "$cmd" in
`)
	for _, c := range commands() {
		if words := argWords(c); words != "" {
			fmt.Fprintf(&b, "        %s) compadd -- %s; _files -/ ;;\n", c.name, words)
		}
	}
	b.WriteString(`        help) _describe 'command' commands ;;
        *) _files ;;
    esac
}
if [[ "$funcstack[1]" == "_mdmemory" ]]; then
    _mdmemory "$@"
else
    compdef _mdmemory mdmemory
fi
`)
	_, err := io.WriteString(w, b.String())
	return err
}

func completeFish(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# fish completion for mdmemory: mdmemory completion fish > ~/.config/fish/completions/mdmemory.fish\n")
	b.WriteString("complete -c mdmemory -f\n")
	names := commandNames()
	for _, f := range globalFlags() {
		fmt.Fprintf(&b, "complete -c mdmemory -n __fish_use_subcommand -l %s", f.name)
		if f.value {
			b.WriteString(" -r -F")
		}
		fmt.Fprintf(&b, " -d %s\n", shellQuote(f.usage))
	}
	b.WriteString("complete -c mdmemory -n __fish_use_subcommand -s v -d 'print mdmemory'\\''s version and exit'\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "complete -c mdmemory -n __fish_use_subcommand -a %s -d %s\n", c.name, shellQuote(c.summary))
	}
	b.WriteString("complete -c mdmemory -n __fish_use_subcommand -a help -d 'the usage, or a command'\\''s'\n")
	b.WriteString("complete -c mdmemory -n __fish_use_subcommand -a version -d 'mdmemory'\\''s version'\n")
	for _, c := range commands() {
		cond := shellQuote("__fish_seen_subcommand_from " + c.name)
		for _, f := range commandFlags(c) {
			fmt.Fprintf(&b, "complete -c mdmemory -n %s -l %s", cond, f.name)
			if f.value {
				b.WriteString(" -r -F")
			}
			fmt.Fprintf(&b, " -d %s\n", shellQuote(f.usage))
		}
		if words := argWords(c); words != "" {
			fmt.Fprintf(&b, "complete -c mdmemory -n %s -a %s -F\n", cond, shellQuote(words))
		}
	}
	fmt.Fprintf(&b, "complete -c mdmemory -n %s -a %s\n", shellQuote("__fish_seen_subcommand_from help"), shellQuote(strings.Join(slices.Clone(names), " ")))
	_, err := io.WriteString(w, b.String())
	return err
}
