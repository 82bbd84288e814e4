package solve

import (
	"fmt"
	"math"
)

// CondWarn is the condition number of a Lambda_h^g above which a solve
// warns. The regression solves Lambda nu = b in float64 (about 16 significant
// digits), and nu may lose about log10(cond) of them: above 1e10 fewer than
// 6 remain, and w_h, m_h and every Qhat built from them are no better.
const CondWarn = 1e10

// Conditioning is one group's worst-conditioned step: the largest
// condition number of its Lambda_h^g over the steps and the first step with
// it.
type Conditioning struct {
	Group string  `json:"group"`
	Step  int     `json:"step"`
	Cond  float64 `json:"cond"`
}

// factorConds returns the condition number ([Factor.Cond]) of each of a
// pass's G groups at step h, the factors indexed as [Solver.coefficients]
// indexes them.
func factorConds(factors []*Factor, h, G int, fi func(h, gi, G int) int) []float64 {
	out := make([]float64, G)
	for gi := range out {
		out[gi] = factors[fi(h, gi, G)].Cond()
	}
	return out
}

// setCondition fills dg.Cond and dg.Condition from the condition numbers
// the backward passes recorded in p's step coefficients: group i of
// p.Groups is group i of the one run (Algorithm 1, pevi-pooled) or the one
// group of run i (pevi-avg, pevi-min). A policy read from a file or
// behaviour cloning has none, and both stay nil.
func (dg *Diagnostics) setCondition(p *Policy) {
	for r, run := range p.Runs {
		for h, c := range run.Steps {
			for gi, x := range c.Cond {
				g := r + gi
				for len(dg.Cond) <= g {
					dg.Cond = append(dg.Cond, nil)
				}
				if dg.Cond[g] == nil {
					dg.Cond[g] = make([]float64, len(run.Steps))
				}
				if !(x < math.MaxFloat64) {
					// An estimate that overflowed (or NaN): as large as a
					// float64 goes, which JSON can carry.
					x = math.MaxFloat64
				}
				dg.Cond[g][h] = x
			}
		}
	}
	for g, conds := range dg.Cond {
		if conds == nil {
			continue
		}
		name := fmt.Sprint(g)
		if g < len(p.Groups) {
			name = p.Groups[g].Name
		}
		worst := Conditioning{Group: name, Step: 1, Cond: conds[0]}
		for h, x := range conds {
			if x > worst.Cond {
				worst.Step, worst.Cond = h+1, x
			}
		}
		dg.Condition = append(dg.Condition, worst)
	}
}

// conditionWarning returns the one-line warning about the (group, step)
// cells whose Lambda_h^g has a condition number above [CondWarn]; false
// when there are none.
func (dg *Diagnostics) conditionWarning() (Warning, bool) {
	cells := 0
	var worst Conditioning
	for _, conds := range dg.Cond {
		for _, x := range conds {
			if x > CondWarn {
				cells++
			}
		}
	}
	for _, c := range dg.Condition {
		if c.Cond > worst.Cond {
			worst = c
		}
	}
	if cells == 0 {
		return Warning{}, false
	}
	digits := max(0, 16-int(math.Ceil(math.Log10(worst.Cond))))
	return Warning{Finding: fmt.Sprintf("Lambda is ill-conditioned at %d (group, step) cells (condition number above %.0e; worst %.3g, group %s at step %d): "+
		"the regression keeps about %d of 16 significant digits there; ",
		cells, CondWarn, worst.Cond, worst.Group, worst.Step, digits), Hint: HintLargerLambda}, true
}
