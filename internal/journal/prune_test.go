package journal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/journal"
)

// history makes n changes of a fact file, one a day from t0, each a line
// appended, with bodies as NewRecord chooses them; it returns the records
// and the contents.
func history(n int) ([]journal.Record, []string) {
	var recs []journal.Record
	var contents []string
	old := ""
	for i := range n {
		new := facts(50 + i)
		var oc []byte
		ov := ""
		if old != "" {
			oc, ov = []byte(old), v(old)
		}
		recs = append(recs, journal.NewRecord(recs, "append", "conv", ov, oc, v(new), []byte(new), t0.Add(time.Duration(i)*24*time.Hour)))
		contents = append(contents, new)
		old = new
	}
	return recs, contents
}

// checkKept checks that every landed version of recs rebuilds as the
// content it names, and that the last is current.
func checkKept(t *testing.T, recs []journal.Record, current string) {
	t.Helper()
	landed := journal.Landed(recs, current)
	require.Equal(t, current, journal.End(recs, landed))
	require.Len(t, landed, len(recs))
	for _, i := range landed {
		got, err := journal.Content(recs, recs[i].New)
		require.NoError(t, err)
		require.Equal(t, recs[i].New, journal.Version(got))
	}
	require.True(t, recs[0].Full, "the first kept version is whole")
}

func TestPrune(t *testing.T) {
	recs, contents := history(60) // days 0..59
	cur := v(contents[59])
	day := 24 * time.Hour
	for _, tc := range []struct {
		name   string
		now    time.Time
		policy journal.Policy
		kept   int // the last kept
	}{
		{"all young", t0.Add(60 * day), journal.Policy{}, 60},
		{"the last 90 days", t0.Add(120 * day), journal.Policy{}, 30},
		{"at least the last 20 whatever their age", t0.Add(400 * day), journal.Policy{}, 20},
		{"a shorter age", t0.Add(60 * day), journal.Policy{MaxAge: 10*day + time.Hour, MinVersions: 5}, 10},
		{"at least the last one", t0.Add(400 * day), journal.Policy{MaxAge: time.Hour, MinVersions: 1}, 1},
		{"a size bound", t0.Add(60 * day), journal.Policy{MaxBytes: 20000}, 0},
		{"a size bound below one version keeps the last", t0.Add(60 * day), journal.Policy{MaxBytes: 10}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := journal.Prune(recs, cur, tc.now, tc.policy)
			if tc.kept > 0 {
				require.Len(t, got, tc.kept)
			} else {
				require.LessOrEqual(t, len(journal.Encode(got)), tc.policy.MaxBytes)
				require.Greater(t, len(got), 3)
				longer := journal.Prune(recs, cur, tc.now, journal.Policy{MaxBytes: 20000 + 4000})
				require.Greater(t, len(longer), len(got))
			}
			checkKept(t, got, cur)
			for k, r := range got {
				want := recs[len(recs)-len(got)+k]
				require.Equal(t, want.New, r.New)
				require.Equal(t, want.Time, r.Time)
				if k > 0 {
					require.Equal(t, want, r, "only the first is rebased")
				}
			}
		})
	}
}

func TestPruneDropsWhatDidNotLand(t *testing.T) {
	recs, contents := history(5)
	cur := v(contents[4])
	now := t0.Add(5 * 24 * time.Hour)
	crashed := journal.NewRecord(recs[:2], "write", "c", recs[1].New, []byte(contents[1]), v("lost\n"), []byte("lost\n"), now)
	withCrash := append(append(append([]journal.Record(nil), recs[:2]...), crashed), recs[2:]...)
	require.Equal(t, []int{0, 1, 3, 4, 5}, journal.Landed(withCrash, cur))
	got := journal.Prune(withCrash, cur, now, journal.Policy{})
	require.Equal(t, recs, got)

	// After the last landed record, one from the current version may
	// still be landing (another client on a bucket): kept for a while.
	inflight := journal.NewRecord(recs, "write", "c", cur, []byte(contents[4]), v("next\n"), []byte("next\n"), now)
	stale := journal.NewRecord(recs, "write", "c", recs[2].New, []byte(contents[2]), v("old\n"), []byte("old\n"), now)
	log := append(append([]journal.Record(nil), recs...), stale, inflight)
	got = journal.Prune(log, cur, now.Add(time.Minute), journal.Policy{})
	require.Equal(t, append(append([]journal.Record(nil), recs...), inflight), got)
	got = journal.Prune(log, cur, now.Add(time.Hour), journal.Policy{})
	require.Equal(t, recs, got)

	// Nothing landed: nothing is kept but what may be landing.
	require.Empty(t, journal.Prune([]journal.Record{rec("", "A")}, "", now, journal.Policy{}))
	require.Empty(t, journal.Prune(nil, "", now, journal.Policy{}))
}

func TestPruneCannotRebuild(t *testing.T) {
	recs, contents := history(30)
	cur := v(contents[29])
	// Version 5 cannot be rebuilt (its body is damaged), nor can those
	// after it, to the next whole one (20).
	recs[5].Body = "d1;3+3:bad"
	got := journal.Prune(recs, cur, t0.Add(400*24*time.Hour), journal.Policy{MinVersions: 23})
	require.Equal(t, recs[20].New, got[0].New)
	checkKept(t, got, cur)
	// The last one kept whatever: here it cannot be rebuilt either.
	recs[21].Body = "d1;3+3:bad"
	got = journal.Prune(recs[:22], recs[21].New, t0.Add(400*24*time.Hour), journal.Policy{MinVersions: 1})
	require.Equal(t, []journal.Record{recs[21]}, got)
}

// TestCrash: the change path writes a record, then is killed before it
// replaces the file. The record stays in the log, is not taken as landed,
// the next change is recorded from the version the file still has, and
// pruning drops the record.
func TestCrash(t *testing.T) {
	f := newSim()
	f.change(t, "write", "conv-1", []byte("# User\n- likes tea\n"), false)
	f.change(t, "append", "conv-1", []byte("# User\n- likes tea\n- lives in Lyon\n"), false)
	f.change(t, "append", "conv-2", []byte("# User\n- likes tea\n- lives in Lyon\n- has a cat\n"), true) // killed
	recs, errs := journal.Decode(f.log)
	require.Empty(t, errs)
	require.Len(t, recs, 3)
	require.Equal(t, []int{0, 1}, journal.Landed(recs, f.version()))

	f.change(t, "append", "conv-3", []byte("# User\n- likes tea\n- lives in Lyon\n- has a dog\n"), false)
	recs, _ = journal.Decode(f.log)
	landed := journal.Landed(recs, f.version())
	require.Equal(t, []int{0, 1, 3}, landed)
	require.Equal(t, "conv-3", recs[3].Actor)
	f.check(t)

	pruned := journal.Prune(recs, f.version(), f.now, journal.Policy{})
	require.Len(t, pruned, 3)
	require.Equal(t, []int{0, 1, 2}, journal.Landed(pruned, f.version()))
}
