package solve

import (
	"context"
	"math"
	"math/rand/v2"
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

// A replicate's factor solves to the bits of NewFactor's, for blocks of
// size 1 to 5, and refuses what NewFactor refuses.
func TestRepFactorMatchesFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range []int{1, 2, 3, 5} {
		m := features.Map{Kind: features.ActionBlock, A: 4, P: p}
		l := NewLayout(m.Blocks())
		for trial := 0; trial < 200; trial++ {
			// A Gram of a few rows, each in one action's block.
			g := Gram{Packed: make([]float64, l.Size())}
			for row := 0; row < 1+rng.IntN(6); row++ {
				a := rng.IntN(m.A)
				x := make([]float64, p)
				for i := range x {
					x[i] = rng.Float64()
				}
				for r := 0; r < p; r++ {
					for c := 0; c <= r; c++ {
						g.Packed[l.Off[a]+tri(r, c)] += x[r] * x[c]
					}
				}
				g.N++
			}
			lambda := []float64{1, 1e-3, 7}[trial%3]
			want, err := NewFactor(&l, []*Gram{&g}, lambda, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := newRepFactor(&l, &g, lambda)
			if err != nil {
				t.Fatal(err)
			}
			rhs := make([]float64, m.Dim())
			for i := range rhs {
				rhs[i] = 10*rng.Float64() - 3
			}
			a, b := make([]float64, m.Dim()), make([]float64, m.Dim())
			want.SolveTo(a, rhs)
			got.SolveTo(b, rhs)
			if !bitsEqual(a, b) {
				t.Fatalf("p=%d trial %d: %v, NewFactor's %v", p, trial, b, a)
			}
		}
		bad := Gram{Packed: make([]float64, l.Size())}
		for i := range bad.Packed {
			bad.Packed[i] = -5
		}
		_, e1 := NewFactor(&l, []*Gram{&bad}, 1, false)
		_, e2 := newRepFactor(&l, &bad, 1)
		if e1 == nil || e2 == nil || e1.Error() != e2.Error() {
			t.Errorf("p=%d: errors %v and %v", p, e2, e1)
		}
	}
}
