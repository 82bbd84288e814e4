package solve

import (
	"context"
	"fmt"
)

// This file is the backward pass one step at a time, for a step source
// that keeps its rows elsewhere: sites that answer with sums. A round of
// the driver ([drive]) is, for each pass, the Gram of step h per site, the
// right-hand side sum phi(s,a) (r + Vhat_{h+1}(s')) per site given the
// pass's step-(h+1) coefficients, and then the regressions. [Solver.SiteRHS]
// is a site's part (its own rows, the driver's own value and right-hand
// side sweeps), [Step] the coordinator's (the driver's own factors and
// coefficients from the sums), so a federated pass computes the bits the
// central one does.

// Step solves step h of pass from the step's sums per site, in the plan's
// site order: grams[k] is site k's Gram of step h and rhs[k] its
// right-hand side (nil for a site outside the pass). It builds the
// factors and coefficients as the driver's round h does: each group's
// Grams and right-hand sides summed in member order, factorised, nu
// solved, and the row-min and row-max taken in group order (featurewise)
// or nu and Lambda^{-1} kept (PEVI). Only s.Lambda and s.Workers are read;
// the result does not depend on the workers.
func Step(ctx context.Context, l *Layout, s Settings, h int, pass Pass, grams []Gram, rhs [][]float64) (*StepCoef, error) {
	if h < 1 {
		return nil, fmt.Errorf("solve: step %d", h)
	}
	if len(rhs) != len(grams) {
		return nil, fmt.Errorf("solve: %d Grams and %d right-hand sides", len(grams), len(rhs))
	}
	K := len(grams)
	for _, members := range pass.Groups {
		if len(members) == 0 {
			return nil, fmt.Errorf("solve: pass %s has a group without sites", pass.Name)
		}
		for _, k := range members {
			if k < 0 || k >= K || rhs[k] == nil {
				return nil, fmt.Errorf("solve: pass %s names site %d, which has no right-hand side", pass.Name, k)
			}
		}
	}
	p := newPassState(pass.spec(), K, h)
	p.factors = make([]*Factor, h*len(pass.Groups))
	if pass.SiteNu {
		p.siteFactors = make([]*Factor, h*K)
	}
	if err := buildFactors(ctx, l, s, grams, []*passState{p}, h); err != nil {
		return nil, err
	}
	p.rhs = rhs
	solveRound([]*passState{p}, h, len(l.Blocks.Of), false, false)
	c := p.run.Steps[h-1]
	return &c, nil
}

// StepStationary is [Step] for the stationary variant
// ([Settings].Stationary): grams[k] holds site k's Grams of every step
// 1..H, and each group's one Lambda sums them member by member, each
// member's steps in order, as the driver's stationary factor does; rhs[k]
// is site k's stationary right-hand side ([Solver.SiteRHS]).
func StepStationary(ctx context.Context, l *Layout, s Settings, h int, pass Pass, grams [][]Gram, rhs [][]float64) (*StepCoef, error) {
	if h < 1 {
		return nil, fmt.Errorf("solve: step %d", h)
	}
	if len(rhs) != len(grams) {
		return nil, fmt.Errorf("solve: %d sites' Grams and %d right-hand sides", len(grams), len(rhs))
	}
	K := len(grams)
	p := newPassState(pass.spec(), K, h)
	p.factors = make([]*Factor, len(pass.Groups))
	for gi, members := range pass.Groups {
		if len(members) == 0 {
			return nil, fmt.Errorf("solve: pass %s has a group without sites", pass.Name)
		}
		var gs []*Gram
		for _, k := range members {
			if k < 0 || k >= K || rhs[k] == nil {
				return nil, fmt.Errorf("solve: pass %s names site %d, which has no right-hand side", pass.Name, k)
			}
			for i := range grams[k] {
				gs = append(gs, &grams[k][i])
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := NewFactor(l, gs, s.Lambda, pass.PEVI)
		if err != nil {
			return nil, fmt.Errorf("group %d: %w", gi, err)
		}
		p.factors[gi] = f
	}
	p.rhs = rhs
	solveRound([]*passState{p}, h, len(l.Blocks.Of), true, false)
	c := p.run.Steps[h-1]
	return &c, nil
}

// SiteRHS returns what the solver's rows contribute to step h of each
// pass: per pass and per site, the right-hand side sum phi(s,a) (r +
// Vhat_{h+1}(s')) over the site's step-h rows, with Vhat_{h+1} evaluated
// at the step-(h+1) rows under the pass's step-(h+1) coefficients next[i]
// (unused at h = H) by the same sweep the driver's round uses. The passes'
// groups index the solver's sites; a site outside a pass gets nil.
// With [Settings].Stationary it is the stationary round's right-hand side:
// summed over every step's rows in step order, with Vhat_{h+1} at every
// step's next states, as the driver's round sums it.
func (sv *Solver) SiteRHS(ctx context.Context, h int, passes []Pass, next []*StepCoef) ([][][]float64, error) {
	t := sv.st.Table
	H, K := t.H, len(t.Sites)
	if h < 1 || h > H {
		return nil, fmt.Errorf("solve: step %d of %d", h, H)
	}
	ps := make([]*passState, len(passes))
	for i, pass := range passes {
		p := newPassState(pass.spec(), K, H)
		if h < H {
			if i >= len(next) || next[i] == nil {
				return nil, fmt.Errorf("solve: pass %s lacks its step-%d coefficients", pass.Name, h+1)
			}
			c := *next[i]
			if !pass.PEVI {
				c.setPenalized(pass.Beta)
			}
			p.run.Steps[h] = c
		}
		ps[i] = p
	}
	if h < H {
		if err := sv.valueRound(ctx, ps, h+1); err != nil {
			return nil, err
		}
	}
	if err := sv.rhsRound(ctx, ps, h); err != nil {
		return nil, err
	}
	out := make([][][]float64, len(ps))
	for i, p := range ps {
		out[i] = p.rhs
	}
	return out, nil
}

// Penalize stores W - beta M, the coefficient Qhat is evaluated from (see
// setPenalized), so that a policy built from coefficients solved elsewhere
// (a federated coordinator's) evaluates as one solved here does, without
// computing it again at every row.
func (c *StepCoef) Penalize(beta float64) { c.setPenalized(beta) }
