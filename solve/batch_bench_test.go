package solve

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkLockstepValues measures one values sweep of a cross-fit's
// lockstep runs (8 values of c, 5 folds left out in turn: 40 passes) over
// the rows of one step.
func BenchmarkLockstepValues(b *testing.B) {
	ctx := context.Background()
	tb, m := simTable(b, 2000)
	const K = 5
	of := make([]int32, ntrajOf(tb))
	for i := range of {
		of[i] = int32(i % K)
	}
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		b.Fatal(err)
	}
	var runs []RunSpec
	for _, c := range []float64{5e-4, 5e-5, 5e-6, 5e-7, 5e-8, 5e-9, 5e-10, 0} {
		for f := 0; f < K; f++ {
			s := DefaultSettings
			s.C = c
			runs = append(runs, RunSpec{Holdout: f, Problem: Problem{Method: Sitewise}, Settings: s})
		}
	}
	ps, err := SolveLockstep(ctx, st, Folds{Of: of, K: K}, runs, 1)
	if err != nil {
		b.Fatal(err)
	}
	const h = 5
	inRun := make([]bool, len(tb.Sites))
	for k := range inRun {
		inRun[k] = true
	}
	var specs []valSpec
	for i, p := range ps {
		specs = append(specs, valSpec{inRun: inRun, kind: featurewise, coef: &p.Runs[0].Steps[h-1], beta: p.Runs[0].Beta,
			skip: &foldSkip{of: of, fold: int32(runs[i].Holdout)}})
	}
	sv := &Solver{st: st, settings: Settings{Workers: 1}}
	step := &tb.Steps[h-1]
	for b.Loop() {
		if _, err := sv.values(ctx, step, h, specs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(step.Len()), "ns/row")
}

// BenchmarkDecideCandidates measures the decisions of a fold's candidates
// at every row (8 values of c and behaviour cloning, [ActAllMany]).
func BenchmarkDecideCandidates(b *testing.B) {
	ctx := context.Background()
	tb, m := simTable(b, 2000)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		b.Fatal(err)
	}
	var ps []*Policy
	for _, c := range []float64{5e-4, 5e-5, 5e-6, 5e-7, 5e-8, 5e-9, 5e-10, 0} {
		s := DefaultSettings
		s.C = c
		p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, p)
	}
	p, err := NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: Behaviour})
	if err != nil {
		b.Fatal(err)
	}
	ps = append(ps, p)
	for b.Loop() {
		if _, _, err := ActAllMany(ctx, ps, tb, 1, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(tb.Rows), "ns/row")
}

// BenchmarkLinearBatchSize measures, for n featurewise passes at every
// row of one step, the largest Qhat of each pass from a [linearBatch]
// (batch) and from [linearBest] called once per pass (each), the rows'
// features prepared once. The two alternate over the step's rows within
// each iteration, so that a loaded machine slows both alike; batch/each
// is the ratio of their times, and [minBatch] where it falls below 1.
func BenchmarkLinearBatchSize(b *testing.B) {
	ctx := context.Background()
	tb, m := simTable(b, 500)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		b.Fatal(err)
	}
	const h = 5
	var coefs [][]float64
	for _, c := range []float64{5e-4, 5e-5, 5e-6, 5e-7, 5e-8, 5e-9, 5e-10, 0} {
		s := DefaultSettings
		s.C = c
		p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Pooled})
		if err != nil {
			b.Fatal(err)
		}
		coefs = append(coefs, p.Runs[0].Steps[h-1].penalized(p.Runs[0].Beta))
	}
	step := &tb.Steps[h-1]
	top := float64(tb.H - h + 1)
	for _, n := range []int{2, 3, 4, 5, 6, 8} {
		in := make([]int, n)
		for i := range in {
			in[i] = i
		}
		lb := batchOf(n, in, coefs[:n], m.Dim())
		best, q := make([]float64, n), make([]float64, tb.A)
		var row phiRow
		sum := 0.0
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var batch, each time.Duration
			for b.Loop() {
				t0 := time.Now()
				for j := range step.Len() {
					row.prepare(&m, step.State[j*tb.W:(j+1)*tb.W])
					lb.bests(&row.b, best, -1)
					for _, x := range best {
						sum += clip(x, top)
					}
				}
				t1 := time.Now()
				for j := range step.Len() {
					row.prepare(&m, step.State[j*tb.W:(j+1)*tb.W])
					for _, c := range coefs[:n] {
						sum += linearBest(&row, c, top, q)
					}
				}
				batch += t1.Sub(t0)
				each += time.Since(t1)
			}
			rows := float64(b.N) * float64(step.Len())
			b.ReportMetric(float64(batch.Nanoseconds())/rows, "batch-ns/row")
			b.ReportMetric(float64(each.Nanoseconds())/rows, "each-ns/row")
			b.ReportMetric(batch.Seconds()/each.Seconds(), "batch/each")
		})
		if sum != sum {
			b.Log("NaN")
		}
	}
}
