package backendtest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mdmemory/memory"
)

// secret is the text the Forget cases take out of memory: a private
// detail, which no guard refuses.
const secret = "sister Beth's rehab stay in Leeds"

// holding reports every file of b, hidden ones included (the history's
// logs, the cache of vectors), that holds text, read through the Backend;
// dirs are the hidden folders to list besides everything List("") gives.
func holding(ctx context.Context, t testing.TB, b memory.Backend, text string, dirs ...string) []string {
	t.Helper()
	var held []string
	for _, dir := range append([]string{""}, dirs...) {
		entries, err := b.List(ctx, dir)
		if err != nil {
			t.Fatalf("List(%q): %v", dir, err)
		}
		for _, en := range entries {
			c, err := b.Read(ctx, en.Name, -1)
			if err != nil {
				t.Fatalf("Read(%s): %v", en.Name, err)
			}
			if bytes.Contains(c.Data, []byte(text)) {
				held = append(held, en.Name)
			}
		}
	}
	return held
}

// hidden are the hidden folders a Store writes on its backend.
var hidden = []string{".history", ".cache"}

func testForget(t *testing.T, e *env) {
	s := e.s
	e.write(s, userFile, "# User\n\n> Summary: who\n\n- Name: Ada\n- Worries about her "+secret+"\n")
	e.appendTo(s, userFile, "- Likes: green tea")
	e.appendTo(s, monthFile, "## Call\nTalked about "+secret+" for an hour.")
	e.appendTo(s, monthFile, "## Walk\nA walk by the river.")
	hist, err := s.History(e.ctx, userFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := hist[len(hist)-1].New // the first version, which held it
	// A change made outside the library, not recorded yet.
	if _, err := Put(e.ctx, e.b, memFile, []byte("# Memory\n\n> Summary: know-how\n\n- Visits: "+secret+"\n- Train: the 8:10 is faster\n"), ""); err != nil {
		t.Fatal(err)
	}
	e.write(s, userFile, "# User\n\n> Summary: who\n\n- Name: Ada\n- Likes: green tea\n")

	places, err := s.Locate(e.ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]bool{}
	for _, p := range places {
		if p.Version == "" {
			now[p.Path] = true
		}
		if p.Path == userFile && p.Version == held && (len(p.Lines) != 1 || p.Lines[0] != 6) {
			t.Errorf("Locate gives the lines %v of %s's first version, want [6]", p.Lines, userFile)
		}
	}
	if !now[monthFile] || !now[memFile] || now[userFile] || len(places) < 5 {
		t.Fatalf("Locate found %+v", places)
	}
	if len(holding(e.ctx, t, e.b, secret, hidden...)) == 0 {
		t.Fatal("the backend holds no secret before Forget")
	}

	n, err := s.Forget(e.ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(places) {
		t.Errorf("Forget changed %d places, Locate found %d", n, len(places))
	}
	if got := holding(e.ctx, t, e.b, secret, hidden...); len(got) > 0 {
		t.Fatalf("after Forget, %v still hold the text", got)
	}
	if got := e.read(s, memFile); got != "# Memory\n\n> Summary: know-how\n\n- Visits: \n- Train: the 8:10 is faster\n" {
		t.Fatalf("%s reads %q", memFile, got)
	}

	// The history answers, chains, and reads every version without it.
	for _, p := range []string{userFile, memFile, monthFile} {
		changes, err := s.History(e.ctx, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if changes[0].Op != "forget" && p != userFile {
			t.Errorf("%s's last change is %q, want forget", p, changes[0].Op)
		}
		for i, c := range changes {
			if i+1 < len(changes) && changes[i+1].New != c.Old {
				t.Errorf("%s's history does not chain at %d: %+v then %+v", p, i, changes[i+1], c)
			}
			if c.New == "" {
				continue
			}
			got, err := s.ReadVersion(e.ctx, p, c.New)
			if err != nil || strings.Contains(got, secret) {
				t.Fatalf("ReadVersion(%s, %s) = %q, %v", p, c.New, got, err)
			}
		}
	}
	got, err := s.ReadVersion(e.ctx, userFile, held)
	if err != nil || !strings.Contains(got, "- Name: Ada\n") || strings.Contains(got, "rehab") {
		t.Fatalf("the version that held it reads %q, %v", got, err)
	}
	if changes, _ := s.History(e.ctx, userFile, nil); !changes[len(changes)-1].Redacted {
		t.Errorf("the version that held it is not marked redacted: %+v", changes[len(changes)-1])
	}
	if err := s.Restore(e.ctx, userFile, held); err != nil {
		t.Fatal(err)
	}
	if got := e.read(s, userFile); got != "# User\n\n> Summary: who\n\n- Name: Ada\n- Worries about her \n" {
		t.Fatalf("restored as %q", got)
	}

	// Nothing is left to forget.
	if places, err := s.Locate(e.ctx, secret); err != nil || len(places) > 0 {
		t.Fatalf("after Forget, Locate finds %+v, %v", places, err)
	}
	if n, err := s.Forget(e.ctx, secret); n != 0 || err != nil {
		t.Fatalf("a second Forget: %d, %v", n, err)
	}
	for _, short := range []string{"", "abc", "  ab  \n"} {
		_, err := s.Forget(e.ctx, short)
		wantErr(t, "forgetting "+short, err, memory.ErrInvalidContent)
	}
}

func testForgetWorld(t *testing.T, e *env) {
	a, b, world := e.agents(memory.Options{})
	e.appendTo(a, topic, "- Visitors: Li Wei's "+secret)
	e.appendTo(b, topic, "- Lead: Li Wei")
	n, err := b.Forget(e.ctx, secret)
	if err != nil || n < 2 {
		t.Fatalf("Forget: %d, %v", n, err)
	}
	if got := holding(e.ctx, t, world, secret, ".history/world"); len(got) > 0 {
		t.Fatalf("after Forget, %v of the shared backend still hold the text", got)
	}
	if got := e.read(a, topic); strings.Contains(got, "rehab") || !strings.Contains(got, "Li Wei") {
		t.Fatalf("the other agent reads %q", got)
	}
}
