package eval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// reweighted returns t with every row weighted by replicate b's Poisson
// count of its trajectory times the row's own weight: the data set that
// FromData's replicate b evaluates, built row by row from the counter
// (each count drawn on its own, not by poissonCounts).
func reweighted(t *traj.Table, seed uint64, b int) *traj.Table {
	rk := replicateKey(seed, uint64(b))
	bt := *t
	bt.Steps = make([]traj.Step, len(t.Steps))
	for h := range t.Steps {
		s := t.Steps[h]
		w := make([]float64, s.Len())
		for j, o := range s.Traj {
			w[j] = float64(poissonCount(rk, trajKey(int(o))))
			if s.Weight != nil {
				w[j] *= s.Weight[j]
			}
		}
		s.Weight = w
		bt.Steps[h] = s
	}
	return &bt
}

// The bootstrap's counts are Poisson(1): over 200,000 draws their mean and
// variance are 1 within 4 standard errors and the share of zeros is e^-1
// within 4 standard errors; a count depends on (seed, replicate,
// trajectory) alone (poissonCounts agrees with single draws, and other
// seeds or replicates give other counts); every trajectory's count is the
// same at all its rows (reweighted).
func TestPoissonCounts(t *testing.T) {
	const n = 200_000
	rk := replicateKey(5, 7)
	sum, sq, zeros := 0.0, 0.0, 0.0
	for i := 0; i < n; i++ {
		c := float64(poissonCount(rk, trajKey(i)))
		sum += c
		sq += c * c
		if c == 0 {
			zeros++
		}
	}
	mean := sum / n
	variance := sq/n - mean*mean
	// Poisson(1): var(X) = 1, var(X^2) = 3 + ... (fourth central moment 4),
	// so the sample variance's standard error is about sqrt(2/n).
	if math.Abs(mean-1) > 4/math.Sqrt(n) || math.Abs(variance-1) > 4*math.Sqrt(3.0/n) {
		t.Errorf("mean %v, variance %v; want 1, 1", mean, variance)
	}
	p0 := math.Exp(-1)
	if z := zeros / n; math.Abs(z-p0) > 4*math.Sqrt(p0*(1-p0)/n) {
		t.Errorf("share of zeros %v, want %v", z, p0)
	}
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{15, 40, 7}, 3)
	const B = 5
	counts := poissonCounts(tb, 11, B, 3)
	other := poissonCounts(tb, 12, B, 1)
	if len(counts) != 62*B {
		t.Fatalf("%d counts, want %d", len(counts), 62*B)
	}
	differs := false
	for i := 0; i < 62; i++ {
		for b := 0; b < B; b++ {
			if want := poissonCount(replicateKey(11, uint64(b)), trajKey(i)); counts[i*B+b] != want {
				t.Fatalf("trajectory %d replicate %d: %d, single draw %d", i, b, counts[i*B+b], want)
			}
			differs = differs || other[i*B+b] != counts[i*B+b]
		}
	}
	if !differs {
		t.Errorf("seeds 11 and 12 drew the same counts")
	}
	bt := reweighted(tb, 11, 2)
	for h := 1; h < bt.H; h++ {
		s, next := &bt.Steps[h-1], &bt.Steps[h]
		for j, nx := range s.Next {
			if nx >= 0 && next.Weight[nx] != s.Weight[j] {
				t.Fatalf("step %d row %d: weight %v, next row's %v: trajectories must be drawn whole", h, j, s.Weight[j], next.Weight[nx])
			}
		}
	}
}

// The lockstep replicates are the evaluations of the reweighted tables:
// replicate b of one sweep equals EvaluatePolicy on the table reweighted
// by replicate b's counts (to 1e-12 relative), for every map, on tables
// with and without row weights; and the sweep's un-replicated values are
// EvaluatePolicy's bit for bit, with any number of workers.
func TestLockstepReplicates(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		for _, weighted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/weighted=%v", m.Kind, weighted), func(t *testing.T) {
				p := solvePolicy(t, randomTable(t, m, 3, 4, []int{30, 30, 30}, 8), m, solve.DefaultSettings, solve.Problem{Method: solve.Sitewise})
				tb := randomTable(t, m, 3, 4, []int{25, 35, 6}, 9)
				if weighted {
					tb = reweighted(tb, 99, 0) // integer row weights, some 0
				}
				const B, seed, beta = 7, 3, 0.2
				s := solve.DefaultSettings
				s.Lambda = 1e-3
				plain, err := newSolver(t, tb, m, s).EvaluatePolicy(ctx, p, beta)
				if err != nil {
					t.Fatal(err)
				}
				// The lower bound alone, and the values without it, are
				// EvaluatePolicy's bits.
				lb, err := newSolver(t, tb, m, s).Evaluate(ctx, p, beta, solve.EvaluateOptions{LowerBoundOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				nolb, err := newSolver(t, tb, m, s).Evaluate(ctx, p, beta, solve.EvaluateOptions{NoLowerBound: true})
				if err != nil {
					t.Fatal(err)
				}
				if !sameBits(lb.LowerBound, plain.LowerBound) || !sameBits(nolb.Value, plain.Value) || !slices.EqualFunc(nolb.Sites, plain.Sites, sameBits) {
					t.Errorf("lower bound alone %v, values without it %v %v; together %v, %v %v", lb.LowerBound, nolb.Value, nolb.Sites, plain.LowerBound, plain.Value, plain.Sites)
				}
				var first *solve.Evaluation
				for _, w := range []int{1, 4} {
					s.Workers = w
					got, err := newSolver(t, tb, m, s).Evaluate(ctx, p, beta, solve.EvaluateOptions{Replicates: &solve.Replicates{B: B, Counts: poissonCounts(tb, seed, B, w)}})
					if err != nil {
						t.Fatal(err)
					}
					if !sameBits(got.Value, plain.Value) || !sameBits(got.LowerBound, plain.LowerBound) || !sameBits(got.Sites[2], plain.Sites[2]) {
						t.Errorf("workers %d: values with replicates %v, %v, %v; without %v, %v, %v", w, got.Value, got.LowerBound, got.Sites[2], plain.Value, plain.LowerBound, plain.Sites[2])
					}
					if len(got.Replicates) != B {
						t.Fatalf("workers %d: %d replicates, want %d", w, len(got.Replicates), B)
					}
					if first == nil {
						first = got
						continue
					}
					for b := range got.Replicates {
						x, y := got.Replicates[b], first.Replicates[b]
						same := sameBits(x.Value, y.Value)
						for k := range x.Sites {
							same = same && sameBits(x.Sites[k], y.Sites[k])
						}
						if !same {
							t.Errorf("replicate %d: workers 4 %+v, workers 1 %+v", b, x, y)
						}
					}
				}
				for b := 0; b < B; b++ {
					s.Workers = 1
					want, err := newSolver(t, reweighted(tb, seed, b), m, s).EvaluatePolicy(ctx, p, beta)
					if err != nil {
						t.Fatal(err)
					}
					got := first.Replicates[b]
					if !near(got.Value, want.Value, 1e-12) {
						t.Errorf("replicate %d: Value %.15g, reweighted table %.15g", b, got.Value, want.Value)
					}
					for k := range want.Sites {
						if !near(got.Sites[k], want.Sites[k], 1e-12) && !(math.IsNaN(got.Sites[k]) && math.IsNaN(want.Sites[k])) {
							t.Errorf("replicate %d: Sites[%d] %.15g, reweighted table %.15g", b, k, got.Sites[k], want.Sites[k])
						}
					}
				}
			})
		}
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
			bt := reweighted(tb, 42, 3)
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
	same := sameBits(a.PolicyValue, b.PolicyValue) && sameBits(a.PessimisticValue, b.PessimisticValue) &&
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

// TestPoissonInvert checks the integer inversion against the inversion of
// the uniform v * 2^-53 on poissonCDF, at and around every bound and at
// random v.
func TestPoissonInvert(t *testing.T) {
	float := func(v uint64) uint8 {
		u := float64(v) * 0x1p-53
		k := 0
		for u >= poissonCDF[k] {
			k++
		}
		return uint8(k)
	}
	check := func(v uint64) {
		if got, want := poissonInvert(v), float(v); got != want {
			t.Fatalf("poissonInvert(%d) = %d, want %d", v, got, want)
		}
	}
	for _, b := range poissonBound {
		for d := uint64(0); d < 5; d++ {
			if b >= d && b-d < 1<<53 {
				check(b - d)
			}
			if b+d < 1<<53 {
				check(b + d)
			}
		}
	}
	check(0)
	check(1<<53 - 1)
	for i := range 1_000_000 {
		check(mix64(uint64(i)) >> 11)
	}
}
