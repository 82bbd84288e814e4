package solve

// Tests of the guardrails of issue 8 ("Real, sparse, multi-site data: never
// fail silently"): every diagnostic against a direct computation, both
// fallback rules, behaviour cloning, and stationary pooling.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/traj"
)

// grRow is one hand-written data row.
type grRow struct {
	site       string
	traj, step int
	action     int
	reward     float64
	state      []float64
}

// grTable builds a table for map m from hand-written rows.
func grTable(t testing.TB, m features.Map, rows []grRow) *traj.Table {
	t.Helper()
	spec := traj.StateSpec{Columns: m.StateColumns}
	switch m.Kind {
	case features.Tabular:
		spec.Integer, spec.Max = true, m.S
	case features.Indicator:
		spec.Integer, spec.Max = true, 3
	case features.ActionBlock:
		spec.NonzeroSum = true
	}
	b := traj.NewBuilder(traj.Options{State: spec, Actions: m.A})
	c := &traj.Chunk{Src: traj.Origin{File: "hand"}, W: m.Width()}
	for _, r := range rows {
		c.SiteStr = append(c.SiteStr, r.site)
		c.TrajInt = append(c.TrajInt, int64(r.traj))
		c.Step = append(c.Step, int64(r.step))
		c.ActionInt = append(c.ActionInt, int64(r.action))
		c.Reward = append(c.Reward, r.reward)
		c.State = append(c.State, r.state...)
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

// grSolve solves method on tb with settings s (beta given directly).
func grSolve(t testing.TB, tb *traj.Table, m features.Map, s Settings, method Method) (*Stats, *Solver, *Policy) {
	t.Helper()
	ctx := context.Background()
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 2)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewSolver(st, s)
	p, err := sv.Solve(ctx, Problem{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	return st, sv, p
}

func withBeta(beta float64) Settings {
	s := DefaultSettings
	s.Beta, s.BetaSet = beta, true
	return s
}

// grFullCoverage: tabular S=3, A=2, H=2, sites a and b. Every site takes
// every (state, action) at step 1 and at step 2, with positive rewards.
func grFullCoverage() (features.Map, []grRow) {
	m := features.Map{Kind: features.Tabular, A: 2, S: 3, StateColumns: []string{"state"}}
	var rows []grRow
	for _, site := range []string{"a", "b"} {
		tr := 0
		for s := 0; s < 3; s++ {
			for a := 0; a < 2; a++ {
				rows = append(rows,
					grRow{site: site, traj: tr, step: 1, action: a, reward: 0.6, state: []float64{float64(s)}},
					grRow{site: site, traj: tr, step: 2, action: 1 - a, reward: 0.7, state: []float64{float64((s + 1) % 3)}})
				tr++
			}
		}
	}
	return m, rows
}

// grThreeSites adds site c to grFullCoverage: one-step episodes that take
// every (state, action) but (0, 1), with reward 0.6, and action 0 in state 0
// with reward 0. Site c never observes feature (0, 1) and has no row at
// step 2; the row-min then takes nu = 0 for state 0 at step 1 (Qhat(0, .)
// = 0: no evidence) and for every feature at step 2.
func grThreeSites() (features.Map, []grRow) {
	m, rows := grFullCoverage()
	for tr, sa := range [][3]float64{{0, 0, 0}, {1, 0, 0.6}, {1, 1, 0.6}, {2, 0, 0.6}, {2, 1, 0.6}} {
		rows = append(rows, grRow{site: "c", traj: tr, step: 1, action: int(sa[1]), reward: sa[2], state: []float64{sa[0]}})
	}
	return m, rows
}

// directNoEvidence counts, per site, the rows whose every Qhat is 0, by
// evaluating p at every row.
func directNoEvidence(tb *traj.Table, p *Policy) (bySite map[string]float64, share float64) {
	K := len(tb.Sites)
	noev, rows := make([]float64, K), make([]float64, K)
	q := make([]float64, tb.A)
	for h := 1; h <= tb.H; h++ {
		step := &tb.Steps[h-1]
		for j := 0; j < step.Len(); j++ {
			k := step.Site(j)
			p.QValues(h, step.State[j*tb.W:(j+1)*tb.W], q)
			rows[k]++
			if slices.Max(q) <= 0 {
				noev[k]++
			}
		}
	}
	bySite = map[string]float64{}
	tot, totNo := 0.0, 0.0
	for k, site := range tb.Sites {
		bySite[site] = noev[k] / rows[k]
		tot += rows[k]
		totNo += noev[k]
	}
	return bySite, totNo / tot
}

func TestDiagnoseNoEvidenceMatchesDirectCount(t *testing.T) {
	type tc struct {
		name      string
		m         features.Map
		tb        *traj.Table
		beta      float64
		wantShare float64 // -1: strictly between 0 and 1
	}
	mFull, full := grFullCoverage()
	mThree, three := grThreeSites()
	tab := testMaps()[0]
	blk := testMaps()[1]
	cases := []tc{
		{"huge beta", mFull, grTable(t, mFull, full), 1e6, 1},
		{"beta 0, full coverage", mFull, grTable(t, mFull, full), 0, 0},
		{"beta 0, a site with gaps", mThree, grTable(t, mThree, three), 0, -1},
		{"random tabular", tab, randomTable(t, tab, 3, 4, []int{30, 20, 45}, 11), 0.3, -1},
		{"random action-block", blk, randomTable(t, blk, 3, 4, []int{30, 20, 45}, 11), 0.5, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, _, p := grSolve(t, c.tb, c.m, withBeta(c.beta), Sitewise)
			dg := Diagnose(st, p)
			bySite, share := directNoEvidence(c.tb, p)
			if !reflect.DeepEqual(dg.NoEvidenceBySite, bySite) {
				t.Errorf("NoEvidenceBySite = %v, direct count %v", dg.NoEvidenceBySite, bySite)
			}
			if dg.NoEvidenceShare != share {
				t.Errorf("NoEvidenceShare = %v, direct count %v", dg.NoEvidenceShare, share)
			}
			switch {
			case c.wantShare >= 0 && dg.NoEvidenceShare != c.wantShare:
				t.Errorf("NoEvidenceShare = %v, want %v", dg.NoEvidenceShare, c.wantShare)
			case c.wantShare < 0 && !(dg.NoEvidenceShare > 0 && dg.NoEvidenceShare < 1):
				t.Errorf("NoEvidenceShare = %v, want a mixed case strictly between 0 and 1", dg.NoEvidenceShare)
			}
			// The same policy read back from its artifact is evaluated row by
			// row (not from the pass's counts): the shares agree.
			rows, meta, err := p.ArtifactRows()
			if err != nil {
				t.Fatal(err)
			}
			back, err := FromRows("p", rows, meta)
			if err != nil {
				t.Fatal(err)
			}
			dg2 := Diagnose(st, back)
			if !reflect.DeepEqual(dg2.NoEvidenceBySite, bySite) || dg2.NoEvidenceShare != share {
				t.Errorf("read back: share %v by site %v, want %v %v", dg2.NoEvidenceShare, dg2.NoEvidenceBySite, share, bySite)
			}
		})
	}
	// In the three-site case the no-evidence rows are known by hand: every
	// step-1 row in state 0 (site c has nu = 0 there) and every step-2 row
	// (site c has no step-2 data).
	tb := grTable(t, mThree, three)
	st, _, p := grSolve(t, tb, mThree, withBeta(0), Sitewise)
	dg := Diagnose(st, p)
	// Sites a, b: 12 rows each, 2 step-1 rows in state 0 + 6 step-2 rows;
	// site c: 5 rows, one in state 0.
	want := map[string]float64{"a": 8.0 / 12, "b": 8.0 / 12, "c": 1.0 / 5}
	if !reflect.DeepEqual(dg.NoEvidenceBySite, want) || dg.NoEvidenceShare != 17.0/29 {
		t.Errorf("three sites: share %v by site %v, want %v %v", dg.NoEvidenceShare, dg.NoEvidenceBySite, 17.0/29, want)
	}
}

// PenaltyShare[h-1] is estimated on every 8th row of step h: the mean over
// those rows and every action of beta phi^T m_h, over H-h+1.
func TestDiagnosePenaltyShare(t *testing.T) {
	for _, m := range []features.Map{testMaps()[0], testMaps()[1], testMaps()[2]} {
		t.Run(m.Kind.String(), func(t *testing.T) {
			tb := randomTable(t, m, 3, 5, []int{60, 45, 80}, 4)
			const beta = 0.37
			st, _, p := grSolve(t, tb, m, withBeta(beta), Sitewise)
			dg := Diagnose(st, p)
			if len(dg.PenaltyShare) != tb.H {
				t.Fatalf("%d penalty shares for H = %d", len(dg.PenaltyShare), tb.H)
			}
			for h := 1; h <= tb.H; h++ {
				step := &tb.Steps[h-1]
				mh := p.Runs[0].Steps[h-1].M
				sum, terms, full, fullTerms := 0.0, 0.0, 0.0, 0.0
				for j := 0; j < step.Len(); j++ {
					state := step.State[j*tb.W : (j+1)*tb.W]
					for a := 0; a < tb.A; a++ {
						pen := 0.0
						for i, x := range densePhi(&m, state, a) {
							pen += x * mh[i]
						}
						full += beta * pen
						fullTerms++
						if j%8 == 0 {
							sum += beta * pen
							terms++
						}
					}
				}
				want := sum / terms / float64(tb.H-h+1)
				if !near(dg.PenaltyShare[h-1], want, 1e-12) {
					t.Errorf("step %d: PenaltyShare %v, direct on the same sample %v", h, dg.PenaltyShare[h-1], want)
				}
				// The sample estimates the mean over all rows.
				all := full / fullTerms / float64(tb.H-h+1)
				if math.Abs(dg.PenaltyShare[h-1]-all) > 0.25*all {
					t.Errorf("step %d: sampled share %v far from the full mean %v", h, dg.PenaltyShare[h-1], all)
				}
			}
		})
	}
}

// directUncovered lists, per site, the features it never observes (any
// step) and the actions they belong to.
func directUncovered(tb *traj.Table, m *features.Map) []Uncovered {
	var out []Uncovered
	for k, site := range tb.Sites {
		cov := make([]bool, m.Dim())
		for h := range tb.Steps {
			step := &tb.Steps[h]
			for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
				for i, x := range densePhi(m, step.State[j*tb.W:(j+1)*tb.W], int(step.Action[j])) {
					if x != 0 {
						cov[i] = true
					}
				}
			}
		}
		u := Uncovered{Site: site, Of: m.Dim()}
		acts := map[int]bool{}
		for i, c := range cov {
			if c {
				continue
			}
			u.Features++
			switch m.Kind {
			case features.Tabular:
				acts[i%m.A] = true
			case features.ActionBlock:
				acts[i/m.P] = true
			}
		}
		for a := 0; a < m.A; a++ {
			if acts[a] {
				u.Actions = append(u.Actions, a)
			}
		}
		if u.Features > 0 {
			out = append(out, u)
		}
	}
	return out
}

func TestDiagnoseUncoveredAndEmptyCells(t *testing.T) {
	// Tabular, by hand: site c never observes (state 0, action 1).
	mThree, three := grThreeSites()
	tb := grTable(t, mThree, three)
	st, _, p := grSolve(t, tb, mThree, withBeta(0), Sitewise)
	dg := Diagnose(st, p)
	want := []Uncovered{{Site: "c", Features: 1, Of: 6, Actions: []int{1}}}
	if !reflect.DeepEqual(dg.Uncovered, want) || !reflect.DeepEqual(dg.Uncovered, directUncovered(tb, &mThree)) {
		t.Errorf("tabular Uncovered = %+v, want %+v", dg.Uncovered, want)
	}
	if want := []Cell{{Site: "c", Step: 2}}; !reflect.DeepEqual(dg.EmptyCells, want) {
		t.Errorf("EmptyCells = %+v, want %+v", dg.EmptyCells, want)
	}

	// Action-block, by hand: A = 3, p = 3. Site b never takes action 2 and
	// its third state column is always 0: it never observes block 2 (3
	// features) nor coordinate 3 of blocks 0 and 1 (2 features). Site a
	// observes everything; site b's episodes end after step 1.
	mb := features.Map{Kind: features.ActionBlock, A: 3, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	var rows []grRow
	for a := 0; a < 3; a++ {
		rows = append(rows,
			grRow{site: "a", traj: a, step: 1, action: a, reward: 0.5, state: []float64{0.2, 0.3, 0.5}},
			grRow{site: "a", traj: a, step: 2, action: (a + 1) % 3, reward: 0.5, state: []float64{1, 1, 1}})
	}
	for tr := 0; tr < 4; tr++ {
		rows = append(rows, grRow{site: "b", traj: tr, step: 1, action: tr % 2, reward: 0.5, state: []float64{0.4, 0.6, 0}})
	}
	tbb := grTable(t, mb, rows)
	st, _, p = grSolve(t, tbb, mb, withBeta(0), Sitewise)
	dg = Diagnose(st, p)
	want = []Uncovered{{Site: "b", Features: 5, Of: 9, Actions: []int{0, 1, 2}}}
	if !reflect.DeepEqual(dg.Uncovered, want) || !reflect.DeepEqual(dg.Uncovered, directUncovered(tbb, &mb)) {
		t.Errorf("action-block Uncovered = %+v, want %+v", dg.Uncovered, want)
	}
	if want := []Cell{{Site: "b", Step: 2}}; !reflect.DeepEqual(dg.EmptyCells, want) {
		t.Errorf("EmptyCells = %+v, want %+v", dg.EmptyCells, want)
	}

	// Random tables: against the direct computation; EmptyCells lists
	// exactly the (site, step) without rows, in step-then-site order.
	for _, m := range []features.Map{testMaps()[0], testMaps()[1]} {
		tb := randomTable(t, m, 3, 6, []int{3, 12, 2}, 8)
		st, _, p := grSolve(t, tb, m, withBeta(0.1), Sitewise)
		dg := Diagnose(st, p)
		if got, want := dg.Uncovered, directUncovered(tb, &m); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: Uncovered = %+v, want %+v", m.Kind, got, want)
		}
		var cells []Cell
		for h := 1; h <= tb.H; h++ {
			for k, site := range tb.Sites {
				n := 0
				for j := 0; j < tb.Steps[h-1].Len(); j++ {
					if tb.Steps[h-1].Site(j) == k {
						n++
					}
				}
				if n == 0 {
					cells = append(cells, Cell{Site: site, Step: h})
				}
			}
		}
		if !reflect.DeepEqual(dg.EmptyCells, cells) {
			t.Errorf("%v: EmptyCells = %+v, want %+v", m.Kind, dg.EmptyCells, cells)
		}
	}
}

func TestDiagnoseWarnings(t *testing.T) {
	has := func(ws []string, frag string) bool {
		for _, w := range ws {
			if strings.Contains(w, frag) {
				return true
			}
		}
		return false
	}
	// Everything fine: full coverage, no penalty, evidence everywhere.
	mFull, full := grFullCoverage()
	st, _, p := grSolve(t, grTable(t, mFull, full), mFull, withBeta(0), Sitewise)
	if ws := Diagnose(st, p).Warnings(); len(ws) != 0 {
		t.Errorf("warnings on clean data: %q", ws)
	}
	// A huge penalty: no evidence anywhere and the penalty erases every
	// step; site c is uncovered and has an empty cell.
	mThree, three := grThreeSites()
	st, _, p = grSolve(t, grTable(t, mThree, three), mThree, withBeta(1e6), Sitewise)
	ws := Diagnose(st, p).Warnings()
	for _, frag := range []string{"have no evidence", "erases every estimate there", "site c never observes 1 of 6 features (features of actions [1])", "have no data (site c step 2)"} {
		if !has(ws, frag) {
			t.Errorf("warnings %q lack %q", ws, frag)
		}
	}
	// beta 0 on the same data: the uncovered site and the empty cell still
	// warn, the penalty does not.
	st, _, p = grSolve(t, grTable(t, mThree, three), mThree, withBeta(0), Sitewise)
	ws = Diagnose(st, p).Warnings()
	if has(ws, "erases") || !has(ws, "never observes") {
		t.Errorf("beta 0 warnings: %q", ws)
	}

	// Thresholds, on diagnostics set by hand: no evidence warns strictly
	// above NoEvidenceWarn (not for behaviour cloning); the penalty warns
	// at PenaltyShare >= 1 (Algorithm 1's featurewise penalty only).
	for _, c := range []struct {
		method  Method
		noev    float64
		penalty float64
		wantNo  bool
		wantPen bool
	}{
		{Sitewise, NoEvidenceWarn, 0.999, false, false},
		{Sitewise, math.Nextafter(NoEvidenceWarn, 1), 1, true, true},
		{Pooled, 0.5, 3, true, true},
		{PEVIPooled, 0.5, 3, true, false},
		{Behaviour, 0.5, 0, false, false},
	} {
		dg := &Diagnostics{NoEvidenceShare: c.noev, PenaltyShare: []float64{0.1, c.penalty}}
		dg.makeWarnings(&Policy{Method: c.method, Fallback: FallbackBehaviour}, 2)
		if got := has(dg.Warnings(), "no evidence"); got != c.wantNo {
			t.Errorf("%s, share %v: evidence warning %v, want %v", c.method, c.noev, got, c.wantNo)
		}
		if got := has(dg.Warnings(), "erases every estimate there"); got != c.wantPen {
			t.Errorf("%s, penalty share %v: penalty warning %v, want %v", c.method, c.penalty, got, c.wantPen)
		}
		if c.wantPen && !has(dg.Warnings(), "at steps 2:") {
			t.Errorf("penalty warning does not name step 2: %q", dg.Warnings())
		}
	}
}

// grBehaviourTable counts, per step and discrete state, the data's most
// frequent action (ties to the lowest; a state unseen at a step takes the
// step's most frequent action, a step without rows the most frequent
// action over all steps); for continuous maps one action per step.
func grBehaviourTable(tb *traj.Table, m *features.Map) [][]int32 {
	S, discrete := m.Discrete()
	out := make([][]int32, tb.H)
	top := func(c []int) int {
		best := 0
		for a := range c {
			if c[a] > c[best] {
				best = a
			}
		}
		return best
	}
	over := make([]int, tb.A)
	for h := 1; h <= tb.H; h++ {
		for _, a := range tb.Steps[h-1].Action {
			over[a]++
		}
	}
	for h := 1; h <= tb.H; h++ {
		step := &tb.Steps[h-1]
		if step.Len() == 0 {
			out[h-1] = make([]int32, max(S, 1))
			for s := range out[h-1] {
				out[h-1][s] = int32(top(over))
			}
			continue
		}
		all := make([]int, tb.A)
		per := make([][]int, max(S, 1))
		for s := range per {
			per[s] = make([]int, tb.A)
		}
		for j := 0; j < step.Len(); j++ {
			a := int(step.Action[j])
			all[a]++
			if discrete {
				per[int(step.State[j*tb.W])][a]++
			}
		}
		if !discrete {
			out[h-1] = []int32{int32(top(all))}
			continue
		}
		out[h-1] = make([]int32, S)
		for s := 0; s < S; s++ {
			if slices.Max(per[s]) == 0 {
				out[h-1][s] = int32(top(all))
			} else {
				out[h-1][s] = int32(top(per[s]))
			}
		}
	}
	return out
}

// grFallbackTabular: S = 4, A = 3, H = 2. Step 1: state 0 takes 2, 2, 1
// (most frequent 2); state 1 takes 1, 2 (a tie: 1); state 2 takes 0; state
// 3 is unseen (the step's most frequent action, 2: counts 1, 2, 3). Step 2:
// state 3 takes 1; state 0 takes 0, 0; states 1 and 2 are unseen (the
// step's most frequent, 0).
func grFallbackTabular() (features.Map, []grRow, [][]int32) {
	m := features.Map{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}}
	r := func(tr, h, s, a int) grRow {
		return grRow{site: "x", traj: tr, step: h, action: a, reward: 0.5, state: []float64{float64(s)}}
	}
	rows := []grRow{
		r(0, 1, 0, 2), r(1, 1, 0, 2), r(2, 1, 0, 1), r(3, 1, 1, 1), r(4, 1, 1, 2), r(5, 1, 2, 0),
		r(0, 2, 3, 1), r(1, 2, 0, 0), r(2, 2, 0, 0),
	}
	return m, rows, [][]int32{{2, 1, 0, 2}, {0, 0, 0, 1}}
}

func grRoundTrip(t *testing.T, p *Policy) *Policy {
	t.Helper()
	rows, meta, err := p.ArtifactRows()
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromRows("p", rows, meta)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestFallbackWithoutEvidence(t *testing.T) {
	ctx := context.Background()
	// Tabular: every Qhat is 0 under a huge penalty.
	m, rows, want := grFallbackTabular()
	tb := grTable(t, m, rows)
	if got := grBehaviourTable(tb, &m); !reflect.DeepEqual(got, want) {
		t.Fatalf("fixture: direct behaviour table %v, want %v", got, want)
	}
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []Fallback{FallbackLowest, FallbackBehaviour} {
		s := withBeta(1e6)
		s.Fallback = rule
		p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		if p.Fallback != rule {
			t.Fatalf("policy records fallback %q, want %q", p.Fallback, rule)
		}
		if !reflect.DeepEqual(p.BehaviourAction, want) {
			t.Fatalf("BehaviourAction = %v, want %v", p.BehaviourAction, want)
		}
		back := grRoundTrip(t, p)
		if back.Fallback != rule || !reflect.DeepEqual(back.BehaviourAction, want) {
			t.Fatalf("read back: fallback %q table %v", back.Fallback, back.BehaviourAction)
		}
		q := make([]float64, m.A)
		for h := 1; h <= 2; h++ {
			for s := 0; s < m.S; s++ {
				wantA := 0
				if rule == FallbackBehaviour {
					wantA = int(want[h-1][s])
				}
				for name, pol := range map[string]*Policy{"solved": p, "read back": back} {
					a, v, ev := pol.Act(h, []float64{float64(s)}, q)
					if a != wantA || v != 0 || ev {
						t.Errorf("%s %s: step %d state %d: Act = (%d, %v, %v), want (%d, 0, false)", rule, name, h, s, a, v, ev, wantA)
					}
				}
			}
		}
	}

	// Action-block: one behaviour action per step. Step 1 takes 1, 1, 2, 0
	// (most frequent 1); step 2 takes 2, 0 (a tie: 0).
	mb := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	r := func(tr, h, a int, x float64) grRow {
		return grRow{site: "x", traj: tr, step: h, action: a, reward: 0.5, state: []float64{x, 1 - x + 0.1}}
	}
	tbb := grTable(t, mb, []grRow{r(0, 1, 1, 0.2), r(1, 1, 1, 0.5), r(2, 1, 2, 0.9), r(3, 1, 0, 0.3), r(0, 2, 2, 0.4), r(1, 2, 0, 0.7)})
	wantB := [][]int32{{1}, {0}}
	if got := grBehaviourTable(tbb, &mb); !reflect.DeepEqual(got, wantB) {
		t.Fatalf("fixture: direct behaviour table %v, want %v", got, wantB)
	}
	stb, err := NewStats(ctx, tbb, mb, mb.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []Fallback{FallbackLowest, FallbackBehaviour} {
		s := withBeta(1e6)
		s.Fallback = rule
		p, err := NewSolver(stb, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		back := grRoundTrip(t, p)
		q := make([]float64, mb.A)
		for h := 1; h <= 2; h++ {
			for _, x := range []float64{0, 0.25, 0.9} {
				wantA := 0
				if rule == FallbackBehaviour {
					wantA = int(wantB[h-1][0])
				}
				for name, pol := range map[string]*Policy{"solved": p, "read back": back} {
					a, _, ev := pol.Act(h, []float64{x, 1 - x + 0.1}, q)
					if a != wantA || ev {
						t.Errorf("action-block %s %s: step %d: Act = (%d, %v), want (%d, false)", rule, name, h, a, ev, wantA)
					}
				}
			}
		}
	}
}

func TestFallbackWithEvidenceIsArgmax(t *testing.T) {
	// H = 1, lambda = 1, beta = 0, so Qhat(s,a) = sum r / (n + 1). State 0:
	// action 0 five times with reward 0 (the behaviour's choice), actions 1
	// and 2 twice each with reward 0.5: Qhat = 0, 1/3, 1/3, a tie that goes
	// to action 1. State 1: action 0 four times with reward 0, action 2
	// three times with reward 1: Qhat(1,2) = 3/4.
	m := features.Map{Kind: features.Tabular, A: 3, S: 3, StateColumns: []string{"state"}}
	var rows []grRow
	tr := 0
	add := func(s, a, n int, r float64) {
		for i := 0; i < n; i++ {
			rows = append(rows, grRow{site: "x", traj: tr, step: 1, action: a, reward: r, state: []float64{float64(s)}})
			tr++
		}
	}
	add(0, 0, 5, 0)
	add(0, 1, 2, 0.5)
	add(0, 2, 2, 0.5)
	add(1, 0, 4, 0)
	add(1, 2, 3, 1)
	tb := grTable(t, m, rows)
	for _, rule := range []Fallback{FallbackLowest, FallbackBehaviour} {
		s := withBeta(0)
		s.Fallback = rule
		_, _, p := grSolve(t, tb, m, s, Sitewise)
		if p.BehaviourAction[0][0] != 0 || p.BehaviourAction[0][1] != 0 {
			t.Fatalf("fixture: behaviour table %v", p.BehaviourAction)
		}
		q := make([]float64, m.A)
		for _, pol := range []*Policy{p, grRoundTrip(t, p)} {
			for _, c := range []struct {
				s, a int
				v    float64
			}{{0, 1, 1.0 / 3}, {1, 2, 3.0 / 4}} {
				a, v, ev := pol.Act(1, []float64{float64(c.s)}, q)
				if a != c.a || !near(v, c.v, 1e-15) || !ev {
					t.Errorf("%s: state %d: Act = (%d, %v, %v), want (%d, %v, true)", rule, c.s, a, v, ev, c.a, c.v)
				}
			}
		}
	}

	// Random data, moderate penalty: with evidence the action is the
	// argmax (ties lowest) under both rules; without, the rule decides.
	tm := testMaps()[0]
	rt := randomTable(t, tm, 3, 4, []int{30, 20, 45}, 11)
	for _, rule := range []Fallback{FallbackLowest, FallbackBehaviour} {
		s := withBeta(0.3)
		s.Fallback = rule
		_, _, p := grSolve(t, rt, tm, s, Sitewise)
		beh := grBehaviourTable(rt, &tm)
		q := make([]float64, tm.A)
		seen := map[bool]bool{}
		for h := 1; h <= rt.H; h++ {
			for st := 0; st < tm.S; st++ {
				a, v, ev := p.Act(h, []float64{float64(st)}, q)
				arg := 0
				for b := range q {
					if q[b] > q[arg] {
						arg = b
					}
				}
				want := arg
				if q[arg] <= 0 && rule == FallbackBehaviour {
					want = int(beh[h-1][st])
				}
				seen[ev] = true
				if a != want || ev != (q[arg] > 0) || v != q[a] {
					t.Errorf("%s: step %d state %d: Act = (%d, %v, %v), Qhat %v, want action %d", rule, h, st, a, v, ev, q, want)
				}
			}
		}
		if !seen[true] || !seen[false] {
			t.Errorf("%s: fixture should have decisions with and without evidence, got %v", rule, seen)
		}
	}
}

// Behaviour cloning recommends the behaviour table's action everywhere,
// with evidence (it needs none).
func TestBehaviourMethod(t *testing.T) {
	for _, m := range []features.Map{testMaps()[0], testMaps()[1], testMaps()[2]} {
		t.Run(m.Kind.String(), func(t *testing.T) {
			tb := randomTable(t, m, 3, 4, []int{30, 20, 45}, 12)
			_, _, p := grSolve(t, tb, m, DefaultSettings, Behaviour)
			want := grBehaviourTable(tb, &m)
			if !reflect.DeepEqual(p.BehaviourAction, want) {
				t.Fatalf("behaviour table %v, want %v", p.BehaviourAction, want)
			}
			back := grRoundTrip(t, p)
			rng := rand.New(rand.NewPCG(3, 4))
			q := make([]float64, m.A)
			for h := 1; h <= tb.H; h++ {
				var states [][]float64
				if S, ok := m.Discrete(); ok {
					for s := 0; s < S; s++ {
						states = append(states, []float64{float64(s)})
					}
				} else {
					for i := 0; i < 5; i++ {
						states = append(states, []float64{rng.Float64() + 0.01, rng.Float64(), rng.Float64()})
					}
				}
				for _, state := range states {
					wantA := int(want[h-1][0])
					if _, ok := m.Discrete(); ok {
						wantA = int(want[h-1][int(state[0])])
					}
					for _, pol := range []*Policy{p, back} {
						a, v, ev := pol.Act(h, state, q)
						if a != wantA || v != 1 || !ev {
							t.Errorf("step %d state %v: Act = (%d, %v, %v), want (%d, 1, true)", h, state, a, v, ev, wantA)
						}
					}
				}
			}
		})
	}
}

func TestStationaryOffByDefault(t *testing.T) {
	if DefaultSettings.Stationary {
		t.Fatal("stationary pooling must be off by default: it is an assumption about the data")
	}
	if DefaultSettings.Fallback != FallbackBehaviour {
		t.Fatalf("default fallback %q, want behaviour", DefaultSettings.Fallback)
	}
}

// When are the per-step and the stationary recursions provably identical?
// Round h of the per-step recursion regresses r + Vhat_{h+1}(s') on the
// step-h transitions; round h of the stationary recursion regresses it on
// the transitions of every step, with one Lambda = sum_t Gram_t + lambda I.
// If every step has identical statistics, Lambda is H Gram + lambda I and
// the right-hand side H times step h's, so nu agrees up to lambda (hence
// lambda -> 0) — provided Vhat_{h+1} enters every step's transitions the
// same way. It cannot in general: the data contract starts every episode
// at step 1, so step H's transitions all end (Vhat_{H+1} = 0) while
// earlier steps' continue, and "episodes of length 1 at every step" are
// not valid data. What remains provable:
//
//  1. H = 1: one step, so the two recursions are the same computation,
//     bit for bit, at any lambda and beta.
//  2. Identical statistics at every step (each trajectory repeats the same
//     state, action and reward), lambda = 1e-12: in round H no next state
//     enters, so w_H agrees to ~lambda, and the stationary width m_H is
//     the per-step one over sqrt(H) (H times the data).
//  3. Time-indexed states (state h-1 is visited only at step h): each
//     tabular feature has data at one step only, so pooling adds zeros to
//     every sum. Round h's Qhat at the visited state then agrees, by
//     induction over h, with next-state values entering non-trivially, at
//     the default lambda and any beta.
func TestStationaryEqualsPerStep(t *testing.T) {
	ctx := context.Background()
	solveBoth := func(t *testing.T, tb *traj.Table, m features.Map, s Settings) (*Stats, *Policy, *Policy) {
		st, err := NewStats(ctx, tb, m, m.Blocks(), 2)
		if err != nil {
			t.Fatal(err)
		}
		step, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		s.Stationary = true
		stat, err := NewSolver(st, s).Solve(ctx, Problem{Method: Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		return st, step, stat
	}

	t.Run("H=1", func(t *testing.T) {
		for _, m := range []features.Map{testMaps()[0], testMaps()[1]} {
			tb := randomTable(t, m, 3, 1, []int{30, 20, 45}, 5)
			st, step, stat := solveBoth(t, tb, m, withBeta(0.2))
			a, b := step.Runs[0].Steps[0], stat.Runs[0].Steps[0]
			if !reflect.DeepEqual(a.W, b.W) || !reflect.DeepEqual(a.M, b.M) || step.ValueEstimate != stat.ValueEstimate {
				t.Errorf("%v: H = 1: stationary differs from per-step", m.Kind)
			}
			d1, d2 := Diagnose(st, step), Diagnose(st, stat)
			if d1.NoEvidenceShare != d2.NoEvidenceShare || !reflect.DeepEqual(d1.PenaltyShare, d2.PenaltyShare) {
				t.Errorf("%v: H = 1: diagnostics differ", m.Kind)
			}
		}
	})

	t.Run("identical steps, round H", func(t *testing.T) {
		m := features.Map{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}}
		const H = 5
		rng := rand.New(rand.NewPCG(9, 9))
		var rows []grRow
		for _, site := range []string{"a", "b"} {
			for tr := 0; tr < 40; tr++ {
				s, a, r := rng.IntN(m.S), rng.IntN(m.A), rng.Float64()
				for h := 1; h <= H; h++ {
					rows = append(rows, grRow{site: site, traj: tr, step: h, action: a, reward: r, state: []float64{float64(s)}})
				}
			}
		}
		tb := grTable(t, m, rows)
		s := withBeta(0)
		s.Lambda = 1e-12
		_, step, stat := solveBoth(t, tb, m, s)
		a, b := step.Runs[0].Steps[H-1], stat.Runs[0].Steps[H-1]
		for i := range a.W {
			if !near(a.W[i], b.W[i], 1e-9) {
				t.Errorf("w_H[%d]: per-step %v, stationary %v", i, a.W[i], b.W[i])
			}
			if !near(a.M[i], math.Sqrt(H)*b.M[i], 1e-9) {
				t.Errorf("m_H[%d]: per-step %v, stationary %v (x sqrt(H) = %v)", i, a.M[i], b.M[i], math.Sqrt(H)*b.M[i])
			}
		}
	})

	t.Run("time-indexed states", func(t *testing.T) {
		const H = 4
		m := features.Map{Kind: features.Tabular, A: 3, S: H, StateColumns: []string{"state"}}
		rng := rand.New(rand.NewPCG(2, 6))
		var rows []grRow
		for _, site := range []string{"a", "b", "c"} {
			for tr := 0; tr < 30; tr++ {
				length := H
				if rng.IntN(3) == 0 {
					length = 1 + rng.IntN(H)
				}
				for h := 1; h <= length; h++ {
					rows = append(rows, grRow{site: site, traj: tr, step: h, action: rng.IntN(m.A), reward: rng.Float64(), state: []float64{float64(h - 1)}})
				}
			}
		}
		tb := grTable(t, m, rows)
		st, step, stat := solveBoth(t, tb, m, withBeta(0.15))
		qa, qb := make([]float64, m.A), make([]float64, m.A)
		positive := 0
		for h := 1; h <= H; h++ {
			state := []float64{float64(h - 1)}
			step.QValues(h, state, qa)
			stat.QValues(h, state, qb)
			for a := range qa {
				if !near(qa[a], qb[a], 1e-9) {
					t.Errorf("step %d action %d: Qhat per-step %v, stationary %v", h, a, qa[a], qb[a])
				}
				if qa[a] > 0 {
					positive++
				}
			}
			a1, _, _ := step.Act(h, state, qa)
			a2, _, _ := stat.Act(h, state, qb)
			if a1 != a2 {
				t.Errorf("step %d: action per-step %d, stationary %d", h, a1, a2)
			}
		}
		if positive < H {
			t.Errorf("fixture too pessimistic: only %d positive Qhat", positive)
		}
		if !near(step.ValueEstimate, stat.ValueEstimate, 1e-9) || step.ValueEstimate <= 0 {
			t.Errorf("value estimate per-step %v, stationary %v", step.ValueEstimate, stat.ValueEstimate)
		}
		if d1, d2 := Diagnose(st, step), Diagnose(st, stat); d1.NoEvidenceShare != d2.NoEvidenceShare {
			t.Errorf("no-evidence share per-step %v, stationary %v", d1.NoEvidenceShare, d2.NoEvidenceShare)
		}
	})
}

// On a stationary simulated MDP (the formulary scenario: its kernels and
// rewards do not depend on h), pooling the steps lowers the variance of
// each step's regression across data sets. The check is on w_h of the
// pooled grouping (one group, beta = 0, so w_h is the regression nu_h) at
// the cells that every data set observes at step h (elsewhere the
// per-step estimate is the ridge prior 0, with no variance at all), at the
// last step (the reward regression) and mid-horizon.
//
// It is NOT a check on the value estimate Vhat_1 or on the exact value of
// the learned policy: measured on the same data, their variance is not
// lower with pooling (see docs/GUARDRAILS.md). The per-step estimator is
// shrunk toward 0 by the ridge on thin cells (and, site-wise, erased by
// the row-min), which makes its spread small, and reusing the same data
// in every round makes the stationary errors add up coherently over the
// horizon.
func TestStationaryLowersVariance(t *testing.T) {
	ctx := context.Background()
	const K, N, seeds = 5, 200, 20
	tr := make([]int, K)
	for k := range tr {
		tr[k] = N
	}
	model, err := sim.NewFormulary(sim.Params{Trajectories: tr, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	m := model.Map()
	H, d := model.Horizon(), m.Dim()
	covered := make([][]bool, H)
	for h := range covered {
		covered[h] = make([]bool, d)
		for i := range covered[h] {
			covered[h][i] = true
		}
	}
	w := map[bool][][][]float64{} // [stationary][seed][h-1][i]
	vEst, vExact := map[bool][]float64{}, map[bool][]float64{}
	// eval.ExactStates initial states drawn with eval.ExactSeed (eval
	// imports solve, so its constants are repeated here).
	evalStates := model.InitialStates(200, 20260101)
	mean := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s / float64(len(x))
	}
	variance := func(x []float64) float64 {
		m, s := mean(x), 0.0
		for _, v := range x {
			s += (v - m) * (v - m)
		}
		return s / float64(len(x)-1)
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		tb, err := model.Sample(seed)
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewStats(ctx, tb, m, m.Blocks(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for h := range covered {
			for i := range covered[h] {
				n := 0.0
				for k := range st.Cells[h] {
					n += st.Cells[h][k].Packed[i] // tabular: the diagonal
				}
				covered[h][i] = covered[h][i] && n > 0
			}
		}
		for _, stationary := range []bool{false, true} {
			s := withBeta(0)
			s.Stationary = stationary
			p, err := NewSolver(st, s).Solve(ctx, Problem{Method: Pooled})
			if err != nil {
				t.Fatal(err)
			}
			ws := make([][]float64, H)
			for h := range ws {
				ws[h] = p.Runs[0].Steps[h].W
			}
			w[stationary] = append(w[stationary], ws)
			// For the record (not asserted): the value estimate and the
			// exact robust value of the learned policy.
			q := make([]float64, p.A)
			exact := model.PolicyValue(func(h int, state []float64) int {
				a, _, _ := p.Act(h, state, q)
				return a
			}, evalStates)
			vEst[stationary] = append(vEst[stationary], p.ValueEstimate)
			vExact[stationary] = append(vExact[stationary], mean(exact))
		}
	}
	meanVar := func(rs [][][]float64, h int) (float64, int) {
		tot, n := 0.0, 0
		for i := 0; i < d; i++ {
			if !covered[h-1][i] {
				continue
			}
			mean := 0.0
			for _, r := range rs {
				mean += r[h-1][i]
			}
			mean /= float64(len(rs))
			v := 0.0
			for _, r := range rs {
				v += (r[h-1][i] - mean) * (r[h-1][i] - mean)
			}
			tot += v / float64(len(rs)-1)
			n++
		}
		return tot / float64(n), n
	}
	t.Logf("value estimate: per-step mean %.4f variance %.4g, stationary mean %.4f variance %.4g", mean(vEst[false]), variance(vEst[false]), mean(vEst[true]), variance(vEst[true]))
	t.Logf("exact robust value of the policy: per-step mean %.4f variance %.4g, stationary mean %.4f variance %.4g (optimal %.4f)", mean(vExact[false]), variance(vExact[false]), mean(vExact[true]), variance(vExact[true]), mean(model.OptimalValue(evalStates)))
	for _, h := range []int{H, H / 2} {
		perStep, n := meanVar(w[false], h)
		pooled, _ := meanVar(w[true], h)
		t.Logf("step %d, %d cells observed in every data set: mean variance of w_h per-step %.4g, stationary %.4g", h, n, perStep, pooled)
		if n < 10 {
			t.Fatalf("step %d: only %d cells observed in every data set", h, n)
		}
		if !(pooled < perStep/2) {
			t.Errorf("step %d: stationary variance %.4g is not below half the per-step variance %.4g", h, pooled, perStep)
		}
	}
}

// DiagnoseSampled with the evidence of a systematic sample (stride > 1)
// gives, per site, the weighted share of sampled rows without evidence,
// exactly as a direct count over every row's global index does: combined
// PEVI policies (which are diagnosed from the sample), with and without row
// weights.
func TestDiagnoseSampledStride(t *testing.T) {
	ctx := context.Background()
	m := testMaps()[1] // action-block
	for _, weighted := range []bool{false, true} {
		tb := randomTable(t, m, 3, 4, []int{30, 20, 45}, 5)
		if weighted {
			rng := rand.New(rand.NewPCG(3, 9))
			weigh(tb, func() float64 { return 0.25 + 3*rng.Float64() })
		}
		for _, method := range []Method{PEVIAvg, PEVIMin} {
			mixed := false
			for _, beta := range []float64{0.6, 0.8, 1, 1.2, 1.4} {
				_, _, p := grSolve(t, tb, m, withBeta(beta), method)
				for _, rows := range []int{SampleRows, 100, 37, 8} {
					st, err := newStats(ctx, tb, m, BlocksFor(tb, &m), 2, Tuning{SampleRows: rows})
					if err != nil {
						t.Fatal(err)
					}
					stride := st.tuning.stride(tb.Rows)
					_, ev, err := ActAll(ctx, p, tb, 2, stride)
					if err != nil {
						t.Fatal(err)
					}
					dg := DiagnoseSampled(st, p, ev)
					K := len(tb.Sites)
					noev, sampled := make([]float64, K), make([]float64, K)
					g := 0
					for h := range tb.Steps {
						s := &tb.Steps[h]
						for j := 0; j < s.Len(); j, g = j+1, g+1 {
							if g%stride != 0 {
								continue
							}
							wt := 1.0
							if s.Weight != nil {
								wt = s.Weight[j]
							}
							k := s.Site(j)
							sampled[k] += wt
							if !ev[g/stride] {
								noev[k] += wt
							}
						}
					}
					want := map[string]float64{}
					tot, totNo := 0.0, 0.0
					for k, site := range tb.Sites {
						if sampled[k] > 0 {
							want[site] = noev[k] / sampled[k]
						}
						tot += sampled[k]
						totNo += noev[k]
					}
					name := fmt.Sprintf("%s weighted=%v beta %v stride %d", method, weighted, beta, stride)
					if !reflect.DeepEqual(dg.NoEvidenceBySite, want) || dg.NoEvidenceShare != totNo/tot {
						t.Errorf("%s: share %v by site %v, direct count %v %v", name, dg.NoEvidenceShare, dg.NoEvidenceBySite, totNo/tot, want)
					}
					mixed = mixed || stride > 1 && totNo > 0 && totNo < tot
				}
			}
			if !mixed {
				t.Fatalf("%s weighted=%v: no sample mixes rows with and without evidence: the test would prove little", method, weighted)
			}
		}
	}
}
