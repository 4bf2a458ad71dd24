package paths_test

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mdmemory/memory/internal/paths"
)

var (
	facts    = []string{"user.md", "memory.md"}
	withW    = paths.Grammar{Facts: facts, World: true}
	withoutW = paths.Grammar{Facts: facts}
)

func TestParse(t *testing.T) {
	type want struct {
		kind  paths.Kind
		fact  int
		month string
		part  int
		topic string
	}
	tests := []struct {
		name string
		p    string
		g    paths.Grammar
		want want
		why  paths.Reason
	}{
		// Each kind of memory file.
		{"fact", "facts/user.md", withW, want{kind: paths.KindFact, fact: 0}, paths.OK},
		{"second fact", "facts/memory.md", withoutW, want{kind: paths.KindFact, fact: 1}, paths.OK},
		{"topic", "world/project-apollo.md", withW, want{kind: paths.KindTopic, fact: -1, topic: "project-apollo"}, paths.OK},
		{"topic of one letter", "world/a.md", withW, want{kind: paths.KindTopic, fact: -1, topic: "a"}, paths.OK},
		{"topic of 64", "world/" + strings.Repeat("a", 64) + ".md", withW, want{kind: paths.KindTopic, fact: -1, topic: strings.Repeat("a", 64)}, paths.OK},
		{"month", "episodes/2026-02.md", withW, want{kind: paths.KindMonth, fact: -1, month: "2026-02"}, paths.OK},
		{"first month", "episodes/1000-01.md", withW, want{kind: paths.KindMonth, fact: -1, month: "1000-01"}, paths.OK},
		{"last month", "episodes/9999-12.md", withW, want{kind: paths.KindMonth, fact: -1, month: "9999-12"}, paths.OK},
		{"part", "episodes/2026-02.003.md", withW, want{kind: paths.KindPart, fact: -1, month: "2026-02", part: 3}, paths.OK},
		{"first part", "episodes/2026-02.001.md", withW, want{kind: paths.KindPart, fact: -1, month: "2026-02", part: 1}, paths.OK},
		{"last part", "episodes/2026-02.999.md", withW, want{kind: paths.KindPart, fact: -1, month: "2026-02", part: 999}, paths.OK},
		{"archived month", "episodes/archive/2025-03.md", withoutW, want{kind: paths.KindArchived, fact: -1, month: "2025-03"}, paths.OK},
		{"archived part", "episodes/archive/2025-03.012.md", withoutW, want{kind: paths.KindArchived, fact: -1, month: "2025-03", part: 12}, paths.OK},
		{"procedures", "procedures.md", withoutW, want{kind: paths.KindProcedures, fact: -1}, paths.OK},
		{"persona", "persona.md", withoutW, want{kind: paths.KindPersona, fact: -1}, paths.OK},

		// Paths outside every folder, in the order the rules are met.
		{"empty", "", withW, want{}, paths.Empty},
		{"nul", "facts/user.md\x00", withW, want{}, paths.Control},
		{"newline", "facts/\nuser.md", withW, want{}, paths.Control},
		{"control before absolute", "/\x7f", withW, want{}, paths.Control},
		{"C1 control", "facts/user\u0085.md", withW, want{}, paths.Control},
		{"absolute", "/etc/passwd", withW, want{}, paths.Absolute},
		{"absolute fact", "/facts/user.md", withW, want{}, paths.Absolute},
		{"drive", `C:\x`, withW, want{}, paths.Absolute},
		{"drive with slash", "C:/facts/user.md", withW, want{}, paths.Absolute},
		{"drive alone", "c:", withW, want{}, paths.Absolute},
		{"UNC", `\\host\share\x`, withW, want{}, paths.Absolute},
		{"backslash", `facts\user.md`, withW, want{}, paths.Backslash},
		{"dot dot", "../facts/user.md", withW, want{}, paths.DotSegment},
		{"dot dot inside", "facts/../facts/user.md", withW, want{}, paths.DotSegment},
		{"dot", "./facts/user.md", withW, want{}, paths.DotSegment},
		{"dot last", "facts/.", withW, want{}, paths.DotSegment},
		{"doubled slash", "facts//user.md", withW, want{}, paths.EmptySegment},
		{"trailing slash", "facts/user.md/", withW, want{}, paths.EmptySegment},
		{"folder with slash", "facts/", withW, want{}, paths.EmptySegment},
		{"empty before dot dot", "facts//..", withW, want{}, paths.EmptySegment},
		{"hidden file", "facts/.user.md", withW, want{}, paths.Hidden},
		{"hidden folder", ".git/config", withW, want{}, paths.Hidden},
		{"hidden deep", "a/b/c/.d", withW, want{}, paths.Hidden},
		{"hidden root", ".procedures.md", withW, want{}, paths.Hidden},

		// facts/
		{"other fact", "facts/notes.md", withW, want{}, paths.NotFact},
		{"fact in capitals", "facts/USER.md", withW, want{}, paths.NotFact},
		{"fact as text", "facts/user.txt", withW, want{}, paths.NotFact},
		{"fact backup", "facts/user.md.bak", withW, want{}, paths.NotFact},
		{"no facts", "facts/user.md", paths.Grammar{}, want{}, paths.NotFact},
		{"fact in a folder", "facts/sub/user.md", withW, want{}, paths.NotMemory},
		{"facts in capitals", "Facts/user.md", withW, want{}, paths.NotMemory},
		{"facts folder", "facts", withW, want{}, paths.NotMemory},

		// world/
		{"no world", "world/apollo.md", withoutW, want{}, paths.NoWorld},
		{"no world, bad topic", "world/Apollo", withoutW, want{}, paths.NoWorld},
		{"topic in capitals", "world/Apollo.md", withW, want{}, paths.BadTopic},
		{"topic with double dash", "world/a--b.md", withW, want{}, paths.BadTopic},
		{"topic with leading dash", "world/-a.md", withW, want{}, paths.BadTopic},
		{"topic with trailing dash", "world/a-.md", withW, want{}, paths.BadTopic},
		{"topic of 65", "world/" + strings.Repeat("a", 65) + ".md", withW, want{}, paths.BadTopic},
		{"topic without .md", "world/apollo", withW, want{}, paths.BadTopic},
		{"topic named .md", "world/.md", withW, want{}, paths.Hidden},
		{"topic empty stem", "world/x.md.md", withW, want{}, paths.BadTopic},
		{"topic with underscore", "world/a_b.md", withW, want{}, paths.BadTopic},
		{"topic in a folder", "world/x/y.md", withW, want{}, paths.NotMemory},
		{"world folder", "world", withW, want{}, paths.NotMemory},

		// episodes/
		{"month 13", "episodes/2026-13.md", withW, want{}, paths.BadMonth},
		{"month 00", "episodes/2026-00.md", withW, want{}, paths.BadMonth},
		{"year 0999", "episodes/0999-01.md", withW, want{}, paths.BadMonth},
		{"one-digit month", "episodes/2026-2.md", withW, want{}, paths.BadMonth},
		{"capital extension", "episodes/2026-02.MD", withW, want{}, paths.BadMonth},
		{"letter in year", "episodes/202a-02.md", withW, want{}, paths.BadMonth},
		{"letter in month", "episodes/2026-0a.md", withW, want{}, paths.BadMonth},
		{"underscore", "episodes/2026_02.md", withW, want{}, paths.BadMonth},
		{"temporary", "episodes/2026-02.md.tmp", withW, want{}, paths.BadMonth},
		{"notes", "episodes/notes.md", withW, want{}, paths.BadMonth},
		{"short", "episodes/2026.md", withW, want{}, paths.BadMonth},
		{"part 000", "episodes/2026-02.000.md", withW, want{}, paths.BadMonth},
		{"part of two digits", "episodes/2026-02.03.md", withW, want{}, paths.BadMonth},
		{"part of four digits", "episodes/2026-02.1000.md", withW, want{}, paths.BadMonth},
		{"part with sign", "episodes/2026-02.+12.md", withW, want{}, paths.BadMonth},
		{"part negative", "episodes/2026-02.-12.md", withW, want{}, paths.BadMonth},
		{"part with letter", "episodes/2026-02.0a1.md", withW, want{}, paths.BadMonth},
		{"part without dot", "episodes/2026-02x003.md", withW, want{}, paths.BadMonth},
		{"archive folder as a month", "episodes/archive", withW, want{}, paths.BadMonth},
		{"month in a folder", "episodes/2026-02/x.md", withW, want{}, paths.NotMemory},
		{"episodes folder", "episodes", withW, want{}, paths.NotMemory},
		{"bad archived", "episodes/archive/notes.md", withW, want{}, paths.BadArchived},
		{"archived part 000", "episodes/archive/2026-02.000.md", withW, want{}, paths.BadArchived},
		{"in the archive's folder", "episodes/archive/x/2026-02.md", withW, want{}, paths.NotMemory},
		{"archive's archive", "episodes/other/2026-02.md", withW, want{}, paths.NotMemory},

		// The root.
		{"other root file", "user.md", withW, want{}, paths.NotMemory},
		{"lock", "lock", withW, want{}, paths.NotMemory},
		{"procedures in a folder", "facts/procedures.md", withW, want{}, paths.NotFact},
		{"persona in capitals", "Persona.md", withW, want{}, paths.NotMemory},
		{"full width", "ｆacts/user.md", withW, want{}, paths.NotMemory},
		{"deep", "a/b/c/d/e", withW, want{}, paths.NotMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := tt.g.Parse(tt.p)
			if why != tt.why {
				t.Fatalf("Parse(%q): reason %v, want %v", tt.p, why, tt.why)
			}
			if why != paths.OK {
				if got != (paths.Path{}) {
					t.Fatalf("Parse(%q) refused with %v but gave %+v", tt.p, why, got)
				}
				return
			}
			w := paths.Path{Kind: tt.want.kind, Path: tt.p, Fact: tt.want.fact, Month: tt.want.month, Part: tt.want.part, Topic: tt.want.topic}
			if got != w {
				t.Fatalf("Parse(%q) = %+v, want %+v", tt.p, got, w)
			}
			if b := build(tt.g, got); b != tt.p {
				t.Fatalf("Parse(%q) built back is %q", tt.p, b)
			}
		})
	}
}

// build makes the path of p from its parts with the builders.
func build(g paths.Grammar, p paths.Path) string {
	switch p.Kind {
	case paths.KindFact:
		return paths.Fact(g.Facts[p.Fact])
	case paths.KindTopic:
		return paths.Topic(p.Topic)
	case paths.KindMonth:
		return paths.Month(p.Month)
	case paths.KindPart:
		return paths.Part(p.Month, p.Part)
	case paths.KindArchived:
		if p.Part > 0 {
			return paths.Archive(paths.Part(p.Month, p.Part))
		}
		return paths.Archive(paths.Month(p.Month))
	case paths.KindProcedures:
		return paths.ProceduresFile
	case paths.KindPersona:
		return paths.PersonaFile
	}
	return ""
}

func TestListed(t *testing.T) {
	for _, tt := range []struct {
		g    paths.Grammar
		name string
		want bool
	}{
		{withW, "facts/user.md", true},
		{withW, "facts/notes.md", false},
		{withW, "procedures.md", true},
		{withW, "persona.md", false}, // the person's own file is read on its own
		{withW, "world/apollo.md", true},
		{withoutW, "world/apollo.md", false},
		{withW, "world/Apollo.md", false},
		{withW, "episodes/2026-02.md", true},
		{withW, "episodes/2026-02.001.md", true},
		{withW, "episodes/archive/2026-02.md", true},
		{withW, "episodes/archive/2026-02.001.md", true},
		{withW, "episodes/archive", false},
		{withW, "episodes/2026-13.md", false},
		{withW, "facts", false},
		{withW, "lock", false},
		{withW, ".cache/vectors", false},
		{withW, "facts/.user.md.tmp", false},
	} {
		if got := tt.g.Listed(tt.name); got != tt.want {
			t.Errorf("Listed(%q) with world %v = %v, want %v", tt.name, tt.g.World, got, tt.want)
		}
	}
}

func TestBuilders(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{paths.Fact("user.md"), "facts/user.md"},
		{paths.Topic("project-apollo"), "world/project-apollo.md"},
		{paths.Month("2026-02"), "episodes/2026-02.md"},
		{paths.Part("2026-02", 3), "episodes/2026-02.003.md"},
		{paths.Part("2026-02", 999), "episodes/2026-02.999.md"},
		{paths.Archive("episodes/2026-02.md"), "episodes/archive/2026-02.md"},
		{paths.Archive("episodes/2026-02.003.md"), "episodes/archive/2026-02.003.md"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestValidFactName(t *testing.T) {
	for name, want := range map[string]bool{
		"user.md": true, "lessons_learned.md": true, "a-1.md": true, "persona.md": true,
		"": false, ".md": false, "user": false, "User.md": false, "user.MD": false,
		"a b.md": false, "a/b.md": false, "..md": false, "ü.md": false,
	} {
		if got := paths.ValidFactName(name); got != want {
			t.Errorf("ValidFactName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestValidTopic(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "project-apollo": true, "office-2": true, "2": true, strings.Repeat("a", 64): true,
		"": false, "-a": false, "a-": false, "a--b": false, "A": false, "a_b": false, "a.b": false,
		strings.Repeat("a", 65): false, "é": false,
	} {
		if got := paths.ValidTopic(name); got != want {
			t.Errorf("ValidTopic(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestTopicName(t *testing.T) {
	if got, ok := paths.TopicName("project-apollo.md"); !ok || got != "project-apollo" {
		t.Errorf(`TopicName("project-apollo.md") = %q, %v`, got, ok)
	}
	for _, base := range []string{"project-apollo", "Apollo.md", ".md", "a--b.md"} {
		if _, ok := paths.TopicName(base); ok {
			t.Errorf("TopicName(%q) took it", base)
		}
	}
}

func TestTopicFor(t *testing.T) {
	for name, want := range map[string]string{
		"Project Apollo":              "project-apollo",
		"Project Apollo.MD":           "project-apollo",
		"Apollo.markdown":             "apollo",
		"--a__b--":                    "a-b",
		"a--b.md":                     "a-b",
		"Café Müller":                 "caf-m-ller",
		"!!!":                         "",
		".md":                         "md",
		strings.Repeat("ab-", 40):     strings.TrimRight(strings.Repeat("ab-", 22)[:64], "-"),
		strings.Repeat("a", 70) + "b": strings.Repeat("a", 64),
	} {
		got := paths.TopicFor(name)
		if got != want {
			t.Errorf("TopicFor(%q) = %q, want %q", name, got, want)
		}
		if got != "" && !paths.ValidTopic(got) {
			t.Errorf("TopicFor(%q) = %q, not a topic", name, got)
		}
	}
}

func TestIsTopicInWorld(t *testing.T) {
	for name, want := range map[string][2]bool{ // IsTopic, InWorld
		"world/apollo.md":  {true, true},
		"world/Apollo.md":  {false, true},
		"world/x/y.md":     {false, true},
		"world":            {false, true},
		"world/":           {false, true},
		"worlds/apollo.md": {false, false},
		"apollo.md":        {false, false},
		"facts/world/a.md": {false, false},
	} {
		if got := paths.IsTopic(name); got != want[0] {
			t.Errorf("IsTopic(%q) = %v", name, got)
		}
		if got := paths.InWorld(name); got != want[1] {
			t.Errorf("InWorld(%q) = %v", name, got)
		}
	}
}

func TestValidMonth(t *testing.T) {
	for m, want := range map[string]bool{
		"2026-02": true, "1000-01": true, "9999-12": true,
		"0999-12": false, "2026-13": false, "2026-00": false, "2026-2": false, "2026_02": false,
		"2026-0a": false, "a026-02": false, "2026-02-01": false, "": false, "20260-2": false,
	} {
		if got := paths.ValidMonth(m); got != want {
			t.Errorf("ValidMonth(%q) = %v, want %v", m, got, want)
		}
	}
}

func TestEpisodeName(t *testing.T) {
	type result struct {
		month string
		part  int
		ok    bool
	}
	for name, want := range map[string]result{
		"2026-02.md":      {"2026-02", 0, true},
		"2026-02.001.md":  {"2026-02", 1, true},
		"2026-02.999.md":  {"2026-02", 999, true},
		"2026-02.000.md":  {},
		"2026-02.1000.md": {},
		"2026-02.+01.md":  {},
		"2026-02.-01.md":  {},
		"2026-02.01.md":   {},
		"2026-02.md.md":   {},
		"2026-02":         {},
		"2026.md":         {},
		"2026-13.md":      {},
	} {
		m, n, ok := paths.EpisodeName(name)
		if got := (result{m, n, ok}); got != want {
			t.Errorf("EpisodeName(%q) = %+v, want %+v", name, got, want)
		}
	}
}

func TestMonthOfIsPart(t *testing.T) {
	for p, want := range map[string]struct {
		month   string
		isMonth bool
		isPart  bool
	}{
		"episodes/2026-02.md":             {"2026-02", true, false},
		"episodes/2026-02.003.md":         {"", false, true},
		"episodes/archive/2026-02.md":     {"", false, false},
		"episodes/archive/2026-02.003.md": {"", false, false},
		"2026-02.md":                      {"", false, false},
		"2026-02.003.md":                  {"", false, false},
		"episodes/2026-13.md":             {"", false, false},
		"facts/user.md":                   {"", false, false},
	} {
		m, ok := paths.MonthOf(p)
		if ok != want.isMonth || (ok && m != want.month) {
			t.Errorf("MonthOf(%q) = %q, %v", p, m, ok)
		}
		if got := paths.IsPart(p); got != want.isPart {
			t.Errorf("IsPart(%q) = %v", p, got)
		}
	}
}

func TestReasonString(t *testing.T) {
	seen := map[string]bool{}
	for r := paths.OK; r <= paths.NotMemory; r++ {
		s := r.String()
		if s == "" || strings.HasPrefix(s, "Reason(") || seen[s] {
			t.Errorf("Reason %d is named %q", r, s)
		}
		seen[s] = true
	}
	if got := paths.Reason(200).String(); got != "Reason(200)" {
		t.Errorf("Reason(200).String() = %q", got)
	}
}

func TestParseAllocates(t *testing.T) {
	for _, p := range []string{"facts/user.md", "episodes/archive/2026-02.003.md", "world/apollo.md", "a/b/c/d/e/f", "facts/../x"} {
		if n := testing.AllocsPerRun(100, func() { withW.Parse(p) }); n != 0 {
			t.Errorf("Parse(%q) allocates %v times", p, n)
		}
	}
}

// grammar is the grammar restated as a regular expression, independently
// of the parser, for the fact files user.md and memory.md.
var grammar = regexp.MustCompile(`^(persona\.md|procedures\.md|facts/(user|memory)\.md|world/[a-z0-9]+(-[a-z0-9]+)*\.md|episodes/(archive/)?[1-9][0-9]{3}-(0[1-9]|1[0-2])(\.(00[1-9]|0[1-9][0-9]|[1-9][0-9]{2}))?\.md)$`)

func inGrammar(p string, world bool) bool {
	topic, isTopic := strings.CutPrefix(p, "world/")
	return grammar.MatchString(p) && (!isTopic || world && len(topic) <= paths.MaxTopicLen+len(".md"))
}

// listedBefore is the filter the listing used before it asked the
// grammar, by folder: the listing and the sandbox must agree on every name
// it took or left.
func listedBefore(g paths.Grammar, name string) bool {
	dir, base := path.Split(name)
	switch dir {
	case "":
		return base == paths.ProceduresFile
	case paths.FactsDir + "/":
		return slices.Contains(g.Facts, base)
	case paths.WorldDir + "/":
		return paths.IsTopic(name) && g.World
	case paths.EpisodesDir + "/", paths.EpisodesDir + "/" + paths.ArchiveDir + "/":
		_, _, ok := paths.EpisodeName(base)
		return ok
	}
	return false
}

// FuzzParse checks that Parse never panics; that a path it takes is
// canonical (built back from its parts it is the same string) and in the
// grammar as a regular expression states it, and one it refuses is not;
// and that Listed takes what the listing took before it asked the grammar.
func FuzzParse(f *testing.F) {
	for _, p := range []string{
		"facts/user.md", "facts/memory.md", "world/project-apollo.md", "episodes/2026-02.md",
		"episodes/2026-02.003.md", "episodes/archive/2026-02.md", "episodes/archive/2026-02.999.md",
		"procedures.md", "persona.md", "", "/etc/passwd", `C:\x`, "facts/user.md\x00", "../x",
		"facts//user.md", "facts/.user.md", "facts/notes.md", "world/a--b.md", "episodes/2026-13.md",
		"episodes/archive/x.md", "episodes/2026-02.000.md", "a/b/c/d", "ｆacts/user.md",
	} {
		f.Add(p, true)
	}
	f.Fuzz(func(t *testing.T, p string, world bool) {
		g := paths.Grammar{Facts: facts, World: world}
		got, why := g.Parse(p)
		if why != paths.OK {
			if got != (paths.Path{}) {
				t.Fatalf("Parse(%q) refused with %v but gave %+v", p, why, got)
			}
			if inGrammar(p, world) {
				t.Fatalf("Parse(%q) refused a path of the grammar: %v", p, why)
			}
		} else {
			if got.Path != p {
				t.Fatalf("Parse(%q).Path = %q", p, got.Path)
			}
			if b := build(g, got); b != p {
				t.Fatalf("Parse(%q) = %+v, built back as %q", p, got, b)
			}
			if !inGrammar(p, world) {
				t.Fatalf("Parse(%q) took a path outside the grammar: %+v", p, got)
			}
			if (got.Fact >= 0) != (got.Kind == paths.KindFact) {
				t.Fatalf("Parse(%q) = %+v: a fact index on another kind", p, got)
			}
		}
		if listed := g.Listed(p); listed != listedBefore(g, p) {
			t.Fatalf("Listed(%q) = %v, the listing's filter said %v", p, listed, !listed)
		}
	})
}

// BenchmarkParse parses one path of each kind, and a refused one: a
// listing parses every name it lists.
func BenchmarkParse(b *testing.B) {
	ps := []string{"facts/user.md", "world/project-apollo.md", "episodes/2026-02.md", "episodes/2026-02.003.md",
		"episodes/archive/2026-02.md", "procedures.md", "persona.md", "facts/../x"}
	for b.Loop() {
		for _, p := range ps {
			withW.Parse(p)
		}
	}
}
