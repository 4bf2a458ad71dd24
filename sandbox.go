package memory

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The sandbox. Paths from the model are matched against a small grammar, not
// a blacklist: facts/<name> for a configured fact file name, or
// episodes/YYYY-MM.md for a real month, with its full parts
// episodes/YYYY-MM.NNN.md (read and patched, not appended to) and the
// originals Compact keeps under episodes/archive/ (read only); two files
// at the root, procedures.md and the person's persona.md (read only); and,
// when the store shares world facts, world/<topic>.md for a topic name of
// lower-case letters, digits and dashes. Anything else is refused before
// the disk is touched, and the files that are touched are reached only
// through the store's os.Root (or the shared one's), so a symbolic link
// cannot lead out of the directory.

const (
	factsDir    = "facts"
	episodesDir = "episodes"
)

// factPath is the path of the fact file named name: "facts/user.md".
func factPath(name string) string { return factsDir + "/" + name }

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
// an ErrInvalidPath model error why it is not one.
func (s *Store) resolve(op, p string) (target, error) {
	shown := quoteIfOdd(p)
	bad := func(format string, args ...any) (target, error) {
		return target{}, modelErr(op, shown, ErrInvalidPath, fmt.Sprintf(format, args...), "; "+s.validPaths())
	}
	switch {
	case p == "":
		return bad("the path is empty")
	case strings.ContainsFunc(p, unicode.IsControl):
		return bad("the path contains a control character")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':'):
		return bad("the path must be relative to the memory directory, not absolute")
	case strings.Contains(p, `\`):
		return bad(`the path must use forward slashes, not backslashes`)
	}
	segs := strings.Split(p, "/")
	for _, seg := range segs {
		switch {
		case seg == "." || seg == "..":
			return bad("the path may not contain . or .. segments")
		case seg == "":
			return bad("the path has an empty segment (a doubled or trailing slash)")
		case strings.HasPrefix(seg, "."):
			return bad("the path may not name hidden files or folders")
		}
	}
	if len(segs) == 1 && (p == personaFile || p == proceduresFile) {
		if p == personaFile && op != "read" {
			return target{}, s.personaRefusal(op)
		}
		return target{path: p, fact: -1, root: p}, nil
	}
	if len(segs) == 2 && segs[0] == factsDir {
		for i, f := range s.opts.FactFiles {
			if segs[1] == f.Name {
				return target{path: p, fact: i}, nil
			}
		}
		return bad("%s is not one of the fact files", shown)
	}
	if len(segs) == 2 && segs[0] == worldDir {
		topic, ok := topicFile(segs[1])
		switch {
		case s.opts.World == nil:
			return bad("%s is a shared world topic, and this memory shares no world facts with other agents", shown)
		case !ok:
			like := topicExample
			if t := topicFor(topicStem(segs[1])); t != "" {
				like = worldDir + "/" + t + ".md"
			}
			return bad("%s is not a world topic: its name must be lower-case letters and digits, words joined by single dashes, at most %d characters, ending in .md, such as %s", shown, maxTopicLen, like)
		}
		return target{path: p, fact: -1, topic: topic}, nil
	}
	if len(segs) == 2 && segs[0] == episodesDir {
		m, part, ok := episodeName(segs[1])
		switch {
		case !ok:
			return bad("%s is not a month file: the name must be YYYY-MM.md with a year from 1000 to 9999 and a month from 01 to 12", shown)
		case part > 0 && op == "append":
			return bad("%s is a full part of the month, kept as it is; append to %s", shown, monthPath(m))
		}
		return target{path: p, fact: -1, month: m, part: part}, nil
	}
	if len(segs) == 3 && segs[0] == episodesDir && segs[1] == archiveDir {
		m, part, ok := episodeName(segs[2])
		switch {
		case !ok:
			return bad("%s is not an archived month file", shown)
		case op != "read":
			return bad("%s is an original kept by compaction, and read only; change %s instead", shown, monthPath(m))
		}
		return target{path: p, fact: -1, month: m, part: part, archived: true}, nil
	}
	return bad("%s is not a memory file", shown)
}

// validPaths is the model-facing statement of the grammar, for errors.
func (s *Store) validPaths() string {
	return "valid paths are " + s.pathList() + " (such as episodes/" + s.now().Format("2006-01") + ".md)"
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
