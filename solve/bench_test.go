package solve

import (
	"context"
	"fmt"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/traj"
)

// benchTable is an action-block data set of sites x traj x H rows (8 sites,
// H = 20, A = 10, p = 3: the shape of the performance issue's dataset (a),
// smaller).
func benchTable(b *testing.B, traj int) (*traj.Table, features.Map) {
	b.Helper()
	m := features.Map{Kind: features.ActionBlock, A: 10, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	per := make([]int, 8)
	for i := range per {
		per[i] = traj
	}
	return randomTable(b, m, 8, 20, per, 1), m
}

// simTable is a table drawn from the benchmark scenario (package sim) with
// the shape of dataset (a), smaller: 8 sites of traj trajectories each, H
// = 20, A = 10, p = 3 (action-block map), seed 1.
func simTable(b testing.TB, traj int) (*traj.Table, features.Map) {
	b.Helper()
	per := make([]int, 8)
	for i := range per {
		per[i] = traj
	}
	model, err := sim.New(sim.ScenarioBenchmark, sim.Params{Sites: 8, Trajectories: per, Horizon: 20, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	t, err := model.Sample(1)
	if err != nil {
		b.Fatal(err)
	}
	return t, model.Map()
}

// BenchmarkStats measures the per-(site, step) Gram statistics.
func BenchmarkStats(b *testing.B) {
	t, m := benchTable(b, 2000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := NewStats(context.Background(), t, m, m.Blocks(), 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(t.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkBackward measures one whole backward pass of each method family
// (factorisations cached, as in compare and the penalty path).
func BenchmarkBackward(b *testing.B) {
	t, m := benchTable(b, 2000)
	st, err := NewStats(context.Background(), t, m, m.Blocks(), 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []penalty{featurewise, pevi} {
		b.Run(map[penalty]string{featurewise: "algorithm1", pevi: "pevi"}[kind], func(b *testing.B) {
			sv := NewSolver(st, DefaultSettings)
			groups := singletons(len(t.Sites))
			if kind == pevi {
				groups = [][]int{{0, 1, 2, 3, 4, 5, 6, 7}}
			}
			for b.Loop() {
				if _, err := sv.pass(context.Background(), passSpec{groups: groups, kind: kind, beta: 0.5}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(t.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkAct measures apply's hot path: Qhat for every action and the
// recommended action, per row.
func BenchmarkAct(b *testing.B) {
	t, m := benchTable(b, 500)
	st, err := NewStats(context.Background(), t, m, m.Blocks(), 0)
	if err != nil {
		b.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	for _, method := range []Method{Sitewise, PEVIPooled, PEVIAvg} {
		p, err := sv.Solve(context.Background(), Problem{Method: method})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(method), func(b *testing.B) {
			q := make([]float64, m.A)
			s := &t.Steps[0]
			n := 0
			for b.Loop() {
				j := n % s.Len()
				p.Act(1, s.State[j*t.W:(j+1)*t.W], q)
				n++
			}
		})
	}
}

func BenchmarkDotAll(b *testing.B) {
	for _, m := range []features.Map{
		{Kind: features.ActionBlock, A: 10, P: 3},
		{Kind: features.Tabular, A: 10, S: 10000},
	} {
		b.Run(fmt.Sprint(m.Kind), func(b *testing.B) {
			coef := make([]float64, m.Dim())
			for i := range coef {
				coef[i] = float64(i % 7)
			}
			state := []float64{0.2, 0.5, 0.3}[:m.Width()]
			if m.Kind == features.Tabular {
				state = []float64{4321}
			}
			q := make([]float64, m.A)
			for b.Loop() {
				m.DotAll(q, state, coef)
			}
		})
	}
}

// BenchmarkKernels measures the per-row action-block kernels of the value
// sweeps: every action's phi^T w, and PEVI's maximum (normalising the
// state included).
func BenchmarkKernels(b *testing.B) {
	m := features.Map{Kind: features.ActionBlock, A: 10, P: 3}
	l := NewLayout(m.Blocks())
	w := make([]float64, m.Dim())
	for i := range w {
		w[i] = float64(i%7) * 0.3
	}
	linv := make([]float64, l.Size())
	for i := range linv {
		linv[i] = 1e-5 * float64(1+i%3)
	}
	states := [][]float64{{0.2, 0.5, 0.3}, {0.1, 0.1, 0.8}, {0.6, 0.3, 0.1}}
	q := make([]float64, m.A)
	b.Run("dots", func(b *testing.B) {
		var r blockRow
		r.init(&m, states[0])
		for b.Loop() {
			r.dots(w, q)
		}
	})
	b.Run("peviBest", func(b *testing.B) {
		var r blockRow
		i := 0
		for b.Loop() {
			r.init(&m, states[i%3])
			r.peviBest(&l, w, linv, 0.5, 20, q)
			i++
		}
	})
}

// BenchmarkReplicates measures an evaluation with 100 bootstrap replicates
// in its sweep (counts of 1, the worst case for skipping), reported per
// (row, replicate).
func BenchmarkReplicates(b *testing.B) {
	t, m := benchTable(b, 1000)
	st, err := NewStats(context.Background(), t, m, m.Blocks(), 0)
	if err != nil {
		b.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	p, err := sv.Solve(context.Background(), Problem{Method: Sitewise})
	if err != nil {
		b.Fatal(err)
	}
	const B = 100
	counts := make([]uint8, 8*1000*B)
	for i := range counts {
		// 0, 1 or 2 as 3/8, 3/8, 1/4: near Poisson(1)'s shares.
		counts[i] = []uint8{0, 0, 0, 1, 1, 1, 2, 2}[(uint64(i)*0x9e3779b97f4a7c15)>>61]
	}
	for b.Loop() {
		if _, err := sv.Evaluate(context.Background(), p, 0.5, EvaluateOptions{Replicates: &Replicates{B: B, Counts: counts}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(t.Rows)/B, "ns/row-replicate")
}

// BenchmarkEvaluate measures an evaluation without a bootstrap (eval's
// lockstep sweep): the site-wise policy's passes take the followed
// action's Qhat, the pevi-avg policy's decide lazily.
func BenchmarkEvaluate(b *testing.B) {
	t, m := simTable(b, 2000)
	st, err := NewStats(context.Background(), t, m, m.Blocks(), 0)
	if err != nil {
		b.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	for _, method := range []Method{Sitewise, PEVIAvg} {
		p, err := sv.Solve(context.Background(), Problem{Method: method})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(method), func(b *testing.B) {
			for b.Loop() {
				if _, err := sv.Evaluate(context.Background(), p, 0.5, EvaluateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(t.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkDecide measures the decisions of apply (a [Decider] per
// policy) and of compare's sample ([ActAllMany] of the solved methods'
// policies) on every row.
func BenchmarkDecide(b *testing.B) {
	t, m := simTable(b, 500)
	st, err := NewStats(context.Background(), t, m, m.Blocks(), 0)
	if err != nil {
		b.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	var ps []*Policy
	for _, method := range []Method{Sitewise, Pooled, PEVIPooled, PEVIAvg, PEVIMin} {
		p, err := sv.Solve(context.Background(), Problem{Method: method})
		if err != nil {
			b.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, p := range ps[2:] {
		b.Run("decider/"+string(p.Method), func(b *testing.B) {
			d := p.NewDecider()
			for b.Loop() {
				for h := 1; h <= t.H; h++ {
					s := &t.Steps[h-1]
					for j := range s.Len() {
						d.Act(h, s.State[j*t.W:(j+1)*t.W])
					}
				}
			}
			b.ReportMetric(float64(t.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	b.Run("actall", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ActAllMany(context.Background(), ps, t, 1, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(t.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkValues measures the value sweeps of the backward pass alone
// (Vhat_h = max_a Qhat_h at every row of every step, one worker): of the
// pooled policy (Algorithm 1's Qhat) and of the pevi-pooled policy.
func BenchmarkValues(b *testing.B) {
	t, m := simTable(b, 2000)
	st, err := NewStats(context.Background(), t, m, m.Blocks(), 0)
	if err != nil {
		b.Fatal(err)
	}
	sv := NewSolver(st, Settings{Lambda: 1, C: 5e-4, Xi: 0.05, Fallback: FallbackBehaviour, Workers: 1})
	all := make([]bool, len(t.Sites))
	for k := range all {
		all[k] = true
	}
	for _, method := range []Method{Pooled, PEVIPooled} {
		p, err := sv.Solve(context.Background(), Problem{Method: method})
		if err != nil {
			b.Fatal(err)
		}
		run := &p.Runs[0]
		b.Run(string(method), func(b *testing.B) {
			for b.Loop() {
				for h := 1; h <= t.H; h++ {
					spec := valSpec{inRun: all, kind: p.penalty(), coef: &run.Steps[h-1], beta: run.Beta}
					if _, err := sv.values(context.Background(), &t.Steps[h-1], h, []valSpec{spec}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(t.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
