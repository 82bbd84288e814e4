package eval

import (
	"math"
	"math/rand/v2"
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
// averaged over the site's own case-mix (sim.Formulary.Initial), the law
// its data's initial states follow; and at every state the robust value
// is at most every site's own value.
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
		for s, q := range fm.Initial(k) {
			want += q * V[s]
		}
		if !near(got[k], want, 1e-10) {
			t.Errorf("site %d: got %.15g, dense backward induction over the case-mix %.15g", k, got[k], want)
		}
		rob := fm.PolicyValue(policyFunc(pol), me.States)
		for i, st := range me.States {
			if rob[i] > V[int(st[0])]+1e-12 {
				t.Errorf("site %d, state %v: robust value %v above the site's own %v", k, st, rob[i], V[int(st[0])])
			}
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

// A site's exact value is what its estimate estimates: the mean return of
// trajectories that start from the site's own case-mix and follow the
// policy under the site's kernels. On formulary seed 1, Monte Carlo
// trajectories drawn here from the exported kernels, rewards and case-mix
// (the expected reward summed along each path, death ending it) agree
// with ExactSites within 4 standard errors at every site, and at site 1,
// whose case-mix differs most, the value differs from the average over the
// evaluation states by far more than that.
func TestExactSitesOwnCaseMixMonteCarlo(t *testing.T) {
	mm, err := sim.New(sim.ScenarioFormulary, sim.Params{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	fm := mm.(*sim.Formulary)
	m := fm.Map()
	H, S, A := fm.Horizon(), m.S, m.A
	beh := make([][]int32, H)
	for h := range beh {
		beh[h] = make([]int32, S)
		for s := range beh[h] {
			beh[h][s] = int32((s*3 + 2*h) % A)
		}
	}
	pol := &solve.Policy{Method: solve.Behaviour, Map: m, H: H, D: m.Dim(), A: A, BehaviourAction: beh, ValueEstimate: math.NaN()}
	me := NewModel(fm)
	got, err := me.ExactSites(pol)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	draw := func(p []float64) int {
		u := rng.Float64()
		for i, q := range p {
			if u < q {
				return i
			}
			u -= q
		}
		return -1
	}
	const n = 20000
	for k := range got {
		init := fm.Initial(k)
		sum, sum2 := 0.0, 0.0
		for range n {
			s := draw(init)
			ret := 0.0
			for h := 1; h <= H && s >= 0; h++ {
				a := int(beh[h-1][s])
				ret += fm.Reward(k, s, a)
				next, prob := fm.Transition(k, s, a)
				if i := draw(prob); i >= 0 {
					s = int(next[i])
				} else {
					s = -1
				}
			}
			sum += ret
			sum2 += ret * ret
		}
		mean := sum / n
		se := math.Sqrt((sum2/n - mean*mean) / n)
		if math.Abs(got[k]-mean) > 4*se {
			t.Errorf("site %d: exact %.4f, Monte Carlo %.4f (se %.4f)", k+1, got[k], mean, se)
		}
		if k == 0 {
			atEval := 0.0
			for _, v := range fm.SitePolicyValue(k, policyFunc(pol), me.States) {
				atEval += v
			}
			atEval /= float64(len(me.States))
			if math.Abs(atEval-got[k]) < 20*se {
				t.Errorf("site 1: own case-mix %.4f and evaluation states %.4f do not differ; the test checks nothing", got[k], atEval)
			}
		}
	}
}

// The robust value at the data's initial law weights each site's case-mix
// by its number of trajectories: it equals sum_k n_k/N sum_s mu_k(s)
// V^pi_1(s) written out over every state here.
func TestExactRobustAtData(t *testing.T) {
	mm, err := sim.New(sim.ScenarioFormulary, sim.Params{Seed: 2, Trajectories: []int{20, 20, 20, 20, 20}})
	if err != nil {
		t.Fatal(err)
	}
	fm := mm.(*sim.Formulary)
	m := fm.Map()
	beh := make([][]int32, fm.Horizon())
	for h := range beh {
		beh[h] = make([]int32, m.S)
		for s := range beh[h] {
			beh[h][s] = int32((s + 5*h) % m.A)
		}
	}
	pol := &solve.Policy{Method: solve.Behaviour, Map: m, H: fm.Horizon(), D: m.Dim(), A: m.A, BehaviourAction: beh, ValueEstimate: math.NaN()}
	all := make([][]float64, m.S)
	for s := range all {
		all[s] = []float64{float64(s)}
	}
	v := fm.PolicyValue(policyFunc(pol), all)
	n := []int{5, 1, 0, 3, 1}
	want, tot := 0.0, 0.0
	for k, nk := range n {
		for s, q := range fm.Initial(k) {
			want += float64(nk) * q * v[s]
		}
		tot += float64(nk)
	}
	want /= tot
	got, err := NewModel(fm).ExactRobustAtData(pol, n)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got, want, 1e-10) {
		t.Errorf("formulary: got %.15g, want %.15g", got, want)
	}
}
