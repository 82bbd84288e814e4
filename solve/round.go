package solve

import (
	"context"
	"fmt"
)

// A Round solves one step of a set of backward passes from that step's
// sums per site: the Gram of the step (of every step, when transitions are
// stationary) and each pass's right-hand side sum phi(s,a) (r +
// Vhat_{h+1}(s')). From them it builds each group's factor, solves each
// group's nu, and sets the step's coefficients: w = row-min of nu and m =
// row-max of sqrt diag Lambda^{-1} in group order (featurewise), or nu and
// Lambda^{-1} (PEVI), with each group's condition number and, for a pass
// with SiteNu, each site's own nu and Delta_{h,m}.
//
// The in-process backward pass runs a Round at every step over the sums of
// its own rows; a party that holds only sums (a federated coordinator)
// runs the same Round over the sums its sites send ([Round.Solve]), and
// each site forms its part with [Round.RHS], so the two compute the same
// bits.
type Round struct {
	// Passes are the passes the round solves; their groups index the
	// sites of the sums.
	Passes []Pass
	// Settings supplies Lambda, Workers and Stationary; the results do
	// not depend on Workers.
	Settings Settings

	// ps is the passes' working state (the driver's, or Solve's).
	ps []*passState
}

// RoundSums are a step's sums per site, in one site order.
type RoundSums struct {
	// Grams[k] holds site k's Gram of the step, or, when transitions are
	// stationary, its Grams of every step 1..H in step order.
	Grams [][]Gram
	// RHS[i][k] is site k's right-hand side of pass i (nil when the site
	// is not in the pass).
	RHS [][][]float64
}

// Solve returns step h's coefficients of every pass from the step's sums,
// with l the layout the Grams are packed in. It builds the factors and the
// coefficients as the in-process backward pass does: each group's Grams
// and right-hand sides summed in member order (each member's steps in
// order when stationary), factorised, nu solved, and the row-min and
// row-max taken in group order.
func (r *Round) Solve(ctx context.Context, l *Layout, h int, sums RoundSums) ([]*StepCoef, error) {
	if h < 1 {
		return nil, fmt.Errorf("solve: step %d", h)
	}
	if len(sums.RHS) != len(r.Passes) {
		return nil, fmt.Errorf("solve: %d passes and right-hand sides of %d", len(r.Passes), len(sums.RHS))
	}
	K := len(sums.Grams)
	ps := make([]*passState, len(r.Passes))
	for i, pass := range r.Passes {
		rhs := sums.RHS[i]
		if len(rhs) != K {
			return nil, fmt.Errorf("solve: %d sites' Grams and %d right-hand sides", K, len(rhs))
		}
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
		p.rhs = rhs
		ps[i] = p
	}
	if err := r.factors(ctx, l, h, sums.Grams, ps); err != nil {
		return nil, err
	}
	rd := Round{Settings: r.Settings, ps: ps}
	rd.solve(h, len(l.Blocks.Of), false)
	out := make([]*StepCoef, len(ps))
	for i, p := range ps {
		c := p.run.Steps[h-1]
		out[i] = &c
	}
	return out, nil
}

// factors builds step h's factors of the passes ps from every site's
// Grams: as the driver builds them per round, or, when stationary, one
// per group over every member's Grams of every step.
func (r *Round) factors(ctx context.Context, l *Layout, h int, grams [][]Gram, ps []*passState) error {
	s := r.Settings
	if !s.Stationary {
		one := make([]Gram, len(grams))
		for k, g := range grams {
			if len(g) != 1 {
				return fmt.Errorf("solve: site %d has %d Grams, want the step's one", k, len(g))
			}
			one[k] = g[0]
		}
		for _, p := range ps {
			p.factors = make([]*Factor, h*len(p.groups))
			if p.siteNu {
				p.siteFactors = make([]*Factor, h*len(grams))
			}
		}
		return buildFactors(ctx, l, s, one, ps, h)
	}
	for _, p := range ps {
		if p.siteNu {
			return fmt.Errorf("solve: pass with each site's own regression under stationary transitions")
		}
		p.factors = make([]*Factor, len(p.groups))
		for gi, members := range p.groups {
			var gs []*Gram
			for _, k := range members {
				for i := range grams[k] {
					gs = append(gs, &grams[k][i])
				}
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			f, err := NewFactor(l, gs, s.Lambda, p.kind == pevi)
			if err != nil {
				return fmt.Errorf("group %d: %w", gi, err)
			}
			p.factors[gi] = f
		}
	}
	return nil
}

// solve solves round h of every pass from its factors and its right-hand
// sides per site ([coefficients]), then drops the right-hand sides and,
// when the factors are built per round, the step's factors.
func (r *Round) solve(h, d int, perRound bool) {
	for _, p := range r.ps {
		if p.rep != nil {
			continue // solved by its round (repRound)
		}
		coefficients(p, h, d, r.Settings.Stationary)
		p.rhs = nil
		if perRound {
			clear(p.factors)
			clear(p.siteFactors)
		}
	}
}

// RHS returns what st's rows contribute to step h of each pass: per pass
// and per site, the right-hand side sum phi(s,a) (r + Vhat_{h+1}(s')) over
// the site's step-h rows, with Vhat_{h+1} evaluated at the step-(h+1) rows
// under the pass's step-(h+1) coefficients next[i] (unused at h = H) by
// the sweep the in-process backward pass uses. The passes' groups index
// st's sites; a site outside a pass gets nil. When stationary, each is
// summed over every step's rows in step order, with Vhat_{h+1} at every
// step's next states.
func (r *Round) RHS(ctx context.Context, st *Stats, h int, next []*StepCoef) ([][][]float64, error) {
	sv := NewSolver(st, r.Settings)
	t := st.Table
	H, K := t.H, len(t.Sites)
	if h < 1 || h > H {
		return nil, fmt.Errorf("solve: step %d of %d", h, H)
	}
	ps := make([]*passState, len(r.Passes))
	for i, pass := range r.Passes {
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

// delta returns Delta_{h,m} of every group of a pass from its nu per group
// and each site's own nu: the largest distance from a member's nu to its
// group's ([Distance]).
func delta(groups [][]int, nu, siteNu [][]float64) []float64 {
	out := make([]float64, len(groups))
	for gi, members := range groups {
		worst := 0.0
		for _, k := range members {
			worst = max(worst, Distance(siteNu[k], nu[gi]))
		}
		out[gi] = worst
	}
	return out
}
