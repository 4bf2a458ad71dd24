package journal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory/internal/journal"
)

// sim is a file and its log, changed as the library's change path does,
// with crashes and changes made outside the library.
type sim struct {
	log     []byte
	content []byte            // nil: no file
	pending bool              // changed outside since the last record
	known   map[string]string // the content of each version recorded
	now     time.Time
}

func newSim() *sim { return &sim{known: map[string]string{}, now: t0} }

func (s *sim) version() string {
	if s.content == nil {
		return ""
	}
	return journal.Version(s.content)
}

// records decodes the log; its only malformed lines are ones cut by a
// crash.
func (s *sim) records(t testing.TB) []journal.Record {
	recs, errs := journal.Decode(s.log)
	for _, err := range errs {
		require.ErrorIs(t, err, journal.ErrRecord)
	}
	return recs
}

// change records a change to data (nil removes the file), then makes it
// unless the process is killed in between (crash).
func (s *sim) change(t testing.TB, op, actor string, data []byte, crash bool) {
	if n := len(s.log); n > 0 && s.log[n-1] != '\n' {
		s.log = append(s.log, '\n') // after a cut line
	}
	recs := s.records(t)
	cur := s.version()
	if end := journal.End(recs, journal.Landed(recs, cur)); end != cur {
		r := journal.NewRecord(recs, journal.Outside, "", end, nil, cur, s.content, s.now)
		recs = append(recs, r)
		s.log = journal.Append(s.log, r)
		if cur != "" {
			s.known[cur] = string(s.content)
		}
	}
	s.pending = false
	nv := ""
	if data != nil {
		nv = journal.Version(data)
		s.known[nv] = string(data)
	}
	r := journal.NewRecord(recs, op, actor, cur, s.content, nv, data, s.now)
	s.log = journal.Append(s.log, r)
	if !crash {
		s.content = data
	}
}

// cut writes part of a record's line, as a process killed while writing
// it leaves: the change is not made.
func (s *sim) cut(n int) {
	l := journal.Append(nil, journal.NewRecord(nil, "write", "killed", "", nil, journal.Version([]byte("x")), []byte("x"), s.now))
	s.log = append(s.log, l[:n%(len(l)-1)]...)
}

// outside changes the file without a record.
func (s *sim) outside(data []byte) {
	s.content = data
	s.pending = true
}

// prune rewrites the log as pruned, and checks what it kept.
func (s *sim) prune(t testing.TB, p journal.Policy) {
	recs := s.records(t)
	cur := s.version()
	before := journal.Landed(recs, cur)
	pruned := journal.Prune(recs, cur, s.now, p)
	s.log = journal.Encode(pruned)
	after := journal.Landed(pruned, cur)
	require.Equal(t, journal.End(recs, before), journal.End(pruned, after), "the chain ends where it did")
	if len(before) > 0 {
		require.NotEmpty(t, after, "the last version is kept")
	}
	// The kept records are the last landed ones.
	for k := range after {
		was, is := recs[before[len(before)-len(after)+k]], pruned[after[k]]
		require.Equal(t, was.New, is.New)
		require.True(t, was.Time.Equal(is.Time))
	}
	if p.MaxBytes == 0 {
		maxAge, minV := p.MaxAge, p.MinVersions
		if maxAge == 0 {
			maxAge = journal.DefaultMaxAge
		}
		if minV == 0 {
			minV = journal.DefaultMinVersions
		}
		require.GreaterOrEqual(t, len(after), min(minV, len(before)), "%+v", p)
		young := 0
		for k := len(before) - 1; k >= 0 && !recs[before[k]].Time.Before(s.now.Add(-maxAge)); k-- {
			young++
		}
		require.GreaterOrEqual(t, len(after), young, "%+v: %d landed", p, len(before))
	}
}

// check checks that every landed version rebuilds byte for byte, and
// that the chain ends at the file's version unless it changed outside.
func (s *sim) check(t testing.TB) {
	recs := s.records(t)
	cur := s.version()
	landed := journal.Landed(recs, cur)
	if !s.pending {
		require.Equal(t, cur, journal.End(recs, landed))
	}
	for _, i := range landed {
		if recs[i].New == "" {
			continue
		}
		got, err := journal.Content(recs, recs[i].New)
		require.NoError(t, err)
		require.Equal(t, s.known[recs[i].New], string(got))
	}
}

// run plays steps on a new sim: changes, crashes, outside changes,
// removals, cut lines and pruning, each byte one step.
func run(t testing.TB, steps []byte) *sim {
	s := newSim()
	n := 0
	next := func(extra string) []byte {
		n++
		old := string(s.content)
		if old == "" {
			old = "# Facts\n- Summary: facts\n\n"
		}
		return []byte(old + fmt.Sprintf("- fact %d%s\n", n, extra))
	}
	for _, b := range steps {
		arg := int(b >> 3)
		s.now = s.now.Add(time.Duration(arg+1) * 37 * time.Minute)
		switch b & 7 {
		case 0, 1:
			s.change(t, "append", "conv", next(""), false)
		case 2:
			if arg%4 == 0 && s.content != nil {
				s.change(t, "write", "host", append([]byte(nil), s.content...), false)
			} else {
				data := next("")
				data[2] = byte('A' + arg%26) // the title changes too
				s.change(t, "write", "host", data, false)
			}
		case 3:
			s.change(t, "append", "conv", next(" (killed)"), true)
		case 4:
			if arg%5 == 0 {
				s.outside(nil)
			} else {
				s.outside(next(" (an editor)"))
			}
		case 5:
			if s.content != nil {
				s.change(t, "remove", "host", nil, arg%3 == 0)
			} else {
				s.change(t, "write", "host", next(""), false)
			}
		case 6:
			s.cut(arg * 7)
		case 7:
			p := journal.Policy{MinVersions: 1 + arg%4, MaxAge: time.Duration(arg) * time.Hour}
			if arg%3 == 0 {
				p.MaxBytes = 3000
			}
			if arg == 31 {
				p = journal.Policy{}
			}
			s.prune(t, p)
		}
		s.check(t)
	}
	return s
}

func TestSim(t *testing.T) {
	// Each kind of step, and a few mixes.
	for _, steps := range [][]byte{
		{0, 0, 0, 3, 0, 3, 3, 0, 7},
		{0, 1, 4, 0, 4, 4, 7 | 8, 0},
		{0, 5, 5, 0, 5 | 8, 0, 5 | 24, 0},
		{0, 6, 0, 6 | 80, 6 | 40, 0, 7 | 248},
		{0, 2, 2 | 8, 2, 0, 7 | 24},
		{0, 0, 4 | 40, 7 | 16, 3, 4, 7 | 8, 0},
	} {
		run(t, steps)
	}
	var long []byte
	for i := range 400 {
		long = append(long, byte(i*37+i/7))
	}
	run(t, long)
}

func FuzzHistory(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0, 3, 3, 0, 7})
	f.Add([]byte{0, 1, 4, 0, 4, 4, 7 | 8, 0})
	f.Add([]byte{0, 5, 5, 0, 5 | 8, 0, 5 | 24, 0, 6, 0, 7 | 248})
	f.Fuzz(func(t *testing.T, steps []byte) {
		if len(steps) > 300 {
			steps = steps[:300]
		}
		run(t, steps)
	})
}
