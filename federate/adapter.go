package federate

// This file is the coordinator's and the site's whole use of the backward
// pass: until package solve's driver runs over a step source that a site
// answering over files can be, the fold below repeats, on solve's exported
// pieces (Gram, NewFactor, Factor.SolveTo, Beta, BehaviourTable, Policy),
// what solve.Solver's passes do at one step (its coefficients and values),
// step for step and in the same order, so that the bits are the same. When
// the driver lands, the site becomes a step source and this file goes.

import (
	"context"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// layoutOf returns the job's Gram layout: the map's own blocks.
func layoutOf(j *Job) *solve.Layout {
	l := solve.NewLayout(j.Map.Blocks())
	return &l
}

// runPlans returns the job's backward passes for the sites in order with
// their trajectory counts, as solve's plan makes them: their groups
// (indices into order) and penalty scales.
func runPlans(j *Job, order []string, traj []int) ([]Run, [][][]int, error) {
	d, H := j.Map.Dim(), j.H
	K := len(order)
	betaFor := func(G int, nmax float64) float64 {
		if j.BetaGiven {
			return j.Beta
		}
		return solve.Beta(j.C, d, G, H, nmax, j.Xi)
	}
	trajectories := func(members []int) float64 {
		n := 0
		for _, k := range members {
			n += traj[k]
		}
		return float64(n)
	}
	names := func(groups [][]int) [][]string {
		out := make([][]string, len(groups))
		for i, g := range groups {
			for _, k := range g {
				out[i] = append(out[i], order[k])
			}
		}
		return out
	}
	all := make([]int, K)
	for k := range all {
		all[k] = k
	}
	var groups [][]int
	switch j.Method {
	case solve.Sitewise, solve.PEVIAvg, solve.PEVIMin:
		for k := range order {
			groups = append(groups, []int{k})
		}
	case solve.Pooled, solve.PEVIPooled, solve.Behaviour:
		groups = [][]int{all}
	case solve.Cluster:
		var err error
		if groups, err = clusterGroups(j, order); err != nil {
			return nil, nil, err
		}
	}
	nmax := 0.0
	for _, g := range groups {
		nmax = max(nmax, trajectories(g))
	}
	var runs []Run
	var idx [][][]int
	switch j.Method {
	case solve.Sitewise, solve.Cluster, solve.Pooled:
		runs = []Run{{Name: "all", Groups: names(groups), Beta: betaFor(len(groups), nmax)}}
		idx = [][][]int{groups}
	case solve.PEVIPooled:
		runs = []Run{{Name: "all", Groups: names(groups), PEVI: true, Beta: betaFor(1, nmax)}}
		idx = [][][]int{groups}
	case solve.PEVIAvg, solve.PEVIMin:
		for _, g := range groups {
			runs = append(runs, Run{Name: order[g[0]], Groups: names([][]int{g}), PEVI: true, Beta: betaFor(1, trajectories(g))})
			idx = append(idx, [][]int{g})
		}
	}
	for i := range runs {
		runs[i].Steps = make([]*solve.StepCoef, H)
	}
	return runs, idx, nil
}

// clusterGroups returns the job's clusters as groups of indices into
// order, as cluster.Assignment.Groups orders them: members ascending,
// groups by their first member.
func clusterGroups(j *Job, order []string) ([][]int, error) {
	var groups [][]int
	for _, c := range j.Clusters {
		var g []int
		for _, s := range c.Sites {
			k := slices.Index(order, s)
			if k < 0 {
				return nil, fmt.Errorf("federate: cluster %s names site %q, which sent no message", c.Name, s)
			}
			g = append(g, k)
		}
		slices.Sort(g)
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(x, y []int) int { return x[0] - y[0] })
	return groups, nil
}

// clusterNames returns the cluster names in the order of clusterGroups.
func clusterNames(j *Job, order []string) []string {
	type named struct {
		first int
		name  string
	}
	var ns []named
	for _, c := range j.Clusters {
		first := len(order)
		for _, s := range c.Sites {
			first = min(first, slices.Index(order, s))
		}
		ns = append(ns, named{first, c.Name})
	}
	slices.SortFunc(ns, func(x, y named) int { return x.first - y.first })
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.name
	}
	return out
}

// solveStep solves one run's regressions at step h from the sites'
// Grams and right-hand sides (indexed by site in order), as
// solve.Solver's coefficients does: each group's Grams summed in member
// order and factorised (NewFactor), its right-hand sides summed in member
// order, nu = Lambda^{-1} rhs, then w = rowmin nu and m = rowmax sqrt diag
// Lambda^{-1} in group order (featurewise), or nu and Lambda^{-1} (PEVI).
func solveStep(j *Job, layout *solve.Layout, h int, groups [][]int, pevi bool, grams []solve.Gram, rhs [][]float64) (*solve.StepCoef, error) {
	d := j.Map.Dim()
	G := len(groups)
	nu := make([][]float64, G)
	factors := make([]*solve.Factor, G)
	for gi, members := range groups {
		gs := make([]*solve.Gram, len(members))
		for i, k := range members {
			gs[i] = &grams[k]
		}
		f, err := solve.NewFactor(layout, gs, j.Lambda, pevi)
		if err != nil {
			return nil, fmt.Errorf("step %d, group %d: %w", h, gi, err)
		}
		factors[gi] = f
		sum := make([]float64, d)
		for _, k := range members {
			for i, v := range rhs[k] {
				sum[i] += v
			}
		}
		nu[gi] = make([]float64, d)
		f.SolveTo(nu[gi], sum)
	}
	c := &solve.StepCoef{}
	if pevi {
		c.W, c.Linv = nu[0], factors[0].Linv
		return c, nil
	}
	c.W = slices.Clone(nu[0])
	c.M = slices.Clone(factors[0].S)
	for gi := 1; gi < G; gi++ {
		s := factors[gi].S
		for i := 0; i < d; i++ {
			c.W[i] = min(c.W[i], nu[gi][i])
			c.M[i] = max(c.M[i], s[i])
		}
	}
	return c, nil
}

// slicePolicy returns a one-run policy holding run's step-h coefficients,
// to evaluate Vhat_h at a site's rows.
func slicePolicy(j *Job, run *Run, h int) *solve.Policy {
	method := solve.Pooled
	if run.PEVI {
		method = solve.PEVIPooled
	}
	steps := make([]solve.StepCoef, j.H)
	steps[h-1] = *run.Steps[h-1]
	if !run.PEVI {
		steps[h-1].Penalize(run.Beta)
	}
	return &solve.Policy{Method: method, Map: j.Map, H: j.H, D: j.Map.Dim(), A: j.Map.A, Lambda: j.Lambda,
		Runs: []solve.PolicyRun{{Group: run.Name, Beta: run.Beta, Steps: steps}}}
}

// siteValues returns Vhat_h = max_a Qhat_h at every row of step h of the
// site's table, under run's step-h coefficients, as solve.Solver's values
// sweep computes it.
func siteValues(ctx context.Context, j *Job, run *Run, st *solve.Stats, h int) ([]float64, error) {
	t := st.Table
	p := slicePolicy(j, run, h)
	step := &t.Steps[h-1]
	out := make([]float64, step.Len())
	q := make([]float64, t.A)
	for r := 0; r < step.Len(); r++ {
		if r%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		p.QValues(h, step.State[r*t.W:(r+1)*t.W], q)
		best := 0.0
		for _, x := range q {
			best = max(best, x)
		}
		out[r] = best
	}
	return out, nil
}

// discreteOf returns the map's discrete state count.
func discreteOf(m *features.Map) (int, bool) { return m.Discrete() }
