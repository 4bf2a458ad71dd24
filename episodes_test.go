package memory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/mdmemory/memory/internal/markdown"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendEpisodes(t *testing.T) {
	tests := []struct {
		name     string
		existing string // "" means no file
		entry    string
		summary  string
		want     string
		broken   string // why the file is left as Check reports it, "" when sound
	}{
		{name: "new month file",
			entry: "## Tokyo flight research\n- Summary: Spring Airlines cheapest\n- Task: compare flights",
			want: "# 2026-02 Episodes\n\n> Summary: Tokyo flight research\n\n" +
				"## Tokyo flight research\n- Summary: Spring Airlines cheapest\n- Date: 2026-02-26\n- Task: compare flights\n"},
		{name: "date kept, blank lines trimmed",
			entry: "\n\n  \n## Gift\n- Date: 2026-02-27\n- Summary: tea set\n\n\n",
			want:  "# 2026-02 Episodes\n\n> Summary: Gift\n\n## Gift\n- Date: 2026-02-27\n- Summary: tea set\n"},
		{name: "date after heading when no summary bullet",
			entry: "## Gift\n- Task: find a gift",
			want:  "# 2026-02 Episodes\n\n> Summary: Gift\n\n## Gift\n- Date: 2026-02-26\n- Task: find a gift\n"},
		{name: "date keeps a paragraph a paragraph",
			entry: "## Gift\nWe chose a tea set.",
			want:  "# 2026-02 Episodes\n\n> Summary: Gift\n\n## Gift\n- Date: 2026-02-26\n\nWe chose a tea set.\n"},
		{name: "heading alone",
			entry: "## Gift",
			want:  "# 2026-02 Episodes\n\n> Summary: Gift\n\n## Gift\n- Date: 2026-02-26\n"},
		{name: "setext heading",
			entry: "Gift\n----\n- Summary: tea set\n\nnotes",
			want:  "# 2026-02 Episodes\n\n> Summary: Gift\n\nGift\n----\n- Summary: tea set\n- Date: 2026-02-26\n\nnotes\n"},
		{name: "one blank line whatever the file ended with",
			existing: "# 2026-02 Episodes\n\n> Summary: A\n\n## A\n- Date: 2026-02-01\n\n\n\n  \n",
			entry:    "## B\n- Date: 2026-02-02",
			want:     "# 2026-02 Episodes\n\n> Summary: A, B\n\n## A\n- Date: 2026-02-01\n\n## B\n- Date: 2026-02-02\n"},
		{name: "file without final newline",
			existing: "# 2026-02 Episodes\n\n> Summary: A\n\n## A\n- Date: 2026-02-01",
			entry:    "## B\n- Date: 2026-02-02",
			want:     "# 2026-02 Episodes\n\n> Summary: A, B\n\n## A\n- Date: 2026-02-01\n\n## B\n- Date: 2026-02-02\n"},
		{name: "explicit summary wins",
			existing: "# 2026-02 Episodes\n\n> Summary: A\n\n## A\n",
			entry:    "## B\n- Date: 2026-02-02", summary: "  flights, gifts  ",
			broken: "the person's entry A has no date, and Append keeps it so",
			want:   "# 2026-02 Episodes\n\n> Summary: flights, gifts\n\n## A\n\n## B\n- Date: 2026-02-02\n"},
		{name: "person's file gets title and summary",
			existing: "## A\n- Date: 2026-02-01\n",
			entry:    "## B\n- Date: 2026-02-02",
			want:     "# 2026-02 Episodes\n\n> Summary: A, B\n\n## A\n- Date: 2026-02-01\n\n## B\n- Date: 2026-02-02\n"},
		{name: "a person's formatting is kept",
			existing: "My Episodes\n===========\n\n>   Summary: mine\n\n## A\n*  messy   bullet  \n\n```\n## not an entry\n```\n",
			entry:    "## B\n- Date: 2026-02-02",
			broken:   "the person's entry A has no date, and Append keeps it so",
			want:     "My Episodes\n===========\n\n> Summary: A, B\n\n## A\n*  messy   bullet  \n\n```\n## not an entry\n```\n\n## B\n- Date: 2026-02-02\n"},
		{name: "code fence inside the entry",
			entry: "## Fix\n- Summary: fixed parser\n\n```go\n## not a heading\n# nor a title\n```",
			want:  "# 2026-02 Episodes\n\n> Summary: Fix\n\n## Fix\n- Summary: fixed parser\n- Date: 2026-02-26\n\n```go\n## not a heading\n# nor a title\n```\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := open(t, nil)
			if tt.broken != "" {
				leavesBroken(t, tt.broken)
			}
			if tt.existing != "" {
				writeFile(t, dir, "episodes/2026-02.md", tt.existing)
			}
			args := map[string]any{"path": "episodes/2026-02.md", "entry": tt.entry, "summary": nil}
			if tt.summary != "" {
				args["summary"] = tt.summary
			}
			r := call(t, s, "memory_append", mustJSON(t, args))
			require.False(t, r.IsError, r.Text)
			require.Equal(t, tt.want, readFile(t, dir, "episodes/2026-02.md"))
			want := map[string]any{"path": "episodes/2026-02.md", "size": len(tt.want)}
			if tt.existing == "" {
				// The conversation made the file, so it knows it whole.
				want["version"] = memory.Version(tt.want)
			}
			require.JSONEq(t, mustJSON(t, want), r.Text)
		})
	}
}

func TestAppendFacts(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	require.NoError(t, s.Append(ctx, "facts/memory.md", "- Tavily returns stale prices; cross-check airline sites", ""))
	require.NoError(t, s.Append(ctx, "facts/memory.md", "\n- User wants options before deciding\n- Prefers trains\n\n", ""))
	require.Equal(t, "# Memory\n\n> Summary: Tavily returns stale…; User wants options…; Prefers…\n\n"+
		"- Tavily returns stale prices; cross-check airline sites\n- User wants options before deciding\n- Prefers trains\n",
		readFile(t, dir, "facts/memory.md"))
	require.NoError(t, s.Append(ctx, "facts/memory.md", "Plain prose is a fact too.", "lessons learned"))
	require.Contains(t, readFile(t, dir, "facts/memory.md"), "> Summary: lessons learned\n")
	require.True(t, strings.HasSuffix(readFile(t, dir, "facts/memory.md"), "- Prefers trains\n\nPlain prose is a fact too.\n"))
}

func TestAppendRefusals(t *testing.T) {
	tests := []struct {
		name, path, entry, summary string
		text                       string
	}{
		{"empty entry", "episodes/2026-02.md", " \n\n", "", "the entry is empty"},
		{"episode without heading", "episodes/2026-02.md", "- Summary: x", "", `must start with a "## " heading`},
		{"episode starting with prose", "episodes/2026-02.md", "intro\n## A", "", `must start with a "## " heading`},
		{"episode with h3 first", "episodes/2026-02.md", "### A", "", `must start with a "## " heading`},
		{"episode with a title", "episodes/2026-02.md", "## A\n\n# Title", "", `may not contain a "# " title`},
		{"two entries", "episodes/2026-02.md", "## A\n## B", "", "append one entry at a time"},
		{"empty heading", "episodes/2026-02.md", "## \n- x", "", "heading is empty"},
		{"fact with heading", "facts/user.md", "## Name\n- x", "", "may not contain a heading"},
		{"summary with newline", "facts/user.md", "- x", "a\nb", "single line"},
		{"summary with CR", "facts/user.md", "- x", "a\rb", "single line"},
		{"summary with control", "facts/user.md", "- x", "a\tb", "control character"},
		{"summary too long", "facts/user.md", "- x", strings.Repeat("é", 201), "201 characters"},
		{"bad path", "facts/other.md", "- x", "", "not one of the fact files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := open(t, nil)
			r := call(t, s, "memory_append", mustJSON(t, map[string]string{"path": tt.path, "entry": tt.entry, "summary": tt.summary}))
			require.True(t, r.IsError)
			require.Contains(t, r.Text, tt.text)
			require.NoFileExists(t, dir+"/episodes/2026-02.md")
			require.NoFileExists(t, dir+"/facts/user.md")
		})
	}
}

func TestAppendKeepsAPersonsBlockquote(t *testing.T) {
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: x\n>\n> Important: never call after 9pm\n\n- Name: A\n")
	require.NoError(t, s.Append(context.Background(), "facts/user.md", "- Lang: zh", ""))
	require.Equal(t, "# User\n\n> Summary: Name; Lang\n>\n> Important: never call after 9pm\n\n- Name: A\n- Lang: zh\n", readFile(t, dir, "facts/user.md"))
}

func TestAppendNeverBecomesTheHead(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "a person's fact file with a fence never closed is its point")
	require.NoError(t, s.Append(context.Background(), "facts/user.md", "> Summary: loves tea", ""))
	require.Equal(t, "# User\n\n> Summary: no facts yet\n\n> Summary: loves tea\n", readFile(t, dir, "facts/user.md"))

	writeFile(t, dir, "facts/memory.md", "# Memory\n\n> Summary: m\n\n```\nnever closed\n")
	err := s.Append(context.Background(), "facts/memory.md", "- a lesson", "")
	require.ErrorIs(t, err, memory.ErrInvalidContent, "a fact swallowed by a code fence is refused")
}

func TestAppendIntoUnclosedFence(t *testing.T) {
	s, dir := open(t, nil)
	leavesBroken(t, "a person's month with a fence never closed is its point")
	const broken = "# 2026-02 Episodes\n\n> Summary: A\n\n## A\n```\ncode never closed\n"
	writeFile(t, dir, "episodes/2026-02.md", broken)
	err := s.Append(context.Background(), "episodes/2026-02.md", "## B", "")
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, err.Error(), "unclosed block")
	require.Equal(t, broken, readFile(t, dir, "episodes/2026-02.md"), "nothing written")
}

func TestDerivedSummaries(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	var titles []string
	for i := range 12 {
		title := fmt.Sprintf("Task number %02d done", i)
		titles = append(titles, title)
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## "+title, ""))
	}
	d := markdown.Parse([]byte(readFile(t, dir, "episodes/2026-02.md")))
	// Each title is 19 characters; with ", " four fit in 100 (4*19+3*2 = 82, five is 103).
	require.Equal(t, strings.Join(titles[8:], ", "), d.Summary.Text, "the newest entries are named")

	long := strings.Repeat("word ", 40)
	require.NoError(t, s.Append(ctx, "episodes/2026-03.md", "## "+long+"\n- Date: 2026-03-01", ""))
	d = markdown.Parse([]byte(readFile(t, dir, "episodes/2026-03.md")))
	require.Equal(t, 100, len([]rune(d.Summary.Text)))
	require.True(t, strings.HasSuffix(d.Summary.Text, "…"))

	require.NoError(t, s.Write(ctx, "facts/user.md", "- Name: Zhang San\n- Language: Chinese\n- Wife's birthday: March 15\n- Standup: Wed 10:00 with Lao Wang\n- Editor: vim\n"))
	d = markdown.Parse([]byte(readFile(t, dir, "facts/user.md")))
	require.Equal(t, "Name; Language; Wife's birthday; Standup; Editor", d.Summary.Text, "the facts named by their labels")

	// The summary never repeats a fact line, so the natural patch of a
	// fact matches once.
	_, err := s.Patch(ctx, "facts/user.md", []memory.Patch{{OldText: "Name: Zhang San", NewText: "Name: Li Si"}})
	require.NoError(t, err)
	require.NoError(t, s.Write(ctx, "facts/memory.md", "- Prefers trains\n- Tavily returns stale prices; cross-check airline sites\n- vim\n- Pet: cat\n- Pet: dog\n"))
	d = markdown.Parse([]byte(readFile(t, dir, "facts/memory.md")))
	require.Equal(t, "Prefers…; Tavily returns stale…; vi…; Pet", d.Summary.Text, "first words, never all of them; labels once")
	_, err = s.Patch(ctx, "facts/memory.md", []memory.Patch{{OldText: "Prefers trains", NewText: "Prefers planes"}})
	require.NoError(t, err)
	_, err = s.Patch(ctx, "facts/memory.md", []memory.Patch{{OldText: "vim", NewText: "emacs"}})
	require.NoError(t, err)
	require.NoError(t, s.Write(ctx, "facts/memory.md", "- 姓名：张三\n- 素食\n- see https://example.com/x\n- Pet: cat\n"))
	d = markdown.Parse([]byte(readFile(t, dir, "facts/memory.md")))
	require.Equal(t, "姓名; 素…; see…; Pet", d.Summary.Text, "full-width colons; a colon inside a word is no label")
	for _, old := range []string{"姓名：张三", "素食", "see https://example.com/x"} {
		_, err = s.Patch(ctx, "facts/memory.md", []memory.Patch{{OldText: old, NewText: old + "!"}})
		require.NoError(t, err, old)
	}

	// Long labelled summaries keep the first facts that fit.
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("- Fact %02d: value", i))
	}
	require.NoError(t, s.Write(ctx, "facts/memory.md", strings.Join(many, "\n")))
	d = markdown.Parse([]byte(readFile(t, dir, "facts/memory.md")))
	require.True(t, strings.HasPrefix(d.Summary.Text, "Fact 00; Fact 01; "), d.Summary.Text)
	require.LessOrEqual(t, len([]rune(d.Summary.Text)), 100)

	require.NoError(t, s.Write(ctx, "facts/memory.md", "Just prose, no bullets.\n"))
	d = markdown.Parse([]byte(readFile(t, dir, "facts/memory.md")))
	require.Equal(t, "no facts yet", d.Summary.Text)
}

// TestConcurrentAppends proves that appends from many goroutines to one
// month file lose nothing.
func TestConcurrentAppends(t *testing.T) {
	s, dir := open(t, nil)
	const workers, each = 8, 10
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				entry := fmt.Sprintf("## entry %d-%d\n- Date: 2026-02-01", w, i)
				assert.NoError(t, s.Append(context.Background(), "episodes/2026-02.md", entry, "many"))
			}
		})
	}
	// Readers run beside the writers and never see a torn file.
	for range 2 {
		wg.Go(func() {
			for range 20 {
				text, err := s.Read(context.Background(), "episodes/2026-02.md")
				if err == nil {
					assert.True(t, strings.HasPrefix(text, "# 2026-02 Episodes\n\n> Summary: many\n"), text)
					assert.True(t, strings.HasSuffix(text, "- Date: 2026-02-01\n"))
				}
				_, err = s.List(context.Background())
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	d := markdown.Parse([]byte(readFile(t, dir, "episodes/2026-02.md")))
	require.Len(t, d.Entries, workers*each)
	seen := map[string]bool{}
	for _, e := range d.Entries {
		require.False(t, seen[e.Title], "duplicate %s", e.Title)
		seen[e.Title] = true
	}
}

// TestEpisodeDatesInTheirMonth: an entry is never dated outside its month
// file, by the clock or by the model.
func TestEpisodeDatesInTheirMonth(t *testing.T) {
	nov23 := func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }
	s, dir := open(t, &memory.Options{Now: nov23})
	ctx := context.Background()

	err := s.Append(ctx, "episodes/2026-02.md", "## Late note\n- Summary: remembered later", "")
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, hint(t, err), `the entry has no "- Date:" line and today, 2026-11-23, is outside episodes/2026-02.md; append it to episodes/2026-11.md, or give it a "- Date: 2026-02-DD" line`)
	require.NoFileExists(t, filepath.Join(dir, "episodes", "2026-02.md"))

	err = s.Append(ctx, "episodes/2026-02.md", "## Misfiled\n- Date: 2026-03-01", "")
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, hint(t, err), "the entry is dated 2026-03-01, outside episodes/2026-02.md; append it to episodes/2026-03.md")

	// A date that is not YYYY-MM-DD is refused, through the tool too, and
	// never crashes.
	for _, date := range []string{"today", "2026-3-5", "2026-02", "2026-02-30", "26/02/2026"} {
		err = s.Append(ctx, "episodes/2026-02.md", "## Odd date\n- Date: "+date, "")
		require.ErrorIs(t, err, memory.ErrInvalidContent, date)
		require.Contains(t, hint(t, err), "is not a date written YYYY-MM-DD", date)
		r := call(t, s, "memory_append", mustJSON(t, map[string]any{"path": "episodes/2026-02.md", "entry": "## Odd\n- Date: " + date, "summary": nil}))
		require.True(t, r.IsError, date)
	}

	// Back-filling a past month with the day it happened is fine.
	require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## Late note\n- Date: 2026-02-10", ""))
	require.NoError(t, s.Append(ctx, "episodes/2026-11.md", "## Today", ""))
	require.Contains(t, readFile(t, dir, "episodes/2026-11.md"), "## Today\n- Date: 2026-11-23\n")
}

// TestAppendTightList: a fact line joins the list a file ends with, with no
// blank line, in every file of fact lines; episodes keep their blank line;
// what a person wrote is kept as it is.
func TestAppendTightList(t *testing.T) {
	tests := []struct {
		name, path, existing, entry string
		wantTail                    string
	}{
		{"three facts, one list", "facts/user.md", "", "- Name: Zhang San", "- Name: Zhang San\n- Language: prefers Chinese\n- City: Hangzhou\n"},
		{"after a person's loose list", "facts/user.md", "# User\n\n> Summary: x\n\n- Name: A\n\n- Job: B\n\n\n", "", "- Name: A\n\n- Job: B\n- Language: prefers Chinese\n- City: Hangzhou\n"},
		{"after prose", "facts/memory.md", "# Memory\n\n> Summary: x\n\nSome prose a person wrote.\n", "", "Some prose a person wrote.\n\n- Language: prefers Chinese\n- City: Hangzhou\n"},
		{"after a star list", "facts/memory.md", "# Memory\n\n> Summary: x\n\n* one\n*  two  \n", "", "* one\n*  two  \n- Language: prefers Chinese\n- City: Hangzhou\n"},
		{"procedures", "procedures.md", "", "- When a flight search returns prices: cross-check the airline's site", "- When a flight search returns prices: cross-check the airline's site\n- Language: prefers Chinese\n- City: Hangzhou\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := open(t, nil)
			ctx := context.Background()
			if tt.existing != "" {
				writeFile(t, dir, tt.path, tt.existing)
			}
			if tt.entry != "" {
				require.NoError(t, s.Append(ctx, tt.path, tt.entry, ""))
			}
			entries := []string{"- Language: prefers Chinese", "- City: Hangzhou"}
			if tt.path == "procedures.md" {
				entries = []string{"- When asked in Chinese: answer in Chinese", "- When booking in Hangzhou: prefer the train"}
				tt.wantTail = strings.ReplaceAll(strings.ReplaceAll(tt.wantTail, "- Language: prefers Chinese", entries[0]), "- City: Hangzhou", entries[1])
			}
			for _, e := range entries {
				require.NoError(t, s.Append(ctx, tt.path, e, ""))
			}
			got := readFile(t, dir, tt.path)
			require.True(t, strings.HasSuffix(got, "\n\n"+tt.wantTail), "%q", got)
		})
	}

	t.Run("world topic", func(t *testing.T) {
		s, _ := openWorld(t, t.TempDir(), nil)
		ctx := context.Background()
		require.NoError(t, s.Append(ctx, "world/apollo.md", "- Launch: May 3", ""))
		require.NoError(t, s.Append(ctx, "world/apollo.md", "- Owner: Mei", ""))
		got, err := s.Read(ctx, "world/apollo.md")
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(got, "\n\n- Launch: May 3\n- Owner: Mei\n"), "%q", got)
	})

	t.Run("episodes keep a blank line", func(t *testing.T) {
		s, dir := open(t, nil)
		ctx := context.Background()
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## A\n- Date: 2026-02-01", ""))
		require.NoError(t, s.Append(ctx, "episodes/2026-02.md", "## B\n- Date: 2026-02-02", ""))
		require.True(t, strings.HasSuffix(readFile(t, dir, "episodes/2026-02.md"), "- Date: 2026-02-01\n\n## B\n- Date: 2026-02-02\n"))
	})
}
