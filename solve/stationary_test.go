package solve

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// denseStationary is a straightforward dense implementation of Algorithm 1
// under the stationarity assumption: one Lambda per group from every
// step's transitions, and round h regressing r + Vhat_{h+1}(s') for all of
// them.
func denseStationary(t *traj.Table, m *features.Map, groups [][]int, lambda, beta float64) (ws, ms [][]float64) {
	H, d := t.H, m.Dim()
	ws, ms = make([][]float64, H+2), make([][]float64, H+2)
	vhat := func(h int, state []float64) float64 {
		if h > H {
			return 0
		}
		best := 0.0
		for a := 0; a < t.A; a++ {
			phi := densePhi(m, state, a)
			q, pen := 0.0, 0.0
			for i := 0; i < d; i++ {
				q += phi[i] * ws[h][i]
				pen += phi[i] * ms[h][i]
			}
			best = math.Max(best, math.Max(math.Min(q-beta*pen, float64(H-h+1)), 0))
		}
		return best
	}
	for h := H; h >= 1; h-- {
		w, mm := make([]float64, d), make([]float64, d)
		for i := range w {
			w[i], mm[i] = math.Inf(1), math.Inf(-1)
		}
		for _, g := range groups {
			L := mat.NewDense(d, d, nil)
			for i := 0; i < d; i++ {
				L.Set(i, i, lambda)
			}
			b := mat.NewVecDense(d, nil)
			for tt := 1; tt <= H; tt++ {
				st := &t.Steps[tt-1]
				for j := 0; j < st.Len(); j++ {
					in := false
					for _, k := range g {
						in = in || st.Site(j) == k
					}
					if !in {
						continue
					}
					phi := densePhi(m, st.State[j*t.W:(j+1)*t.W], int(st.Action[j]))
					y := st.Reward[j]
					if nx := st.Next[j]; nx >= 0 {
						ns := &t.Steps[tt]
						y += vhat(h+1, ns.State[int(nx)*t.W:(int(nx)+1)*t.W])
					}
					for x := 0; x < d; x++ {
						b.SetVec(x, b.AtVec(x)+phi[x]*y)
						for z := 0; z < d; z++ {
							L.Set(x, z, L.At(x, z)+phi[x]*phi[z])
						}
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
		}
		ws[h], ms[h] = w, mm
	}
	return ws, ms
}

func TestStationaryMatchesDense(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		t.Run(fmt.Sprint(m.Kind), func(t *testing.T) {
			tb := randomTable(t, m, 3, 4, []int{25, 15, 30}, 21)
			st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
			if err != nil {
				t.Fatal(err)
			}
			s := DefaultSettings
			s.Beta, s.BetaSet, s.Stationary = 0.05, true, true
			sv := NewSolver(st, s)
			groups := [][]int{{0}, {1, 2}}
			p, err := sv.Solve(ctx, Problem{Method: Cluster, Groups: groups})
			if err != nil {
				t.Fatal(err)
			}
			ws, ms := denseStationary(tb, &m, groups, 1, 0.05)
			for h := 1; h <= tb.H; h++ {
				c := p.Runs[0].Steps[h-1]
				for i := range c.W {
					if !near(c.W[i], ws[h][i], 1e-10) || !near(c.M[i], ms[h][i], 1e-10) {
						t.Fatalf("step %d coord %d: got w=%v m=%v, want w=%v m=%v", h, i, c.W[i], c.M[i], ws[h][i], ms[h][i])
					}
				}
			}
		})
	}
}
