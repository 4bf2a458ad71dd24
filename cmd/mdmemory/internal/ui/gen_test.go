package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tenYears writes ten years of memory into dir directly, as files: 120
// months of 100 entries each, the fact files, procedures.md and a persona,
// without going through the library (which would take minutes).
func tenYears(tb testing.TB, dir string) {
	tb.Helper()
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "facts"), 0o700))
	must(os.MkdirAll(filepath.Join(dir, "episodes"), 0o700))
	var facts strings.Builder
	facts.WriteString("# User\n\n> Summary: Zhang San, in Shanghai\n\n")
	for i := range 60 {
		fmt.Fprintf(&facts, "- Fact %d: Zhang San likes topic number %d and tea from Hangzhou\n", i, i)
	}
	must(os.WriteFile(filepath.Join(dir, "facts/user.md"), []byte(facts.String()), 0o600))
	must(os.WriteFile(filepath.Join(dir, "facts/memory.md"), []byte("# Memory\n\n> Summary: the project\n\n- Project: apollo, written in Go\n- 老王 leads the standup on Wednesdays\n"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "procedures.md"), []byte("# Procedures\n\n> Summary: rules\n\n- When a flight is booked: check the airline's own site\n"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "persona.md"), []byte("# Persona\n\nYou are a careful assistant.\n"), 0o600))
	for m := range 120 {
		month := fmt.Sprintf("%04d-%02d", 2016+m/12, m%12+1)
		var b strings.Builder
		fmt.Fprintf(&b, "# %s Episodes\n\n> Summary: flights, tea, bugs\n\n", month)
		for i := range 100 {
			fmt.Fprintf(&b, "## Task %d: compare flights to Tokyo in April\n- Summary: Spring Airlines cheapest for the April trip\n- Date: %s-%02d\n"+
				"- Task: user asked to compare flights and prices for a family of three\n- Lesson: search results had stale prices; cross-check airline sites\n\n", i, month, i%28+1)
		}
		must(os.WriteFile(filepath.Join(dir, "episodes", month+".md"), []byte(b.String()), 0o600))
	}
}
