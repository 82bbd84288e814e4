package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/traj"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// tinyRow is one row of a hand-built table.
type tinyRow struct {
	site       string
	traj, step int64
	action     int64
	reward     float64
	state      float64
}

func tinyTable(t *testing.T, m features.Map, H int, rows []tinyRow) *traj.Table {
	t.Helper()
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: m.A, Horizon: H})
	c := &traj.Chunk{Src: traj.Origin{File: "tiny"}, W: 1}
	for _, r := range rows {
		c.SiteStr = append(c.SiteStr, r.site)
		c.TrajInt = append(c.TrajInt, r.traj)
		c.Step = append(c.Step, r.step)
		c.ActionInt = append(c.ActionInt, r.action)
		c.Reward = append(c.Reward, r.reward)
		c.State = append(c.State, r.state)
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

// Identification bounds and support on a table small enough to work by
// hand: one state, actions a0 and a1, H = 2, the policy always a0.
//
//	site A: traj 1: (a0, r=0.5) -> (a0, r=1);  traj 2: (a1, r=0.2) -> (a0, r=0)
//	site B: traj 1: (a0, r=0.3) -> (a1, r=0.4); traj 2: (a0, r=0.1), ends
//
// Step 2 (remaining horizon 1): A observes a0 with mean 0.5, B never does
// ([0, 1]). Site A's V2 = 0.5; B's V2 in [0, 1]; robust V2: lower min(0.5,
// 0) = 0, upper A's upper confidence limit for a mean of 0.5 from 2 rows
// in [0, 1] (B has no rows in the cell).
// Step 1: A's cell a0 holds traj 1 only: 0.5 + 0.5 = 1 (both bounds).
// B's: traj 1 0.3 + [0, 1], traj 2 0.1 -> [0.2, 0.7]. Robust: lower
// min(A's 0.5, B's mean(0.3, 0.1) = 0.2) = 0.2; upper the smaller of A's
// limit for 0.5 + u2 from 1 row and B's for mean(0.3 + u2, 0.1) from 2
// rows, in [0, 2], with u2 the robust upper bound at step 2. Each lower
// mean divides by n + EvalLambda, as fitted-Q does, and every mean moves
// outward by a relative 1e-12 (boundsSlack).
// Support: A's 4 visits all have a0 observed at A: 1; B's 3 visits: step 1
// yes (2), step 2 no (1): 2/3; every site has evidence at the 4 step-1
// visits only: 4/7. With H = 2 the identification limit is 0.2: A is
// identified (width 0), B (0.5) and the robust value are not.
func TestBoundsHandWorked(t *testing.T) {
	m := features.Map{Kind: features.Tabular, A: 2, S: 1, StateColumns: []string{"state"}}
	tb := tinyTable(t, m, 2, []tinyRow{
		{"A", 1, 1, 0, 0.5, 0}, {"A", 1, 2, 0, 1, 0},
		{"A", 2, 1, 1, 0.2, 0}, {"A", 2, 2, 0, 0, 0},
		{"B", 1, 1, 0, 0.3, 0}, {"B", 1, 2, 1, 0.4, 0},
		{"B", 2, 1, 0, 0.1, 0},
	})
	pol := &solve.Policy{Method: solve.Behaviour, Map: m, H: 2, D: m.Dim(), A: 2, BehaviourAction: [][]int32{{0}, {0}}, ValueEstimate: math.NaN()}
	s := solve.DefaultSettings
	rep, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want float64) {
		t.Helper()
		if !near(got, want, 1e-11) { // the bounds' outward slack, 1e-12 per step
			t.Errorf("%s: got %.15g, want %.15g", what, got, want)
		}
	}
	l := EvalLambda
	alpha := (1 - BoundsLevel) / 2
	u2 := upperLimit(0.5, 2, 0, 1, alpha)
	check("A lower", rep.Sites[0].Lower, (0.5+1/(2+l))/(1+l))
	check("A upper", rep.Sites[0].Upper, 1)
	check("B lower", rep.Sites[1].Lower, 0.4/(2+l))
	check("B upper", rep.Sites[1].Upper, 0.7)
	check("robust lower", rep.Lower, 0.4/(2+l))
	check("robust upper", rep.Upper, min(upperLimit(0.5+u2, 1, 0, 2, alpha), upperLimit((0.3+u2+0.1)/2, 2, 0, 2, alpha)))
	if u2 <= 0.5 || rep.Upper <= 0.45 {
		t.Errorf("the confidence limits do not widen the means: step 2 %v, robust upper %v", u2, rep.Upper)
	}
	check("A support", rep.Sites[0].Support, 1)
	check("B support", rep.Sites[1].Support, 2.0/3)
	check("robust support", rep.Support, 4.0/7)
	if !rep.HasBounds || !rep.Sites[0].Identified || rep.Sites[1].Identified || rep.Identified {
		t.Errorf("identified: A %v B %v robust %v, want true false false", rep.Sites[0].Identified, rep.Sites[1].Identified, rep.Identified)
	}
	// Observed care: A's returns 1.5 and 0.2, B's 0.7 and 0.1.
	check("A observed", rep.Observed[0].Value, 0.85)
	check("B observed", rep.Observed[1].Value, 0.4)
	nflag := 0
	for _, w := range rep.Warnings {
		if contains(w, "not identified") {
			nflag++
		}
	}
	if nflag != 2 {
		t.Errorf("want 2 not-identified warnings (B, robust), got %q", rep.Warnings)
	}
}

// Maps whose features are not indicators have no bounds.
func TestBoundsOnlyForIndicatorMaps(t *testing.T) {
	m := testMaps()[1]
	tb := randomTable(t, m, 2, 3, []int{20, 20}, 1)
	s := solve.DefaultSettings
	pol := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
	rep, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.HasBounds || !math.IsNaN(rep.Lower) || !math.IsNaN(rep.Sites[0].Upper) {
		t.Errorf("action-block map: HasBounds %v, lower %v, site upper %v; want false, NaN, NaN", rep.HasBounds, rep.Lower, rep.Sites[0].Upper)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// On the sparse formulary scenario (seed 1, the site-wise tabular policy),
// every site's exact value under the model lies within the bootstrap
// interval of its bounds or the site is flagged as not identified; the
// robust value likewise. Per state the bounds are exact about unobserved
// cells, so each site's exact value averaged over the site's own initial
// states in the data (the states its estimate and bounds average over)
// lies within the bounds' bootstrap interval, flagged or not.
func TestBoundsFormulary(t *testing.T) {
	mm, err := sim.New(sim.ScenarioFormulary, sim.Params{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := mm.Sample(1)
	if err != nil {
		t.Fatal(err)
	}
	m := mm.Map()
	s := solve.DefaultSettings
	pol := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
	rep, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{Bootstrap: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	me := NewModel(mm)
	exact, err := me.ExactSites(pol)
	if err != nil {
		t.Fatal(err)
	}
	rob, err := me.Exact(pol)
	if err != nil {
		t.Fatal(err)
	}
	pi := policyFunc(pol)
	s1 := &tb.Steps[0]
	for k, sv := range rep.Sites {
		if !(sv.BoundsCILow <= sv.Lower && sv.Lower <= sv.Upper && sv.Upper <= sv.BoundsCIHigh) {
			t.Errorf("site %s: bounds [%v, %v] not inside their interval [%v, %v]", sv.Site, sv.Lower, sv.Upper, sv.BoundsCILow, sv.BoundsCIHigh)
		}
		if inside := sv.BoundsCILow <= exact[k] && exact[k] <= sv.BoundsCIHigh; !inside && sv.Identified {
			t.Errorf("site %s: exact value %v outside [%v, %v] and not flagged", sv.Site, exact[k], sv.BoundsCILow, sv.BoundsCIHigh)
		}
		var states [][]float64
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			states = append(states, []float64{s1.State[j]})
		}
		own := 0.0
		for _, v := range mm.SitePolicyValue(k, pi, states) {
			own += v
		}
		own /= float64(len(states))
		if own < sv.BoundsCILow || own > sv.BoundsCIHigh {
			t.Errorf("site %s: exact value at its own initial states %v outside the bounds' interval [%v, %v]", sv.Site, own, sv.BoundsCILow, sv.BoundsCIHigh)
		}
	}
	if !(rep.Lower <= rob.PolicyValue && rob.PolicyValue <= rep.Upper) {
		t.Errorf("robust: exact value %v outside the bounds [%v, %v]", rob.PolicyValue, rep.Lower, rep.Upper)
	}
	if !(rep.BoundsCILow <= rep.Lower && rep.Upper <= rep.BoundsCIHigh) {
		t.Errorf("robust: bounds [%v, %v] not inside their interval [%v, %v]", rep.Lower, rep.Upper, rep.BoundsCILow, rep.BoundsCIHigh)
	}
}

// The upper confidence limit solves n kl(x, q) = ln(1/alpha) on [x, 1]
// (scaled to [bot, top]), is the trivial top on a handful of rows, falls
// toward the mean as rows accumulate, and covers the mean of Bernoulli
// draws (the extreme law on [0, 1]) at its level.
func TestUpperLimit(t *testing.T) {
	kl := func(x, q float64) float64 {
		v := 0.0
		if x > 0 {
			v += x * math.Log(x/q)
		}
		if x < 1 {
			v += (1 - x) * math.Log((1-x)/(1-q))
		}
		return v
	}
	const alpha = 0.01
	for _, x := range []float64{0, 1e-9, 0.01, 0.2, 0.5, 0.9, 0.999} {
		prev := math.Inf(1)
		for _, n := range []float64{1, 2, 5, 20, 100, 1e4, 1e7} {
			u := upperLimit(3+4*x, n, 3, 7, alpha)
			q := (u - 3) / 4
			if q < x || q > 1 || u > prev {
				t.Fatalf("x %v n %v: limit %v (q %v), previous %v", x, n, u, q, prev)
			}
			prev = u
			if q < 1 {
				if got := n * kl(x, q); math.Abs(got-math.Log(1/alpha)) > 1e-6*math.Log(1/alpha) {
					t.Errorf("x %v n %v: n kl(x, q) = %v, want %v", x, n, got, math.Log(1/alpha))
				}
			}
		}
	}
	if u := upperLimit(0.5, 1, 0, 1, alpha); u < 0.99 {
		t.Errorf("one row: limit %v, want nearly the top", u)
	}
	if u := upperLimit(1, 3, 0, 1, alpha); u != 1 {
		t.Errorf("mean at the top: limit %v", u)
	}
	// Coverage: Bernoulli(p) means from n draws, 20000 times each.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []float64{0.05, 0.3, 0.7} {
		for _, n := range []int{3, 10, 50} {
			miss := 0
			const reps = 20000
			for range reps {
				c := 0
				for range n {
					if rng.Float64() < p {
						c++
					}
				}
				if upperLimit(float64(c)/float64(n), float64(n), 0, 1, 0.05) < p {
					miss++
				}
			}
			if float64(miss)/reps > 0.05 {
				t.Errorf("p %v n %d: the 95%% limit misses %d of %d", p, n, miss, reps)
			}
		}
	}
}

// The return range on a hand-worked case: one state, actions a0 and a1,
// H = 3, a 0/1 outcome at the last step, the policy always a0.
//
//	site A: traj 1: a0, a0, a0 (r = 0, 0, 1); traj 2: a0, a0, a0 (r = 0)
//	site B: traj 1: a0, a1, a1 (r = 0, 0, 1); traj 2: a0, a1, a1 (r = 0)
//
// Site A observes a0 everywhere: V = 0.5 at every step, bounds [0.5, 0.5]
// up to the lower means' ridge (each divides by n + EvalLambda) and the
// outward slack. Site B never observes a0 at steps 2 and 3: its V2 lies
// in [0, top2] and its V1 = 0 + V2 in [0, top2], top2 being 2 (the
// remaining horizon) by default and min(2, 1) = 1 with --return-range
// 0,1. The robust value takes, at steps 2 and 3, lower min(A's, 0) = 0
// and upper A's 95% upper confidence limit from 2 rows (alpha = 0.05/2
// over the two sites), rescaled by the value range from the step on, so
// that the range moves it too. Identified: width below 10% of the range
// (0.3 by default, 0.1 with the range): A only.
func TestReturnRangeHandWorked(t *testing.T) {
	m := features.Map{Kind: features.Tabular, A: 2, S: 1, StateColumns: []string{"state"}}
	var rows []tinyRow
	for _, e := range []struct {
		site string
		traj int64
		a    int64
		r    float64
	}{{"A", 1, 0, 1}, {"A", 2, 0, 0}, {"B", 1, 1, 1}, {"B", 2, 1, 0}} {
		rows = append(rows, tinyRow{e.site, e.traj, 1, 0, 0, 0}, tinyRow{e.site, e.traj, 2, e.a, 0, 0}, tinyRow{e.site, e.traj, 3, e.a, e.r, 0})
	}
	tb := tinyTable(t, m, 3, rows)
	pol := &solve.Policy{Method: solve.Behaviour, Map: m, H: 3, D: m.Dim(), A: 2, BehaviourAction: [][]int32{{0}, {0}, {0}}, ValueEstimate: math.NaN()}
	s := solve.DefaultSettings
	l, alpha := EvalLambda, (1-BoundsLevel)/2
	aLower := lowerMean(2*lowerMean(2*lowerMean(1, 2, l), 2, l), 2, l)
	aUpper := outward(outward(outward(0.5)))
	for _, c := range []struct {
		rng          Range
		lo, hi       float64
		bUpper       float64
		notes        int
		aID, bID, id bool
	}{
		{Range{}, 0, 3, 2, 0, true, false, false},
		{Range{0, 1}, 0, 1, 1, 0, true, false, false},
	} {
		rep, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{ReturnRange: c.rng, Bootstrap: 50, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if rep.ReturnLo != c.lo || rep.ReturnHi != c.hi || rep.ReturnRangeStated != !c.rng.IsZero() {
			t.Errorf("range %v: report's range [%g, %g] (stated %v)", c.rng, rep.ReturnLo, rep.ReturnHi, rep.ReturnRangeStated)
		}
		a, b := rep.Sites[0], rep.Sites[1]
		top := func(h int) float64 { return min(float64(3-h+1), c.hi) }
		u3 := upperLimit(0.5, 2, 0, top(3), alpha)
		u2 := upperLimit(u3, 2, 0, top(2), alpha)
		u1 := upperLimit(u2, 2, 0, top(1), alpha)
		for _, x := range []struct {
			what      string
			got, want float64
		}{{"A lower", a.Lower, aLower}, {"A upper", a.Upper, aUpper}, {"B lower", b.Lower, 0}, {"B upper", b.Upper, c.bUpper}, {"robust lower", rep.Lower, 0}, {"robust upper", rep.Upper, u1}} {
			if !near(x.got, x.want, 1e-11) { // the bounds' outward slack, 1e-12 per step
				t.Errorf("range %v: %s %.15g, want %g", c.rng, x.what, x.got, x.want)
			}
		}
		if a.Identified != c.aID || b.Identified != c.bID || rep.Identified != c.id {
			t.Errorf("range %v: identified A %v, B %v, robust %v", c.rng, a.Identified, b.Identified, rep.Identified)
		}
		for _, v := range []float64{rep.ValueCILow, rep.ValueCIHigh, rep.BoundsCILow, rep.BoundsCIHigh, a.CILow, a.CIHigh, b.CILow, b.CIHigh, b.BoundsCILow, b.BoundsCIHigh, rep.Observed[1].CILow, rep.Observed[1].CIHigh} {
			if v < c.lo || v > c.hi {
				t.Errorf("range %v: an interval's end %g lies outside the range", c.rng, v)
			}
		}
	}
	if _, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{ReturnRange: Range{1, 0}}); err == nil {
		t.Error("return range [1, 0] accepted")
	}
}

// TestReturnRangeNote checks the note that names --return-range: a 0/1
// outcome over H = 12 steps (returns in [0, 1], narrower than a tenth of
// [0, 12]) gets it, and stating the range removes it.
func TestReturnRangeNote(t *testing.T) {
	m := features.Map{Kind: features.Tabular, A: 2, S: 1, StateColumns: []string{"state"}}
	var rows []tinyRow
	for i, r := range []float64{0, 1, 1} {
		for h := int64(1); h <= 12; h++ {
			rew := 0.0
			if h == 12 {
				rew = r
			}
			rows = append(rows, tinyRow{"A", int64(i), h, 0, rew, 0})
		}
	}
	tb := tinyTable(t, m, 12, rows)
	pol := &solve.Policy{Method: solve.Behaviour, Map: m, H: 12, D: m.Dim(), A: 2, BehaviourAction: make([][]int32, 12), ValueEstimate: math.NaN()}
	for h := range pol.BehaviourAction {
		pol.BehaviourAction[h] = []int32{0}
	}
	s := solve.DefaultSettings
	rep, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "--return-range") {
		t.Errorf("notes %q, want one naming --return-range", rep.Notes)
	}
	rep, err = FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{ReturnRange: Range{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("with the range stated, notes %q", rep.Notes)
	}
}

// TestClip checks that clip moves every interval's and bound's ends into
// the return range, and leaves the point estimates and NaN alone.
func TestClip(t *testing.T) {
	nan := math.NaN()
	r := &Report{ReturnLo: 0, ReturnHi: 1, PolicyValue: 1.2, ValueCILow: -0.6, ValueCIHigh: 0.86, Lower: -1, Upper: 3, BoundsCILow: nan, BoundsCIHigh: 1.5,
		Sites:    []SiteValue{{Value: -0.1, CILow: -0.6, CIHigh: 0.86, Lower: 0.2, Upper: 2, BoundsCILow: -0.2, BoundsCIHigh: 2.5, Estimates: map[string]Estimate{WDR: {Value: 0.5, CILow: -0.3, CIHigh: 1.3}}}},
		Observed: []ObservedValue{{Value: 0.4, CILow: -0.1, CIHigh: 1.1}},
		Worst:    &WorstSite{WorstEstimate: WorstEstimate{Estimate: Estimate{Value: 0.2, CILow: -0.5, CIHigh: 0.9}}, Estimates: map[string]WorstEstimate{FQE: {Estimate: Estimate{Value: 0.2, CILow: -0.5, CIHigh: 1.9}}}}}
	r.clip()
	s := r.Sites[0]
	for _, x := range []struct {
		what      string
		got, want float64
	}{
		{"value", r.PolicyValue, 1.2}, {"value ci low", r.ValueCILow, 0}, {"value ci high", r.ValueCIHigh, 0.86}, {"lower", r.Lower, 0}, {"upper", r.Upper, 1},
		{"bounds ci high", r.BoundsCIHigh, 1}, {"site value", s.Value, -0.1}, {"site ci low", s.CILow, 0}, {"site upper", s.Upper, 1},
		{"site bounds ci low", s.BoundsCILow, 0}, {"site bounds ci high", s.BoundsCIHigh, 1}, {"wdr ci low", s.Estimates[WDR].CILow, 0}, {"wdr ci high", s.Estimates[WDR].CIHigh, 1},
		{"observed ci low", r.Observed[0].CILow, 0}, {"observed ci high", r.Observed[0].CIHigh, 1}, {"worst ci low", r.Worst.CILow, 0}, {"worst fqe ci high", r.Worst.Estimates[FQE].CIHigh, 1},
	} {
		if x.got != x.want {
			t.Errorf("%s: %g, want %g", x.what, x.got, x.want)
		}
	}
	if !math.IsNaN(r.BoundsCILow) {
		t.Errorf("NaN bounds ci low became %g", r.BoundsCILow)
	}
}
