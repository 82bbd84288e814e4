package solve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// randomTable draws a multi-site dataset for map m: K sites, horizon H,
// episodes that may end early, uniform actions.
func randomTable(t testing.TB, m features.Map, K, H int, perSite []int, seed uint64) *traj.Table {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	spec := traj.StateSpec{Columns: m.StateColumns}
	switch m.Kind {
	case features.Tabular:
		spec.Integer, spec.Max = true, m.S
	case features.Indicator:
		spec.Integer, spec.Max = true, 3
	case features.ActionBlock:
		spec.NonzeroSum = true
	case features.Precomputed:
		spec.List, spec.D = true, m.D
	}
	b := traj.NewBuilder(traj.Options{State: spec, Actions: m.A, Horizon: H})
	for k := 0; k < K; k++ {
		c := &traj.Chunk{Src: traj.Origin{File: fmt.Sprintf("site%d", k)}, W: m.Width()}
		for tr := 0; tr < perSite[k]; tr++ {
			length := H
			if rng.IntN(4) == 0 {
				length = 1 + rng.IntN(H)
			}
			for h := 1; h <= length; h++ {
				c.SiteStr = append(c.SiteStr, fmt.Sprintf("s%d", k))
				c.TrajInt = append(c.TrajInt, int64(tr))
				c.Step = append(c.Step, int64(h))
				c.ActionInt = append(c.ActionInt, int64(rng.IntN(m.A)))
				c.Reward = append(c.Reward, rng.Float64())
				switch m.Kind {
				case features.Tabular:
					c.State = append(c.State, float64(rng.IntN(m.S)))
				case features.Indicator:
					c.State = append(c.State, float64(rng.IntN(3)))
				case features.ActionBlock:
					for j := 0; j < m.P; j++ {
						v := rng.Float64()
						if rng.IntN(5) == 0 {
							v = 0
						}
						if j == 0 && v == 0 {
							v = 0.5
						}
						c.State = append(c.State, v)
					}
				case features.Precomputed:
					// Two blocks of coordinates: {0..D/2-1} and the rest.
					for a := 0; a < m.A; a++ {
						row := make([]float64, m.D)
						lo, hi := 0, m.D/2
						if rng.IntN(2) == 0 {
							lo, hi = m.D/2, m.D
						}
						s := 0.0
						for j := lo; j < hi; j++ {
							row[j] = rng.Float64()
							s += row[j]
						}
						for j := lo; j < hi; j++ {
							row[j] /= s
						}
						c.State = append(c.State, row...)
					}
				}
			}
		}
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// densePhi returns phi(s,a) as a dense vector.
func densePhi(m *features.Map, state []float64, a int) []float64 {
	d := m.Dim()
	out := make([]float64, d)
	switch m.Kind {
	case features.Tabular:
		out[int(state[0])*m.A+a] = 1
	case features.Indicator:
		switch int(state[0]) {
		case 0:
			out[a] = 1
		case 1:
			out[m.A] = 1
		case 2:
			out[m.A+1] = 1
		}
	case features.ActionBlock:
		s := 0.0
		for _, v := range state {
			s += v
		}
		for j, v := range state {
			out[a*m.P+j] = v / s
		}
	case features.Precomputed:
		copy(out, state[a*m.D:(a+1)*m.D])
	}
	return out
}

// denseAlgorithm1 is a straightforward dense implementation of Algorithm 1
// (and PEVI for a single group) over explicit trajectories.
type denseResult struct {
	w, m, nu [][]float64 // per step
	linv     []*mat.Dense
}

func denseSolve(t *traj.Table, m *features.Map, groups [][]int, lambda, beta float64, peviMode bool) denseResult {
	H, d := t.H, m.Dim()
	res := denseResult{w: make([][]float64, H), m: make([][]float64, H), nu: make([][]float64, H), linv: make([]*mat.Dense, H)}
	// V at rows of step h+1.
	var vnext []float64
	for h := H; h >= 1; h-- {
		st := &t.Steps[h-1]
		w := make([]float64, d)
		mm := make([]float64, d)
		for i := range w {
			w[i] = math.Inf(1)
			mm[i] = math.Inf(-1)
		}
		var lastInv *mat.Dense
		var lastNu []float64
		for _, g := range groups {
			L := mat.NewDense(d, d, nil)
			for i := 0; i < d; i++ {
				L.Set(i, i, lambda)
			}
			b := mat.NewVecDense(d, nil)
			for j := 0; j < st.Len(); j++ {
				in := false
				for _, k := range g {
					if st.Site(j) == k {
						in = true
					}
				}
				if !in {
					continue
				}
				phi := densePhi(m, st.State[j*t.W:(j+1)*t.W], int(st.Action[j]))
				y := st.Reward[j]
				if st.Next[j] >= 0 && vnext != nil {
					y += vnext[st.Next[j]]
				}
				for x := 0; x < d; x++ {
					b.SetVec(x, b.AtVec(x)+phi[x]*y)
					for z := 0; z < d; z++ {
						L.Set(x, z, L.At(x, z)+phi[x]*phi[z])
					}
				}
			}
			var inv mat.Dense
			if err := inv.Inverse(L); err != nil {
				panic(err)
			}
			var nu mat.VecDense
			nu.MulVec(&inv, b)
			for i := 0; i < d; i++ {
				w[i] = math.Min(w[i], nu.AtVec(i))
				mm[i] = math.Max(mm[i], math.Sqrt(inv.At(i, i)))
			}
			lastInv = &inv
			lastNu = nu.RawVector().Data
		}
		res.w[h-1], res.m[h-1], res.nu[h-1], res.linv[h-1] = w, mm, lastNu, lastInv
		// V_h at rows of step h.
		v := make([]float64, st.Len())
		for j := 0; j < st.Len(); j++ {
			best := 0.0
			for a := 0; a < t.A; a++ {
				phi := densePhi(m, st.State[j*t.W:(j+1)*t.W], a)
				q := 0.0
				if peviMode {
					pv := mat.NewVecDense(d, phi)
					var tmp mat.VecDense
					tmp.MulVec(lastInv, pv)
					q = mat.Dot(mat.NewVecDense(d, lastNu), pv) - beta*math.Sqrt(mat.Dot(pv, &tmp))
				} else {
					for i := 0; i < d; i++ {
						q += phi[i] * w[i]
					}
					pen := 0.0
					for i := 0; i < d; i++ {
						pen += phi[i] * mm[i]
					}
					q -= beta * pen
				}
				q = math.Max(math.Min(q, float64(H-h+1)), 0)
				best = math.Max(best, q)
			}
			v[j] = best
		}
		vnext = v
	}
	return res
}

func testMaps() []features.Map {
	return []features.Map{
		{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}},
		{Kind: features.ActionBlock, A: 4, P: 3, StateColumns: []string{"s1", "s2", "s3"}},
		{Kind: features.Indicator, A: 4, StateColumns: []string{"state"}},
		{Kind: features.Precomputed, A: 2, D: 6, StateColumns: []string{"phi"}},
	}
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestAlgorithm1MatchesDense(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		for _, beta := range []float64{0, 0.05, 0.5} {
			t.Run(fmt.Sprintf("%v/beta=%g", m.Kind, beta), func(t *testing.T) {
				tb := randomTable(t, m, 3, 4, []int{30, 20, 45}, 11)
				st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
				if err != nil {
					t.Fatal(err)
				}
				s := DefaultSettings
				s.Beta, s.BetaSet = beta, true
				sv := NewSolver(st, s)
				for _, tc := range []struct {
					method Method
					groups [][]int
				}{
					{Sitewise, [][]int{{0}, {1}, {2}}},
					{Pooled, [][]int{{0, 1, 2}}},
					{Cluster, [][]int{{0, 2}, {1}}},
				} {
					p, err := sv.Solve(ctx, Problem{Method: tc.method, Groups: tc.groups})
					if err != nil {
						t.Fatal(err)
					}
					ref := denseSolve(tb, &m, tc.groups, 1, beta, false)
					for h := 1; h <= tb.H; h++ {
						c := p.Runs[0].Steps[h-1]
						for i := 0; i < m.Dim(); i++ {
							if !near(c.W[i], ref.w[h-1][i], 1e-10) || !near(c.M[i], ref.m[h-1][i], 1e-10) {
								t.Fatalf("%s: step %d coord %d: got w=%v m=%v, want w=%v m=%v", tc.method, h, i, c.W[i], c.M[i], ref.w[h-1][i], ref.m[h-1][i])
							}
						}
					}
				}
				// PEVI pooled against the dense reference.
				p, err := sv.Solve(ctx, Problem{Method: PEVIPooled})
				if err != nil {
					t.Fatal(err)
				}
				ref := denseSolve(tb, &m, [][]int{{0, 1, 2}}, 1, beta, true)
				q := make([]float64, m.A)
				for h := 1; h <= tb.H; h++ {
					c := p.Runs[0].Steps[h-1]
					for i := 0; i < m.Dim(); i++ {
						if !near(c.W[i], ref.nu[h-1][i], 1e-10) {
							t.Fatalf("pevi-pooled: step %d coord %d: got nu=%v, want %v", h, i, c.W[i], ref.nu[h-1][i])
						}
					}
					st := &tb.Steps[h-1]
					for j := 0; j < st.Len(); j++ {
						state := st.State[j*tb.W : (j+1)*tb.W]
						p.QValues(h, state, q)
						for a := 0; a < m.A; a++ {
							phi := mat.NewVecDense(m.Dim(), densePhi(&m, state, a))
							var tmp mat.VecDense
							tmp.MulVec(ref.linv[h-1], phi)
							want := mat.Dot(mat.NewVecDense(m.Dim(), ref.nu[h-1]), phi) - beta*math.Sqrt(mat.Dot(phi, &tmp))
							want = math.Max(math.Min(want, float64(tb.H-h+1)), 0)
							if !near(q[a], want, 1e-10) {
								t.Fatalf("pevi-pooled Q at step %d row %d action %d: got %v, want %v", h, j, a, q[a], want)
							}
						}
					}
				}
			})
		}
	}
}

// Singleton clusters are the site-wise method and one cluster of all sites
// is pooling, bit for bit.
func TestGroupingsAreOneCodePath(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	tb := randomTable(t, m, 3, 5, []int{40, 25, 60}, 3)
	st, err := NewStats(ctx, tb, m, m.Blocks(), 3)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	solve := func(p Problem) *Policy {
		pol, err := sv.Solve(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	same := func(name string, a, b *Policy) {
		if a.Beta != b.Beta {
			t.Fatalf("%s: beta %v vs %v", name, a.Beta, b.Beta)
		}
		for h := range a.Runs[0].Steps {
			x, y := a.Runs[0].Steps[h], b.Runs[0].Steps[h]
			for i := range x.W {
				if x.W[i] != y.W[i] || x.M[i] != y.M[i] {
					t.Fatalf("%s: step %d coord %d differs: %v/%v vs %v/%v", name, h+1, i, x.W[i], x.M[i], y.W[i], y.M[i])
				}
			}
		}
	}
	same("singletons", solve(Problem{Method: Sitewise}), solve(Problem{Method: Cluster, Groups: [][]int{{0}, {1}, {2}}}))
	same("one cluster", solve(Problem{Method: Pooled}), solve(Problem{Method: Cluster, Groups: [][]int{{0, 1, 2}}}))
}

// Average-Q and Min-Q combine per-site PEVI runs, each with its own beta.
func TestPerSitePEVI(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, A: 3, S: 3, StateColumns: []string{"state"}}
	tb := randomTable(t, m, 3, 3, []int{20, 35, 50}, 5)
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	avg, err := sv.Solve(ctx, Problem{Method: PEVIAvg})
	if err != nil {
		t.Fatal(err)
	}
	mn, err := sv.Solve(ctx, Problem{Method: PEVIMin})
	if err != nil {
		t.Fatal(err)
	}
	d := m.Dim()
	for k := 0; k < 3; k++ {
		wantBeta := Beta(5e-4, d, 1, tb.H, float64(tb.Trajectories[k]), 0.05)
		if avg.Runs[k].Beta != wantBeta {
			t.Fatalf("site %d beta: got %v, want %v", k, avg.Runs[k].Beta, wantBeta)
		}
	}
	q, qa, qm := make([]float64, m.A), make([]float64, m.A), make([]float64, m.A)
	for h := 1; h <= tb.H; h++ {
		for s := 0; s < m.S; s++ {
			state := []float64{float64(s)}
			avg.QValues(h, state, qa)
			mn.QValues(h, state, qm)
			for a := 0; a < m.A; a++ {
				sum, lo := 0.0, math.Inf(1)
				for k := 0; k < 3; k++ {
					ref := denseSolve(tb, &m, [][]int{{k}}, 1, avg.Runs[k].Beta, true)
					phi := mat.NewVecDense(d, densePhi(&m, state, a))
					var tmp mat.VecDense
					tmp.MulVec(ref.linv[h-1], phi)
					v := mat.Dot(mat.NewVecDense(d, ref.nu[h-1]), phi) - avg.Runs[k].Beta*math.Sqrt(mat.Dot(phi, &tmp))
					v = math.Max(math.Min(v, float64(tb.H-h+1)), 0)
					sum += v
					lo = math.Min(lo, v)
				}
				if !near(qa[a], sum/3, 1e-10) || !near(qm[a], lo, 1e-10) {
					t.Fatalf("step %d state %d action %d: avg %v want %v, min %v want %v", h, s, a, qa[a], sum/3, qm[a], lo)
				}
			}
		}
	}
	_ = q
}

// The policy does not depend on the number of workers.
func TestWorkersBitwise(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 4, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	tb := randomTable(t, m, 4, 6, []int{50, 70, 30, 90}, 9)
	var ref *Policy
	for _, w := range []int{1, 2, 4, 8} {
		st, err := NewStats(ctx, tb, m, m.Blocks(), w)
		if err != nil {
			t.Fatal(err)
		}
		s := DefaultSettings
		s.Workers = w
		p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = p
			continue
		}
		for h := range p.Runs[0].Steps {
			for i := range p.Runs[0].Steps[h].W {
				if math.Float64bits(p.Runs[0].Steps[h].W[i]) != math.Float64bits(ref.Runs[0].Steps[h].W[i]) {
					t.Fatalf("workers=%d: step %d coord %d differs", w, h+1, i)
				}
			}
		}
		if math.Float64bits(p.ValueEstimate) != math.Float64bits(ref.ValueEstimate) {
			t.Fatalf("workers=%d: value estimate differs", w)
		}
	}
}

// TestGramBlocksMatchesAny checks the action-block Gram against the
// general one bit for bit: states with zero coordinates, p from 1 to 5,
// with and without row weights.
func TestGramBlocksMatchesAny(t *testing.T) {
	for p := 1; p <= 5; p++ {
		cols := make([]string, p)
		for j := range cols {
			cols[j] = fmt.Sprintf("x%d", j)
		}
		m := features.Map{Kind: features.ActionBlock, A: 3, P: p, StateColumns: cols}
		tab := randomTable(t, m, 3, 4, []int{40, 25, 60}, uint64(p))
		for _, weighted := range []bool{false, true} {
			if weighted {
				rng := rand.New(rand.NewPCG(uint64(p), 9))
				for h := range tab.Steps {
					st := &tab.Steps[h]
					st.Weight = make([]float64, st.Len())
					for j := range st.Weight {
						st.Weight[j] = 0.25 + 3*rng.Float64()
					}
				}
			}
			st, err := NewStats(context.Background(), tab, m, m.Blocks(), 2)
			if err != nil {
				t.Fatal(err)
			}
			if !st.actionBlocks() {
				t.Fatal("the action-block path does not apply to an action-block map")
			}
			for h := 1; h <= tab.H; h++ {
				for k := range tab.Sites {
					s := &tab.Steps[h-1]
					rows := span(int(s.SiteStart[k]), int(s.SiteStart[k+1]))
					got, want := st.gramBlocks(h, rows, nil), st.gramAny(h, rows)
					if math.Float64bits(got.N) != math.Float64bits(want.N) {
						t.Fatalf("p=%d h=%d site %d: N %v, want %v", p, h, k, got.N, want.N)
					}
					for i := range want.Packed {
						if math.Float64bits(got.Packed[i]) != math.Float64bits(want.Packed[i]) {
							t.Fatalf("p=%d weighted=%v h=%d site %d: packed[%d] = %v, want %v", p, weighted, h, k, i, got.Packed[i], want.Packed[i])
						}
					}
				}
			}
		}
	}
}

// TestCoverageFromCells checks coverage taken from the statistics against
// coverage counted from the rows, bit for bit, for every map; with row
// weights (sums no longer of ones) the statistics are not used.
func TestCoverageFromCells(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 3, 5, []int{40, 25, 60}, 21)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
		if err != nil {
			t.Fatal(err)
		}
		got, want := coverageFromCells(st), coverageRows(st)
		if m.Kind == features.Precomputed {
			if got != nil {
				t.Fatalf("%v: coverage from the statistics of a precomputed map", m.Kind)
			}
			continue
		}
		if got == nil {
			t.Fatalf("%v: no coverage from the statistics of unweighted rows", m.Kind)
		}
		for k := range want {
			if !bitsEqual(got[k], want[k]) {
				t.Fatalf("%v: site %d coverage %v, from the rows %v", m.Kind, k, got[k], want[k])
			}
		}
		for h := range tb.Steps {
			s := &tb.Steps[h]
			s.Weight = make([]float64, s.Len())
			for j := range s.Weight {
				s.Weight[j] = 0.5 + float64(j%3)
			}
		}
		st, err = NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
		if err != nil {
			t.Fatal(err)
		}
		if coverageFromCells(st) != nil {
			t.Fatalf("%v: coverage from the statistics of weighted rows", m.Kind)
		}
	}
}

// weigh gives every row of tb a weight drawn from w.
func weigh(tb *traj.Table, w func() float64) {
	for h := range tb.Steps {
		s := &tb.Steps[h]
		s.Weight = make([]float64, s.Len())
		for j := range s.Weight {
			s.Weight[j] = w()
		}
	}
}

// runRows adds a run's step rows site by site; it must give the bits of
// the sum over the rows in order (Site of each row), weighted or not.
func TestRunRowsMatchesRowSum(t *testing.T) {
	m := testMaps()[1]
	rng := rand.New(rand.NewPCG(8, 1))
	for _, weighted := range []bool{false, true} {
		tb := randomTable(t, m, 5, 3, []int{40, 1, 25, 60, 7}, 3)
		s := &tb.Steps[0]
		if weighted {
			s.Weight = make([]float64, s.Len())
			for j := range s.Weight {
				s.Weight[j] = 0.1 + 3*rng.Float64()
			}
		}
		for mask := 0; mask < 1<<5; mask++ {
			in := make([]bool, 5)
			for k := range in {
				in[k] = mask&(1<<k) != 0
			}
			want := 0.0
			for j := 0; j < s.Len(); j++ {
				if in[s.Site(j)] {
					if s.Weight != nil {
						want += s.Weight[j]
					} else {
						want++
					}
				}
			}
			if got := runRows(s, in); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("weighted=%v sites %v: runRows %v, the sum over rows %v", weighted, in, got, want)
			}
		}
	}
}

// A values sweep whose pass follows a policy (an evaluation's) gives, at
// every row, the pass's Qhat at the policy's decision, against a dense
// reference (phi(s, a) as a vector of length d, its dot product with w -
// beta m, clipped), and counts per site the rows whose decision has no
// evidence: every map, every method's policy, with and without row
// weights.
func TestFollowedValuesMatchDense(t *testing.T) {
	ctx := t.Context()
	for _, m := range testMaps() {
		for _, weighted := range []bool{false, true} {
			tb := randomTable(t, m, 3, 4, []int{30, 20, 40}, 13)
			if weighted {
				rng := rand.New(rand.NewPCG(4, 4))
				weigh(tb, func() float64 { return float64(rng.IntN(3)) })
			}
			st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
			if err != nil {
				t.Fatal(err)
			}
			sv := NewSolver(st, Settings{Lambda: 1, C: 3e-3, Xi: 0.05, Fallback: FallbackBehaviour})
			// The pass's coefficients: the pooled run's, penalised.
			pooled, err := sv.Solve(ctx, Problem{Method: Pooled})
			if err != nil {
				t.Fatal(err)
			}
			run := &pooled.Runs[0]
			all := []bool{true, true, true}
			q := make([]float64, m.A)
			for _, meth := range []Method{Sitewise, Pooled, PEVIPooled, PEVIAvg, PEVIMin, Behaviour} {
				p, err := sv.Solve(ctx, Problem{Method: meth})
				if err != nil {
					t.Fatal(err)
				}
				for h := 1; h <= tb.H; h++ {
					coef := &run.Steps[h-1]
					spec := valSpec{inRun: all, kind: featurewise, coef: coef, beta: run.Beta, follow: p}
					s := &tb.Steps[h-1]
					outs, err := sv.values(ctx, s, h, []valSpec{spec})
					if err != nil {
						t.Fatal(err)
					}
					top := float64(tb.H - h + 1)
					noev := make([]float64, len(tb.Sites))
					for j := 0; j < s.Len(); j++ {
						state := s.State[j*tb.W : (j+1)*tb.W]
						a, _, ev := p.Act(h, state, q)
						want := 0.0
						for i, x := range densePhi(&m, state, a) {
							want += x * (coef.W[i] - run.Beta*coef.M[i])
						}
						want = math.Max(math.Min(want, top), 0)
						if got := outs[0].v[j]; !near(got, want, 1e-12) {
							t.Fatalf("%v weighted=%v %s: step %d row %d: value %v, dense %v", m.Kind, weighted, meth, h, j, got, want)
						}
						if !ev {
							wt := 1.0
							if s.Weight != nil {
								wt = s.Weight[j]
							}
							noev[s.Site(j)] += wt
						}
					}
					if !bitsEqual(outs[0].noev, noev) {
						t.Fatalf("%v weighted=%v %s: step %d: rows without evidence %v, want %v", m.Kind, weighted, meth, h, outs[0].noev, noev)
					}
				}
			}
		}
	}
}
