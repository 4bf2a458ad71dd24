// Package paths is the grammar of memory paths, written once: which
// slash-separated paths name a memory file, what kind of file each is,
// and how each is built from its parts.
//
// The grammar is a closed set, not a blacklist:
//
//	facts/<name>                  a configured fact file ("facts/user.md")
//	world/<topic>.md              a shared world topic, when the store shares a world
//	episodes/YYYY-MM.md           a month's file, for a year from 1000 to 9999
//	episodes/YYYY-MM.NNN.md       a month's sealed part, 001 to 999
//	episodes/archive/YYYY-MM.md   an original Compact keeps (and its parts')
//	procedures.md                 the rules learned from experience
//	persona.md                    the person's own file
//
// A path the grammar takes is canonical: no "." or ".." segment, no empty,
// hidden or backslashed one, nothing absolute, so it is the one name of
// its file. [Grammar.Parse] says what a path is, or why it is none, with a
// [Reason] and no wording: the library words its own messages, and decides
// what each operation may do with each kind of file. [Grammar.Listed] is
// the same grammar for the names a backend lists, so that what a listing
// takes and what the sandbox admits cannot disagree.
//
// Nothing here does I/O.
package paths

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// The folders and root files of a memory.
const (
	FactsDir    = "facts"    // the fact files
	EpisodesDir = "episodes" // the months' files and parts
	WorldDir    = "world"    // the shared world topics
	ArchiveDir  = "archive"  // in EpisodesDir: the originals Compact keeps
	HistoryDir  = ".history" // the history's logs, on each backend: hidden, no path of the grammar

	ProceduresFile = "procedures.md" // the rules learned from experience
	PersonaFile    = "persona.md"    // the person's own file, written by hand

	// MaxTopicLen is the longest a topic's name may be, in bytes.
	MaxTopicLen = 64

	// MaxPart is the highest number a month's sealed part may have: its
	// number is written in three digits.
	MaxPart = 999
)

// Kind is what kind of memory file a path names.
type Kind uint8

// The kinds of memory file. The zero Kind is none.
const (
	KindNone       Kind = iota
	KindFact            // facts/<name>, a configured fact file
	KindTopic           // world/<topic>.md
	KindMonth           // episodes/YYYY-MM.md
	KindPart            // episodes/YYYY-MM.NNN.md
	KindArchived        // episodes/archive/YYYY-MM.md or YYYY-MM.NNN.md
	KindProcedures      // procedures.md
	KindPersona         // persona.md
)

// Path is a path the grammar takes, in its parts.
type Path struct {
	Kind  Kind
	Path  string // the canonical, slash-separated path: "facts/user.md"
	Fact  int    // KindFact: the index of its name in Grammar.Facts; -1 for any other kind
	Month string // KindMonth, KindPart, KindArchived: "2026-02"; "" otherwise
	Part  int    // KindPart, or KindArchived of a part: its number, 1 to MaxPart; 0 otherwise
	Topic string // KindTopic: "project-apollo"; "" otherwise
}

// Reason is why a path is not a memory file. The zero Reason, OK, is none.
// A path breaks the first rule of the grammar it meets, in the order the
// reasons are listed.
type Reason uint8

// The reasons a path is refused.
const (
	OK           Reason = iota
	Empty               // the path is ""
	Control             // it holds a control character
	Absolute            // it starts with a slash or a backslash, or a drive ("C:")
	Backslash           // it holds a backslash
	DotSegment          // a segment is "." or ".."
	EmptySegment        // a segment is empty: a doubled or trailing slash
	Hidden              // a segment starts with "."
	NotFact             // facts/<name> for a name not in Grammar.Facts
	NoWorld             // world/<name>, and the grammar has no world
	BadTopic            // world/<name> for a name that is not a topic's (ValidTopic)
	BadMonth            // episodes/<name> for a name that is not a month's file or part
	BadArchived         // episodes/archive/<name> likewise
	NotMemory           // any other path: a folder, another root file, a deeper path
)

var reasons = [...]string{
	OK:           "ok",
	Empty:        "empty",
	Control:      "control character",
	Absolute:     "absolute",
	Backslash:    "backslash",
	DotSegment:   "dot segment",
	EmptySegment: "empty segment",
	Hidden:       "hidden",
	NotFact:      "not a fact file",
	NoWorld:      "no world",
	BadTopic:     "bad topic name",
	BadMonth:     "bad month name",
	BadArchived:  "bad archived name",
	NotMemory:    "not a memory file",
}

// String names the reason, for tests and logs; it is no model-facing text.
func (r Reason) String() string {
	if int(r) < len(reasons) {
		return reasons[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Grammar is the grammar of one store: its configured fact files, and
// whether it shares world topics.
type Grammar struct {
	Facts []string // the fact files' names, "user.md", each passing ValidFactName
	World bool     // whether world/<topic>.md paths are memory files
}

// Parse says which memory file p names, or why it names none. It takes
// only canonical paths, so the Path it returns has p as its Path. It
// allocates nothing.
func (g Grammar) Parse(p string) (Path, Reason) {
	switch {
	case p == "":
		return Path{}, Empty
	case strings.ContainsFunc(p, unicode.IsControl):
		return Path{}, Control
	case p[0] == '/' || p[0] == '\\' || (len(p) > 1 && p[1] == ':'):
		return Path{}, Absolute
	case strings.Contains(p, `\`):
		return Path{}, Backslash
	}
	// The segments, without strings.Split: a listing parses every name.
	var segs [3]string
	n := 0
	for rest, more := p, true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, "/")
		switch {
		case seg == "." || seg == "..":
			return Path{}, DotSegment
		case seg == "":
			return Path{}, EmptySegment
		case seg[0] == '.':
			return Path{}, Hidden
		}
		if n < len(segs) {
			segs[n] = seg
		}
		n++
	}
	out := Path{Path: p, Fact: -1}
	switch {
	case n == 1 && p == ProceduresFile:
		out.Kind = KindProcedures
	case n == 1 && p == PersonaFile:
		out.Kind = KindPersona
	case n == 2 && segs[0] == FactsDir:
		i := indexOf(g.Facts, segs[1])
		if i < 0 {
			return Path{}, NotFact
		}
		out.Kind, out.Fact = KindFact, i
	case n == 2 && segs[0] == WorldDir:
		topic, ok := TopicName(segs[1])
		switch {
		case !g.World:
			return Path{}, NoWorld
		case !ok:
			return Path{}, BadTopic
		}
		out.Kind, out.Topic = KindTopic, topic
	case n == 2 && segs[0] == EpisodesDir:
		m, part, ok := EpisodeName(segs[1])
		if !ok {
			return Path{}, BadMonth
		}
		out.Kind, out.Month, out.Part = KindMonth, m, part
		if part > 0 {
			out.Kind = KindPart
		}
	case n == 3 && segs[0] == EpisodesDir && segs[1] == ArchiveDir:
		m, part, ok := EpisodeName(segs[2])
		if !ok {
			return Path{}, BadArchived
		}
		out.Kind, out.Month, out.Part = KindArchived, m, part
	default:
		return Path{}, NotMemory
	}
	return out, OK
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// Listed reports whether name, as a backend lists it, is a memory file
// that listings and searches take: every path Parse takes but persona.md,
// the person's own file, which is read on its own.
func (g Grammar) Listed(name string) bool {
	p, r := g.Parse(name)
	return r == OK && p.Kind != KindPersona
}

// Fact is the path of the fact file named name: "facts/user.md".
func Fact(name string) string { return FactsDir + "/" + name }

// Topic is the path of a world topic: "world/project-apollo.md".
func Topic(topic string) string { return WorldDir + "/" + topic + ".md" }

// Month is the path of a month's file: "episodes/2026-02.md".
func Month(month string) string { return EpisodesDir + "/" + month + ".md" }

// Part is the path of a month's sealed part n: "episodes/2026-02.003.md".
func Part(month string, n int) string {
	return fmt.Sprintf("%s/%s.%03d.md", EpisodesDir, month, n)
}

// Archive is where Compact keeps the original of the month's file or part
// at p: "episodes/archive/2026-02.md" for "episodes/2026-02.md".
func Archive(p string) string {
	return EpisodesDir + "/" + ArchiveDir + "/" + strings.TrimPrefix(p, EpisodesDir+"/")
}

// ValidFactName reports whether name is a fact file's name: lower-case
// ASCII letters, digits, '-' and '_', then ".md".
func ValidFactName(name string) bool {
	stem, ok := strings.CutSuffix(name, ".md")
	if !ok || stem == "" {
		return false
	}
	for _, c := range stem {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ValidTopic reports whether name is a topic's name: lower-case ASCII
// letters and digits, in words joined by single dashes, at most
// MaxTopicLen bytes.
func ValidTopic(name string) bool {
	if name == "" || len(name) > MaxTopicLen || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// TopicName returns the topic of a file name in world/: "project-apollo"
// for "project-apollo.md".
func TopicName(base string) (string, bool) {
	topic, ok := strings.CutSuffix(base, ".md")
	return topic, ok && ValidTopic(topic)
}

// IsTopic reports whether p is the path of a world topic:
// "world/project-apollo.md".
func IsTopic(p string) bool {
	base, ok := strings.CutPrefix(p, WorldDir+"/")
	_, valid := TopicName(base)
	return ok && valid
}

// InWorld reports whether name is world/ or under it: a name a store with
// a shared world reads from the shared backend.
func InWorld(name string) bool {
	return name == WorldDir || strings.HasPrefix(name, WorldDir+"/")
}

// TopicFor makes a topic's name of a file name that is not one: its stem
// (without a markdown extension, ".md" or ".markdown" in any case),
// lower-cased, with every run of other characters than ASCII letters and
// digits a dash, cut to MaxTopicLen bytes ("Project Apollo.MD" gives
// "project-apollo"); "" when nothing is left.
func TopicFor(name string) string {
	for _, ext := range []string{".md", ".markdown"} {
		if len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext) {
			name = name[:len(name)-len(ext)]
			break
		}
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	t := b.String()
	if len(t) > MaxTopicLen {
		t = strings.TrimRight(t[:MaxTopicLen], "-")
	}
	return t
}

// ValidMonth reports whether m is "YYYY-MM" with a year from 1000 to 9999
// and a month from 01 to 12.
func ValidMonth(m string) bool {
	if len(m) != 7 || m[4] != '-' || m[0] == '0' {
		return false
	}
	for i, c := range m {
		if i != 4 && (c < '0' || c > '9') {
			return false
		}
	}
	return m[5:] >= "01" && m[5:] <= "12"
}

// EpisodeName parses a file name in episodes/ (or its archive):
// "YYYY-MM.md", part 0, or "YYYY-MM.NNN.md", part NNN from 001 to 999,
// for a month ValidMonth takes.
func EpisodeName(name string) (month string, part int, ok bool) {
	rest, ok := strings.CutSuffix(name, ".md")
	if !ok || len(rest) < len("2006-01") {
		return "", 0, false
	}
	month, rest = rest[:7], rest[7:]
	if !ValidMonth(month) {
		return "", 0, false
	}
	if rest == "" {
		return month, 0, true
	}
	if len(rest) != 4 || rest[0] != '.' {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[1:])
	if err != nil || n < 1 || rest[1] == '+' || rest[1] == '-' {
		return "", 0, false
	}
	return month, n, true
}

// MonthOf returns the month of a month's file, "2026-02" for
// "episodes/2026-02.md", and whether p is one (not a part, not archived).
func MonthOf(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, EpisodesDir+"/")
	month, part, valid := EpisodeName(rest)
	return month, ok && valid && part == 0
}

// IsPart reports whether p is a month's sealed part in episodes/:
// "episodes/2026-02.003.md".
func IsPart(p string) bool {
	rest, ok := strings.CutPrefix(p, EpisodesDir+"/")
	_, part, valid := EpisodeName(rest)
	return ok && valid && part > 0
}
