package sim

import (
	"fmt"
	"math"
	"slices"
)

// This file holds every free choice the paper leaves open, with its
// default. docs/EXPERIMENTS.md explains each one; keep the two in step.

// Params selects and sizes a scenario. The zero value gives the scenario's
// defaults (the paper's settings where the paper fixes them).
type Params struct {
	// Sites is K. Zero takes the scenario's default.
	Sites int `json:"sites"`
	// Trajectories gives N_k per site; its length must be Sites when both
	// are set. Nil derives the sizes from MinTrajectories, or else takes
	// the scenario's default sizes.
	Trajectories []int `json:"trajectories"`
	// MinTrajectories (N_min), when positive and Trajectories is nil,
	// scales the scenario's default site sizes so that the smallest is
	// N_min: N_k = round(N_min * default_k / min(default)). With more sites
	// than defaults, site k takes the default of site k mod len(default).
	MinTrajectories int `json:"min_trajectories,omitempty"`
	// Horizon is H. Zero takes the scenario's default.
	Horizon int `json:"horizon"`
	// Seed draws the model's parameters (and, for the hard instance, the
	// first-step action counts its gap delta depends on).
	Seed uint64 `json:"seed"`

	// Scenario-specific choices; nil takes the Default...Spec.
	Benchmark   *BenchmarkSpec   `json:"benchmark,omitempty"`
	Convergence *ConvergenceSpec `json:"convergence,omitempty"`
	Trap        *TrapSpec        `json:"trap,omitempty"`
	Formulary   *FormularySpec   `json:"formulary,omitempty"`
	Clinical    *ClinicalSpec    `json:"clinical,omitempty"`
}

// BenchmarkSpec holds the choices of the linear-Beta benchmark (paper 4.1).
type BenchmarkSpec struct {
	// Sites, Trajectories and Horizon are the defaults K = 3,
	// N = 3000, 2000, 5000 and H = 7 (the paper's).
	Sites        int   `json:"sites"`
	Trajectories []int `json:"trajectories"`
	Horizon      int   `json:"horizon"`
	// P is the state dimension (3) and Actions is A (10): d = P*A.
	P       int `json:"p"`
	Actions int `json:"actions"`
	// ThetaLow and ThetaHigh bound theta_{h,i}^k ~ U[0.1, 0.9] (the
	// paper's).
	ThetaLow  float64 `json:"theta_low"`
	ThetaHigh float64 `json:"theta_high"`
	// Beta shape parameters alpha_{k,h,i,j} (and beta likewise, drawn
	// independently) are
	//
	//	max(ShapeFloor, base_{i,j} * site_{k,i,j} * step_{h,i,j})
	//
	// with base ~ U[ShapeLow, ShapeHigh] = U[1, 5], site factors ~
	// U[1-SiteSpread, 1+SiteSpread] = U[0.5, 1.5], step factors ~
	// U[1-StepSpread, 1+StepSpread] = U[0.7, 1.3], and ShapeFloor = 0.5.
	ShapeLow   float64 `json:"shape_low"`
	ShapeHigh  float64 `json:"shape_high"`
	SiteSpread float64 `json:"site_spread"`
	StepSpread float64 `json:"step_spread"`
	ShapeFloor float64 `json:"shape_floor"`
	// RewardNoise eta: the realized reward is phi^T theta + U[-eta, eta]
	// with eta = 0.1. Since phi^T theta lies in [ThetaLow, ThetaHigh], the
	// reward stays in [0,1] without clipping and its mean is exactly
	// phi^T theta.
	RewardNoise float64 `json:"reward_noise"`
	// EvalSamples is M, the number of common Monte Carlo next states per
	// (site, step, coordinate) used by exact evaluation (2048).
	EvalSamples int `json:"eval_samples"`
}

// DefaultBenchmarkSpec returns the benchmark's defaults.
func DefaultBenchmarkSpec() BenchmarkSpec {
	return BenchmarkSpec{
		Sites: 3, Trajectories: []int{3000, 2000, 5000}, Horizon: 7,
		P: 3, Actions: 10,
		ThetaLow: 0.1, ThetaHigh: 0.9,
		ShapeLow: 1, ShapeHigh: 5, SiteSpread: 0.5, StepSpread: 0.3, ShapeFloor: 0.5,
		RewardNoise: 0.1,
		EvalSamples: 2048,
	}
}

// ConvergenceSpec holds the choices of the hard instance (paper 4.2).
type ConvergenceSpec struct {
	// Sites, Trajectories and Horizon: K = 4 and H = 40 (the paper's);
	// site sizes in the ratio 1 : 1.5 : 2 : 3 with N_min = 1000. Params
	// override them; the ratio is what Params.MinTrajectories scales.
	Sites        int   `json:"sites"`
	Trajectories []int `json:"trajectories"`
	Horizon      int   `json:"horizon"`
	// Actions is A = 7 (the paper's); d = A + 2.
	Actions int `json:"actions"`
	// The behaviour policy is uniform over the A actions at every step and
	// state (at s1 and s2 the action does not matter); it is not a knob.
}

// DefaultConvergenceSpec returns the hard instance's defaults.
func DefaultConvergenceSpec() ConvergenceSpec {
	return ConvergenceSpec{Sites: 4, Trajectories: []int{1000, 1500, 2000, 3000}, Horizon: 40, Actions: 7}
}

// TrapSpec holds the choices of the pessimism (trap) instance (paper 4.3).
type TrapSpec struct {
	// Sites, Trajectories and Horizon: K = 3 and H = 7 (the paper's); site
	// sizes in the ratio 1 : 1.5 : 2.5 with N_min = 2000.
	Sites        int   `json:"sites"`
	Trajectories []int `json:"trajectories"`
	Horizon      int   `json:"horizon"`
	// SafeMean and TrapMean are the mean rewards of action 0 (safe) and
	// action 1 (trap): 0.70 and 0.65 (the paper's). Rewards are Bernoulli,
	// the largest variance a [0,1] reward with that mean can have.
	SafeMean float64 `json:"safe_mean"`
	TrapMean float64 `json:"trap_mean"`
	// TrapCount is the number of trajectories per (site, step) that take
	// the trap (5, or N_k if smaller), whatever N_k is; the rest take the
	// safe action. They are chosen uniformly without replacement, at each
	// step independently of the state.
	TrapCount int `json:"trap_count"`
	// States form the simplex grid {x in [0,1]^P : x = n/Grid, sum x = 1}
	// with P = 3 and Grid = 4 (15 states); features are action-block, so
	// phi(x, a) puts x in block a.
	P    int `json:"p"`
	Grid int `json:"grid"`
	// The next-state law of coordinate j is mu_{h,j}^k = (1-SiteWeight)
	// base_{h,j} + SiteWeight site_{k,h,j} with base and site drawn from the
	// flat Dirichlet on the grid states, SiteWeight = 0.5; it is the same
	// for both actions, so the safe action is robustly optimal by exactly
	// SafeMean - TrapMean at every state and step.
	SiteWeight float64 `json:"site_weight"`
}

// DefaultTrapSpec returns the trap instance's defaults.
func DefaultTrapSpec() TrapSpec {
	return TrapSpec{
		Sites: 3, Trajectories: []int{2000, 3000, 5000}, Horizon: 7,
		SafeMean: 0.70, TrapMean: 0.65, TrapCount: 5,
		P: 3, Grid: 4, SiteWeight: 0.5,
	}
}

// FormularySpec holds the choices of the formulary scenario: a tabular
// multi-hospital treatment problem built to exercise grmdp's guardrails
// (a site that never uses half the actions, early episode ends, unequal
// site sizes and case-mix).
type FormularySpec struct {
	// Sites, Trajectories, Horizon and Actions: 5 sites of 5000, 2000, 500,
	// 3500 and 1200 patients, H = 20, A = 8 regimens (0 = supportive care).
	Sites        int   `json:"sites"`
	Trajectories []int `json:"trajectories"`
	Horizon      int   `json:"horizon"`
	Actions      int   `json:"actions"`
	// A state is (severity v, comorbidity profile c, last response r) with
	// v in 0..Severity-1, c in 0..Comorbidity-1, r in {worse, same, better,
	// first visit}: S = 12*5*4 = 240; state = (v*Comorbidity + c)*4 + r.
	Severity    int `json:"severity"`
	Comorbidity int `json:"comorbidity"`
	// RestrictedSite (0-based, default 2: the 500-patient site) only ever
	// uses actions 0..RestrictedActions-1 (default 4: half the formulary);
	// with fewer sites no site is restricted.
	RestrictedSite    int `json:"restricted_site"`
	RestrictedActions int `json:"restricted_actions"`
	// Severity moves by Delta in -2..2 with probability proportional to
	// exp(-(Delta - m)^2 / (2 Spread^2)), m = Progression - efficacy,
	// Progression = 0.35, Spread = 0.8, clipped to 0..Severity-1.
	// Efficacy of regimen a >= 1 for profile c is U[0.1, 1.3] (supportive
	// care: SupportEfficacy = 0.15), plus a site shift U[-EfficacySpread,
	// EfficacySpread] per (site, action), EfficacySpread = 0.3.
	Progression     float64 `json:"progression"`
	Spread          float64 `json:"spread"`
	SupportEfficacy float64 `json:"support_efficacy"`
	EfficacySpread  float64 `json:"efficacy_spread"`
	// Death ends the episode (no row at h+1, value 0): after a move to
	// severity v' the patient dies with probability min(0.9, Mortality *
	// factor_k * max(0, v' - (Severity-3))), factor_k ~ U[0.8, 1.25],
	// Mortality = 0.12.
	Mortality float64 `json:"mortality"`
	// Mean reward: 0.95 - 0.9 v/(Severity-1) - toxicity_a + shift_k,
	// clipped to [0,1]; toxicity_a ~ U[0.02, 0.12] (0 for supportive care),
	// shift_k ~ U[-RewardShift, RewardShift], RewardShift = 0.05. Realized
	// rewards are Bernoulli with that mean.
	RewardShift float64 `json:"reward_shift"`
}

// DefaultFormularySpec returns the formulary scenario's defaults.
func DefaultFormularySpec() FormularySpec {
	return FormularySpec{
		Sites: 5, Trajectories: []int{5000, 2000, 500, 3500, 1200}, Horizon: 20, Actions: 8,
		Severity: 12, Comorbidity: 5,
		RestrictedSite: 2, RestrictedActions: 4,
		Progression: 0.35, Spread: 0.8, SupportEfficacy: 0.15, EfficacySpread: 0.3,
		Mortality: 0.12, RewardShift: 0.05,
	}
}

// ClinicalSpec holds the choices of the clinical scenario: hospitals
// that differ in case-mix and formulary, continuous vital signs driven by
// a latent severity, a 0/1 survival outcome at an episode's last row and
// NULL lactate values. The dynamics' coefficients are fixed (see
// [Clinical]); what a study varies is here.
type ClinicalSpec struct {
	// Sites, Trajectories and Horizon: 5 hospitals of 300 patients, H = 12.
	Sites        int   `json:"sites"`
	Trajectories []int `json:"trajectories"`
	Horizon      int   `json:"horizon"`
	// OffFormulary lists, per hospital, the treatments it never gives
	// (hospital k takes entry k mod len(OffFormulary)); standard care (0)
	// is always given. Default: hospital 2 never gives fluids with
	// vasopressors (3), hospital 4 never gives vasopressors (2, 3).
	OffFormulary [][]int `json:"off_formulary"`
	// NullRate is the probability that a row's lactate is NULL, at each
	// row independently of everything else (0.02).
	NullRate float64 `json:"null_rate"`
	// Exploration mixes the clinicians' softmax with the uniform law on the
	// hospital's formulary: weight 0.05, so every treatment on it has
	// probability at least 0.05 / (treatments on it) at every row.
	Exploration float64 `json:"exploration"`
	// EvalEpisodes is the number of Monte Carlo episodes per site of
	// [Clinical.Value] when it is given zero (50,000).
	EvalEpisodes int `json:"eval_episodes"`
}

// DefaultClinicalSpec returns the clinical scenario's defaults.
func DefaultClinicalSpec() ClinicalSpec {
	return ClinicalSpec{
		Sites: 5, Trajectories: []int{300, 300, 300, 300, 300}, Horizon: 12,
		OffFormulary: [][]int{{}, {3}, {}, {2, 3}, {}},
		NullRate:     0.02, Exploration: 0.05, EvalEpisodes: 50000,
	}
}

// resolveSizes returns K, the site sizes and H from p and a scenario's
// defaults.
func resolveSizes(p Params, sites int, sizes []int, horizon int) (int, []int, int, error) {
	K := sites
	if p.Sites > 0 {
		K = p.Sites
	}
	if p.Sites < 0 {
		return 0, nil, 0, fmt.Errorf("sim: %d sites: want at least 1", p.Sites)
	}
	H := horizon
	if p.Horizon > 0 {
		H = p.Horizon
	}
	if p.Horizon < 0 {
		return 0, nil, 0, fmt.Errorf("sim: horizon %d: want at least 1", p.Horizon)
	}
	var N []int
	switch {
	case p.Trajectories != nil:
		if p.Sites > 0 && len(p.Trajectories) != p.Sites {
			return 0, nil, 0, fmt.Errorf("sim: %d trajectory counts for %d sites", len(p.Trajectories), p.Sites)
		}
		K = len(p.Trajectories)
		N = slices.Clone(p.Trajectories)
	default:
		lo := slices.Min(sizes)
		N = make([]int, K)
		for k := range N {
			N[k] = sizes[k%len(sizes)]
			if p.MinTrajectories > 0 {
				N[k] = int(math.Round(float64(p.MinTrajectories) * float64(sizes[k%len(sizes)]) / float64(lo)))
			}
		}
	}
	if K < 1 {
		return 0, nil, 0, fmt.Errorf("sim: no sites")
	}
	for k, n := range N {
		if n < 1 {
			return 0, nil, 0, fmt.Errorf("sim: site %d has %d trajectories: want at least 1", k+1, n)
		}
	}
	return K, N, H, nil
}

// siteLabels returns "1".."K", the labels Sample's integer site column
// reads back as.
func siteLabels(K int) []string {
	out := make([]string, K)
	for k := range out {
		out[k] = fmt.Sprint(k + 1)
	}
	return out
}
