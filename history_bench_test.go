package memory_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory"
)

// The history's benchmarks: History of a file with 1,000 recorded
// changes, what recording adds to an append and a fact change beside the
// durable replace floor, and the storage of a year of typical use.

// BenchmarkHistory lists the history of one fact file with 1,000
// recorded changes (patches of a counter line in a 2 KB file).
func BenchmarkHistory(b *testing.B) {
	s, _ := open(b, nil)
	ctx := context.Background()
	content := "# User\n\n> Summary: Zhang San\n\n" + strings.Repeat("- a fact line of some length, about fifty bytes\n", 40) + "- Counter: 0\n"
	if err := s.Write(ctx, "facts/user.md", content); err != nil {
		b.Fatal(err)
	}
	for i := range 999 {
		p := []memory.Patch{{OldText: fmt.Sprintf("- Counter: %d\n", i), NewText: fmt.Sprintf("- Counter: %d\n", i+1)}}
		if _, err := s.Patch(memory.WithActor(ctx, "bench"), "facts/user.md", p); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		h, err := s.History(ctx, "facts/user.md", nil)
		if err != nil || len(h) != 1000 {
			b.Fatal(len(h), err)
		}
	}
}

// BenchmarkAppendHistory is BenchmarkAppend (an episode entry to a month
// of about 2 KB) and
// benchPatch (a fact change) with the history on and off, each timed
// beside the floor (againstFloor).
func BenchmarkAppendHistory(b *testing.B) {
	ctx := context.Background()
	for _, op := range []string{"episode", "fact"} {
		for _, mode := range []string{"history", "off"} {
			b.Run(op+"/"+mode, func(b *testing.B) {
				opts := &memory.Options{}
				if mode == "off" {
					opts.History.Off = true
				}
				s, _ := open(b, opts)
				content := "# User\n\n> Summary: Zhang San\n\n" + strings.Repeat("- a fact line of some length, about fifty bytes\n", 40) + "- Counter: 0\n"
				if err := s.Write(ctx, "facts/user.md", content); err != nil {
					b.Fatal(err)
				}
				if op == "episode" {
					prep, append := monthAppends(b, s)
					againstFloor(b, op, prep, append)
					return
				}
				againstFloor(b, op, nil, func(n int) error {
					p := []memory.Patch{{OldText: fmt.Sprintf("- Counter: %d\n", n), NewText: fmt.Sprintf("- Counter: %d\n", n+1)}}
					_, err := s.Patch(ctx, "facts/user.md", p)
					return err
				})
			})
		}
	}
}

// BenchmarkHistoryYear measures the storage a year of typical use costs:
// through a Store with a fake clock, ten changes a day for 365 days (six
// episode entries of about 300 bytes appended to the month, three fact
// lines appended to facts/memory.md, and one write, which condenses
// facts/memory.md to its last 60 lines), with the default policy. It
// reports the bytes of the logs, of the memory files, and per change.
func BenchmarkHistoryYear(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		clk := &clock{t: time.Date(2025, 1, 1, 8, 0, 0, 0, time.UTC)}
		s, dir := open(b, &memory.Options{Now: clk.Now})
		changes, lessons := 0, 0
		var lines []string
		for day := range 365 {
			for k := range 10 {
				var err error
				switch {
				case k < 6:
					path := "episodes/" + clk.Now().Format("2006-01") + ".md"
					err = s.Append(ctx, path, entry(day*6+k, path), "")
				case k < 9:
					line := fmt.Sprintf("- Lesson %d: %s %s %s, %s %s", lessons, word(lessons, 1), word(lessons, 2), word(lessons, 3), word(lessons, 4), word(lessons, 5))
					lines = append(lines, line)
					lessons++
					err = s.Append(ctx, "facts/memory.md", line, "lessons")
				default:
					lines = lines[max(len(lines)-60, 0):]
					err = s.Write(ctx, "facts/memory.md", "# Memory\n\n> Summary: lessons\n\n"+strings.Join(lines, "\n")+"\n")
				}
				if err != nil {
					b.Fatal(day, k, err)
				}
				changes++
				clk.add(144 * time.Minute)
			}
		}
		var logs, files int64
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			switch {
			case strings.HasPrefix(rel, ".history"+string(filepath.Separator)):
				logs += fi.Size()
			case !strings.HasPrefix(rel, "."):
				files += fi.Size()
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(logs), "history-bytes")
		b.ReportMetric(float64(files), "memory-bytes")
		b.ReportMetric(float64(logs)/float64(changes), "history-bytes/change")
	}
}

// word is a made-up word of its own for each n and k, so that no fact
// line nearly repeats another.
func word(n, k int) string {
	const syllables = "ba ko mi tu re sa lo vi ne du ga pe ri zo fa hu"
	parts := strings.Fields(syllables)
	x := n*7919 + k*104729
	var w strings.Builder
	for range 3 {
		w.WriteString(parts[x%len(parts)])
		x /= len(parts)
	}
	return w.String()
}

// BenchmarkHistoryDepth is an append of a 600-byte entry to a month, and
// a patch of a 2 KB fact file, after 10 and after 5,000 recorded changes
// of the file, with the history on, each timed beside the floor
// (againstFloor): what a change costs must not grow with its file's
// history (the log is in segments, and a change reads and writes only the
// last).
func BenchmarkHistoryDepth(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 5000} {
		b.Run(fmt.Sprintf("episode/%d", n), func(b *testing.B) {
			s, _ := open(b, nil)
			for i := range n {
				if err := s.Append(ctx, "episodes/2026-02.md", busyEntry(i), ""); err != nil {
					b.Fatal(err)
				}
			}
			againstFloor(b, "append", nil, func(i int) error {
				return s.Append(ctx, "episodes/2026-02.md", busyEntry(n+i), "")
			})
		})
		b.Run(fmt.Sprintf("fact/%d", n), func(b *testing.B) {
			s, _ := open(b, nil)
			content := "# User\n\n> Summary: Zhang San\n\n" + strings.Repeat("- a fact line of some length, about fifty bytes\n", 40) + "- Counter: 0\n"
			if err := s.Write(ctx, "facts/user.md", content); err != nil {
				b.Fatal(err)
			}
			patch := func(i int) error {
				p := []memory.Patch{{OldText: fmt.Sprintf("- Counter: %d\n", i), NewText: fmt.Sprintf("- Counter: %d\n", i+1)}}
				_, err := s.Patch(ctx, "facts/user.md", p)
				return err
			}
			for i := range n - 1 {
				if err := patch(i); err != nil {
					b.Fatal(err)
				}
			}
			againstFloor(b, "patch", nil, func(i int) error { return patch(n - 1 + i) })
		})
	}
}
