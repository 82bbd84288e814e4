package eval

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// counter records what a Progress is told.
type counter struct {
	mu           sync.Mutex
	total, added int64
	totals       int
}

func (c *counter) SetTotal(n int64) { c.mu.Lock(); c.total = n; c.totals++; c.mu.Unlock() }
func (c *counter) Add(n int64)      { c.mu.Lock(); c.added += n; c.mu.Unlock() }

// Options.Progress is told the number of bootstrap replicate-steps
// (replicates times the horizon, FromData) and of permutation-steps
// (Delta), once, and then one count per replicate-step or
// permutation-step finished, with any number of workers; and it changes no
// result: the report with a Progress equals the one without, bit for bit.
func TestProgressCounts(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, A: 2, S: 3, StateColumns: []string{"state"}}
	tb := randomTable(t, m, 3, 3, []int{40, 30, 20}, 5)
	p := solvePolicy(t, tb, m, solve.DefaultSettings, solve.Problem{Method: solve.Sitewise})
	for _, w := range []int{1, 3} {
		s := solve.DefaultSettings
		s.Workers = w
		sv := newSolver(t, tb, m, s)
		var boot counter
		rep, err := FromData(ctx, sv, p, s, Options{Bootstrap: 17, Seed: 3, Workers: w, Progress: &boot})
		if err != nil {
			t.Fatal(err)
		}
		if boot.totals != 1 || boot.total != 17*3 || boot.added != 17*3 {
			t.Errorf("workers %d: bootstrap progress: SetTotal %d times, total %d, added %d; want 1, 51, 51", w, boot.totals, boot.total, boot.added)
		}
		plain, err := FromData(ctx, sv, p, s, Options{Bootstrap: 17, Seed: 3, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(rep.ValueCILow, plain.ValueCILow) || !sameBits(rep.Sites[0].CIHigh, plain.Sites[0].CIHigh) {
			t.Errorf("workers %d: a Progress changed the intervals", w)
		}
		var perm counter
		prob := solve.Problem{Method: solve.Cluster, Groups: [][]int{{0, 1, 2}}}
		cells, _, _, err := Delta(ctx, sv, prob, Options{Permutations: 23, Seed: 3, Workers: w, Progress: &perm})
		if err != nil {
			t.Fatal(err)
		}
		if perm.totals != 1 || perm.total != 23*3 || perm.added != 23*3 {
			t.Errorf("workers %d: permutation progress: SetTotal %d times, total %d, added %d; want 1, 69, 69", w, perm.totals, perm.total, perm.added)
		}
		for _, c := range cells {
			if math.IsNaN(c.PValue) {
				t.Errorf("workers %d: step %d has no p-value", w, c.Step)
			}
		}
	}
}
