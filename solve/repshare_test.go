package solve

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// Evaluations that share their replicates' factors (the second reading
// the first's) give the bits of evaluations that form their own, for
// each policy, whichever is evaluated first; other replicates or another
// ridge parameter form their own.
func TestShareReplicateFactors(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{20, 30, 10}, 5)
	fresh := func() *Stats {
		st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	const B = 7
	counts := func(seed int) []uint8 {
		c := make([]uint8, 60*B)
		for i := range c {
			c[i] = uint8((i*7919 + seed) % 3)
		}
		return c
	}
	st := fresh()
	var pols []*Policy
	for _, meth := range []Method{Sitewise, Behaviour, Pooled} {
		p, err := NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: meth})
		if err != nil {
			t.Fatal(err)
		}
		pols = append(pols, p)
	}
	lambda2 := DefaultSettings
	lambda2.Lambda = 2
	eval := func(st *Stats, p *Policy, s Settings, c []uint8) *Evaluation {
		ev, err := NewSolver(st, s).Evaluate(ctx, p, 0.3, EvaluateOptions{Replicates: &Replicates{B: B, Counts: c}})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	flat := func(ev *Evaluation) []uint64 {
		var out []uint64
		for _, r := range ev.Replicates {
			out = append(out, math.Float64bits(r.Value))
			for _, x := range r.Sites {
				out = append(out, math.Float64bits(x))
			}
		}
		return out
	}
	shared := fresh()
	shared.ShareReplicateFactors()
	for i, c := range []struct {
		p *Policy
		s Settings
		c []uint8
	}{{pols[0], DefaultSettings, counts(0)}, {pols[1], DefaultSettings, counts(0)}, {pols[2], DefaultSettings, counts(0)},
		{pols[1], lambda2, counts(0)}, {pols[0], DefaultSettings, counts(1)}} {
		got, want := eval(shared, c.p, c.s, c.c), eval(fresh(), c.p, c.s, c.c)
		if !slices.Equal(flat(got), flat(want)) {
			t.Errorf("evaluation %d: shared factors give other replicates than the evaluation's own", i)
		}
	}
	if shared.repShare.steps[0] == nil || shared.repShare.off {
		t.Errorf("no factors were shared")
	}
}
