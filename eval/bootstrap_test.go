package eval

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Resample draws trajectories within each site: every site keeps its
// trajectory count, a trajectory's weight is the same at every step, the
// input table is untouched, and the draw depends on (seed, replicate) only.
func TestResample(t *testing.T) {
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{15, 40, 7}, 3)
	for _, tc := range []struct {
		seed, rep uint64
	}{{1, 0}, {1, 1}, {2, 0}, {99, 12345}} {
		t.Run(fmt.Sprintf("seed=%d/rep=%d", tc.seed, tc.rep), func(t *testing.T) {
			bt := Resample(tb, tc.seed, tc.rep)
			for h := range tb.Steps {
				if tb.Steps[h].Weight != nil {
					t.Fatalf("step %d: Resample set weights on its input", h+1)
				}
			}
			s1 := &bt.Steps[0]
			for k := range tb.Sites {
				sum := 0.0
				for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
					if w := s1.Weight[j]; w < 0 || w != math.Trunc(w) {
						t.Fatalf("site %d row %d: weight %v is not a count", k, j, w)
					}
					sum += s1.Weight[j]
				}
				if sum != float64(tb.Trajectories[k]) || bt.Trajectories[k] != tb.Trajectories[k] {
					t.Errorf("site %d: step-1 weights sum to %v (Trajectories %d), want N_k = %d", k, sum, bt.Trajectories[k], tb.Trajectories[k])
				}
			}
			for h := 1; h < bt.H; h++ {
				s, next := &bt.Steps[h-1], &bt.Steps[h]
				for j, nx := range s.Next {
					if nx >= 0 && next.Weight[nx] != s.Weight[j] {
						t.Fatalf("step %d row %d: weight %v, next row's %v: trajectories must be drawn whole", h, j, s.Weight[j], next.Weight[nx])
					}
				}
			}
			again := Resample(tb, tc.seed, tc.rep)
			other := Resample(tb, tc.seed, tc.rep+1)
			differs := false
			for h := range bt.Steps {
				for j, w := range bt.Steps[h].Weight {
					if again.Steps[h].Weight[j] != w {
						t.Fatalf("step %d row %d: same (seed, replicate) gave weights %v and %v", h+1, j, w, again.Steps[h].Weight[j])
					}
					differs = differs || other.Steps[h].Weight[j] != w
				}
			}
			if !differs {
				t.Errorf("replicates %d and %d drew the same weights", tc.rep, tc.rep+1)
			}
		})
	}
}

// expand materialises a weighted table: a step-1 row of weight w becomes w
// copies of its trajectory (new trajectory ids), weight-0 rows vanish.
func expand(t testing.TB, bt *traj.Table, m features.Map) *traj.Table {
	t.Helper()
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: bt.A, Horizon: bt.H})
	W := bt.W
	for k, site := range bt.Sites {
		c := &traj.Chunk{Src: traj.Origin{File: site}, W: W}
		id := int64(0)
		s1 := &bt.Steps[0]
		for j0 := int(s1.SiteStart[k]); j0 < int(s1.SiteStart[k+1]); j0++ {
			for range int(s1.Weight[j0]) {
				for h, j := 1, j0; j >= 0; h++ {
					s := &bt.Steps[h-1]
					c.SiteStr = append(c.SiteStr, site)
					c.TrajInt = append(c.TrajInt, id)
					c.Step = append(c.Step, int64(h))
					c.ActionInt = append(c.ActionInt, int64(s.Action[j]))
					c.Reward = append(c.Reward, s.Reward[j])
					c.State = append(c.State, s.State[j*W:(j+1)*W]...)
					j = int(s.Next[j])
				}
				id++
			}
		}
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A bootstrap replicate is the evaluation of the resampled data set: the
// weighted table evaluates exactly as the table with every drawn
// trajectory written out as often as it was drawn (means over initial
// states count each drawn trajectory).
func TestWeightedEvaluationIsExpanded(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		t.Run(m.Kind.String(), func(t *testing.T) {
			p := solvePolicy(t, randomTable(t, m, 2, 4, []int{30, 30}, 8), m, solve.DefaultSettings, solve.Problem{Method: solve.Sitewise})
			tb := randomTable(t, m, 2, 4, []int{25, 35}, 9)
			bt := Resample(tb, 42, 3)
			ex := expand(t, bt, m)
			const beta = 0.2
			got, err := newSolver(t, bt, m, solve.DefaultSettings).EvaluatePolicy(ctx, p, beta)
			if err != nil {
				t.Fatal(err)
			}
			want, err := newSolver(t, ex, m, solve.DefaultSettings).EvaluatePolicy(ctx, p, beta)
			if err != nil {
				t.Fatal(err)
			}
			pi := actOf(p)
			if ref := denseFQE(bt, &m, []int{0, 1}, 1, 0, pi); !near(want.Value, ref, 1e-10) {
				t.Fatalf("expanded table: Value %.15g, dense reference on the weighted table %.15g", want.Value, ref)
			}
			tests := []struct {
				name      string
				got, want float64
			}{
				{"Value", got.Value, want.Value},
				{"LowerBound", got.LowerBound, want.LowerBound},
				{"Sites[0]", got.Sites[0], want.Sites[0]},
				{"Sites[1]", got.Sites[1], want.Sites[1]},
			}
			for _, tc := range tests {
				if !near(tc.got, tc.want, 1e-10) {
					t.Errorf("%s: weighted %.15g, expanded %.15g", tc.name, tc.got, tc.want)
				}
			}
		})
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// The bootstrap interval brackets the point estimate, and the report is
// bitwise the same for any number of workers.
func TestBootstrap(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, A: 2, S: 3, StateColumns: []string{"state"}}
	tb := randomTable(t, m, 2, 3, []int{80, 60}, 12)
	p := solvePolicy(t, randomTable(t, m, 2, 3, []int{50, 50}, 13), m, solve.DefaultSettings, solve.Problem{Method: solve.Sitewise})
	var reps []*Report
	for _, w := range []int{1, 4} {
		s := solve.DefaultSettings
		s.Workers = w
		sv := newSolver(t, tb, m, s)
		rep, err := FromData(ctx, sv, p, s, Options{Bootstrap: 199, Seed: 77, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	rep := reps[0]
	if rep.Level != 0.95 || rep.Bootstrap != 199 || rep.Seed != 77 {
		t.Errorf("report settings: level %v, bootstrap %d, seed %d; want 0.95, 199, 77", rep.Level, rep.Bootstrap, rep.Seed)
	}
	if !(rep.ValueCILow <= rep.PolicyValue && rep.PolicyValue <= rep.ValueCIHigh && rep.ValueCILow < rep.ValueCIHigh) {
		t.Errorf("value interval [%v, %v] does not bracket the estimate %v", rep.ValueCILow, rep.ValueCIHigh, rep.PolicyValue)
	}
	for _, sv := range rep.Sites {
		if !(sv.CILow <= sv.Value && sv.Value <= sv.CIHigh && sv.CILow < sv.CIHigh) {
			t.Errorf("site %s: interval [%v, %v] does not bracket %v", sv.Site, sv.CILow, sv.CIHigh, sv.Value)
		}
	}
	a, b := reps[0], reps[1]
	same := sameBits(a.PolicyValue, b.PolicyValue) && sameBits(a.LowerBound, b.LowerBound) &&
		sameBits(a.ValueCILow, b.ValueCILow) && sameBits(a.ValueCIHigh, b.ValueCIHigh) &&
		sameBits(a.Beta, b.Beta) && a.WorstSite == b.WorstSite && len(a.Sites) == len(b.Sites)
	for k := range a.Sites {
		x, y := a.Sites[k], b.Sites[k]
		same = same && x.Site == y.Site && sameBits(x.Value, y.Value) && sameBits(x.CILow, y.CILow) && sameBits(x.CIHigh, y.CIHigh) &&
			sameBits(x.Bias, y.Bias) && sameBits(x.BoundsCILow, y.BoundsCILow) && sameBits(x.BoundsCIHigh, y.BoundsCIHigh)
		o, q := a.Observed[k], b.Observed[k]
		same = same && sameBits(o.CILow, q.CILow) && sameBits(o.CIHigh, q.CIHigh)
	}
	same = same && sameBits(a.ValueBias, b.ValueBias) && sameBits(a.BoundsCILow, b.BoundsCILow) && sameBits(a.BoundsCIHigh, b.BoundsCIHigh)
	if !same {
		t.Errorf("workers 1 and 4 differ:\n%+v\n%+v", *a, *b)
	}
}

// percentileCI takes type-7 quantiles and ignores NaN.
func TestPercentileCI(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		x              []float64
		level          float64
		wantLo, wantHi float64
	}{
		{[]float64{1, 2, 3, 4, 5}, 0.5, 2, 4},
		{[]float64{5, 1, 4, 2, 3}, 0.5, 2, 4},
		{[]float64{0, 10}, 0.9, 0.5, 9.5},
		{[]float64{3, nan, 1, 2}, 1, 1, 3},
		{[]float64{7}, 0.95, 7, 7},
	}
	for _, tc := range tests {
		lo, hi := percentileCI(tc.x, tc.level)
		if !near(lo, tc.wantLo, 1e-14) || !near(hi, tc.wantHi, 1e-14) {
			t.Errorf("percentileCI(%v, %v) = [%v, %v], want [%v, %v]", tc.x, tc.level, lo, hi, tc.wantLo, tc.wantHi)
		}
	}
	if lo, hi := percentileCI([]float64{nan, nan}, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("all NaN: got [%v, %v], want NaN", lo, hi)
	}
}
