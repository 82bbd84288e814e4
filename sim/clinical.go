package sim

import (
	"fmt"
	"math"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// Clinical is a five-hospital sepsis-like scenario with continuous vital
// signs, built to look like the hospital exports of docs/DATA.md and to
// be hard for grmdp's linear models: each row holds a patient's lactate
// (mmol/L, one decimal) and SOFA score (integer 0..24), the treatment
// given (0 standard care, 1 fluids, 2 vasopressors, 3 both), and a reward
// that is 0 except at the episode's last row, where it is the outcome:
// 1 if the patient survives, 0 if not.
//
// # Latent state and dynamics
//
// A patient has a latent severity x (real) and a hidden type: fluid-
// responsive or not. At hospital k, x_1 ~ N(mu_k, 0.7^2) and the patient
// is responsive with probability rho_k (the case-mix). At each step h the
// clinicians see the vitals
//
//	lactate = max(0.3, round1(exp(0.3 + 0.45 x + 0.2 e1)))
//	sofa    = min(24, max(0, round(3 + 3 x + b_k + 1.2 e2)))
//
// (e1, e2 standard normal, b_k the hospital's baseline organ dysfunction),
// give treatment a, and the severity moves to
//
//	x' = x + 0.15 - effect_k(a, x, type) + 0.35 e3
//
// with fluids worth 0.45 for responsive patients (0.10 otherwise) minus
// 0.3 (x - 2)^+ of fluid overload, vasopressors worth
// 0.7 sigmoid(2 (x - 1.5)) - 0.2 (harmful when mild), both together the
// sum minus 0.1, and a hospital shift U[-0.1, 0.1] per treatment. Then
// the patient dies with probability sigmoid(-4.6 + 1.4 x' + m_k) (the
// row's reward is 0 and the episode ends), or else is discharged alive
// with probability sigmoid(-1.5 - 2.5 x') (reward 1, the episode ends),
// or else, at h = H, survives with probability sigmoid(1.5 - 1.5 x')
// (reward 1 or 0). Episodes therefore end early at death or discharge.
// The effects are nonlinear in x and depend on the hidden type, so a
// linear model in binned or soft-binned vitals is misspecified.
//
// # Behaviour and formulary
//
// Hospital k's clinicians choose from its formulary (every treatment but
// ClinicalSpec.OffFormulary's) with a softmax over logits
// pref_{k,a} + esc_k g_a(z), where z = ((ln lactate - 0.3)/0.45 +
// (sofa - 3)/3)/2 is the severity read off the vitals and g_0 = 0,
// g_1 = z - 0.5, g_2 = 1.5 (z - 1.5), g_3 = 2 (z - 2), mixed with the
// uniform law on the formulary with weight ClinicalSpec.Exploration. Every
// treatment on the formulary thus has a positive propensity at every row,
// and every treatment off it has propensity 0. [Clinical.Behaviour] gives
// the propensities.
//
// # NULLs
//
// Each row's lactate is NULL with probability ClinicalSpec.NullRate,
// independently of everything else: a recording gap, not a change in what
// the clinicians saw (they acted on the true value). [Clinical.SampleRows]
// marks such rows in [traj.Chunk].Missing with lactate NaN; the model's
// Options read the data with [traj.NullsTruncate], so [Clinical.Sample]'s
// table ends each such episode before its first NULL and the episode's
// outcome is lost: the episode is censored. NULLs occur completely at
// random, but an episode's chance of being censored grows with its
// length, which goes with its outcome: the uncensored episodes are not a
// random subset of all, and an estimate that leaves the censored ones out
// must weight the others (eval weights them by the inverse probability of
// censoring).
//
// # Evaluation
//
// The outcome's expectation under a policy cannot be computed exactly
// from vitals: [Clinical.Value] estimates it by Monte Carlo at each
// hospital, from the hospital's case-mix, with the standard error of each
// estimate, and with common random numbers: episode i of site k draws
// the same initial state and the same noise for every policy, so
// differences between policies have much smaller errors than the values.
// [Clinical.BehaviourValue] is the observed care's value.
// [Clinical.LatentValue] computes, by dynamic programming on a grid of
// severities (exact up to the grid), the value of policies that see the
// latent state: a treatment given always, or the best such policy (an
// upper bound on every vitals-based policy's value; the best policy on
// the vitals is a partially observed problem's and is not computed).
//
// The model's [Model] methods fit it into grmdp's exact-evaluation path:
// Map is the soft-binned map on lactate and SOFA the scenario is meant to
// be solved with (the model is not linear in it, so OptimalWeights and
// PolicyWeights panic and OptimalValue is NaN), SiteInitialLaw is 1000
// draws of a hospital's first vitals, and SitePolicyValue(k, pi, s) is
// the expected outcome at hospital k given first vitals s, by Monte Carlo
// (the latent severity drawn from its posterior given s on a grid, 16
// episodes per state). PolicyValue is the minimum over hospitals of
// SitePolicyValue. A policy may give a treatment off a hospital's
// formulary: the model defines every treatment's effect everywhere.
type Clinical struct {
	common
	spec ClinicalSpec
	K, A int
	hosp []clinicalSite
}

// clinicalSite holds one hospital's drawn parameters.
type clinicalSite struct {
	// SeverityMean is mu_k ~ U[0.6, 1.6]; Responsive rho_k ~ U[0.3, 0.8];
	// SofaBaseline b_k ~ U[-1, 1]; Mortality m_k ~ U[-0.3, 0.3].
	SeverityMean float64 `json:"severity_mean"`
	Responsive   float64 `json:"responsive"`
	SofaBaseline float64 `json:"sofa_baseline"`
	Mortality    float64 `json:"mortality"`
	// Efficacy is the shift of each treatment's effect (0 for standard
	// care, else U[-0.1, 0.1]).
	Efficacy []float64 `json:"efficacy"`
	// Preference is pref_{k,a} (0 for standard care, else N(0, 0.5^2))
	// and Escalation esc_k ~ U[0.8, 1.6].
	Preference []float64 `json:"preference"`
	Escalation float64   `json:"escalation"`
	// Formulary says which treatments the hospital gives.
	Formulary []bool `json:"formulary"`
}

// The dynamics' coefficients (see Clinical).
const (
	clinicalActions                  = 4
	clinicalInitialSD                = 0.7
	clinicalDrift                    = 0.15
	clinicalNoise                    = 0.35
	clinLacA, clinLacB, clinLacSD    = 0.3, 0.45, 0.2
	clinSofaA, clinSofaB, clinSofaSD = 3.0, 3.0, 1.2
	// clinicalPerState is the number of episodes per state of
	// SitePolicyValue, clinicalLaw the size of SiteInitialLaw.
	clinicalPerState = 16
	clinicalLaw      = 1000
)

// ClinicalTreatments names the treatments, by action.
var ClinicalTreatments = []string{"standard", "fluids", "vasopressors", "fluids+vasopressors"}

// NewClinical draws the clinical scenario from p.Seed.
func NewClinical(p Params) (*Clinical, error) {
	spec := DefaultClinicalSpec()
	if p.Clinical != nil {
		spec = *p.Clinical
	}
	K, N, H, err := resolveSizes(p, spec.Sites, spec.Trajectories, spec.Horizon)
	if err != nil {
		return nil, err
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	g := newRNG(p.Seed, streamParams)
	sites := make([]clinicalSite, K)
	for k := range sites {
		s := clinicalSite{
			SeverityMean: g.uniform(0.6, 1.6), Responsive: g.uniform(0.3, 0.8),
			SofaBaseline: g.uniform(-1, 1), Mortality: g.uniform(-0.3, 0.3),
			Efficacy: make([]float64, clinicalActions), Preference: make([]float64, clinicalActions),
			Escalation: g.uniform(0.8, 1.6), Formulary: make([]bool, clinicalActions),
		}
		for a := 1; a < clinicalActions; a++ {
			s.Efficacy[a] = g.uniform(-0.1, 0.1)
			s.Preference[a] = 0.5 * g.NormFloat64()
		}
		for a := range s.Formulary {
			s.Formulary[a] = !slices.Contains(spec.OffFormulary[k%len(spec.OffFormulary)], a)
		}
		sites[k] = s
	}
	p.Clinical = &spec
	p.Sites, p.Trajectories, p.Horizon, p.MinTrajectories = K, N, H, 0
	return newClinical(p, sites)
}

func (s ClinicalSpec) check() error {
	switch {
	case len(s.OffFormulary) == 0:
		return fmt.Errorf("sim: clinical needs at least one off_formulary entry (an empty list: every treatment given)")
	case !(s.NullRate >= 0 && s.NullRate < 1):
		return fmt.Errorf("sim: clinical null rate %g outside [0, 1)", s.NullRate)
	case !(s.Exploration > 0 && s.Exploration <= 1):
		return fmt.Errorf("sim: clinical exploration %g outside (0, 1]", s.Exploration)
	case s.EvalEpisodes < 1:
		return fmt.Errorf("sim: clinical eval episodes %d: want at least 1", s.EvalEpisodes)
	}
	for _, off := range s.OffFormulary {
		for _, a := range off {
			if a < 1 || a >= clinicalActions {
				return fmt.Errorf("sim: clinical off-formulary treatment %d outside 1..%d (standard care 0 is always given)", a, clinicalActions-1)
			}
		}
	}
	return nil
}

func newClinical(p Params, sites []clinicalSite) (*Clinical, error) {
	if p.Clinical == nil {
		return nil, fmt.Errorf("sim: clinical model without its spec")
	}
	if err := p.Clinical.check(); err != nil {
		return nil, err
	}
	K, H := p.Sites, p.Horizon
	if len(sites) != K {
		return nil, fmt.Errorf("sim: clinical model has %d hospitals for %d sites", len(sites), K)
	}
	for k, s := range sites {
		if len(s.Efficacy) != clinicalActions || len(s.Preference) != clinicalActions || len(s.Formulary) != clinicalActions {
			return nil, fmt.Errorf("sim: clinical hospital %d: want %d efficacies, preferences and formulary entries", k+1, clinicalActions)
		}
		if !s.Formulary[0] {
			return nil, fmt.Errorf("sim: clinical hospital %d does not give standard care", k+1)
		}
		for _, v := range append([]float64{s.SeverityMean, s.Responsive, s.SofaBaseline, s.Mortality, s.Escalation}, append(s.Efficacy, s.Preference...)...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("sim: clinical hospital %d: a parameter is not finite", k+1)
			}
		}
		if s.Responsive < 0 || s.Responsive > 1 {
			return nil, fmt.Errorf("sim: clinical hospital %d: responsive share %g outside [0, 1]", k+1, s.Responsive)
		}
	}
	cols := []string{"lactate", "sofa"}
	fmap := features.Map{Kind: features.SoftBinned, A: clinicalActions, StateColumns: cols,
		Bins: []features.Bins{{Column: "lactate", Cuts: []float64{1, 2, 4, 8}}, {Column: "sofa", Cuts: []float64{2, 6, 10, 14}}}}
	m := &Clinical{spec: *p.Clinical, K: K, A: clinicalActions, hosp: sites}
	m.common = common{
		scenario: ScenarioClinical, params: p, H: H, sites: siteLabels(K), N: p.Trajectories, fmap: fmap,
		opts: traj.Options{State: traj.StateSpec{Columns: cols}, Horizon: H, Actions: clinicalActions, Nulls: traj.NullsTruncate},
	}
	return m, nil
}

func logistic(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// vitals returns the vitals of severity x at site k given the noises.
func (m *Clinical) vitals(k int, x, e1, e2 float64) (lactate, sofa float64) {
	lactate = max(0.3, math.Round(10*math.Exp(clinLacA+clinLacB*x+clinLacSD*e1))/10)
	sofa = min(24, max(0, math.Round(clinSofaA+clinSofaB*x+m.hosp[k].SofaBaseline+clinSofaSD*e2)))
	return lactate, sofa
}

// effect returns effect_k(a, x, type).
func (m *Clinical) effect(k, a int, x float64, responsive bool) float64 {
	e := m.hosp[k].Efficacy[a]
	if a == 1 || a == 3 {
		if responsive {
			e += 0.45
		} else {
			e += 0.10
		}
		e -= 0.3 * max(0, x-2)
	}
	if a == 2 || a == 3 {
		e += 0.7*logistic(2*(x-1.5)) - 0.2
	}
	if a == 3 {
		e -= 0.1
	}
	return e
}

// The event probabilities after a move to x'.
func (m *Clinical) death(k int, x float64) float64 {
	return logistic(-4.6 + 1.4*x + m.hosp[k].Mortality)
}
func discharge(x float64) float64 { return logistic(-1.5 - 2.5*x) }
func survival(x float64) float64  { return logistic(1.5 - 1.5*x) }

// Behaviour writes to dst (length A) hospital k's propensities at the
// given vitals (lactate in mmol/L, SOFA); k is 0-based, as below. It
// panics if dst has the wrong length.
func (m *Clinical) Behaviour(dst []float64, k int, lactate, sofa float64) {
	if len(dst) != m.A {
		panic("sim: clinical behaviour needs a slice of length A")
	}
	s := &m.hosp[k]
	z := ((math.Log(lactate)-clinLacA)/clinLacB + (sofa-clinSofaA)/clinSofaB) / 2
	g := [clinicalActions]float64{0, z + 0.5, 1.5 * (z - 1.5), 2 * (z - 2)}
	top, n := math.Inf(-1), 0
	for a := range dst {
		if s.Formulary[a] {
			dst[a] = s.Preference[a] + s.Escalation*g[a]
			top = max(top, dst[a])
			n++
		}
	}
	tot := 0.0
	for a := range dst {
		if s.Formulary[a] {
			dst[a] = math.Exp(dst[a] - top)
			tot += dst[a]
		} else {
			dst[a] = 0
		}
	}
	eps := m.spec.Exploration
	for a := range dst {
		if s.Formulary[a] {
			dst[a] = (1-eps)*dst[a]/tot + eps/float64(n)
		}
	}
}

// Formulary reports whether hospital k gives treatment a.
func (m *Clinical) Formulary(k, a int) bool { return m.hosp[k].Formulary[a] }

// chooser picks the action at step h from the vitals and a uniform draw
// u (which only stochastic policies use).
type chooser func(h int, vitals []float64, u float64) int

// behaviourChooser returns hospital k's clinicians as a chooser.
func (m *Clinical) behaviourChooser(k int) chooser {
	prob := make([]float64, m.A)
	return func(h int, v []float64, u float64) int {
		m.Behaviour(prob, k, v[0], v[1])
		last := 0
		for a, q := range prob {
			if q <= 0 {
				continue
			}
			last = a
			if u < q {
				return a
			}
			u -= q
		}
		return last
	}
}

// row receives one row of an episode: the vitals (valid during the call
// only), whether the lactate is NULL, the treatment and the reward.
type rowFunc func(h int, vitals []float64, null bool, a int, r float64)

// play runs one episode of hospital k from latent severity x and type,
// drawing every random quantity from g in a fixed order (the same number
// of draws per step whatever the policy does, so that episodes with the
// same stream use common random numbers). first, when not nil, replaces
// the step-1 vitals. It returns the outcome.
func (m *Clinical) play(k int, g *rng, x float64, responsive bool, first []float64, choose chooser, emit rowFunc) float64 {
	v := make([]float64, 2)
	for h := 1; ; h++ {
		e1, e2, e3 := g.NormFloat64(), g.NormFloat64(), g.NormFloat64()
		uAct, uNull, uDeath, uDis, uEnd := g.Float64(), g.Float64(), g.Float64(), g.Float64(), g.Float64()
		v[0], v[1] = m.vitals(k, x, e1, e2)
		if h == 1 && first != nil {
			v[0], v[1] = first[0], first[1]
		}
		a := choose(h, v, uAct)
		if a < 0 || a >= m.A {
			panic(fmt.Sprintf("sim: policy chose action %d at step %d: want 0..%d", a, h, m.A-1))
		}
		x += clinicalDrift - m.effect(k, a, x, responsive) + clinicalNoise*e3
		r, end := 0.0, true
		switch {
		case uDeath < m.death(k, x):
		case uDis < discharge(x):
			r = 1
		case h == m.H:
			if uEnd < survival(x) {
				r = 1
			}
		default:
			end = false
		}
		if emit != nil {
			emit(h, v, uNull < m.spec.NullRate, a, r)
		}
		if end {
			return r
		}
	}
}

// start draws hospital k's initial latent severity and type.
func (m *Clinical) start(k int, g *rng) (float64, bool) {
	s := &m.hosp[k]
	x := s.SeverityMean + clinicalInitialSD*g.NormFloat64()
	return x, g.Float64() < s.Responsive
}

// SampleRows draws N_k patients per hospital under its clinicians' care:
// one chunk per site, rows in (patient, step) order, with Missing set and
// lactate NaN on the rows whose lactate is NULL.
func (m *Clinical) SampleRows(seed uint64) ([]*traj.Chunk, error) {
	return perSite(m.K, func(k int) *traj.Chunk {
		c := newChunk(m.scenario, k, 2, m.N[k]*m.H/2)
		c.Missing = make([]bool, 0, cap(c.Step))
		choose := m.behaviourChooser(k)
		st := make([]float64, 2)
		for tau := 0; tau < m.N[k]; tau++ {
			g := newRNG(seed, streamData, uint64(k), uint64(tau))
			x, resp := m.start(k, &g)
			m.play(k, &g, x, resp, nil, choose, func(h int, v []float64, null bool, a int, r float64) {
				copy(st, v)
				if null {
					st[0] = math.NaN()
				}
				addRow(c, k, tau, h, a, r, st)
				c.Missing = append(c.Missing, null)
			})
		}
		return c
	}), nil
}

// Sample draws the data of SampleRows(seed) and builds the table its
// Options read from their Parquet file: each episode with a NULL ends
// before its first NULL (Table.Nulls counts what went).
func (m *Clinical) Sample(seed uint64) (*traj.Table, error) {
	chunks, err := m.SampleRows(seed)
	if err != nil {
		return nil, err
	}
	kept, counts := traj.DropMissing(chunks, traj.NullsTruncate)
	t, err := buildTable(m.opts, kept, nil)
	if err != nil {
		return nil, err
	}
	t.Nulls = counts
	return t, nil
}

// InitialStates draws n first vitals (lactate, SOFA): a uniformly chosen
// hospital, then its case-mix.
func (m *Clinical) InitialStates(n int, seed uint64) [][]float64 {
	g := newRNG(seed, streamInit)
	out := make([][]float64, n)
	for i := range out {
		k := g.IntN(m.K)
		x, _ := m.start(k, &g)
		l, s := m.vitals(k, x, g.NormFloat64(), g.NormFloat64())
		out[i] = []float64{l, s}
	}
	return out
}

// SiteInitialLaw returns 1000 draws of hospital k's first vitals, each of
// probability 1/1000 (see [SiteInitialLaw]); the same draws at every call.
func (m *Clinical) SiteInitialLaw(k int) (states [][]float64, probs []float64) {
	g := newRNG(m.params.Seed, streamInit, uint64(k))
	states, probs = make([][]float64, clinicalLaw), make([]float64, clinicalLaw)
	for i := range states {
		x, _ := m.start(k, &g)
		l, s := m.vitals(k, x, g.NormFloat64(), g.NormFloat64())
		states[i], probs[i] = []float64{l, s}, 1.0/clinicalLaw
	}
	return states, probs
}

// ClinicalPolicy is a deterministic policy on the vitals: the treatment
// (0..A-1) at hospital site (0-based), step (1..H), given vitals =
// (lactate, SOFA). vitals is only valid during the call. Value may call a
// ClinicalPolicy from several goroutines at once, so it must be safe for
// concurrent use.
type ClinicalPolicy func(site, step int, vitals []float64) int

// ClinicalValue is a Monte Carlo estimate of a hospital's expected
// outcome: Value is the mean outcome of Episodes episodes and StdErr its
// standard error (the outcomes' standard deviation over sqrt(Episodes)).
type ClinicalValue struct {
	Value, StdErr float64
	Episodes      int
}

// clinicalBlock is the number of episodes a Monte Carlo task plays.
const clinicalBlock = 1024

// Value returns pi's value at each hospital, in the order of Sites: the
// mean outcome of episodes episodes (zero: the spec's EvalEpisodes) from
// the hospital's case-mix under pi, with its standard error. Episode i of
// hospital k draws from the stream of (seed, k, i) whatever the policy,
// so that values of policies at the same seed use common random numbers.
// The result does not depend on GOMAXPROCS.
func (m *Clinical) Value(pi ClinicalPolicy, episodes int, seed uint64) []ClinicalValue {
	if pi == nil {
		panic("sim: nil policy")
	}
	return m.monteCarlo(func(k int) chooser {
		return func(h int, v []float64, _ float64) int { return pi(k, h, v) }
	}, episodes, seed)
}

// BehaviourValue returns the value of each hospital's observed care (its
// clinicians' stochastic policy), as Value does for a policy.
func (m *Clinical) BehaviourValue(episodes int, seed uint64) []ClinicalValue {
	return m.monteCarlo(m.behaviourChooser, episodes, seed)
}

// monteCarlo plays episodes per site in blocks of clinicalBlock, one task
// per (site, block) writing its own sums, reduced in order.
func (m *Clinical) monteCarlo(newChooser func(k int) chooser, episodes int, seed uint64) []ClinicalValue {
	if episodes <= 0 {
		episodes = m.spec.EvalEpisodes
	}
	blocks := (episodes + clinicalBlock - 1) / clinicalBlock
	sum := make([]float64, m.K*blocks)
	parallel(m.K*blocks, func(t int) {
		k, b := t/blocks, t%blocks
		choose := newChooser(k)
		for i := b * clinicalBlock; i < min(episodes, (b+1)*clinicalBlock); i++ {
			g := newRNG(seed, streamEval, uint64(k), uint64(i))
			x, resp := m.start(k, &g)
			sum[t] += m.play(k, &g, x, resp, nil, choose, nil)
		}
	})
	out := make([]ClinicalValue, m.K)
	for k := range out {
		s := 0.0
		for b := range blocks {
			s += sum[k*blocks+b]
		}
		n := float64(episodes)
		mean := s / n
		// Outcomes are 0/1: their variance is mean (1 - mean).
		out[k] = ClinicalValue{Value: mean, StdErr: math.Sqrt(mean * (1 - mean) / max(1, n-1)), Episodes: episodes}
	}
	return out
}

// SitePolicyValue returns, for each state (first vitals), the expected
// outcome of pi at hospital k given those vitals: the mean of 16 episodes
// whose latent severity is drawn from its posterior given the vitals (on
// a grid of step 0.05) and whose step-1 vitals are the state. It is a
// Monte Carlo estimate with common random numbers per (k, state index).
func (m *Clinical) SitePolicyValue(k int, pi Policy, states [][]float64) []float64 {
	if pi == nil {
		panic("sim: nil policy")
	}
	if k < 0 || k >= m.K {
		panic(fmt.Sprintf("sim: site index %d outside 0..%d", k, m.K-1))
	}
	out := make([]float64, len(states))
	parallel(len(states), func(i int) {
		s := states[i]
		if len(s) != 2 {
			panic(fmt.Sprintf("sim: state of width %d, want 2", len(s)))
		}
		post := m.posterior(k, s[0], s[1])
		choose := func(h int, v []float64, _ float64) int { return pi(h, v) }
		for r := range clinicalPerState {
			g := newRNG(m.params.Seed, streamEval, uint64(k), uint64(i), uint64(r))
			x := posteriorLow + posteriorStep*(float64(g.categorical(post))+g.Float64()-0.5)
			_, resp := m.start(k, &g)
			out[i] += m.play(k, &g, x, resp, s, choose, nil)
		}
		out[i] /= clinicalPerState
	})
	return out
}

// The posterior grid of SitePolicyValue.
const (
	posteriorLow  = -4.0
	posteriorStep = 0.05
	posteriorN    = 241
)

// posterior returns the posterior weights of severity on the grid at
// hospital k given first vitals (lactate, sofa); a NaN lactate carries no
// information.
func (m *Clinical) posterior(k int, lactate, sofa float64) []float64 {
	s := &m.hosp[k]
	w := make([]float64, posteriorN)
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	interval := func(lo, hi, mu, sd float64) float64 { return phi((hi-mu)/sd) - phi((lo-mu)/sd) }
	tot := 0.0
	for j := range w {
		x := posteriorLow + posteriorStep*float64(j)
		p := math.Exp(-sq((x-s.SeverityMean)/clinicalInitialSD) / 2)
		if !math.IsNaN(lactate) {
			lo, hi := math.Log(lactate-0.05), math.Log(lactate+0.05)
			if lactate <= 0.3 {
				lo = math.Inf(-1)
			}
			p *= interval(lo, hi, clinLacA+clinLacB*x, clinLacSD)
		}
		lo, hi := sofa-0.5, sofa+0.5
		if sofa <= 0 {
			lo = math.Inf(-1)
		}
		if sofa >= 24 {
			hi = math.Inf(1)
		}
		p *= interval(lo, hi, clinSofaA+clinSofaB*x+s.SofaBaseline, clinSofaSD)
		w[j] = p
		tot += p
	}
	if !(tot > 0) {
		// Vitals the model cannot produce: fall back on the prior.
		for j := range w {
			x := posteriorLow + posteriorStep*float64(j)
			w[j] = math.Exp(-sq((x-s.SeverityMean)/clinicalInitialSD) / 2)
		}
	}
	return w
}

// PolicyValue returns, at each state, the minimum over hospitals of
// SitePolicyValue: the worst hospital's expected outcome from those first
// vitals.
func (m *Clinical) PolicyValue(pi Policy, states [][]float64) []float64 {
	out := m.SitePolicyValue(0, pi, states)
	for k := 1; k < m.K; k++ {
		for i, v := range m.SitePolicyValue(k, pi, states) {
			out[i] = min(out[i], v)
		}
	}
	return out
}

// OptimalValue returns NaN at each state: the best policy on the vitals
// is not computed (see [Clinical.LatentValue] for an upper bound).
func (m *Clinical) OptimalValue(states [][]float64) []float64 {
	out := make([]float64, len(states))
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

const notLinear = "sim: the clinical model is not linear in its features: it has no weights (use Clinical.Value)"

// OptimalWeights panics: the clinical model has no linear form.
func (m *Clinical) OptimalWeights() [][]float64 { panic(notLinear) }

// PolicyWeights panics: the clinical model has no linear form.
func (m *Clinical) PolicyWeights(Policy) [][]float64 { panic(notLinear) }

// OptimalPolicy panics: the best policy on the vitals is not computed.
func (m *Clinical) OptimalPolicy() Policy { panic(notLinear) }

// LatentPolicy is a policy that sees the latent state: the treatment at
// hospital site (0-based), step (1..H), given the severity x and whether
// the patient is fluid-responsive.
type LatentPolicy func(site, step int, severity float64, responsive bool) int

// The grid of LatentValue: severities -5..9 in steps of 0.02.
const (
	latentLow  = -5.0
	latentStep = 0.02
	latentN    = 701
)

// LatentValue returns, per hospital, the expected outcome of pi (nil: the
// best latent policy, the maximum over the hospital's formulary at each
// step and state) from the hospital's case-mix, by backward induction on
// a grid of severities (step 0.02 on [-5, 9], Gaussian transitions
// renormalised on the grid, the case-mix integrated on the same grid).
// The grid makes the values exact to about 1e-4 (tests check them
// against Monte Carlo). Constant policies (a treatment given always) are
// latent policies, so their values are computed exactly here.
func (m *Clinical) LatentValue(pi LatentPolicy) []float64 {
	out := make([]float64, m.K)
	parallel(m.K, func(k int) {
		s := &m.hosp[k]
		for _, resp := range []bool{false, true} {
			// kern[a][i] holds the transition weights from grid point i
			// under a, over the grid points lo[a][i]..lo[a][i]+len-1.
			kern := make([][][]float64, m.A)
			lo := make([][]int, m.A)
			for a := range kern {
				kern[a], lo[a] = make([][]float64, latentN), make([]int, latentN)
				for i := range kern[a] {
					x := latentLow + latentStep*float64(i)
					mu := x + clinicalDrift - m.effect(k, a, x, resp)
					j0 := max(0, int(math.Floor((mu-6*clinicalNoise-latentLow)/latentStep)))
					j1 := min(latentN-1, int(math.Ceil((mu+6*clinicalNoise-latentLow)/latentStep)))
					if j0 > j1 { // the mean lies off the grid: all mass at its end
						j0 = min(j0, latentN-1)
						j1 = j0
					}
					w := make([]float64, j1-j0+1)
					tot := 0.0
					for j := range w {
						w[j] = math.Exp(-sq((latentLow+latentStep*float64(j0+j)-mu)/clinicalNoise) / 2)
						tot += w[j]
					}
					for j := range w {
						w[j] /= tot
					}
					kern[a][i], lo[a][i] = w, j0
				}
			}
			// cont[j]: the value of arriving at grid point j before the
			// events; next holds V_{h+1} (at h = H the final survival).
			next, cur, cont := make([]float64, latentN), make([]float64, latentN), make([]float64, latentN)
			for j := range next {
				next[j] = survival(latentLow + latentStep*float64(j))
			}
			for h := m.H; h >= 1; h-- {
				for j := range cont {
					x := latentLow + latentStep*float64(j)
					d, c := m.death(k, x), discharge(x)
					cont[j] = (1 - d) * (c + (1-c)*next[j])
				}
				for i := range cur {
					q := func(a int) float64 {
						v := 0.0
						for j, w := range kern[a][i] {
							v += w * cont[lo[a][i]+j]
						}
						return v
					}
					if pi != nil {
						a := pi(k, h, latentLow+latentStep*float64(i), resp)
						if a < 0 || a >= m.A {
							panic(fmt.Sprintf("sim: latent policy chose action %d at step %d: want 0..%d", a, h, m.A-1))
						}
						cur[i] = q(a)
						continue
					}
					cur[i] = math.Inf(-1)
					for a := range m.A {
						if s.Formulary[a] {
							cur[i] = max(cur[i], q(a))
						}
					}
				}
				next, cur = cur, next
			}
			pc := s.Responsive
			if !resp {
				pc = 1 - s.Responsive
			}
			tot, v := 0.0, 0.0
			for i, x := range next {
				w := math.Exp(-sq((latentLow+latentStep*float64(i)-s.SeverityMean)/clinicalInitialSD) / 2)
				tot += w
				v += w * x
			}
			out[k] += pc * v / tot
		}
	})
	return out
}
