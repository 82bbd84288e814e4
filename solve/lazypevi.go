package solve

import "math"

// Deciding with a PEVI policy (pevi-pooled, pevi-avg, pevi-min) needs
// every action's Qhat only where it could be the largest. Each run's Qhat
// of action a is min{phi^T nu - beta sqrt(phi^T Lambda^{-1} phi), top}^+,
// which, with beta >= 0, is at most clip(phi^T nu, top): rounding is
// monotone, and so are clip, the runs' sum in run order, its division by
// their number and their minimum. That bound costs a dot product; the
// quadratic form and the square root are computed only for the actions
// whose bound reaches the best exact value found so far. The decision,
// its value and its evidence are those of [Policy.decide] on every
// action's Qhat, bit for bit: an action left out has a Qhat strictly below
// the chosen one's, so it neither wins nor ties.

// lazyMaxActions bounds the actions of a policy decided lazily (a bit
// per action records which exact values are known); larger ones take the
// full path.
const lazyMaxActions = 64

// lazyRuns holds one row's PEVI terms for a policy's runs at step h: every
// run's phi^T nu, and each run's exact Qhat once computed. Policies over
// the same runs (pevi-avg and pevi-min) share it. Its memory is reused
// from row to row: one per goroutine.
type lazyRuns struct {
	runs []PolicyRun
	h, a int
	top  float64
	l    *Layout
	row  *blockRow
	dot  []float64 // dot[r*a+i]: run r's phi(s, i)^T nu
	q    []float64 // q[r*a+i]: run r's Qhat of action i, once done
	done []uint64  // bit i of done[r]: q[r*a+i] is computed
}

// init prepares lr for p's runs at step h on r, a row the caller prepared
// for the state and p's map. It reports false when the lazy decision does
// not apply: a row of a map other than action-block, no runs, too many
// actions, a beta that is negative or NaN (the bound needs beta >= 0), or
// a NaN dot product.
func (lr *lazyRuns) init(p *Policy, h int, r *phiRow) bool {
	R, A := len(p.Runs), p.A
	if !r.block || R == 0 || A > lazyMaxActions || r.b.a != A {
		return false
	}
	row := &r.b
	for r := range p.Runs {
		if !(p.Runs[r].Beta >= 0) {
			return false
		}
	}
	if cap(lr.dot) < R*A {
		lr.dot, lr.q = make([]float64, R*A), make([]float64, R*A)
	}
	if cap(lr.done) < R {
		lr.done = make([]uint64, R)
	}
	lr.dot, lr.q, lr.done = lr.dot[:R*A], lr.q[:R*A], lr.done[:R]
	lr.runs, lr.h, lr.a, lr.l, lr.row = p.Runs, h, A, p.Layout(), row
	lr.top = float64(p.H - h + 1)
	for r := range p.Runs {
		row.dots(p.Runs[r].Steps[h-1].W, lr.dot[r*A:(r+1)*A])
		lr.done[r] = 0
	}
	// blockRow.dots and the full path's blockRow.dot make the same sums,
	// but which NaN an addition keeps depends on the order of its
	// operands: a NaN takes the full path.
	return !hasNaN(lr.dot)
}

// exact returns run r's Qhat of action a, as [peviQ] computes it.
func (lr *lazyRuns) exact(r, a int) float64 {
	i := r*lr.a + a
	if lr.done[r]&(1<<a) == 0 {
		run := &lr.runs[r]
		quad := lr.row.quad(run.Steps[lr.h-1].Linv, lr.l.Off[a])
		lr.q[i] = clip(lr.dot[i]-run.Beta*math.Sqrt(quad), lr.top)
		lr.done[r] |= 1 << a
	}
	return lr.q[i]
}

// upper sets ub[a] to an upper bound of p's Qhat of every action a: the
// runs' clip(phi^T nu, top) combined as [Policy.combineRuns] combines their
// Qhat, in the same order.
func (p *Policy) upper(lr *lazyRuns, ub []float64) {
	A := lr.a
	for r := range lr.runs {
		for a, d := range lr.dot[r*A : (r+1)*A] {
			ub[a] = p.foldRun(r, ub[a], clip(d, lr.top))
		}
	}
	for a := range ub {
		ub[a] = p.endRuns(ub[a], len(lr.runs))
	}
}

// combine returns p's Qhat of action a, the runs' exact Qhat combined as
// [Policy.combineRuns] does.
func (p *Policy) combine(lr *lazyRuns, a int) float64 {
	var q float64
	for r := range lr.runs {
		q = p.foldRun(r, q, lr.exact(r, a))
	}
	return p.endRuns(q, len(lr.runs))
}

// decideLazy is [Policy.decide] on the Qhat of every action, computing
// exactly only the actions whose upper bound reaches the best exact value
// so far. ok is false when the first computed Qhat is NaN: the caller then
// takes the full path. decide's scan starts at action 0 and keeps a NaN
// there, so action 0 is computed too unless its Qhat cannot be NaN (see
// finite0); a NaN elsewhere never wins decide's comparisons, nor those
// below.
// Kept: 1.29x user time without it, apply of a pevi-avg policy to (a), docs/PERFORMANCE.md item 53.
func (p *Policy) decideLazy(h int, state []float64, lr *lazyRuns) (action int, value float64, evidence, ok bool) {
	var ub [lazyMaxActions]float64
	p.upper(lr, ub[:p.A])
	first := argmax(ub[:p.A])
	best, bq := first, p.combine(lr, first)
	if bq != bq {
		return 0, 0, false, false
	}
	// Action 0 is computed here, NaN checked, when it could be chosen or
	// could be NaN.
	if first != 0 && (ub[0] >= bq || !lr.finite0()) {
		q := p.combine(lr, 0)
		if q != q {
			return 0, 0, false, false
		}
		if q >= bq {
			best, bq = 0, q
		}
	}
	for a := 1; a < p.A; a++ {
		if a == first || ub[a] < bq {
			continue
		}
		// The lowest action among equal values, as decide's scan.
		if q := p.combine(lr, a); q > bq || q == bq && a < best {
			best, bq = a, q
		}
	}
	if bq > 0 {
		return best, bq, true, true
	}
	// No Qhat is positive: every action's bound, at least +0, reached bq,
	// so every action was computed.
	if p.Fallback == FallbackBehaviour && p.BehaviourAction != nil {
		b := p.behaviourAction(h, state)
		return b, p.combine(lr, b), false, true
	}
	return best, bq, false, true
}

// finite0 reports whether no run's Qhat of action 0 can be NaN: each run's
// beta is finite, its phi^T nu finite and its block of Lambda^{-1} within
// 1e300 in magnitude. The quadratic form then sums at most 64 products of
// features in [0, 1] with such entries, a finite number; beta times its
// square root is finite or +Inf, and a finite phi^T nu minus it is not
// NaN, nor is its clip.
func (lr *lazyRuns) finite0() bool {
	for _, v := range lr.row.val[:lr.row.n] {
		if !(v >= 0 && v <= 1) { // the contract's nonnegative states give [0, 1]
			return false
		}
	}
	lo, hi := lr.l.Off[0], lr.l.Off[1]
	for r := range lr.runs {
		run := &lr.runs[r]
		if d := lr.dot[r*lr.a]; !(run.Beta <= math.MaxFloat64) || d-d != 0 {
			return false
		}
		for _, x := range run.Steps[lr.h-1].Linv[lo:hi] {
			if !(math.Abs(x) <= 1e300) {
				return false
			}
		}
	}
	return true
}

// actLazy is [Policy.act] for callers that need the decision but not every
// action's Qhat: a PEVI policy on an action-block row decides lazily and
// leaves q unfilled; any other case takes act.
func (p *Policy) actLazy(h int, state, q []float64, row *phiRow, lr *lazyRuns) (action int, value float64, evidence bool) {
	row.prepare(&p.Map, state)
	if p.penalty() == pevi && lr.init(p, h, row) {
		if a, v, ev, ok := p.decideLazy(h, state, lr); ok {
			return a, v, ev
		}
	}
	return p.actRow(h, row, q)
}

// A Decider makes a policy's decisions row after row, reusing its scratch
// memory between rows; it is not safe for concurrent use (one per
// goroutine). Its decisions are [Policy.Act]'s, bit for bit, but it does
// not report every action's Qhat, so a PEVI policy computes the quadratic
// form and square root only for the actions that could be chosen.
type Decider struct {
	p   *Policy
	q   []float64
	row phiRow
	lr  lazyRuns
}

// NewDecider returns a Decider for p.
func (p *Policy) NewDecider() *Decider {
	return &Decider{p: p, q: make([]float64, p.A)}
}

// Act returns the recommended action at step h in state, its Qhat and
// whether the decision has evidence, as [Policy.Act] does.
func (d *Decider) Act(h int, state []float64) (action int, value float64, evidence bool) {
	return d.p.actLazy(h, state, d.q, &d.row, &d.lr)
}
