package eval

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/traj"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// On a tabular map the leverage criterion, 1/(n + lambda) <= 1/(1 +
// lambda), is the count criterion n >= 1 of the identification bounds:
// both give the same support, site by site and for every site at once.
func TestLeverageSupportIsCountOnTabular(t *testing.T) {
	m := features.Map{Kind: features.Tabular, A: 3, S: 5, StateColumns: []string{"state"}}
	tb := randomTable(t, m, 3, 4, []int{15, 6, 30}, 3)
	s := solve.DefaultSettings
	pol := solvePolicy(t, randomTable(t, m, 3, 4, []int{20, 20, 20}, 4), m, s, solve.Problem{Method: solve.Sitewise})
	sv := newSolver(t, tb, m, s)
	site, all, err := leverageSupport(context.Background(), sv, pol, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The same bits with any number of workers.
	site3, all3, err := leverageSupport(context.Background(), sv, pol, nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(all, all3) || !slices.EqualFunc(site, site3, sameBits) {
		t.Errorf("workers 3: %v, %v; workers 1: %v, %v", site3, all3, site, all)
	}
	b := newBoundsPlan(sv.Stats(), pol, nil, EvalLambda, Range{}).compute(nil, 0, 0)
	for k := range site {
		if !near(site[k], b.siteSupport[k], 1e-15) {
			t.Errorf("site %d: leverage support %v, count support %v", k, site[k], b.siteSupport[k])
		}
	}
	if !near(all, b.support, 1e-15) {
		t.Errorf("every site: leverage %v, count %v", all, b.support)
	}
	if all <= 0 || all >= 1 {
		t.Errorf("support %v: want a case strictly between 0 and 1", all)
	}
}

// On an action-block map, a site that never took an action has no
// evidence for it (its Gram's block is zero: leverage |phi|^2/lambda), and
// a site with many observations of every action has evidence everywhere.
func TestLeverageSupportActionBlock(t *testing.T) {
	m := features.Map{Kind: features.ActionBlock, A: 2, P: 2, StateColumns: []string{"s1", "s2"}}
	var rows []tinyRow
	for tr := int64(0); tr < 50; tr++ {
		rows = append(rows, tinyRow{site: "all", traj: tr, step: 1, action: tr % 2, reward: 0.5})
		rows = append(rows, tinyRow{site: "only0", traj: tr, step: 1, action: 0, reward: 0.5})
	}
	tb := tinyTableW(t, m, 1, rows, func(r tinyRow) []float64 { return []float64{1 + float64(r.traj%3), 1} })
	s := solve.DefaultSettings
	// A behaviour policy of a continuous map takes one action per step.
	always1 := &solve.Policy{Method: solve.Behaviour, Map: m, H: 1, D: m.Dim(), A: 2, ValueEstimate: math.NaN(),
		BehaviourAction: [][]int32{{1}}}
	rep, err := FromData(context.Background(), newSolver(t, tb, m, s), always1, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HasBounds {
		t.Fatal("action-block map has bounds")
	}
	if rep.Sites[0].Support != 1 || rep.Sites[1].Support != 0 || rep.Support != 0 {
		t.Errorf("support: all %v, only0 %v, every site %v; want 1, 0, 0", rep.Sites[0].Support, rep.Sites[1].Support, rep.Support)
	}
}

// tinyTableW is tinyTable for maps whose states have several columns.
func tinyTableW(t *testing.T, m features.Map, H int, rows []tinyRow, state func(tinyRow) []float64) *traj.Table {
	t.Helper()
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: m.A, Horizon: H})
	c := &traj.Chunk{Src: traj.Origin{File: "tiny"}, W: m.Width()}
	for _, r := range rows {
		c.SiteStr = append(c.SiteStr, r.site)
		c.TrajInt = append(c.TrajInt, r.traj)
		c.Step = append(c.Step, r.step)
		c.ActionInt = append(c.ActionInt, r.action)
		c.Reward = append(c.Reward, r.reward)
		c.State = append(c.State, state(r)...)
	}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// For a map with blocks of size > 1 (action-block), leverage support
// agrees with a dense reference: each site's Lambda = lambda I + sum phi
// phi^T over its rows at the step, inverted densely, the leverage phi^T
// Lambda^-1 phi of the policy's feature vector against the one-observation
// limit, counted over every row (the table is below the sample size).
func TestLeverageSupportDense(t *testing.T) {
	m := testMaps()[1]
	tb := randomTable(t, m, 3, 3, []int{12, 4, 30}, 6)
	s := solve.DefaultSettings
	pol := solvePolicy(t, randomTable(t, m, 3, 3, []int{20, 20, 20}, 4), m, s, solve.Problem{Method: solve.Sitewise})
	site, all, err := leverageSupport(context.Background(), newSolver(t, tb, m, s), pol, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	d, W, K := m.Dim(), m.Width(), len(tb.Sites)
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	phiOf := func(state []float64, a int) []float64 {
		phi := make([]float64, d)
		n := m.Phi(state, a, idx, val)
		for i := 0; i < n; i++ {
			phi[idx[i]] = val[i]
		}
		return phi
	}
	visits, with := make([]float64, K), make([]float64, K)
	allVisits, allWith := 0.0, 0.0
	q := make([]float64, m.A)
	for h := 1; h <= tb.H; h++ {
		st := &tb.Steps[h-1]
		inv := make([]*mat.Dense, K)
		for k := 0; k < K; k++ {
			l := mat.NewDense(d, d, nil)
			for i := 0; i < d; i++ {
				l.Set(i, i, s.Lambda)
			}
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				phi := phiOf(st.State[j*W:(j+1)*W], int(st.Action[j]))
				for x := 0; x < d; x++ {
					for y := 0; y < d; y++ {
						l.Set(x, y, l.At(x, y)+phi[x]*phi[y])
					}
				}
			}
			inv[k] = mat.NewDense(d, d, nil)
			if err := inv[k].Inverse(l); err != nil {
				t.Fatal(err)
			}
		}
		for k := 0; k < K; k++ {
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				state := st.State[j*W : (j+1)*W]
				a, _, _ := pol.Act(h, state, q)
				phi := mat.NewVecDense(d, phiOf(state, a))
				norm2 := mat.Dot(phi, phi)
				ev := func(kk int) bool {
					return mat.Inner(phi, inv[kk], phi) <= norm2/(s.Lambda+norm2)*(1+1e-9)
				}
				visits[k]++
				allVisits++
				if ev(k) {
					with[k]++
				}
				every := true
				for kk := 0; kk < K; kk++ {
					every = every && ev(kk)
				}
				if every {
					allWith++
				}
			}
		}
	}
	for k := range site {
		if want := with[k] / visits[k]; site[k] != want {
			t.Errorf("site %d: support %v, dense %v", k, site[k], want)
		}
	}
	if want := allWith / allVisits; all != want {
		t.Errorf("every site: support %v, dense %v", all, want)
	}
	if all == 0 || all == 1 {
		t.Logf("every-site support %v: the case does not separate", all)
	}
}
