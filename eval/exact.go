package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Exact evaluation draws its initial states with this seed and averages
// over this many of them (the paper's m = 200; the hard instance has the
// single state s0).
const (
	ExactStates = 200
	ExactSeed   = 20260101
)

// Model evaluates policies exactly under a known simulation model.
type Model struct {
	Model  sim.Model
	States [][]float64
	// VStar holds V*_1 at each state.
	VStar []float64
}

// ExactValues are means over the model's evaluation states.
type ExactValues struct {
	// OptimalValue is the mean of V*_1, PolicyValue of V^pi_1.
	OptimalValue, PolicyValue float64
	// Suboptimality is the mean of V*_1 - V^pi_1.
	Suboptimality float64
	// ValueGap is the mean of V*_1 - Vhat_1, Vhat_1 = max_a Qhat_1; NaN for
	// policies without a value estimate (pevi-avg, pevi-min, behaviour).
	ValueGap float64
	States   int
}

// NewModel prepares exact evaluation under m at its evaluation states.
func NewModel(m sim.Model) *Model {
	states := m.InitialStates(ExactStates, ExactSeed)
	return &Model{Model: m, States: states, VStar: m.OptimalValue(states)}
}

// Check reports whether p can act on the model's states: the same
// actions and horizon, and either the model's feature map or a map of
// another kind over the same state columns (a binned or soft-binned
// policy learned on the model's data), which p then applies to the
// model's states itself.
func (me *Model) Check(p *solve.Policy) error {
	mm := me.Model.Map()
	sameMap := mm.Kind == p.Map.Kind && mm.Dim() == p.D
	sameState := len(mm.StateColumns) > 0 && slices.Equal(mm.StateColumns, p.Map.StateColumns) && mm.Width() == p.Map.Width()
	if !(sameMap || sameState) || mm.A != p.A || me.Model.Horizon() != p.H {
		return fmt.Errorf("%w: the model (%s, d = %d, A = %d, H = %d) does not fit the policy (%s, d = %d, A = %d, H = %d)",
			solve.ErrBadPolicy, mm.Kind, mm.Dim(), mm.A, me.Model.Horizon(), p.Map.Kind, p.D, p.A, p.H)
	}
	return nil
}

// Exact evaluates p under the model: robust policy evaluation of p's
// recommended actions (with its fallback), against V*.
func (me *Model) Exact(p *solve.Policy) (ExactValues, error) {
	if err := me.Check(p); err != nil {
		return ExactValues{}, err
	}
	v := me.Model.PolicyValue(policyFunc(p), me.States)
	r := ExactValues{States: len(me.States)}
	q := make([]float64, p.A)
	gapDefined := p.Method != solve.Behaviour && p.Method != solve.PEVIAvg && p.Method != solve.PEVIMin
	for i, s := range me.States {
		r.OptimalValue += me.VStar[i]
		r.PolicyValue += v[i]
		r.Suboptimality += me.VStar[i] - v[i]
		if gapDefined {
			p.QValues(1, s, q)
			best := 0.0
			for _, x := range q {
				best = max(best, x)
			}
			r.ValueGap += me.VStar[i] - best
		}
	}
	n := float64(len(me.States))
	r.OptimalValue, r.PolicyValue, r.Suboptimality, r.ValueGap = r.OptimalValue/n, r.PolicyValue/n, r.Suboptimality/n, r.ValueGap/n
	if !gapDefined {
		r.ValueGap = math.NaN()
	}
	return r, nil
}

// policyFunc returns p's decisions (with its fallback) as a sim.Policy.
func policyFunc(p *solve.Policy) sim.Policy {
	return func(h int, state []float64) int {
		q := make([]float64, p.A)
		a, _, _ := p.Act(h, state, q)
		return a
	}
}

// ExactSites returns each site's own exact value of p under the model, in
// the model's site order: policy evaluation of p's decisions under that
// site's transitions and rewards alone (no minimum over sites), averaged
// over that site's own initial-state law, the quantity the site's
// estimate from data estimates (it averages over the site's observed
// initial states). For models whose sites have laws of their own
// ([sim.SiteInitialLaw], the formulary's case-mix) the average is the
// exact expectation over the site's law; in the other models every site's
// data start from the law [Model.Exact]'s evaluation states are drawn
// from, so the average is over those states. The robust value is at most
// every site's own value at each state, but with sites of different
// case-mix a site's value may lie below the robust value averaged over
// the evaluation states.
func (me *Model) ExactSites(p *solve.Policy) ([]float64, error) {
	if err := me.Check(p); err != nil {
		return nil, err
	}
	pi := policyFunc(p)
	out := make([]float64, len(me.Model.Sites()))
	law, perSite := me.Model.(sim.SiteInitialLaw)
	for k := range out {
		if perSite {
			states, probs := law.SiteInitialLaw(k)
			for i, v := range me.Model.SitePolicyValue(k, pi, states) {
				out[k] += probs[i] * v
			}
			continue
		}
		for _, v := range me.Model.SitePolicyValue(k, pi, me.States) {
			out[k] += v
		}
		out[k] /= float64(len(me.States))
	}
	return out, nil
}

// ExactRobustAtData returns p's exact robust value under the model
// averaged over the initial-state law of a data set with n[k]
// trajectories at site k: each site's law weighted by n[k], the law the
// robust estimate from data averages over. For models whose sites share
// one law it is [Model.Exact]'s policy value.
func (me *Model) ExactRobustAtData(p *solve.Policy, n []int) (float64, error) {
	if err := me.Check(p); err != nil {
		return 0, err
	}
	pi := policyFunc(p)
	law, perSite := me.Model.(sim.SiteInitialLaw)
	if !perSite {
		v := me.Model.PolicyValue(pi, me.States)
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v)), nil
	}
	if len(n) != len(me.Model.Sites()) {
		return 0, fmt.Errorf("eval: %d site sizes for a model of %d sites", len(n), len(me.Model.Sites()))
	}
	total, out := 0, 0.0
	for k, nk := range n {
		states, probs := law.SiteInitialLaw(k)
		for i, v := range me.Model.PolicyValue(pi, states) {
			out += float64(nk) * probs[i] * v
		}
		total += nk
	}
	return out / float64(total), nil
}
