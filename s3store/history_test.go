package s3store_test

import (
	"context"
	"strings"
	"testing"

	memory "github.com/mdmemory/memory"
)

// The history on S3: the logs under .history/ of the prefix, kept by
// several processes and by writers killed at random moments (the checks
// below are called from TestStoreProcesses and TestStoreKillDuringChange).

// requireHistory checks the history of every file s has one of: the
// changes a chain, the first creating the file (when first is true: no
// pruning and no file older than its history), each from the version the
// one before made, the last making the current content, nothing pending
// (only Stores changed the prefix; a writer killed between a change's
// record and its write leaves a record that did not land, which the
// history leaves out), every version read back; and Check finding nothing
// in the logs. It returns each file's changes, oldest first, with the
// content of each.
func requireHistory(t *testing.T, s *memory.Store, what string, first bool) map[string][]string {
	t.Helper()
	ctx := context.Background()
	all, err := s.History(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, c := range all {
		if _, done := out[c.Path]; done {
			continue
		}
		h, err := s.History(ctx, c.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		text, err := s.Read(ctx, c.Path)
		switch {
		case err == nil:
			if h[0].New != memory.Version(text) {
				t.Errorf("%s: %s: the last record does not make the current content", what, c.Path)
			}
		case strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "does not exist"):
			if h[0].New != "" {
				t.Errorf("%s: %s: removed, and the last record does not remove it", what, c.Path)
			}
		default:
			t.Fatal(err)
		}
		if first && h[len(h)-1].Old != "" {
			t.Errorf("%s: %s: the first record does not create it: %+v", what, c.Path, h[len(h)-1])
		}
		texts := make([]string, len(h))
		for i, c := range h {
			if c.Pending {
				t.Errorf("%s: %s: a change without its record: %+v", what, c.Path, c)
			}
			if i > 0 && c.New != h[i-1].Old {
				t.Errorf("%s: %s: change %d does not follow from the one before it: %+v then %+v", what, c.Path, len(h)-1-i, c, h[i-1])
			}
			if c.New == "" {
				continue
			}
			got, err := s.ReadVersion(ctx, c.Path, c.New)
			if err != nil {
				t.Errorf("%s: %s: version %s: %v", what, c.Path, c.New, err)
				continue
			}
			if memory.Version(got) != c.New {
				t.Errorf("%s: %s: version %s read back as %s", what, c.Path, c.New, memory.Version(got))
			}
			texts[len(h)-1-i] = got
		}
		out[c.Path] = texts
	}
	findings, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if strings.HasPrefix(f.Path, ".history/") {
			t.Errorf("%s: Check: %s:%d: %s", what, f.Path, f.Line, f.Problem)
		}
	}
	return out
}
