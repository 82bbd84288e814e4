package solve

import (
	"context"
	"errors"
	"fmt"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// StepReader reads the rows of steps lo..hi of an input too large to hold
// in memory, as a Table with the whole input's sites, actions, A, H and
// trajectory counts; io/parquetio's Plan is one.
type StepReader interface {
	ReadSteps(ctx context.Context, lo, hi int) (*traj.Table, error)
}

// ErrStationaryStreamed is returned by [SolveStreamed] for the stationary
// variant, whose regressions need every step's rows at once.
var ErrStationaryStreamed = errors.New("solve: the stationary variant pools every step's rows in each regression and cannot be solved one step at a time")

// Streamed is the result of [SolveStreamed]: one policy per problem, in
// order, and its diagnostics.
type Streamed struct {
	Policies    []*Policy
	Diagnostics []*Diagnostics
	// Actions[i] and Evidence[i] are policy i's recommended action and
	// whether it has evidence at every [SampleStride]-th row of the input
	// in step order, as [ActAll] returns them for a table in memory.
	Actions  [][]int32
	Evidence [][]bool
	// Windows is the number of step windows read.
	Windows int
}

// SolveStreamed solves every problem in probs from an input read one window
// of two steps at a time, for inputs that do not fit in memory. Round h
// reads steps h and h+1, evaluates Vhat_{h+1} at the step-(h+1) rows with
// the previous round's coefficients, then builds step h's statistics and
// solves step h's regressions for every pass (all problems' passes in
// lockstep). Memory holds one window's rows plus the coefficients.
//
// cellRows[h-1][k] is the number of rows of site k at step h of the whole
// input (its length is H) and rows their total; both come from the pass
// that validated the input (io/parquetio's Survey). The policies and
// diagnostics are bit for bit those [Solver.Solve] and [Diagnose] give on
// the whole table in memory. The stationary variant is refused
// ([ErrStationaryStreamed]).
func SolveStreamed(ctx context.Context, r StepReader, m features.Map, blocks features.Blocks, s Settings, probs []Problem, cellRows [][]int, rows int) (*Streamed, error) {
	if s.Stationary {
		return nil, ErrStationaryStreamed
	}
	H := len(cellRows)
	if H == 0 {
		return nil, fmt.Errorf("solve: no steps to solve")
	}
	K := len(cellRows[0])
	stride := strideFor(rows)
	// off[u-1] is the index of step u's first row among all rows in step
	// order: the systematic sample of [DiagnoseSampled] counts from it.
	off := make([]int, H+1)
	for u := 1; u <= H; u++ {
		off[u] = off[u-1]
		for _, n := range cellRows[u-1] {
			off[u] += n
		}
	}
	var (
		ps      []*passState
		keys    []string
		pols    []*Policy // per problem: the policy as far as solved, for the sample
		sampled [][]float64
		noevS   [][]float64
		beh     = make([][]int32, H)
		evc     [][]float64
		cover   [][]float64
		out     = &Streamed{}
	)
	fi := func(h, gi, G int) int { return (h-1)*G + gi }
	for h := H; h >= 1; h-- {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, err := r.ReadSteps(ctx, h, min(h+1, H))
		if err != nil {
			return nil, err
		}
		out.Windows++
		if t.H != H || len(t.Sites) != K {
			return nil, fmt.Errorf("solve: step window %d..%d has H = %d and %d sites, the survey %d and %d", h, min(h+1, H), t.H, len(t.Sites), H, K)
		}
		st, err := NewStats(ctx, t, m, blocks, s.Workers)
		if err != nil {
			return nil, err
		}
		sv := NewSolver(st, s)
		if ps == nil {
			// First round: every problem's passes, once each.
			seen := map[string]bool{}
			pols = make([]*Policy, len(probs))
			sampled, noevS = make([][]float64, len(probs)), make([][]float64, len(probs))
			n := (rows + stride - 1) / stride
			out.Actions, out.Evidence = make([][]int32, len(probs)), make([][]bool, len(probs))
			fallback := s.Fallback
			if fallback == "" {
				fallback = FallbackBehaviour
			}
			for pi, prob := range probs {
				_, names, specs, err := sv.plan(prob)
				if err != nil {
					return nil, err
				}
				var runs []PolicyRun
				for i, spec := range specs {
					key := sv.runKey(spec.groups, spec.kind, spec.beta)
					var p *passState
					if !seen[key] {
						seen[key] = true
						p = newPassState(spec, K, H)
						p.factors = make([]*Factor, H*len(spec.groups))
						ps = append(ps, p)
						keys = append(keys, key)
					} else {
						for j, k := range keys {
							if k == key {
								p = ps[j]
							}
						}
					}
					runs = append(runs, PolicyRun{Group: names[i], Beta: spec.beta, Steps: p.run.Steps})
				}
				pols[pi] = &Policy{Method: prob.Method, Map: m, H: H, A: t.A, Runs: runs, layout: &st.Layout,
					Fallback: fallback, BehaviourAction: beh}
				sampled[pi], noevS[pi] = make([]float64, K), make([]float64, K)
				out.Actions[pi], out.Evidence[pi] = make([]int32, n), make([]bool, n)
			}
			cover = make([][]float64, K)
			for k := range cover {
				cover[k] = make([]float64, m.Dim())
			}
		}
		// Step h's factors; step h+1's are no longer needed.
		cells, err := st.StepGrams(ctx, h)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			G := len(p.groups)
			for gi, members := range p.groups {
				grams := make([]*Gram, len(members))
				for i, k := range members {
					grams[i] = &cells[k]
				}
				f, err := NewFactor(&st.Layout, grams, s.Lambda, p.kind == pevi)
				if err != nil {
					return nil, fmt.Errorf("step %d, group %d: %w", h, gi, err)
				}
				p.factors[fi(h, gi, G)] = f
				if h < H {
					p.factors[fi(h+1, gi, G)] = nil
				}
			}
		}
		// Vhat_{h+1} at the step-(h+1) rows, with round h+1's coefficients.
		for _, p := range ps {
			p.vals = make([][]float64, H+2)
		}
		if h < H {
			if err := streamValues(ctx, sv, ps, h+1); err != nil {
				return nil, err
			}
			sample(t, h+1, off[h], stride, pols, out, sampled, noevS)
		}
		if err := sv.rhsRound(ctx, ps, h); err != nil {
			return nil, err
		}
		for _, p := range ps {
			sv.coefficients(p, h, fi)
			p.rhs = nil
		}
		beh[h-1] = sv.behaviour()[h-1]
		if HasEvidenceCounts(m.Kind) && blocks.Diagonal() {
			if evc == nil {
				evc = make([][]float64, H)
			}
			evc[h-1] = gramDiagonal(m.Dim(), cells)
		}
		addCoverage(st, h, cover)
		if h > 1 {
			continue
		}
		// The last round: Vhat_1 at the step-1 rows, then the policies.
		if err := streamValues(ctx, sv, ps, 1); err != nil {
			return nil, err
		}
		sample(t, 1, 0, stride, pols, out, sampled, noevS)
		sv.runs = map[string]*Run{}
		for i, p := range ps {
			p.run.V1 = p.vals[1]
			p.run.Rows = runRows(&t.Steps[0], p.inRun)
			sv.runs[keys[i]] = p.run
		}
		sv.beh, sv.evc = beh, evc
		st.coverOnce.Do(func() { st.cover = cover })
		for pi, prob := range probs {
			pol, err := sv.Solve(ctx, prob)
			if err != nil {
				return nil, err
			}
			pol.Rows = rows
			out.Policies = append(out.Policies, pol)
			out.Diagnostics = append(out.Diagnostics, streamDiagnostics(st, pol, cellRows, sampled[pi], noevS[pi]))
		}
	}
	return out, nil
}

// newPassState returns the working state of one pass over K sites and H
// steps, without factors.
func newPassState(spec passSpec, K, H int) *passState {
	p := &passState{passSpec: spec}
	p.inRun = make([]bool, K)
	for _, members := range spec.groups {
		for _, k := range members {
			p.inRun[k] = true
		}
	}
	p.run = &Run{Beta: spec.beta, Steps: make([]StepCoef, H)}
	if spec.keepV {
		p.run.V = make([][]float64, H)
	}
	p.vals = make([][]float64, H+2)
	return p
}

// streamValues sets every pass's Vhat_u at the rows of step u (held by
// sv's window) and step u's evidence and penalty diagnostics, as round u
// of [Solver.passes] does.
func streamValues(ctx context.Context, sv *Solver, ps []*passState, u int) error {
	vs := make([]valSpec, len(ps))
	for i, p := range ps {
		vs[i] = valSpec{inRun: p.inRun, kind: p.kind, coef: &p.run.Steps[u-1], beta: p.beta, follow: p.follow}
	}
	outs, err := sv.values(ctx, &sv.st.Table.Steps[u-1], u, vs)
	if err != nil {
		return err
	}
	for i, p := range ps {
		o := outs[i]
		p.vals[u] = o.v
		coef := &p.run.Steps[u-1]
		coef.NoEvidenceBySite, coef.Penalty, coef.PenaltyTerms = o.noev, o.pen, o.npen
		for _, x := range o.noev {
			coef.NoEvidence += x
		}
	}
	return nil
}

// sample evaluates each policy at the rows of step u that fall in the
// systematic sample (every stride-th row of the whole input in step order;
// step u's rows start at first): its action and evidence, and per site the
// sampled rows and those without evidence, as [DiagnoseSampled] counts
// them. Step u's coefficients and behaviour are known by then.
func sample(t *traj.Table, u, first, stride int, pols []*Policy, out *Streamed, sampled, noev [][]float64) {
	step := &t.Steps[u-1]
	q := make([]float64, t.A)
	var row blockRow
	var lr lazyRuns
	for pi, p := range pols {
		k := 0
		for j := (first + stride - 1) / stride * stride; j < first+step.Len(); j += stride {
			i := j - first
			for int32(i) >= step.SiteStart[k+1] {
				k++
			}
			a, _, ev := p.actLazy(u, step.State[i*t.W:(i+1)*t.W], q, &row, &lr)
			out.Actions[pi][j/stride], out.Evidence[pi][j/stride] = int32(a), ev
			sampled[pi][k]++
			if !ev {
				noev[pi][k]++
			}
		}
	}
}

// addCoverage adds to cover, per site and feature, the step-h rows whose
// feature is nonzero.
func addCoverage(st *Stats, h int, cover [][]float64) {
	t := st.Table
	m := &st.Map
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	step := &t.Steps[h-1]
	for k := range cover {
		for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
			wt := 1.0
			if step.Weight != nil {
				wt = step.Weight[j]
			}
			n := m.Phi(step.State[j*t.W:(j+1)*t.W], int(step.Action[j]), idx, val)
			for x := 0; x < n; x++ {
				cover[k][idx[x]] += wt
			}
		}
	}
}

// streamDiagnostics is [Diagnose] for a policy solved by [SolveStreamed]:
// the row counts come from cellRows, a single run's evidence from its
// backward pass, a combined policy's from the sample.
func streamDiagnostics(st *Stats, p *Policy, cellRows [][]int, sampled, noevSample []float64) *Diagnostics {
	t := st.Table
	K := len(t.Sites)
	dg := &Diagnostics{NoEvidenceBySite: map[string]float64{}, PenaltyShare: make([]float64, t.H)}
	noev := make([]float64, K)
	rows := make([]float64, K)
	fromPass := len(p.Runs) == 1 && len(p.Runs[0].Steps) == t.H && p.Runs[0].Steps[0].NoEvidenceBySite != nil
	for h := 1; h <= t.H; h++ {
		for k := 0; k < K; k++ {
			if cellRows[h-1][k] == 0 {
				dg.EmptyCells = append(dg.EmptyCells, Cell{Site: t.Sites[k], Step: h})
			}
			rows[k] += float64(cellRows[h-1][k])
		}
		if fromPass {
			c := &p.Runs[0].Steps[h-1]
			for k, x := range c.NoEvidenceBySite {
				noev[k] += x
			}
			if c.PenaltyTerms > 0 {
				dg.PenaltyShare[h-1] = c.Penalty / c.PenaltyTerms / float64(t.H-h+1)
			}
		}
	}
	if !fromPass && p.Method != Behaviour {
		rows, noev = sampled, noevSample
	}
	dg.finish(st, p, noev, rows)
	return dg
}
