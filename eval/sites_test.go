package eval

import (
	"math"
	"testing"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Each site's own exact value on the hard instance has the closed form of
// the robust one without the minimum: always b_{a+1} is worth
// (H-1) p^k_{a+1} at site k.
func TestExactSitesHardInstance(t *testing.T) {
	const H = 6
	hm := hardModel(t, H)
	p := hm.P()
	me := NewModel(hm)
	for a := 0; a < hm.Map().A; a++ {
		got, err := me.ExactSites(constantPolicy(hm, a))
		if err != nil {
			t.Fatal(err)
		}
		for k := range got {
			if want := float64(H-1) * p[k][a]; !near(got[k], want, 1e-12) {
				t.Errorf("always b%d, site %d: got %.15g, want (H-1) p^k = %.15g", a+1, k, got[k], want)
			}
		}
	}
}

// On the formulary scenario, each site's own exact value equals an
// independent dense backward induction written here from the scenario's
// exported kernels and rewards (sim.Formulary.Transition and Reward),
// averaged over the same evaluation states; and the robust value is at
// most every site's own value.
func TestExactSitesFormularyDense(t *testing.T) {
	mm, err := sim.New(sim.ScenarioFormulary, sim.Params{Seed: 3, Trajectories: []int{20, 20, 20, 20, 20}})
	if err != nil {
		t.Fatal(err)
	}
	fm := mm.(*sim.Formulary)
	m := fm.Map()
	H := fm.Horizon()
	S, A := m.S, m.A
	// A policy that depends on the state and the step.
	beh := make([][]int32, H)
	for h := range beh {
		beh[h] = make([]int32, S)
		for s := range beh[h] {
			beh[h][s] = int32((s*7 + h) % A)
		}
	}
	pol := &solve.Policy{Method: solve.Behaviour, Map: m, H: H, D: m.Dim(), A: A, BehaviourAction: beh, ValueEstimate: math.NaN()}
	me := NewModel(fm)
	got, err := me.ExactSites(pol)
	if err != nil {
		t.Fatal(err)
	}
	robust, err := me.Exact(pol)
	if err != nil {
		t.Fatal(err)
	}
	for k := range got {
		V := make([]float64, S) // V_{h+1}
		for h := H; h >= 1; h-- {
			nv := make([]float64, S)
			for s := 0; s < S; s++ {
				a := int(beh[h-1][s])
				v := fm.Reward(k, s, a)
				if h < H {
					next, prob := fm.Transition(k, s, a)
					for x, s2 := range next {
						v += prob[x] * V[s2]
					}
				}
				nv[s] = v
			}
			V = nv
		}
		want := 0.0
		for _, st := range me.States {
			want += V[int(st[0])]
		}
		want /= float64(len(me.States))
		if !near(got[k], want, 1e-10) {
			t.Errorf("site %d: got %.15g, dense backward induction %.15g", k, got[k], want)
		}
		if robust.PolicyValue > got[k]+1e-12 {
			t.Errorf("site %d: robust value %v above the site's own %v", k, robust.PolicyValue, got[k])
		}
	}
	if len(got) != len(fm.Sites()) {
		t.Errorf("got %d sites, want %d", len(got), len(fm.Sites()))
	}
}

// The benchmark's Monte Carlo recursion restricted to one site gives a
// value at least the robust one at every state.
func TestExactSitesBenchmarkAboveRobust(t *testing.T) {
	mm, err := sim.New(sim.ScenarioBenchmark, sim.Params{Seed: 2, Trajectories: []int{10, 10, 10}, Horizon: 4})
	if err != nil {
		t.Fatal(err)
	}
	pi := func(h int, s []float64) int { return (h + int(10*s[0])) % mm.Map().A }
	states := mm.InitialStates(20, 1)
	rob := mm.PolicyValue(pi, states)
	for k := range mm.Sites() {
		v := mm.SitePolicyValue(k, pi, states)
		for i := range v {
			if v[i] < rob[i]-1e-12 {
				t.Errorf("site %d state %d: own value %v below robust %v", k, i, v[i], rob[i])
			}
		}
	}
}
