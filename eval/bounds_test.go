package eval

import (
	"context"
	"math"
	"math/rand/v2"
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
