package memory_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mdmemory/memory"
)

// sealKillBytes bounds the logs of TestHistoryKill, so that its few
// rounds prune them too.
const sealKillBytes = 512 << 10

// sealKillWorker is the worker of TestHistoryKill: forever, it appends an
// entry of several KB to one month, which fills and is sealed into parts
// every few appends, writes facts/user.md and patches facts/memory.md,
// saying "step" before each change, so that the parent kills it in the
// middle of one.
func sealKillWorker(ctx context.Context, s *memory.Store) error {
	n := os.Getpid() // the round's own, for entries of their own
	for i := 0; ; i++ {
		fmt.Println("step")
		entry := fmt.Sprintf("## sealkill %d-%d\n- Summary: an entry of a killed writer\n%s", n, i, strings.Repeat(fmt.Sprintf("- note %d of a long entry on purpose\n", i), 120))
		if err := s.Append(ctx, "episodes/2026-02.md", entry, ""); err != nil {
			return err
		}
		fmt.Println("step")
		if err := s.Write(ctx, "facts/user.md", fmt.Sprintf("# User\n\n> Summary: version %d-%d\n\n- Version: %d-%d\n", n, i, n, i)); err != nil {
			return err
		}
		fmt.Println("step")
		text, _ := s.Read(ctx, "facts/memory.md")
		at := strings.Index(text, "- Step: ")
		if at < 0 {
			if err := s.Write(ctx, "facts/memory.md", "# Memory\n\n> Summary: steps\n\n- Step: 0\n"); err != nil {
				return err
			}
			continue
		}
		old := text[at : at+strings.IndexByte(text[at:], '\n')+1]
		p := memory.Patch{OldText: old, NewText: fmt.Sprintf("- Step: %d-%d\n", n, i)}
		if _, err := s.Patch(ctx, "facts/memory.md", []memory.Patch{p}); err != nil {
			return err
		}
	}
}

// TestHistoryKill kills a writer at random moments of its changes (a
// month's appends that fill it and seal it into parts, writes of
// facts/user.md, patches of facts/memory.md); after each kill, every
// version the history names, before and after each change, reads back,
// and a change the history names has its version before explained by the
// change before it.
func TestHistoryKill(t *testing.T) {
	rounds := 15
	if *long {
		rounds = 400
	}
	if testing.Short() {
		rounds = 8
	}
	_, dir := open(t, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	read := map[string]bool{} // versions read back, by path and version
	for round := range rounds {
		cmd := startWorker(t, "sealkill", dir, 0, 0)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := bufio.NewScanner(out)
		for range 1 + rng.IntN(40) {
			if !lines.Scan() {
				break
			}
		}
		for spin, d := time.Now(), time.Duration(rng.IntN(2000))*time.Microsecond; time.Since(spin) < d; {
			runtime.Gosched()
		}
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		s, err := memory.Open(dir, &memory.Options{Now: feb26, History: memory.HistoryPolicy{MaxBytes: sealKillBytes}})
		require.NoError(t, err, "round %d", round)
		h, err := s.History(ctx, "", nil)
		require.NoError(t, err, "round %d", round)
		oldest := map[string]memory.Change{} // of each file
		for _, c := range h {
			oldest[c.Path] = c
		}
		for _, c := range h {
			for _, v := range []string{c.Old, c.New} {
				// A version read back after an earlier kill is read again
				// only where pruning may have cut the log: at its start.
				if v == "" || read[c.Path+" "+v] && oldest[c.Path] != c {
					continue
				}
				read[c.Path+" "+v] = true
				got, err := s.ReadVersion(ctx, c.Path, v)
				require.NoError(t, err, "round %d: %s %s %s→%s: version %s", round, c.Path, c.Op, c.Old, c.New, v)
				require.Equal(t, v, memory.Version(got))
			}
		}
		require.NoError(t, s.Close())
	}
}
