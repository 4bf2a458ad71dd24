package journal_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mdmemory/memory/internal/journal"
)

// factLine returns a fact line of about 90 bytes.
func factLine(i int) string {
	return fmt.Sprintf("- The user said on day %d that they prefer option %d for the garden and the car.\n", i/10, i%97)
}

// rolling returns the log of n changes of a 15 KB fact file: a line
// appended, and the oldest dropped when over 15 KB, and its content at
// the end.
func rolling(n int) ([]byte, []byte) {
	var log []byte
	var recs []journal.Record
	lines := []string{"# User\n", "- Summary: what the user told us\n", "\n"}
	var old []byte
	for i := range n {
		lines = append(lines, factLine(i))
		for len(strings.Join(lines, "")) > 15<<10 {
			lines = append(lines[:3], lines[4:]...)
		}
		new := []byte(strings.Join(lines, ""))
		ov := ""
		if old != nil {
			ov = journal.Version(old)
		}
		r := journal.NewRecord(recs, "append", "conv-"+fmt.Sprint(i/10), ov, old, journal.Version(new), new, t0.Add(time.Duration(i)*time.Hour))
		recs = append(recs, r)
		log = journal.Append(log, r)
		old = new
	}
	return log, old
}

// entry is what a log's listing shows of a change.
type entry struct {
	Time          time.Time
	Op, Actor     string
	Old, New      string
	Before, After int
}

// BenchmarkHistory: the listing of a file's 1,000 recorded changes, newest
// first: the log decoded, its landed records found.
func BenchmarkHistory(b *testing.B) {
	log, content := rolling(1000)
	cur := journal.Version(content)
	var list []entry
	for b.Loop() {
		recs, errs := journal.Decode(log)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		landed := journal.Landed(recs, cur)
		list = list[:0]
		for k := len(landed) - 1; k >= 0; k-- {
			r := &recs[landed[k]]
			list = append(list, entry{Time: r.Time, Op: r.Op, Actor: r.Actor, Old: r.Old, New: r.New})
		}
	}
	if len(list) != 1000 {
		b.Fatalf("%d listed", len(list))
	}
	b.ReportMetric(float64(len(log)), "log-bytes")
}

// BenchmarkContent: one version of that file read back: a whole one and
// up to 19 deltas.
func BenchmarkContent(b *testing.B) {
	log, _ := rolling(1000)
	recs, _ := journal.Decode(log)
	v := recs[len(recs)-2].New // the 999th: 18 deltas from whole content
	for b.Loop() {
		if _, err := journal.Content(recs, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewRecord: the record of a fact appended to that file.
func BenchmarkNewRecord(b *testing.B) {
	log, content := rolling(1000)
	recs, _ := journal.Decode(log)
	new := append(append([]byte(nil), content...), factLine(1000)...)
	ov, nv := journal.Version(content), journal.Version(new)
	for b.Loop() {
		journal.NewRecord(recs, "append", "conv", ov, content, nv, new, t0)
	}
}

// BenchmarkYear: a year of typical use, 10 changes a day: six episode
// appends to the month's file (a new one each month), three facts
// appended to a 15 KB fact file that is condensed (rewritten at 10 KB)
// when full, and one write of a 2 KB procedures file. Logs are pruned
// daily with the default policy. It reports the bytes written to the logs
// in the year, and the bytes the logs hold at its end.
func BenchmarkYear(b *testing.B) {
	var written [3]int
	var held int
	for b.Loop() {
		written, held = year()
	}
	b.ReportMetric(float64(written[0]+written[1]+written[2]), "written-bytes/year")
	b.ReportMetric(float64(written[0]), "months-bytes/year")
	b.ReportMetric(float64(written[1]), "facts-bytes/year")
	b.ReportMetric(float64(written[2]), "procedures-bytes/year")
	b.ReportMetric(float64(held), "held-bytes")
}

// file is a memory file and its log's records, as the change path keeps
// them.
type file struct {
	recs    []journal.Record
	content []byte
	written int
}

func (f *file) change(op string, data []byte, now time.Time) {
	ov := ""
	if f.content != nil {
		ov = journal.Version(f.content)
	}
	r := journal.NewRecord(f.recs, op, "conv", ov, f.content, journal.Version(data), data, now)
	f.written += len(journal.Append(nil, r))
	f.recs = append(f.recs, r)
	f.content = data
}

func (f *file) prune(now time.Time) {
	f.recs = journal.Prune(f.recs, journal.Version(f.content), now, journal.Policy{})
}

// year returns the bytes written to the logs of the months, of the fact
// file and of the procedures, and the bytes all logs hold at the end.
func year() (written [3]int, held int) {
	r := rand.New(rand.NewPCG(1, 1))
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	months := map[int]*file{}
	facts, procs := &file{}, &file{}
	factLines := []string{"# User\n", "- Summary: what the user told us\n", "\n"}
	n := 0
	for day := range 365 {
		now := start.AddDate(0, 0, day)
		m := months[int(now.Month())]
		if m == nil {
			m = &file{}
			months[int(now.Month())] = m
		}
		for k := range 6 {
			var entries string
			if m.content != nil {
				_, entries, _ = strings.Cut(string(m.content), "\n\n")
			}
			entries += fmt.Sprintf("## Worked on task %d with Marcus\n- Summary: we reviewed item %d of the roadmap and agreed on the next step for it.\n- Date: %s\n- Details: nobody had the numbers, so I promised to send them by email before Friday.\n\n", n, r.IntN(1000), now.Format("2006-01-02"))
			n++
			head := fmt.Sprintf("# Episodes of %s\n- Summary: %d entries, the last on %s\n\n", now.Format("2006-01"), strings.Count(entries, "## "), now.Format("2006-01-02"))
			m.change("append", []byte(head+entries), now.Add(time.Duration(k)*time.Hour))
		}
		for k := range 3 {
			factLines = append(factLines, factLine(n))
			n++
			op := "append"
			if len(strings.Join(factLines, "")) > 15<<10 {
				// Condensed: a third of the lines go, the others stay.
				factLines = append(factLines[:3], factLines[3+len(factLines)/3:]...)
				op = "write"
			}
			facts.change(op, []byte(strings.Join(factLines, "")), now.Add(time.Duration(6+k)*time.Hour))
		}
		var proc strings.Builder
		proc.WriteString("# Procedures\n")
		for i := range 20 {
			fmt.Fprintf(&proc, "- Step %d: check the %d-th thing before the deploy\n", i, (i*7+day/3)%50)
		}
		procs.change("write", []byte(proc.String()), now.Add(9*time.Hour))
		for _, f := range append([]*file{facts, procs}, m) {
			f.prune(now.Add(10 * time.Hour))
		}
	}
	for _, f := range months {
		f.prune(start.AddDate(1, 0, 0))
		written[0] += f.written
		held += len(journal.Encode(f.recs))
	}
	written[1], written[2] = facts.written, procs.written
	return written, held + len(journal.Encode(facts.recs)) + len(journal.Encode(procs.recs))
}
