package memory

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mdmemory/memory/internal/paths"
)

// The sandbox. Paths from the model are matched against a small grammar
// (internal/paths), not a blacklist: facts/<name> for a configured fact file name, or
// episodes/YYYY-MM.md for a real month, with its full parts
// episodes/YYYY-MM.NNN.md (read and patched, not appended to) and the
// originals Compact keeps under episodes/archive/ (read only); two files
// at the root, procedures.md and the person's persona.md (read only); and,
// when the store shares world facts, world/<topic>.md for a topic name of
// lower-case letters, digits and dashes. Anything else is refused before
// the disk is touched, and the files that are touched are reached only
// through the store's os.Root (or the shared one's), so a symbolic link
// cannot lead out of the directory.

// The grammar's names and builders are internal/paths's; the root keeps
// these short names for them, which its many callers use.
const (
	factsDir       = paths.FactsDir
	episodesDir    = paths.EpisodesDir
	worldDir       = paths.WorldDir
	archiveDir     = paths.ArchiveDir
	personaFile    = paths.PersonaFile
	proceduresFile = paths.ProceduresFile
	maxTopicLen    = paths.MaxTopicLen
)

// factPath is the path of the fact file named name: "facts/user.md".
func factPath(name string) string { return paths.Fact(name) }

// monthPath is the path of a month's file: "episodes/2026-02.md".
func monthPath(month string) string { return paths.Month(month) }

// partPath is the path of a month's sealed part n: "episodes/2026-02.003.md".
func partPath(month string, n int) string { return paths.Part(month, n) }

// archivePath is where Compact keeps the original of the file at p:
// "episodes/archive/2026-02.md".
func archivePath(p string) string { return paths.Archive(p) }

// grammar is the store's path grammar: its fact files, and whether it
// shares world topics.
func (s *Store) grammar() paths.Grammar {
	names := make([]string, len(s.opts.FactFiles))
	for i, f := range s.opts.FactFiles {
		names[i] = f.Name
	}
	return paths.Grammar{Facts: names, World: s.opts.World != nil}
}

// target is a path that passed the grammar.
type target struct {
	path     string // canonical and slash-separated: "facts/user.md"
	fact     int    // index into Options.FactFiles, or -1 for an episode file
	month    string // "2026-02" for an episode file
	part     int    // a sealed part's number (episodes/2026-02.003.md); 0 for the month's file
	archived bool   // an original kept by Compact under episodes/archive/: read only
	root     string // personaFile or proceduresFile for a file at the root; "" otherwise
	topic    string // "project-apollo" for world/project-apollo.md, a shared world topic; "" otherwise
	cache    bool   // the store's own file, outside the grammar: the cache of vectors
	stray    bool   // a file in a memory folder outside the grammar, which only Forget changes
}

// isFact reports one of the store's fact files.
func (t target) isFact() bool { return t.fact >= 0 }

// factual reports a file of fact lines, held to the fact guard and a
// budget: a fact file or a world topic.
func (t target) factual() bool { return t.fact >= 0 || t.topic != "" }

// isProcedures reports procedures.md.
func (t target) isProcedures() bool { return t.root == proceduresFile }

// isEpisode reports a month's file, one of its parts or an archived original.
func (t target) isEpisode() bool { return t.fact < 0 && t.root == "" && t.topic == "" && !t.cache }

// resolve maps a model-supplied path to a file of the store, or explains with
// an ErrInvalidPath model error why it is not one. The grammar says what
// the path is; resolve words its refusals, and refuses what op may not do
// to a file of its kind: change persona.md, append to a month's sealed
// part, change an archived original.
func (s *Store) resolve(op, p string) (target, error) {
	shown := quoteIfOdd(p)
	bad := func(format string, args ...any) (target, error) {
		return target{}, modelErr(op, shown, ErrInvalidPath, fmt.Sprintf(format, args...), "; "+s.validPaths())
	}
	got, why := s.grammar().Parse(p)
	switch why {
	case paths.OK:
	case paths.Empty:
		return bad("the path is empty")
	case paths.Control:
		return bad("the path contains a control character")
	case paths.Absolute:
		return bad("the path must be relative to the memory directory, not absolute")
	case paths.Backslash:
		return bad(`the path must use forward slashes, not backslashes`)
	case paths.DotSegment:
		return bad("the path may not contain . or .. segments")
	case paths.EmptySegment:
		return bad("the path has an empty segment (a doubled or trailing slash)")
	case paths.Hidden:
		return bad("the path may not name hidden files or folders")
	case paths.NotFact:
		return bad("%s is not one of the fact files", shown)
	case paths.NoWorld:
		return bad("%s is a shared world topic, and this memory shares no world facts with other agents", shown)
	case paths.BadTopic:
		like := topicExample
		if t := paths.TopicFor(strings.TrimPrefix(p, worldDir+"/")); t != "" {
			like = paths.Topic(t)
		}
		return bad("%s is not a world topic: its name must be lower-case letters and digits, words joined by single dashes, at most %d characters, ending in .md, such as %s", shown, maxTopicLen, like)
	case paths.BadMonth:
		return bad("%s is not a month file: the name must be YYYY-MM.md with a year from 1000 to 9999 and a month from 01 to 12", shown)
	case paths.BadArchived:
		return bad("%s is not an archived month file", shown)
	default:
		return bad("%s is not a memory file", shown)
	}
	t := target{path: p, fact: got.Fact, month: got.Month, part: got.Part, topic: got.Topic}
	switch got.Kind {
	case paths.KindPersona:
		if op != "read" {
			return target{}, s.personaRefusal(op)
		}
		t.root = p
	case paths.KindProcedures:
		t.root = p
	case paths.KindPart:
		if op == "append" {
			return bad("%s is a full part of the month, kept as it is; append to %s", shown, monthPath(got.Month))
		}
	case paths.KindArchived:
		if op != "read" {
			return bad("%s is an original kept by compaction, and read only; change %s instead", shown, monthPath(got.Month))
		}
		t.archived = true
	}
	return t, nil
}

// validPaths is the model-facing statement of the grammar, for errors.
func (s *Store) validPaths() string {
	return "valid paths are " + s.pathList() + " (such as " + monthPath(s.now().Format("2006-01")) + ")"
}

// quoteIfOdd keeps a path readable in an error message: a path with control
// characters, or an absurdly long one, is shown quoted or cut.
func quoteIfOdd(p string) string {
	if len(p) > 200 {
		// Cut at a character's start, so that the cut text is still
		// UTF-8 where the path was.
		i := 200
		for i > 0 && !utf8.RuneStart(p[i]) {
			i--
		}
		p = p[:i] + "…"
	}
	if strings.ContainsFunc(p, unicode.IsControl) || p == "" {
		return strconv.Quote(p)
	}
	return p
}

// personaRefusal is the model error for a change to persona.md.
func (s *Store) personaRefusal(op string) error {
	return modelErr(op, personaFile, ErrInvalidPath, personaFile+" is the person's own file, written by hand only: the memory tools may read it but never change it",
		"; record what you learned in "+s.factList()+", or "+proceduresFile+" instead")
}

// pathList names the valid paths for descriptions and schemas.
func (s *Store) pathList() string {
	var b strings.Builder
	for _, f := range s.opts.FactFiles {
		b.WriteString(factPath(f.Name) + ", ")
	}
	if s.opts.World != nil {
		b.WriteString(worldDir + "/<topic>.md for a world topic shared with the other agents (lower-case letters, digits and dashes, such as " + topicExample + "), ")
	}
	b.WriteString(proceduresFile + " for rules learned from experience, or " + episodesDir + "/YYYY-MM.md for a month's episodes")
	return b.String()
}

// topicExample is the topic the model-facing texts name.
const topicExample = "world/project-apollo.md"

// factList describes the fact files and their purposes.
func (s *Store) factList() string {
	parts := make([]string, len(s.opts.FactFiles))
	for i, f := range s.opts.FactFiles {
		parts[i] = factPath(f.Name)
		if f.Purpose != "" {
			parts[i] += " (" + f.Purpose + ")"
		}
	}
	return strings.Join(parts, "; ")
}
