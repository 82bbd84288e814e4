package main

import (
	"fmt"
	"math"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// evalStates is the number of initial states exact evaluation averages
// over (the paper's m = 200), and evalSeed the seed that draws them.
const (
	evalStates = 200
	evalSeed   = 20260101
)

// modelEval evaluates policies exactly under a known simulation model.
type modelEval struct {
	model  sim.Model
	path   string
	states [][]float64
	vstar  []float64
}

// modelResult holds means over the evaluation's initial states.
type modelResult struct {
	optimal, value, subopt, gap float64
	states                      int
}

func loadModel(path string) (*modelEval, error) {
	m, err := sim.ReadModelFile(path)
	if err != nil {
		return nil, badInputf("--model %s: %v", path, err)
	}
	states := m.InitialStates(evalStates, evalSeed)
	return &modelEval{model: m, path: path, states: states, vstar: m.OptimalValue(states)}, nil
}

// check refuses a policy learned on another feature map than the model's.
func (me *modelEval) check(p *solve.Policy) error {
	mm := me.model.Map()
	if mm.Kind != p.Map.Kind || mm.Dim() != p.D || mm.A != p.A || me.model.Horizon() != p.H {
		return badInputf("--model %s (%s, d = %d, A = %d, H = %d) does not fit the policy (%s, d = %d, A = %d, H = %d)",
			me.path, mm.Kind, mm.Dim(), mm.A, me.model.Horizon(), p.Map.Kind, p.D, p.A, p.H)
	}
	return nil
}

func (me *modelEval) evaluate(p *solve.Policy) (modelResult, error) {
	if err := me.check(p); err != nil {
		return modelResult{}, err
	}
	pi := func(h int, state []float64) int {
		q := make([]float64, p.A)
		a, _, _ := p.Act(h, state, q)
		return a
	}
	v := me.model.PolicyValue(pi, me.states)
	r := modelResult{states: len(me.states)}
	q := make([]float64, p.A)
	gapDefined := p.Method != solve.Behaviour && p.Method != solve.PEVIAvg && p.Method != solve.PEVIMin
	for i, s := range me.states {
		r.optimal += me.vstar[i]
		r.value += v[i]
		r.subopt += me.vstar[i] - v[i]
		if gapDefined {
			p.QValues(1, s, q)
			best := 0.0
			for _, x := range q {
				best = max(best, x)
			}
			r.gap += me.vstar[i] - best
		}
	}
	n := float64(len(me.states))
	r.optimal, r.value, r.subopt, r.gap = r.optimal/n, r.value/n, r.subopt/n, r.gap/n
	if !gapDefined {
		r.gap = math.NaN()
	}
	return r, nil
}

func (me *modelEval) describe() string {
	return fmt.Sprintf("%s model, %d initial states (seed %d)", me.model.Scenario(), len(me.states), evalSeed)
}
