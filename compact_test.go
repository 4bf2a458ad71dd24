package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
	"github.com/stretchr/testify/require"
)

// oldMonth is a month of episodes old enough to compact.
const oldMonth = `# 2025-01 Episodes

> Summary: Tokyo flights, gift, login bug, standup notes

## Tokyo flight research
- Summary: Spring Airlines cheapest for April
- Date: 2025-01-05
- Task: compare flights to Tokyo in April for three people
- Outcome: booked Spring Airlines, 2,340 CNY each
- Lesson: search results had stale prices; cross-check airline sites

## Birthday gift
- Summary: Jingdezhen tea set for Li Na
- Date: 2025-01-12
- Task: find a gift under 500 CNY
- Outcome: ordered on the 13th

## Login bug
- Summary: tokens expired an hour early
- Date: 2025-01-20
- Task: users logged out after an hour
- Outcome: fixed expiry() in auth/token.go
- Lesson: check time arithmetic first

## Standup notes
- Summary: Wednesday standup with Lao Wang
- Date: 2025-01-22
- Task: take notes
`

// seedOld puts oldMonth and a recent month into a fresh store.
func seedOld(t *testing.T) (*memory.Store, string) {
	s, dir := open(t, nil)
	writeFile(t, dir, "episodes/2025-01.md", oldMonth)
	writeFile(t, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: Recent\n\n## Recent\n- Date: 2026-02-20\n")
	return s, dir
}

func TestCompactLocal(t *testing.T) {
	s, dir := seedOld(t)
	ctx := context.Background()
	res, err := s.Compact(ctx, nil, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"2025-01"}, res.Months, "only the months before the horizon, six months back by default")
	require.Equal(t, 4, res.Entries)
	require.Equal(t, int64(len(oldMonth)), res.BytesBefore)
	got := readFile(t, dir, "episodes/2025-01.md")
	require.Equal(t, int64(len(got)), res.BytesAfter)
	golden(t, "compact_local.golden", []byte(got))
	require.Equal(t, oldMonth, readFile(t, dir, "episodes/archive/2025-01.md"), "the original, as it was")
	require.Contains(t, readFile(t, dir, "episodes/2026-02.md"), "## Recent\n", "newer months are left alone")

	// The archive is read only, searched, and not listed; the index says
	// where it is.
	r := call(t, s, "memory_read", `{"path": "episodes/archive/2025-01.md", "line": null}`)
	require.False(t, r.IsError, r.Text)
	require.Contains(t, r.Text, "- Outcome: booked Spring Airlines")
	r = call(t, s, "memory_write", `{"path": "episodes/archive/2025-01.md", "content": "x", "version": null}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "is an original kept by compaction, and read only; change episodes/2025-01.md instead")
	hits, err := s.Search(ctx, "2,340", nil)
	require.NoError(t, err)
	require.Equal(t, "episodes/archive/2025-01.md", hits[0].Path)
	files, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, files, 2)
	require.True(t, files[1].Compacted)
	msg, err := s.NewSession().IndexMessage(ctx)
	require.NoError(t, err)
	require.Contains(t, msg, "- episodes/2025-01.md (")
	require.Contains(t, msg, ", compacted): ")
	require.Contains(t, msg, "their original entries are in episodes/archive/, which memory_search searches and memory_read reads.")

	// A rerun changes nothing.
	res, err = s.Compact(ctx, nil, nil)
	require.NoError(t, err)
	require.Empty(t, res.Months)
	require.Equal(t, skipped("2025-01", "already compacted; its originals are in episodes/archive/"), res.Skipped)
	require.Equal(t, got, readFile(t, dir, "episodes/2025-01.md"))

	// A person undoes it by moving the archived file back.
	require.NoError(t, os.Rename(filepath.Join(dir, "episodes", "archive", "2025-01.md"), filepath.Join(dir, "episodes", "2025-01.md")))
	require.Equal(t, oldMonth, readFile(t, dir, "episodes/2025-01.md"))
	files, err = s.List(ctx)
	require.NoError(t, err)
	require.False(t, files[1].Compacted)
}

func TestCompactWithModel(t *testing.T) {
	s, dir := seedOld(t)
	ctx := context.Background()
	condensed := "## Tokyo flight research\n- Date: 2025-01-05\n- Summary: Spring Airlines cheapest, 2,340 CNY each\n- Lesson: cross-check airline sites; search prices go stale\n\n" +
		"## Gift and login bug\n- Date: 2025-01-20\n- Summary: tea set for Li Na; expiry() fixed in auth/token.go\n- Lesson: check time arithmetic first"
	var req memory.Request
	llm := memory.LLMFunc(func(_ context.Context, r memory.Request) (memory.Response, error) {
		req = r
		return memory.Response{Content: condensed + "\n"}, nil
	})
	res, err := s.Compact(ctx, llm, &memory.CompactOptions{Before: "2025-02", KeepLast: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"2025-01"}, res.Months)
	require.Equal(t, 3, res.Entries)
	require.Equal(t, 1, res.Kept)
	require.Empty(t, req.Tools, "the model only writes text")
	require.Len(t, req.Messages, 1)
	golden(t, "compact_prompt.golden", []byte(req.System+"\n---\n"+req.Messages[0].Content))
	require.NotContains(t, req.Messages[0].Content, "## Standup notes", "the entry kept verbatim is not sent")
	got := readFile(t, dir, "episodes/2025-01.md")
	golden(t, "compact_model.golden", []byte(got))
	require.True(t, strings.HasSuffix(got, "## Standup notes\n- Summary: Wednesday standup with Lao Wang\n- Date: 2025-01-22\n- Task: take notes\n"), "the newest entry, verbatim")
	require.Equal(t, oldMonth, readFile(t, dir, "episodes/archive/2025-01.md"))
}

func TestCompactLeavesWhatItCannotUse(t *testing.T) {
	ctx := context.Background()
	for name, reply := range map[string]string{
		"a title":           "# 2025-01\n\n## X\n- Date: 2025-01-02",
		"no entries":        "I condensed them for you.",
		"a date outside":    "## X\n- Date: 2025-03-02",
		"no date":           "## X\n- Summary: y",
		"an open fence":     "## X\n- Date: 2025-01-02\n```",
		"text before it":    "Here you go:\n\n## X\n- Date: 2025-01-02",
		"a lone CR":         "## X\r## Y\n- Date: 2025-01-02",
		"nothing at all":    "",
		"a NUL in the text": "## X\x00\n- Date: 2025-01-02",
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := seedOld(t)
			llm := memory.LLMFunc(func(context.Context, memory.Request) (memory.Response, error) {
				return memory.Response{Content: reply}, nil
			})
			res, err := s.Compact(ctx, llm, nil)
			require.NoError(t, err)
			require.Empty(t, res.Months)
			require.Len(t, res.Skipped, 1)
			require.Equal(t, "2025-01", res.Skipped[0].Month)
			require.Contains(t, res.Skipped[0].Reason, "the model's condensed text cannot be used (")
			require.Equal(t, oldMonth, readFile(t, dir, "episodes/2025-01.md"))
			require.NoFileExists(t, filepath.Join(dir, "episodes", "archive", "2025-01.md"))
		})
	}

	// The model's failure is the host's: Compact stops with it.
	s, dir := seedOld(t)
	boom := errors.New("model down")
	_, err := s.Compact(ctx, memory.LLMFunc(func(context.Context, memory.Request) (memory.Response, error) {
		return memory.Response{}, boom
	}), nil)
	require.ErrorIs(t, err, boom)
	require.Equal(t, oldMonth, readFile(t, dir, "episodes/2025-01.md"))

	_, err = s.Compact(ctx, nil, &memory.CompactOptions{Before: "2025-1"})
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	_, err = s.Compact(ctx, nil, &memory.CompactOptions{KeepLast: -1})
	require.ErrorIs(t, err, memory.ErrInvalidContent)
}

// TestCompactGuard: a change made while the model runs is never
// overwritten; the month is left for the next run.
func TestCompactGuard(t *testing.T) {
	s, dir := seedOld(t)
	ctx := context.Background()
	llm := memory.LLMFunc(func(context.Context, memory.Request) (memory.Response, error) {
		writeFile(t, dir, "episodes/2025-01.md", oldMonth+"\n## Added by hand\n- Date: 2025-01-30\n")
		return memory.Response{Content: "## X\n- Date: 2025-01-02"}, nil
	})
	res, err := s.Compact(ctx, llm, nil)
	require.NoError(t, err)
	require.Equal(t, skipped("2025-01", "changed while compacting; run Compact again"), res.Skipped)
	require.Contains(t, readFile(t, dir, "episodes/2025-01.md"), "## Added by hand")
	require.NoFileExists(t, filepath.Join(dir, "episodes", "archive", "2025-01.md"))
}

// TestCompactParts: a month in parts becomes one file; its parts are
// archived and removed. A run cut short between the two is finished by
// the next.
func TestCompactParts(t *testing.T) {
	s, dir := open(t, nil)
	ctx := context.Background()
	part := "# 2025-01 Episodes\n\n> Summary: First\n\n## First\n- Date: 2025-01-01\n- Summary: one\n- Task: long detail\n"
	writeFile(t, dir, "episodes/2025-01.001.md", part)
	writeFile(t, dir, "episodes/2025-01.md", oldMonth)
	res, err := s.Compact(ctx, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 5, res.Entries)
	require.NoFileExists(t, filepath.Join(dir, "episodes", "2025-01.001.md"))
	got := readFile(t, dir, "episodes/2025-01.md")
	require.True(t, strings.Contains(got, "## First\n- Date: 2025-01-01\n- Summary: one\n\n## Tokyo flight research\n"), got)
	require.Contains(t, got, "> Compacted on 2026-02-26: the original entries are in episodes/archive/, 2025-01.001.md to 2025-01.md.\n")
	require.Equal(t, part, readFile(t, dir, "episodes/archive/2025-01.001.md"))
	require.Equal(t, oldMonth, readFile(t, dir, "episodes/archive/2025-01.md"))

	// A crash after the month's file was replaced left a part behind: the
	// next run removes it.
	writeFile(t, dir, "episodes/2025-01.001.md", part)
	res, err = s.Compact(ctx, nil, nil)
	require.NoError(t, err)
	require.Empty(t, res.Skipped)
	require.NoFileExists(t, filepath.Join(dir, "episodes", "2025-01.001.md"))
	require.Equal(t, got, readFile(t, dir, "episodes/2025-01.md"))

	// A crash after the archive was written, before the month's file was
	// replaced: the next run goes on.
	s2, dir2 := seedOld(t)
	writeFile(t, dir2, "episodes/archive/2025-01.md", oldMonth)
	res, err = s2.Compact(ctx, nil, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"2025-01"}, res.Months)
	require.NotEqual(t, oldMonth, readFile(t, dir2, "episodes/2025-01.md"))
}

// TestCompactCrash kills a worker process at random moments while it
// compacts 24 months: after every kill each month is as it was, or
// compacted with its original archived, never half; the next Compact
// finishes the job.
func TestCompactCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	kills := 12
	if *long {
		kills = 100
	}
	months := make([]string, 24)
	originals := map[string]string{}
	for i := range months {
		months[i] = fmt.Sprintf("%04d-%02d", 2023+i/12, i%12+1)
		originals[months[i]] = strings.ReplaceAll(oldMonth, "2025-01", months[i])
	}
	// What each month compacts to, made once in a store of its own.
	want := map[string]string{}
	ref, refDir := open(t, nil)
	for _, m := range months {
		writeFile(t, refDir, "episodes/"+m+".md", originals[m])
	}
	_, err := ref.Compact(context.Background(), nil, &memory.CompactOptions{Before: "2025-01"})
	require.NoError(t, err)
	for _, m := range months {
		want[m] = readFile(t, refDir, "episodes/"+m+".md")
	}

	rng := rand.New(rand.NewPCG(3, 4))
	compacted, whole := 0, 0
	for k := range kills {
		dir := filepath.Join(t.TempDir(), "memory")
		s, err := memory.Open(dir, &memory.Options{Now: feb26}) // the worker's clock
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		for _, m := range months {
			writeFile(t, dir, "episodes/"+m+".md", originals[m])
		}
		cmd := startWorker(t, "compact", dir, 0, 0)
		require.NoError(t, cmd.Start())
		for spin, d := time.Now(), time.Duration(rng.IntN(40))*time.Millisecond; time.Since(spin) < d; {
			runtime.Gosched()
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		for _, m := range months {
			got := readFile(t, dir, "episodes/"+m+".md")
			archived, err := os.ReadFile(filepath.Join(dir, "episodes", "archive", m+".md"))
			switch got {
			case originals[m]:
				if err == nil {
					require.Equal(t, originals[m], string(archived), "kill %d, %s: an archive is the original", k, m)
				}
			case want[m]:
				require.NoError(t, err, "kill %d, %s: compacted without its archive", k, m)
				require.Equal(t, originals[m], string(archived), "kill %d, %s", k, m)
				compacted++
			default:
				t.Fatalf("kill %d, %s is neither the original nor its compaction:\n%s", k, m, got)
			}
		}
		res, err := s.Compact(context.Background(), nil, &memory.CompactOptions{Before: "2025-01"})
		require.NoError(t, err, "kill %d", k)
		for _, m := range months {
			require.Equal(t, want[m], readFile(t, dir, "episodes/"+m+".md"), "kill %d: the rerun finishes %s", k, m)
		}
		if len(res.Months) == len(months) {
			whole++ // killed before it compacted anything
		}
	}
	t.Logf("%d kills; %d months found compacted after a kill, the rest as they were; %d kills came before the first month", kills, compacted, whole)
}

// TestCompactThirdReview holds the cases a review found: a month that
// gains a file while the model runs, interrupted runs, an archive that is
// a link, and what the month-end horizon is.
func TestCompactThirdReview(t *testing.T) {
	ctx := context.Background()
	part := "# 2025-01 Episodes\n\n> Summary: First\n\n## First\n- Date: 2025-01-01\n"

	t.Run("a month file made while the model runs", func(t *testing.T) {
		s, dir := open(t, nil)
		writeFile(t, dir, "episodes/2025-01.001.md", part)
		llm := memory.LLMFunc(func(context.Context, memory.Request) (memory.Response, error) {
			require.NoError(t, s.Append(ctx, "episodes/2025-01.md", "## Late\n- Date: 2025-01-30", ""))
			return memory.Response{Content: "## First\n- Date: 2025-01-01"}, nil
		})
		res, err := s.Compact(ctx, llm, nil)
		require.NoError(t, err)
		require.Equal(t, skipped("2025-01", "changed while compacting; run Compact again"), res.Skipped)
		require.Contains(t, readFile(t, dir, "episodes/2025-01.md"), "## Late")
		require.Equal(t, part, readFile(t, dir, "episodes/2025-01.001.md"))
		require.NoFileExists(t, filepath.Join(dir, "episodes", "archive", "2025-01.001.md"), "the archive written for nothing is taken back")
		res, err = s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"2025-01"}, res.Months, "and the next run compacts the month")
		require.Contains(t, readFile(t, dir, "episodes/archive/2025-01.md"), "## Late")
	})

	t.Run("an archive that differs from the month", func(t *testing.T) {
		s, dir := seedOld(t)
		writeFile(t, dir, "episodes/archive/2025-01.md", oldMonth+"\n## Only in the archive\n- Date: 2025-01-31\n")
		res, err := s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, skipped("2025-01", "an interrupted compaction left an archive that differs from the month; a person must check episodes/archive/"), res.Skipped)
		require.Equal(t, oldMonth, readFile(t, dir, "episodes/2025-01.md"))
		require.Contains(t, readFile(t, dir, "episodes/archive/2025-01.md"), "## Only in the archive")
	})

	t.Run("a half-written archive of a month in parts", func(t *testing.T) {
		s, dir := open(t, nil)
		writeFile(t, dir, "episodes/2025-01.001.md", part)
		writeFile(t, dir, "episodes/2025-01.md", oldMonth)
		writeFile(t, dir, "episodes/archive/2025-01.001.md", part)
		res, err := s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"2025-01"}, res.Months)
		require.Equal(t, oldMonth, readFile(t, dir, "episodes/archive/2025-01.md"))
		require.NoFileExists(t, filepath.Join(dir, "episodes", "2025-01.001.md"))
	})

	t.Run("parts left beside a compacted month that had only parts", func(t *testing.T) {
		s, dir := open(t, nil)
		writeFile(t, dir, "episodes/2025-01.001.md", part)
		res, err := s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"2025-01"}, res.Months)
		compacted := readFile(t, dir, "episodes/2025-01.md")
		writeFile(t, dir, "episodes/2025-01.001.md", part) // as a crash would leave it
		res, err = s.Compact(ctx, nil, &memory.CompactOptions{DryRun: true})
		require.NoError(t, err)
		require.Equal(t, []string{"2025-01"}, res.Months, "a dry run says it would finish it")
		require.FileExists(t, filepath.Join(dir, "episodes", "2025-01.001.md"), "and leaves it")
		res, err = s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"2025-01"}, res.Months, "finished")
		require.NoFileExists(t, filepath.Join(dir, "episodes", "2025-01.001.md"))
		require.Equal(t, compacted, readFile(t, dir, "episodes/2025-01.md"))
		files, err := s.List(ctx)
		require.NoError(t, err)
		require.True(t, files[0].Compacted)
	})

	t.Run("an archive that is a link", func(t *testing.T) {
		s, dir := seedOld(t)
		require.NoError(t, os.Symlink(".", filepath.Join(dir, "episodes", "archive")))
		res, err := s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, skipped("2025-01", "episodes/archive/ is not a folder; a person must fix it"), res.Skipped)
		require.Equal(t, oldMonth, readFile(t, dir, "episodes/2025-01.md"))
	})

	t.Run("the horizon at a month's end", func(t *testing.T) {
		aug31 := func() time.Time { return time.Date(2026, 8, 31, 12, 0, 0, 0, time.UTC) }
		s, dir := open(t, &memory.Options{Now: aug31})
		writeFile(t, dir, "episodes/2026-02.md", strings.ReplaceAll(oldMonth, "2025-01", "2026-02"))
		writeFile(t, dir, "episodes/2026-01.md", strings.ReplaceAll(oldMonth, "2025-01", "2026-01"))
		res, err := s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"2026-01"}, res.Months, "six months before August is February, kept")
	})

	t.Run("Context leaves the archive out", func(t *testing.T) {
		s, _ := seedOld(t)
		_, err := s.Compact(ctx, nil, nil)
		require.NoError(t, err)
		got, err := s.Context(ctx, "Tokyo flights", 4000)
		require.NoError(t, err)
		require.NotContains(t, got, "episodes/archive/")
		require.Contains(t, got, `<entry path="episodes/2025-01.md"`)
	})
}

// TestSealedAppendInAConversation: after an append seals the month, the
// conversation does not take the new month file for the whole month.
func TestSealedAppendInAConversation(t *testing.T) {
	s, dir := open(t, nil)
	c := s.NewSession()
	for i := 0; ; i++ {
		r := sessionCall(t, c, "memory_append", mustJSON(t, map[string]any{"path": "episodes/2026-02.md", "entry": busyEntry(i), "summary": nil}))
		require.False(t, r.IsError, r.Text)
		if strings.Contains(r.Text, `"note"`) {
			require.Contains(t, r.Text, `"note":"episodes/2026-02.md was full: its entries are now in episodes/2026-02.001.md, unchanged, and this entry starts the month's file anew"`)
			require.NotContains(t, r.Text, `"version"`)
			break
		}
		require.Contains(t, r.Text, `"version"`)
	}
	r := sessionCall(t, c, "memory_write", `{"path": "episodes/2026-02.md", "content": "## All of it\n- Date: 2026-02-01", "version": null}`)
	require.True(t, r.IsError, "the conversation has not seen the month's file since it was sealed")
	require.FileExists(t, filepath.Join(dir, "episodes", "2026-02.001.md"))

	// Only appends make parts; a part that does not exist cannot be
	// written.
	r = sessionCall(t, c, "memory_write", `{"path": "episodes/2026-02.999.md", "content": "## X\n- Date: 2026-02-01", "version": null}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "only a full month's file becomes a part; write to episodes/2026-02.md instead")

	// A month left with parts and no file of its own says where its
	// entries are.
	require.NoError(t, os.Remove(filepath.Join(dir, "episodes", "2026-02.md")))
	r = sessionCall(t, c, "memory_read", `{"path": "episodes/2026-02.md", "line": null}`)
	require.True(t, r.IsError)
	require.Contains(t, r.Text, "episodes/2026-02.md does not exist now; the month's older entries are in episodes/2026-02.001.md")
}

// TestCompactEdges: the cases that leave a month, or the run, as it is.
func TestCompactEdges(t *testing.T) {
	ctx := context.Background()
	s, dir := seedOld(t)
	leavesBroken(t, "a person's month with a NUL byte is one of its edges")

	res, err := s.Compact(ctx, nil, &memory.CompactOptions{KeepLast: 10})
	require.NoError(t, err)
	require.Equal(t, skipped("2025-01", "nothing to condense"), res.Skipped)

	writeFile(t, dir, "episodes/2025-02.md", "# 2025-02 Episodes\n\n## Bad\x00\n- Date: 2025-02-01\n")
	res, err = s.Compact(ctx, nil, &memory.CompactOptions{Before: "2025-03", KeepLast: 10})
	require.NoError(t, err)
	require.Contains(t, res.Skipped, memory.SkippedMonth{Month: "2025-02", Reason: "episodes/2025-02.md holds bytes that are not text; a person must fix it first"})

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Compact(cancelled, nil, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, s.Close())
	_, err = s.Compact(ctx, nil, nil)
	require.ErrorIs(t, err, memory.ErrClosed)
	_, err = s.Stats(ctx)
	require.ErrorIs(t, err, memory.ErrClosed)

	// A month may have 999 parts; the append that would make a thousandth
	// is refused, and nothing is lost.
	s2, dir2 := open(t, nil)
	writeFile(t, dir2, "episodes/2026-02.999.md", "# 2026-02 Episodes\n\n> Summary: x\n\n## X\n- Date: 2026-02-01\n")
	writeFile(t, dir2, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: y\n\n## Y\n- Date: 2026-02-02\n- Note: "+strings.Repeat("y", 16<<10)+"\n")
	err = s2.Append(ctx, "episodes/2026-02.md", "## Z\n- Date: 2026-02-03", "")
	require.ErrorIs(t, err, memory.ErrInvalidContent)
	require.Contains(t, hint(t, err), "2026-02 has 999 full parts, as many as a month may have")
	require.FileExists(t, filepath.Join(dir2, "episodes", "2026-02.md"))

	// A session's index is the store's.
	c := s2.NewSession()
	got, err := c.IndexMessage(ctx)
	require.NoError(t, err)
	want, err := s2.NewSession().IndexMessage(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func skipped(month, reason string) []memory.SkippedMonth {
	return []memory.SkippedMonth{{Month: month, Reason: reason}}
}

// TestCompactedMarkIsForMonths: a fact file whose text looks like a
// compacted month's note is not called compacted.
func TestCompactedMarkIsForMonths(t *testing.T) {
	s, dir := open(t, nil)
	writeFile(t, dir, "facts/user.md", "# User\n\n> Summary: Zhang San\n>\n> Compacted on 2026-01-01: nothing\n\n- Name: Zhang San\n")
	files, err := s.List(context.Background())
	require.NoError(t, err)
	require.False(t, files[0].Compacted)
}

// TestCompactDryRun: a dry run reports what a real run then does, and
// writes nothing.
func TestCompactDryRun(t *testing.T) {
	s, dir := seedOld(t)
	ctx := context.Background()
	opts := &memory.CompactOptions{KeepLast: 1, DryRun: true}
	dry, err := s.Compact(ctx, nil, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"2025-01"}, dry.Months)
	require.Equal(t, 3, dry.Entries)
	require.Equal(t, 1, dry.Kept)
	require.Equal(t, oldMonth, readFile(t, dir, "episodes/2025-01.md"), "nothing written")
	require.NoDirExists(t, filepath.Join(dir, "episodes", "archive"))

	opts.DryRun = false
	res, err := s.Compact(ctx, nil, opts)
	require.NoError(t, err)
	require.Equal(t, res, dry, "the dry run said what the run did")

	opts.DryRun = true
	dry, err = s.Compact(ctx, nil, opts)
	require.NoError(t, err)
	require.Empty(t, dry.Months)
	require.Equal(t, skipped("2025-01", "already compacted; its originals are in episodes/archive/"), dry.Skipped)
}
