package solve

// Tests of the conditioning diagnostic: the condition number of every
// group's Lambda_h^g against a dense reference, and its warning.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/traj"

	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/features"
)

// denseLambda returns lambda I + sum phi phi^T over the step-h rows of the
// given sites (each row once: the tables here are unweighted), as a dense
// d x d matrix built from densePhi, independently of the Grams.
func denseLambda(t *traj.Table, m *features.Map, sites []int, h int, lambda float64) *mat.SymDense {
	d := m.Dim()
	L := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		L.SetSym(i, i, lambda)
	}
	st := &t.Steps[h-1]
	for j := 0; j < st.Len(); j++ {
		if !slices.Contains(sites, st.Site(j)) {
			continue
		}
		phi := densePhi(m, st.State[j*t.W:(j+1)*t.W], int(st.Action[j]))
		for x := 0; x < d; x++ {
			for z := 0; z <= x; z++ {
				L.SetSym(x, z, L.At(x, z)+phi[x]*phi[z])
			}
		}
	}
	return L
}

// exactCond1 returns kappa_1(B) = ||B||_1 ||B^-1||_1 from B's explicit
// inverse.
func exactCond1(t *testing.T, B mat.Matrix) float64 {
	t.Helper()
	var inv mat.Dense
	// A mat.Condition error (ill-conditioned, not singular) still comes
	// with the inverse.
	if err := inv.Inverse(B); err != nil && !errors.As(err, new(mat.Condition)) {
		t.Fatal(err)
	}
	return mat.Norm(B, 1) * mat.Norm(&inv, 1)
}

// blockOf returns the dense submatrix of L on coords.
func blockOf(L *mat.SymDense, coords []int32) *mat.SymDense {
	B := mat.NewSymDense(len(coords), nil)
	for r, i := range coords {
		for c := 0; c <= r; c++ {
			B.SetSym(r, c, L.At(int(i), int(coords[c])))
		}
	}
	return B
}

// checkCond checks that the diagnostics' Cond of every group and step is
// the largest over Lambda_h^g's blocks of the dense reference: at most
// kappa_1 of the dense block (LAPACK's estimate is a lower bound) and at
// least a third of it, within a factor of 3 of gonum's mat.Cond(B, 1) on
// the same block, and 1 for blocks of size 1. When Lambda is one block,
// the reference is mat.Cond of the whole dense Lambda. It returns the
// largest condition number seen.
func checkCond(t *testing.T, name string, tb *traj.Table, st *Stats, p *Policy, dg *Diagnostics, lambda float64, tol float64) float64 {
	t.Helper()
	bl := &st.Layout.Blocks
	if len(dg.Cond) != len(p.Groups) || len(dg.Condition) != len(p.Groups) {
		t.Fatalf("%s: %d condition rows and %d worst steps for %d groups", name, len(dg.Cond), len(dg.Condition), len(p.Groups))
	}
	largest := 0.0
	for g, grp := range p.Groups {
		var sites []int
		for _, s := range grp.Sites {
			sites = append(sites, slices.Index(tb.Sites, s))
		}
		worst := Conditioning{Group: grp.Name, Step: 1, Cond: dg.Cond[g][0]}
		for h := 1; h <= tb.H; h++ {
			L := denseLambda(tb, &st.Map, sites, h, lambda)
			want := 1.0
			for b := 0; b < bl.Len(); b++ {
				coords := bl.Coord[bl.Start[b]:bl.Start[b+1]]
				B := blockOf(L, coords)
				if len(coords) == 1 {
					continue
				}
				k1 := exactCond1(t, B)
				if gc := mat.Cond(B, 1); gc > 3*k1*(1+tol) || k1 > 3*gc*(1+tol) {
					t.Fatalf("%s: reference disagrees with itself: mat.Cond %g, exact %g", name, gc, k1)
				}
				want = max(want, k1)
			}
			got := dg.Cond[g][h-1]
			if bl.Len() == 1 {
				// One block: the whole matrix.
				if gc := mat.Cond(L, 1); got > 3*gc*(1+tol) || gc > 3*got*(1+tol) {
					t.Errorf("%s: group %s step %d: cond %g, mat.Cond of the dense Lambda %g", name, grp.Name, h, got, gc)
				}
			}
			if got > want*(1+tol) || got < want/3*(1-tol) {
				t.Errorf("%s: group %s step %d: cond %g, dense kappa_1 %g", name, grp.Name, h, got, want)
			}
			if got > worst.Cond {
				worst = Conditioning{Group: grp.Name, Step: h, Cond: got}
			}
			largest = max(largest, got)
		}
		if dg.Condition[g] != worst {
			t.Errorf("%s: worst step of group %s is %+v, want %+v", name, grp.Name, dg.Condition[g], worst)
		}
	}
	return largest
}

// Every map and grouping, in memory: the diagnostic matches the dense
// reference, and its warning stays silent on well-conditioned data.
func TestConditionMatchesDense(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 3, 3, []int{30, 20, 40}, 5)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, lambda := range []float64{1, 0.01} {
			s := DefaultSettings
			s.Lambda = lambda
			sv := NewSolver(st, s)
			for _, prob := range []Problem{{Method: Sitewise}, {Method: Pooled}, {Method: Cluster, Groups: [][]int{{0, 2}, {1}}},
				{Method: PEVIPooled}, {Method: PEVIAvg}} {
				p, err := sv.Solve(ctx, prob)
				if err != nil {
					t.Fatal(err)
				}
				dg := Diagnose(st, p)
				name := fmt.Sprintf("%v/%s/lambda=%g", m.Kind, prob.Method, lambda)
				largest := checkCond(t, name, tb, st, p, dg, lambda, 1e-9)
				if (m.Kind == features.Tabular || m.Kind == features.Indicator) && largest != 1 {
					// Their blocks are all of size 1.
					t.Errorf("%s: largest cond %g, want 1", name, largest)
				}
				for _, w := range dg.Warnings() {
					if strings.Contains(w, "ill-conditioned") {
						t.Errorf("%s: warns on well-conditioned data: %s", name, w)
					}
				}
			}
		}
		// Behaviour cloning has no regression, and a policy read from a
		// file no factors: no conditioning.
		p, err := NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: Behaviour})
		if err != nil {
			t.Fatal(err)
		}
		if dg := Diagnose(st, p); dg.Cond != nil || dg.Condition != nil {
			t.Errorf("%v: behaviour has conditioning %v", m.Kind, dg.Condition)
		}
		p, err = NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		if dg := Diagnose(st, grRoundTrip(t, p)); dg.Cond != nil || dg.Condition != nil {
			t.Errorf("%v: a policy read back has conditioning %v", m.Kind, dg.Condition)
		}
	}
}

// collinearTable: a precomputed map with d = 3 whose every phi(s, a) is
// (x, x, 1 - 2x): the first two features are collinear, so Lambda's
// eigenvalue along (1, -1, 0) is lambda itself while the others grow with
// the rows, and a tiny lambda makes Lambda ill-conditioned.
func collinearTable(t *testing.T) (*traj.Table, features.Map) {
	m := features.Map{Kind: features.Precomputed, A: 2, D: 3, StateColumns: []string{"phi"}}
	rng := rand.New(rand.NewPCG(3, 9))
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: m.StateColumns, List: true, D: m.D}, Actions: m.A, Horizon: 2})
	for k := 0; k < 2; k++ {
		c := &traj.Chunk{Src: traj.Origin{File: fmt.Sprintf("site%d", k)}, W: m.Width()}
		for tr := 0; tr < 40; tr++ {
			for h := 1; h <= 2; h++ {
				c.SiteStr = append(c.SiteStr, fmt.Sprintf("s%d", k))
				c.TrajInt = append(c.TrajInt, int64(tr))
				c.Step = append(c.Step, int64(h))
				c.ActionInt = append(c.ActionInt, int64(rng.IntN(m.A)))
				c.Reward = append(c.Reward, rng.Float64())
				for a := 0; a < m.A; a++ {
					x := 0.1 + 0.3*rng.Float64()
					c.State = append(c.State, x, x, 1-2*x)
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
	return tb, m
}

// Collinear features and a tiny lambda: the condition number matches the
// dense reference (one block, so mat.Cond of the whole dense Lambda), is
// far above CondWarn, and the diagnostics carry one warning line naming
// the worst group and step; with lambda = 1 the same data do not warn.
// In and out of core give the same numbers.
func TestConditionIllConditioned(t *testing.T) {
	ctx := context.Background()
	tb, m := collinearTable(t)
	blocks := BlocksFor(tb, &m)
	if blocks.Len() != 1 {
		t.Fatalf("want one block, got %d", blocks.Len())
	}
	st, err := NewStats(ctx, tb, m, blocks, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{1e-10, 1} {
		s := DefaultSettings
		s.Lambda = lambda
		for _, method := range []Method{Sitewise, Pooled, PEVIMin} {
			p, err := NewSolver(st, s).Solve(ctx, Problem{Method: method})
			if err != nil {
				t.Fatal(err)
			}
			dg := Diagnose(st, p)
			name := fmt.Sprintf("%s/lambda=%g", method, lambda)
			// The inverse of a matrix with condition number about 1e11
			// keeps about 5 digits: the reference's tolerance is 1e-3.
			largest := checkCond(t, name, tb, st, p, dg, lambda, 1e-3)
			var warns []string
			for _, w := range dg.Warnings() {
				if strings.Contains(w, "ill-conditioned") {
					warns = append(warns, w)
				}
			}
			if lambda == 1 {
				if largest > 1e4 || len(warns) > 0 {
					t.Errorf("%s: cond %g, warnings %q", name, largest, warns)
				}
				continue
			}
			if largest < 10*CondWarn {
				t.Fatalf("%s: cond %g, want > %g for collinear features and lambda 1e-10", name, largest, 10*CondWarn)
			}
			cells := len(p.Groups) * tb.H
			worst := dg.Condition[0]
			for _, c := range dg.Condition {
				if c.Cond > worst.Cond {
					worst = c
				}
			}
			if len(warns) != 1 || strings.Contains(warns[0], "\n") ||
				!strings.Contains(warns[0], fmt.Sprintf("at %d (group, step) cells", cells)) ||
				!strings.Contains(warns[0], fmt.Sprintf("group %s at step %d", worst.Group, worst.Step)) {
				t.Errorf("%s: want one warning line naming %d cells and group %s step %d, got %q", name, cells, worst.Group, worst.Step, warns)
			}
			// The JSON key solve --json prints.
			js, err := json.Marshal(dg)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Condition []Conditioning `json:"condition"`
			}
			if err := json.Unmarshal(js, &doc); err != nil || !slices.Equal(doc.Condition, dg.Condition) {
				t.Errorf("%s: JSON condition %v, want %v (%v)", name, doc.Condition, dg.Condition, err)
			}
		}
		// Out of core: the same diagnostics.
		cellRows := make([][]int, tb.H)
		for h := range cellRows {
			cellRows[h] = make([]int, len(tb.Sites))
			for k := range cellRows[h] {
				cellRows[h][k] = int(tb.Steps[h].SiteStart[k+1] - tb.Steps[h].SiteStart[k])
			}
		}
		got, err := SolveStreamed(ctx, &windowReader{t: tb}, m, blocks, s, []Problem{{Method: Sitewise}}, cellRows, tb.Rows)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		want := Diagnose(st, p)
		if !slices.EqualFunc(got.Diagnostics[0].Cond, want.Cond, slices.Equal) || !slices.Equal(got.Diagnostics[0].Warnings(), want.Warnings()) {
			t.Errorf("lambda %g: out of core gives cond %v, in memory %v", lambda, got.Diagnostics[0].Cond, want.Cond)
		}
	}
}

// Without --stationary every step has its own Lambda; with it, every
// step's transitions are pooled into one Lambda^g per group, and every
// step reports its condition number.
func TestConditionStationary(t *testing.T) {
	ctx := context.Background()
	m := testMaps()[1]
	tb := randomTable(t, m, 2, 3, []int{20, 30}, 8)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings
	s.Stationary = true
	p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	dg := Diagnose(st, p)
	bl := &st.Layout.Blocks
	for g, grp := range p.Groups {
		k := slices.Index(tb.Sites, grp.Sites[0])
		// The pooled Lambda: sum over steps of the Grams plus lambda I.
		L := mat.NewSymDense(m.Dim(), nil)
		for h := 1; h <= tb.H; h++ {
			Lh := denseLambda(tb, &m, []int{k}, h, 0)
			L.AddSym(L, Lh)
		}
		for i := 0; i < m.Dim(); i++ {
			L.SetSym(i, i, L.At(i, i)+s.Lambda)
		}
		want := 1.0
		for b := 0; b < bl.Len(); b++ {
			want = max(want, exactCond1(t, blockOf(L, bl.Coord[bl.Start[b]:bl.Start[b+1]])))
		}
		for h := 1; h <= tb.H; h++ {
			if got := dg.Cond[g][h-1]; got != dg.Cond[g][0] || got > want*(1+1e-9) || got < want/3 {
				t.Errorf("group %s step %d: cond %g, dense pooled kappa_1 %g (step 1: %g)", grp.Name, h, got, want, dg.Cond[g][0])
			}
		}
	}
}
