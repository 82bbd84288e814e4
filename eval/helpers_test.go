package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// specFor returns the state spec the reader would use for map m.
func specFor(m features.Map) traj.StateSpec {
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
	return spec
}

// randomTable draws a multi-site dataset for map m: K sites, horizon H,
// episodes that may end early, uniform actions and rewards (copied from
// solve's tests).
func randomTable(t testing.TB, m features.Map, K, H int, perSite []int, seed uint64) *traj.Table {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: m.A, Horizon: H})
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

func testMaps() []features.Map {
	return []features.Map{
		{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}},
		{Kind: features.ActionBlock, A: 4, P: 3, StateColumns: []string{"s1", "s2", "s3"}},
		{Kind: features.Indicator, A: 4, StateColumns: []string{"state"}},
		{Kind: features.Precomputed, A: 2, D: 6, StateColumns: []string{"phi"}},
	}
}

// newSolver computes the statistics of tb and returns a solver over them.
func newSolver(t testing.TB, tb *traj.Table, m features.Map, s solve.Settings) *solve.Solver {
	t.Helper()
	st, err := solve.NewStats(context.Background(), tb, m, solve.BlocksFor(tb, &m), max(1, s.Workers))
	if err != nil {
		t.Fatal(err)
	}
	return solve.NewSolver(st, s)
}

// densePhi returns phi(s,a) as a dense vector, written from the feature
// maps' definitions.
func densePhi(m *features.Map, state []float64, a int) []float64 {
	out := make([]float64, m.Dim())
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

func dot(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func rowWeight(s *traj.Step, j int) float64 {
	if s.Weight == nil {
		return 1
	}
	return s.Weight[j]
}

// denseRidge returns nu = (sum w phi phi^T + lambda I)^{-1} sum w phi
// (r + V(s')) over site k's rows at step h (dense, explicit inverse) and
// sqrt(diag(Lambda^{-1})). vnext holds V at step h+1's rows (nil: zero).
func denseRidge(t *traj.Table, m *features.Map, h int, sites []int, lambda float64, vnext []float64) (nu, s []float64) {
	d := m.Dim()
	st := &t.Steps[h-1]
	L := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		L.Set(i, i, lambda)
	}
	b := make([]float64, d)
	for _, k := range sites {
		for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
			wt := rowWeight(st, j)
			phi := densePhi(m, st.State[j*t.W:(j+1)*t.W], int(st.Action[j]))
			y := st.Reward[j]
			if st.Next[j] >= 0 && vnext != nil {
				y += vnext[st.Next[j]]
			}
			for x := 0; x < d; x++ {
				b[x] += wt * phi[x] * y
				for z := 0; z < d; z++ {
					L.Set(x, z, L.At(x, z)+wt*phi[x]*phi[z])
				}
			}
		}
	}
	var inv mat.Dense
	if err := inv.Inverse(L); err != nil {
		panic(err)
	}
	var v mat.VecDense
	v.MulVec(&inv, mat.NewVecDense(d, b))
	nu = make([]float64, d)
	s = make([]float64, d)
	for i := 0; i < d; i++ {
		nu[i] = v.AtVec(i)
		s[i] = math.Sqrt(inv.At(i, i))
	}
	return nu, s
}

// denseFQE is fitted-Q evaluation of the policy pi over the rows of the
// given sites, written densely from the definition: at each step h = H..1
// every site's ridge regression of r + V_{h+1}(s') on phi(s_h, a_h),
// w_h = row-min of the sites' nu_h, m_h = row-max of their sqrt diag
// Lambda^{-1}, and
//
//	V_h(s) = clip(phi(s, pi(h,s))^T w_h - beta phi(s, pi(h,s))^T m_h, 0, H-h+1).
//
// With one site (and beta = 0) it is ordinary, non-robust FQE. It returns
// the weighted mean of V_1 over the sites' step-1 rows.
func denseFQE(t *traj.Table, m *features.Map, sites []int, lambda, beta float64, pi func(h int, state []float64) int) float64 {
	d := m.Dim()
	var vnext []float64
	for h := t.H; h >= 1; h-- {
		w := make([]float64, d)
		mm := make([]float64, d)
		for i := range w {
			w[i], mm[i] = math.Inf(1), math.Inf(-1)
		}
		for _, k := range sites {
			nu, s := denseRidge(t, m, h, []int{k}, lambda, vnext)
			for i := 0; i < d; i++ {
				w[i] = math.Min(w[i], nu[i])
				mm[i] = math.Max(mm[i], s[i])
			}
		}
		st := &t.Steps[h-1]
		v := make([]float64, st.Len())
		for _, k := range sites {
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				state := st.State[j*t.W : (j+1)*t.W]
				phi := densePhi(m, state, pi(h, state))
				q := dot(phi, w) - beta*dot(phi, mm)
				v[j] = math.Max(0, math.Min(q, float64(t.H-h+1)))
			}
		}
		vnext = v
	}
	st := &t.Steps[0]
	sum, n := 0.0, 0.0
	for _, k := range sites {
		for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
			sum += rowWeight(st, j) * vnext[j]
			n += rowWeight(st, j)
		}
	}
	return sum / n
}

// actOf returns the action function of a solved policy.
func actOf(p *solve.Policy) func(h int, state []float64) int {
	q := make([]float64, p.A)
	return func(h int, state []float64) int {
		a, _, _ := p.Act(h, state, q)
		return a
	}
}

// near reports |a-b| <= tol * max(1, |a|, |b|).
func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// solvePolicy solves method on tb with settings s.
func solvePolicy(t testing.TB, tb *traj.Table, m features.Map, s solve.Settings, prob solve.Problem) *solve.Policy {
	t.Helper()
	p, err := newSolver(t, tb, m, s).Solve(context.Background(), prob)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func allSites(K int) []int {
	out := make([]int, K)
	for k := range out {
		out[k] = k
	}
	return out
}
