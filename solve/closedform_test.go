package solve

import (
	"context"
	"math"
	"testing"

	"github.com/grmdp/grmdp/sim"
)

// On the hard instance (indicator features, one-hot phi) Lambda is
// diagonal with the feature counts plus lambda, so at every step
// nu_i = sum of the targets r + Vhat_{h+1}(s') over rows with feature i,
// divided by (count_i + lambda), and s_i = 1/sqrt(count_i + lambda): the
// closed form, from the counts, that Algorithm 1 must reproduce.
func TestHardInstanceClosedForm(t *testing.T) {
	m, err := sim.New("convergence", sim.Params{Trajectories: []int{30, 45, 60, 90}, Horizon: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(11)
	if err != nil {
		t.Fatal(err)
	}
	fm := m.Map()
	st, err := NewStats(context.Background(), tb, fm, fm.Blocks(), 2)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings
	s.Fallback = FallbackLowest
	p, err := NewSolver(st, s).Solve(context.Background(), Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	d, K, H := fm.Dim(), len(tb.Sites), tb.H
	// Vhat at each step's rows, recomputed from the closed form.
	var vnext []float64
	for h := H; h >= 1; h-- {
		step := &tb.Steps[h-1]
		count := make([][]float64, K)
		sum := make([][]float64, K)
		for k := range count {
			count[k], sum[k] = make([]float64, d), make([]float64, d)
		}
		for k := 0; k < K; k++ {
			for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
				i := featureIndex(int(step.State[j]), int(step.Action[j]), fm.A)
				y := step.Reward[j]
				if nx := step.Next[j]; nx >= 0 && vnext != nil {
					y += vnext[nx]
				}
				count[k][i]++
				sum[k][i] += y
			}
		}
		c := p.Runs[0].Steps[h-1]
		for i := 0; i < d; i++ {
			w, mm := math.Inf(1), math.Inf(-1)
			for k := 0; k < K; k++ {
				w = math.Min(w, sum[k][i]/(count[k][i]+1))
				mm = math.Max(mm, 1/math.Sqrt(count[k][i]+1))
			}
			if !near(c.W[i], w, 1e-12) || !near(c.M[i], mm, 1e-12) {
				t.Fatalf("step %d feature %d: got w=%v m=%v, closed form w=%v m=%v", h, i, c.W[i], c.M[i], w, mm)
			}
		}
		v := make([]float64, step.Len())
		for j := range v {
			best := 0.0
			for a := 0; a < fm.A; a++ {
				i := featureIndex(int(step.State[j]), a, fm.A)
				best = math.Max(best, math.Max(math.Min(c.W[i]-p.Beta*c.M[i], float64(H-h+1)), 0))
			}
			v[j] = best
		}
		vnext = v
	}
}

// featureIndex is the indicator map's one-hot coordinate.
func featureIndex(state, a, A int) int {
	switch state {
	case 0:
		return a
	case 1:
		return A
	}
	return A + 1
}
