package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// The benchmarks run on the disk under the test's temporary directory; set
// TMPDIR to measure another one. BenchmarkDiskFloor is the yardstick: the
// same atomic replace done with nothing but the os package, so that
// "Append is within 2× of the disk" is a ratio measured in one run.

// entry is an episode entry of about 300 bytes, dated in the month of
// path ("episodes/2026-02.md").
func entry(i int, path string) string {
	month := strings.TrimSuffix(strings.TrimPrefix(path, "episodes/"), ".md")
	return fmt.Sprintf("## Task %d: compare flights to Tokyo in April\n- Summary: Spring Airlines cheapest for the April trip\n- Date: %s-26\n"+
		"- Task: user asked to compare flights and prices for a family of three\n- Lesson: search results had stale prices; cross-check airline sites\n", i, month)
}

// BenchmarkAppend appends an episode entry to a month of about 2 KB,
// beside the floor (againstFloor): µs/append and append/floor are its
// figures; ns/op counts the floor's replaces and the month's rewrites too.
func BenchmarkAppend(b *testing.B) {
	s, _ := open(b, nil)
	benchAppend(b, s)
}

// benchAppend appends entries to one month of about 2 KB, as the floor
// replaces one 2 KB file: the month holds three entries, and is written
// back to them, untimed, after every six appended.
func benchAppend(b *testing.B, s *memory.Store) {
	prep, op := monthAppends(b, s)
	againstFloor(b, "append", prep, op)
}

// monthAppends returns what benchAppend times: prep writes the month back
// to its three entries after every six appended; op appends the next.
func monthAppends(b *testing.B, s *memory.Store) (prep, op func(n int) error) {
	ctx := context.Background()
	const path = "episodes/2026-02.md"
	for i := range 3 {
		if err := s.Append(ctx, path, entry(i, path), ""); err != nil {
			b.Fatal(err)
		}
	}
	first, err := s.Read(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	prep = func(n int) error {
		if n > 0 && n%6 == 0 {
			return s.Write(ctx, path, first)
		}
		return nil
	}
	op = func(n int) error { return s.Append(ctx, path, entry(n+3, path), "") }
	return prep, op
}

func BenchmarkWrite(b *testing.B) {
	s, _ := open(b, nil)
	ctx := context.Background()
	content := "# User\n\n> Summary: Zhang San, Chinese\n\n" + strings.Repeat("- Name: Zhang San; prefers Chinese; standup Wed 10:00\n", 36) // ≈ 2 KB
	for b.Loop() {
		if err := s.Write(ctx, "facts/user.md", content); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPatch(b *testing.B) {
	s, _ := open(b, nil)
	benchPatch(b, s)
}

// benchPatch moves a counter line of a 2 KB fact file by one each time.
func benchPatch(b *testing.B, s *memory.Store) {
	ctx := context.Background()
	content := "# User\n\n> Summary: Zhang San\n\n" + strings.Repeat("- a fact line of some length, about fifty bytes\n", 40) + "- Counter: 0\n"
	if err := s.Write(ctx, "facts/user.md", content); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		p := []memory.Patch{{OldText: fmt.Sprintf("- Counter: %d\n", i), NewText: fmt.Sprintf("- Counter: %d\n", i+1)}}
		if _, err := s.Patch(ctx, "facts/user.md", p); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkRead(b *testing.B) {
	s, _ := open(b, nil)
	ctx := context.Background()
	if err := s.Write(ctx, "facts/user.md", strings.Repeat("- a fact line of some length, about fifty bytes\n", 40)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Read(ctx, "facts/user.md"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList lists a store with both fact files and 120 month files of
// about 2 KB each (ten years of episodes).
func BenchmarkList(b *testing.B) {
	s, dir := open(b, nil)
	ctx := context.Background()
	writeFile(b, dir, "facts/user.md", "# User\n\n> Summary: Zhang San, Chinese\n\n"+strings.Repeat("- fact\n", 100))
	writeFile(b, dir, "facts/memory.md", "# Memory\n\n> Summary: lessons\n\n"+strings.Repeat("- fact\n", 100))
	for m := range 120 {
		month := fmt.Sprintf("%04d-%02d", 2016+m/12, m%12+1)
		var body strings.Builder
		body.WriteString("# " + month + " Episodes\n\n> Summary: Tokyo flight research, birthday gift ideas, login bug fix\n\n")
		for i := range 6 {
			body.WriteString(entry(i, "episodes/2026-02.md") + "\n")
		}
		writeFile(b, dir, "episodes/"+month+".md", body.String())
	}
	for b.Loop() {
		files, err := s.List(ctx)
		if err != nil || len(files) != 122 {
			b.Fatal(len(files), err)
		}
	}
}

func BenchmarkIndexMessage(b *testing.B) {
	s, dir := open(b, nil)
	ctx := context.Background()
	for m := range 120 {
		month := fmt.Sprintf("%04d-%02d", 2016+m/12, m%12+1)
		writeFile(b, dir, "episodes/"+month+".md", "# "+month+" Episodes\n\n> Summary: Tokyo flight research, birthday gift ideas\n\n"+entry(m, "episodes/"+month+".md"))
	}
	for b.Loop() {
		if _, err := s.NewSession().IndexMessage(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiskFloor is the cost of an atomic 2 KB replace with the os
// package alone: write a temporary file, fsync it, rename it over the
// target, fsync the folder. No store can replace a file safely for less.
func BenchmarkDiskFloor(b *testing.B) {
	dir := b.TempDir()
	data := []byte(strings.Repeat("x", 2047) + "\n")
	for b.Loop() {
		floorReplace(b, dir, data)
	}
}

// floorReplace replaces dir/target.md with data as BenchmarkDiskFloor does.
func floorReplace(b *testing.B, dir string, data []byte) {
	f, err := os.CreateTemp(dir, ".target.md.tmp-")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, "target.md")); err != nil {
		b.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
	d.Close()
}

// floorBlock is how many operations againstFloor times in a row before
// as many floor replaces.
const floorBlock = 16

// againstFloor runs op once an iteration (prep before it, untimed) and
// reports its cost beside the floor's (BenchmarkDiskFloor) timed in the
// same run: after every floorBlock operations, as many floor replaces,
// timed apart, so that both are timed in the same minutes of a noisy disk
// and each pays for what the other leaves to the disk only at a block's
// edge. unit names the operation in the metrics ("append").
func againstFloor(b *testing.B, unit string, prep, op func(n int) error) {
	b.Helper()
	dir := b.TempDir()
	data := []byte(strings.Repeat("x", 2047) + "\n")
	var ops, floors time.Duration
	n, nf := 0, 0
	floor := func() {
		start := time.Now()
		for range floorBlock {
			floorReplace(b, dir, data)
		}
		floors += time.Since(start)
		nf += floorBlock
	}
	for b.Loop() {
		if prep != nil {
			if err := prep(n); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if err := op(n); err != nil {
			b.Fatal(err)
		}
		ops += time.Since(start)
		if n++; n%floorBlock == 0 {
			floor()
		}
	}
	if nf == 0 {
		floor()
	}
	perOp, perFloor := float64(ops)/float64(n), float64(floors)/float64(nf)
	b.ReportMetric(perOp/1e3, "µs/"+unit)
	b.ReportMetric(perFloor/1e3, "µs/floor")
	b.ReportMetric(perOp/perFloor, unit+"/floor")
}

// BenchmarkLock measures what the directory's lock file adds to a change:
// the same append and patch with the lock and with it skipped.
func BenchmarkLock(b *testing.B) {
	for _, mode := range []string{"locked", "unlocked"} {
		for _, op := range []struct {
			name  string
			bench func(*testing.B, *memory.Store)
		}{{"append", benchAppend}, {"patch", benchPatch}} {
			b.Run(op.name+"/"+mode, func(b *testing.B) {
				s, _ := open(b, nil)
				if mode == "unlocked" {
					memory.Unlocked(s)
				}
				op.bench(b, s)
			})
		}
	}
}

// BenchmarkHostilePatch is the patch the hostile review timed at 3.8 s
// under the lock: a self-overlapping 500,000-character oldText on a 1 MB
// file, refused as ambiguous.
func BenchmarkHostilePatch(b *testing.B) {
	s, dir := open(b, nil)
	writeFile(b, dir, "episodes/2026-02.md", "# 2026-02 Episodes\n\n> Summary: a\n\n"+strings.Repeat("a", 1<<20-100)+"\n")
	p := []memory.Patch{{OldText: strings.Repeat("a", 500000), NewText: "b"}}
	for b.Loop() {
		if _, err := s.Patch(context.Background(), "episodes/2026-02.md", p); err == nil {
			b.Fatal("the patch was applied")
		}
	}
}

// BenchmarkAppendBusyMonth appends a 600-byte entry to a month that holds
// 1, 1,000 or 5,000 entries already: the cost must not grow with the month
// (the month's full files are parts, and an append rewrites only the
// month's own file). It is timed beside the floor (againstFloor).
func BenchmarkAppendBusyMonth(b *testing.B) {
	for _, n := range []int{1, 1000, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _ := open(b, nil)
			ctx := context.Background()
			for i := range n {
				if err := s.Append(ctx, "episodes/2026-02.md", busyEntry(i), ""); err != nil {
					b.Fatal(err)
				}
			}
			againstFloor(b, "append", nil, func(i int) error {
				return s.Append(ctx, "episodes/2026-02.md", busyEntry(n+i), "")
			})
		})
	}
}

// BenchmarkAppendFactLine appends one new fact line to a fact file, the
// fact files holding about 15 KB (the default budget), beside the same to
// a world topic among 30 that hold as much in a shared directory: the
// guard there reads every topic, and the budget lists world/. So that the
// files stay near 15 KB however many iterations run, a file is written
// back to its first content after every 16 lines appended to it, untimed.
func BenchmarkAppendFactLine(b *testing.B) {
	ctx := context.Background()
	fill := func(b *testing.B, s *memory.Store, paths []string) []string {
		per := memory.DefaultFactsBudget / len(paths)
		var contents []string
		for k, p := range paths {
			var c strings.Builder
			for i := 0; c.Len() < per-120; i++ {
				fmt.Fprintf(&c, "- Fact %d of %d: prefers option %d over the others, in meetings and reviews\n", i, k, i)
			}
			if err := s.Write(ctx, p, c.String()); err != nil {
				b.Fatal(err)
			}
			contents = append(contents, c.String())
		}
		return contents
	}
	// run appends the lines, beside the floor (againstFloor).
	run := func(b *testing.B, s *memory.Store, paths, contents []string) {
		againstFloor(b, "append", func(n int) error {
			if n >= len(paths) && n/len(paths)%16 == 0 { // 16 lines appended to the file since it was written
				k := n % len(paths)
				return s.Write(ctx, paths[k], contents[k])
			}
			return nil
		}, func(n int) error {
			line := fmt.Sprintf("- Colleague %d: Li Wei %d, designer, sits by window %d", n, n, n)
			return s.Append(ctx, paths[n%len(paths)], line, "")
		})
	}
	for _, mode := range []string{"off", "history"} {
		b.Run("facts/"+mode, func(b *testing.B) {
			s, _ := open(b, &memory.Options{FactsBudget: 1 << 20, History: memory.HistoryPolicy{Off: mode == "off"}})
			paths := []string{"facts/user.md", "facts/memory.md"}
			run(b, s, paths, fill(b, s, paths))
		})
	}
	b.Run("world-30-topics", func(b *testing.B) {
		w, err := memory.OpenDir(b.TempDir(), 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { w.Close() })
		s, _ := open(b, &memory.Options{World: w, WorldBudget: 1 << 20})
		var paths []string
		for i := range 30 {
			paths = append(paths, fmt.Sprintf("world/topic-%d.md", i))
		}
		run(b, s, paths, fill(b, s, paths))
	})
}
