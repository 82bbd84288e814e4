package sim

import (
	"fmt"
	"math"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// Formulary is a tabular multi-hospital treatment scenario built to test
// grmdp's guardrails on data that looks like an EHR extract: 5 hospitals
// of very different sizes (500 to 5000 patients) and case-mix, one of
// which (RestrictedSite) never prescribes half the regimens, episodes that
// end early when a patient dies, and hospital-specific efficacy, mortality
// and reward shifts. A state is (severity, comorbidity profile, last
// response) coded as one integer (see FormularySpec); the feature map is
// tabular, so exact robust dynamic programming is exact:
//
//	Q_h(s,a) = min_k [r^k(s,a) + sum_s' P^k(s'|s,a) V_{h+1}(s')]
//
// where P^k(.|s,a) sums to one minus the probability of death (value 0).
// Kernels and rewards do not change with h. The behaviour policy is
// severity-dependent and hospital-specific (a softmax over the hospital's
// formulary). InitialStates draws from the case-mix of a uniformly chosen
// hospital.
type Formulary struct {
	common
	spec    FormularySpec
	K, S, A int
	// [k][s*A+a]
	trans     [][]sparse
	reward    [][]float64
	behaviour [][]float64
	// [k][s]
	initial [][]float64
	fin     finite
}

// formularyResponses is the number of response codes: worse, same, better,
// first visit.
const formularyResponses = 4

// NewFormulary draws the formulary scenario from p.Seed.
func NewFormulary(p Params) (*Formulary, error) {
	spec := DefaultFormularySpec()
	if p.Formulary != nil {
		spec = *p.Formulary
	}
	K, N, H, err := resolveSizes(p, spec.Sites, spec.Trajectories, spec.Horizon)
	if err != nil {
		return nil, err
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	S := spec.Severity * spec.Comorbidity * formularyResponses
	A := spec.Actions
	g := newRNG(p.Seed, streamParams)
	reg := drawRegimens(g, spec)
	trans := make([][]sparse, K)
	reward := make([][]float64, K)
	behaviour := make([][]float64, K)
	initial := make([][]float64, K)
	probs := make([]float64, S)
	for k := 0; k < K; k++ {
		h := drawHospital(g, spec, k)
		trans[k] = make([]sparse, S*A)
		reward[k] = make([]float64, S*A)
		behaviour[k] = make([]float64, S*A)
		initial[k] = make([]float64, S)
		h.tables(spec, reg, trans[k], reward[k], behaviour[k], initial[k], probs)
	}
	p.Formulary = &spec
	p.Sites, p.Trajectories, p.Horizon, p.MinTrajectories = K, N, H, 0
	return newFormulary(p, trans, reward, behaviour, initial)
}

// check reports a spec the scenario cannot be built from.
func (spec FormularySpec) check() error {
	switch {
	case spec.Actions < 2 || spec.Severity < 3 || spec.Comorbidity < 1:
		return fmt.Errorf("sim: formulary needs A >= 2, severity >= 3 and comorbidity >= 1")
	case spec.RestrictedActions < 1 || spec.RestrictedActions > spec.Actions:
		return fmt.Errorf("sim: formulary restricted actions %d outside 1..%d", spec.RestrictedActions, spec.Actions)
	case spec.Spread <= 0:
		return fmt.Errorf("sim: formulary spread %g: want > 0", spec.Spread)
	}
	return nil
}

// formularyRegimens are the regimens' properties common to all hospitals.
type formularyRegimens struct {
	// tox[a] is regimen a's toxicity (a reward cost); eff[a][c] its
	// efficacy on comorbidity profile c. Regimen 0 is supportive care:
	// no toxicity, efficacy spec.SupportEfficacy.
	tox []float64
	eff [][]float64
}

// drawRegimens draws the regimens' toxicity and efficacy.
func drawRegimens(g rng, spec FormularySpec) formularyRegimens {
	A, C := spec.Actions, spec.Comorbidity
	tox := make([]float64, A)
	eff := make([][]float64, A)
	for a := 0; a < A; a++ {
		eff[a] = make([]float64, C)
		for c := range eff[a] {
			eff[a][c] = spec.SupportEfficacy
			if a > 0 {
				eff[a][c] = g.uniform(0.1, 1.3)
			}
		}
		if a > 0 {
			tox[a] = g.uniform(0.02, 0.12)
		}
	}
	return formularyRegimens{tox: tox, eff: eff}
}

// formularyHospital is one hospital's draw.
type formularyHospital struct {
	// shift[a] shifts regimen a's efficacy; mort scales mortality; rshift
	// shifts every reward.
	shift        []float64
	mort, rshift float64
	// Case-mix: severity around sevMean, comorbidity weights cw.
	sevMean float64
	cw      []float64
	// Behaviour: preference per regimen over the first allowed regimens.
	pref    []float64
	allowed int
}

// drawHospital draws hospital k's shifts, case-mix and preferences.
func drawHospital(g rng, spec FormularySpec, k int) formularyHospital {
	A, V, C := spec.Actions, spec.Severity, spec.Comorbidity
	var h formularyHospital
	h.shift = make([]float64, A)
	for a := range h.shift {
		h.shift[a] = g.uniform(-spec.EfficacySpread, spec.EfficacySpread)
	}
	h.mort = g.uniform(0.8, 1.25)
	h.rshift = g.uniform(-spec.RewardShift, spec.RewardShift)
	h.sevMean = g.uniform(0.2, 0.7) * float64(V-1)
	h.cw = make([]float64, C)
	for c := range h.cw {
		h.cw[c] = g.gamma(2)
	}
	h.pref = make([]float64, A)
	for a := range h.pref {
		h.pref[a] = 0.5 * g.NormFloat64()
	}
	h.allowed = A
	if k == spec.RestrictedSite {
		h.allowed = spec.RestrictedActions
	}
	return h
}

// tables fills the hospital's transition kernel, rewards, behaviour
// policy ([s*A+a]) and initial distribution ([s]); probs is scratch of
// length S. The behaviour escalates with severity: stronger regimens at
// higher severity.
func (h *formularyHospital) tables(spec FormularySpec, reg formularyRegimens, trans []sparse, reward, behaviour, initial, probs []float64) {
	A, V, C := spec.Actions, spec.Severity, spec.Comorbidity
	itot := 0.0
	for v := 0; v < V; v++ {
		for c := 0; c < C; c++ {
			wv := math.Exp(-sq(float64(v)-h.sevMean) / (2 * sq(0.2*float64(V))))
			s0 := formularyState(spec, v, c, formularyResponses-1)
			initial[s0] = wv * h.cw[c]
			itot += initial[s0]
			for r := 0; r < formularyResponses; r++ {
				s := formularyState(spec, v, c, r)
				btot := 0.0
				for a := 0; a < A; a++ {
					i := s*A + a
					reward[i] = min(1, max(0, 0.95-0.9*float64(v)/float64(V-1)-reg.tox[a]+h.rshift))
					if a < h.allowed {
						esc := 2*float64(a)/float64(A-1) - 1
						behaviour[i] = math.Exp(h.pref[a] + 1.5*esc*(float64(v)/float64(V-1)-0.5))
						btot += behaviour[i]
					}
					drift := spec.Progression - (reg.eff[a][c] + h.shift[a])
					trans[i] = h.kernel(spec, v, c, drift, probs)
				}
				for a := 0; a < h.allowed; a++ {
					behaviour[s*A+a] /= btot
				}
			}
		}
	}
	for s := range initial {
		initial[s] /= itot
	}
}

// kernel returns the transition from severity v and comorbidity c under
// a regimen with severity drift drift: severity moves by -2..2 around the
// drift, the response code records the direction, and the mass missing
// from one is the probability of death. probs is scratch of length S.
func (h *formularyHospital) kernel(spec FormularySpec, v, c int, drift float64, probs []float64) sparse {
	V := spec.Severity
	clear(probs)
	wt := 0.0
	var w [5]float64
	for x := range w {
		w[x] = math.Exp(-sq(float64(x-2)-drift) / (2 * sq(spec.Spread)))
		wt += w[x]
	}
	for x := range w {
		delta := x - 2
		v2 := min(V-1, max(0, v+delta))
		r2 := 1 // same
		if delta > 0 {
			r2 = 0
		} else if delta < 0 {
			r2 = 2
		}
		die := min(0.9, spec.Mortality*h.mort*float64(max(0, v2-(V-3))))
		probs[formularyState(spec, v2, c, r2)] += w[x] / wt * (1 - die)
	}
	return dense(probs)
}

func sq(x float64) float64 { return x * x }

// formularyState codes (severity v, comorbidity c, response r).
func formularyState(spec FormularySpec, v, c, r int) int {
	return (v*spec.Comorbidity+c)*formularyResponses + r
}

func newFormulary(p Params, trans [][]sparse, reward, behaviour, initial [][]float64) (*Formulary, error) {
	spec := *p.Formulary
	K, H, A := p.Sites, p.Horizon, spec.Actions
	S := spec.Severity * spec.Comorbidity * formularyResponses
	if len(trans) != K || len(reward) != K || len(behaviour) != K || len(initial) != K {
		return nil, fmt.Errorf("sim: formulary tables are not per site")
	}
	for k := 0; k < K; k++ {
		if len(trans[k]) != S*A || len(reward[k]) != S*A || len(behaviour[k]) != S*A || len(initial[k]) != S {
			return nil, fmt.Errorf("sim: formulary site %d: tables of the wrong size", k+1)
		}
		for _, row := range trans[k] {
			tot := 0.0
			for x, s := range row.Next {
				if s < 0 || int(s) >= S || row.P[x] < 0 {
					return nil, fmt.Errorf("sim: formulary site %d: bad transition entry", k+1)
				}
				tot += row.P[x]
			}
			if tot > 1+1e-9 || len(row.Next) != len(row.P) {
				return nil, fmt.Errorf("sim: formulary site %d: transition mass %g above 1", k+1, tot)
			}
		}
	}
	m := &Formulary{spec: spec, K: K, S: S, A: A, trans: trans, reward: reward, behaviour: behaviour, initial: initial}
	fmap := features.Map{Kind: features.Tabular, A: A, S: S, StateColumns: []string{"state"}}
	states := make([][]float64, S)
	for s := range states {
		states[s] = []float64{float64(s)}
	}
	m.fin = finite{fmap: fmap, states: states, K: K, H: H}
	for k := 0; k < K; k++ {
		ths, mus := make([][]float64, H), make([][]sparse, H)
		for h := range ths {
			ths[h], mus[h] = reward[k], trans[k]
		}
		m.fin.theta = append(m.fin.theta, ths)
		m.fin.mu = append(m.fin.mu, mus)
	}
	m.common = common{
		scenario: ScenarioFormulary, params: p, H: H, sites: siteLabels(K), N: p.Trajectories, fmap: fmap,
		opts: traj.Options{State: traj.StateSpec{Columns: []string{"state"}, Integer: true, Max: S}, Horizon: H, Actions: A},
		eval: &m.fin,
	}
	return m, nil
}

// Decode returns (severity, comorbidity profile, last response) of a
// state; response 0 = worse, 1 = same, 2 = better, 3 = first visit.
func (m *Formulary) Decode(state int) (severity, comorbidity, response int) {
	r := state % formularyResponses
	vc := state / formularyResponses
	return vc / m.spec.Comorbidity, vc % m.spec.Comorbidity, r
}

// Transition returns P^k(.|s,a) as next states and probabilities (the
// missing mass is death). Site k is 0-based here and below.
func (m *Formulary) Transition(k, s, a int) ([]int32, []float64) {
	row := m.trans[k][s*m.A+a]
	return append([]int32(nil), row.Next...), append([]float64(nil), row.P...)
}

// Reward returns the mean reward r^k(s,a).
func (m *Formulary) Reward(k, s, a int) float64 { return m.reward[k][s*m.A+a] }

// Behaviour returns the probability that site k's behaviour policy takes a
// at s.
func (m *Formulary) Behaviour(k, s, a int) float64 { return m.behaviour[k][s*m.A+a] }

// Initial returns site k's case-mix: the law of the initial state.
func (m *Formulary) Initial(k int) []float64 { return append([]float64(nil), m.initial[k]...) }

// SiteInitialLaw returns site k's case-mix as the states it puts mass on
// and their probabilities (see [SiteInitialLaw]).
func (m *Formulary) SiteInitialLaw(k int) (states [][]float64, probs []float64) {
	for s, q := range m.initial[k] {
		if q > 0 {
			states = append(states, []float64{float64(s)})
			probs = append(probs, q)
		}
	}
	return states, probs
}

// InitialStates draws n states: a uniformly chosen hospital, then its
// case-mix.
func (m *Formulary) InitialStates(n int, seed uint64) [][]float64 {
	g := newRNG(seed, streamInit)
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{float64(g.categorical(m.initial[g.IntN(m.K)]))}
	}
	return out
}

// Sample draws the data set of SampleRows(seed) and builds its Table.
func (m *Formulary) Sample(seed uint64) (*traj.Table, error) {
	c, err := m.SampleRows(seed)
	return buildTable(m.opts, c, err)
}

// SampleRows draws N_k patients per hospital: the initial state from its
// case-mix, actions from its behaviour policy, Bernoulli rewards, and the
// episode ends at death.
func (m *Formulary) SampleRows(seed uint64) ([]*traj.Chunk, error) {
	A, H := m.A, m.H
	return perSite(m.K, func(k int) *traj.Chunk {
		g := newRNG(seed, streamData, uint64(k))
		c := newChunk(m.scenario, k, 1, m.N[k]*H/2)
		st := []float64{0}
		for tau := 0; tau < m.N[k]; tau++ {
			s := g.categorical(m.initial[k])
			for h := 1; h <= H; h++ {
				a := g.categorical(m.behaviour[k][s*A : (s+1)*A])
				st[0] = float64(s)
				addRow(c, k, tau, h, a, g.bernoulli(m.reward[k][s*A+a]), st)
				if h == H {
					break
				}
				row := &m.trans[k][s*A+a]
				u := g.Float64()
				s = -1
				for x, q := range row.P {
					if u < q {
						s = int(row.Next[x])
						break
					}
					u -= q
				}
				if s < 0 {
					break // death
				}
			}
		}
		return c
	}), nil
}
