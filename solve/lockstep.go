package solve

import (
	"context"
	"fmt"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Folds splits a table's trajectories into K folds, for runs that each
// learn without one of them ([SolveLockstep]).
type Folds struct {
	// Of[i] is trajectory i's fold, 0..K-1, i the trajectory's ordinal in
	// the table ([traj.Step].Traj).
	Of []int32
	K  int
}

// RunSpec is one run of [SolveLockstep]: a problem learned with its own
// settings on the rows of every fold but one.
type RunSpec struct {
	// Holdout is the fold whose trajectories the run leaves out (their
	// rows weighted 0), or -1 to learn from every row.
	Holdout int
	Problem Problem
	// Settings are the run's ridge parameter (Lambda), penalty (C, Xi,
	// or Beta with BetaSet) and Fallback. Stationary must be off;
	// Workers and Tuning are not read (see [SolveLockstep]).
	Settings Settings
}

// foldSkip leaves out the rows of fold's trajectories: of[i] is
// trajectory i's fold.
type foldSkip struct {
	of   []int32
	fold int32
}

// drops reports whether s leaves out the rows of trajectory i (a nil s
// leaves out none).
func (s *foldSkip) drops(i int32) bool {
	return s != nil && i >= 0 && s.of[i] == s.fold
}

// SolveLockstep learns every run's policy from st's table in one backward
// sweep: round h of every run before round h-1 of any, each step's rows
// read once per round for all of them. Runs share what they can: every
// run that leaves out the same fold shares that step's Grams, and those
// with the same ridge parameter too share their factors, whatever their
// penalty; runs with the same fold, ridge parameter, method and beta (say
// pevi-avg beside pevi-min) share their backward passes.
//
// Run i's policy is bit for bit the policy [Solver.Solve] learns with
// runs[i].Settings from the table whose rows of fold runs[i].Holdout are
// weighted 0 (trajectory and row counts, and so the penalty's N_max,
// those of the other folds; rows of weight 0 add exactly 0 to every sum,
// so leaving them out changes no bit). The sums do not depend on
// nworkers (0: every core).
//
// Of st it reads the table, the map and the block layout, not its Grams
// (each fold's training Grams are formed per round). Every method is
// supported; stationary settings and statistics under disclosure control
// are not (an error says so). Memory: besides the policies, each
// distinct backward pass holds its values at one step's rows.
func SolveLockstep(ctx context.Context, st *Stats, folds Folds, runs []RunSpec, nworkers int) ([]*Policy, error) {
	if st.mask != nil {
		return nil, fmt.Errorf("solve: lockstep runs need statistics without disclosure control")
	}
	holds, holdIndex, err := lockstepHolds(st.Table, folds, runs)
	if err != nil {
		return nil, err
	}
	ls := &lockstep{st: st, folds: folds, runs: runs, holdIndex: holdIndex, tr: newTraining(st.Table, folds, holds),
		sv: &Solver{st: st, settings: Settings{Workers: nworkers}}, nworkers: nworkers}
	if err := ls.plan(); err != nil {
		return nil, err
	}
	if err := ls.sweep(ctx); err != nil {
		return nil, err
	}
	beh, err := ls.tr.behaviour(ctx, &st.Map, nworkers)
	if err != nil {
		return nil, err
	}
	out := make([]*Policy, len(runs))
	for i := range runs {
		out[i] = ls.policy(i, beh)
	}
	return out, nil
}

// lockstepHolds checks the folds and runs, and returns the folds the runs
// leave out, each once (-1: none), in the order runs name them, with each
// one's index among them.
func lockstepHolds(t *traj.Table, folds Folds, runs []RunSpec) (holds []int, holdIndex map[int]int, err error) {
	if n := ntrajOf(t); len(folds.Of) != n {
		return nil, nil, fmt.Errorf("solve: folds of %d trajectories for a table of %d", len(folds.Of), n)
	}
	for i, f := range folds.Of {
		if f < 0 || int(f) >= folds.K {
			return nil, nil, fmt.Errorf("solve: trajectory %d is in fold %d of %d", i, f, folds.K)
		}
	}
	holdIndex = map[int]int{}
	for i, r := range runs {
		if r.Holdout < -1 || r.Holdout >= folds.K {
			return nil, nil, fmt.Errorf("solve: run %d leaves out fold %d of %d", i, r.Holdout, folds.K)
		}
		if r.Settings.Stationary {
			return nil, nil, fmt.Errorf("solve: run %d: lockstep runs do not support stationary settings", i)
		}
		if !(r.Settings.Lambda > 0) {
			return nil, nil, fmt.Errorf("solve: run %d: the ridge parameter must be positive, not %g", i, r.Settings.Lambda)
		}
		if _, ok := holdIndex[r.Holdout]; !ok {
			holdIndex[r.Holdout] = len(holds)
			holds = append(holds, r.Holdout)
		}
	}
	return holds, holdIndex, nil
}

// lockstep is [SolveLockstep]'s working state: the runs' plans, their
// distinct backward passes, and per hold the evidence counts.
type lockstep struct {
	st        *Stats
	folds     Folds
	runs      []RunSpec
	holdIndex map[int]int
	tr        *training
	sv        *Solver
	nworkers  int

	ps []*passState
	// lambdas[i] and passHold[i] are pass i's ridge parameter and hold.
	lambdas   []float64
	passHold  []int
	plans     []*Plan
	runPasses [][]int // the passes of run i, in its plan's order
	// withEvidence: the map's evidence counts (indicator maps) need every
	// hold's training Grams, passes or not; evidence[hold][h-1].
	withEvidence bool
	evidence     [][][]float64
	needGrams    []bool
}

// plan makes the backward passes of every run's plan, each distinct
// (hold, lambda, grouping, penalty, beta) once.
func (ls *lockstep) plan() error {
	t, d := ls.st.Table, ls.st.Map.Dim()
	H, K := t.H, len(t.Sites)
	type passKey struct {
		hold   int
		lambda uint64
		run    runKey
	}
	passOf := map[passKey]int{}
	ls.plans = make([]*Plan, len(ls.runs))
	ls.runPasses = make([][]int, len(ls.runs))
	for i, r := range ls.runs {
		hi := ls.holdIndex[r.Holdout]
		pl, err := PlanFor(r.Problem, r.Settings, t.Sites, ls.tr.trajectories[hi], H, d)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		ls.plans[i] = pl
		for _, pass := range pl.Passes {
			spec := pass.spec()
			key := passKey{hi, math.Float64bits(r.Settings.Lambda), keyOfRun(spec.groups, spec.kind, spec.beta)}
			at, ok := passOf[key]
			if !ok {
				at = len(ls.ps)
				passOf[key] = at
				if r.Holdout >= 0 {
					spec.skip = &foldSkip{of: ls.folds.Of, fold: int32(r.Holdout)}
				}
				p := newPassState(spec, K, H)
				p.factors = make([]*Factor, H*len(spec.groups))
				ls.ps = append(ls.ps, p)
				ls.lambdas = append(ls.lambdas, r.Settings.Lambda)
				ls.passHold = append(ls.passHold, hi)
			}
			ls.runPasses[i] = append(ls.runPasses[i], at)
		}
	}
	holds := len(ls.tr.holds)
	ls.withEvidence = HasEvidenceCounts(ls.st.Map.Kind) && ls.st.Layout.Blocks.Diagonal()
	ls.evidence = make([][][]float64, holds)
	ls.needGrams = make([]bool, holds)
	for hi := range ls.evidence {
		if ls.withEvidence {
			ls.evidence[hi] = make([][]float64, H)
			ls.needGrams[hi] = true
		}
	}
	for _, hi := range ls.passHold {
		ls.needGrams[hi] = true
	}
	return nil
}

// sweep runs every pass backward from step H, one round per step: the
// values of the step after, the holds' training Grams and the passes'
// factors, the right-hand sides, the coefficients.
func (ls *lockstep) sweep(ctx context.Context) error {
	st, sv, ps := ls.st, ls.sv, ls.ps
	t, d := st.Table, st.Map.Dim()
	for h := t.H; h >= 1; h-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		if h < t.H {
			if err := sv.valueRound(ctx, ps, h+1); err != nil {
				return err
			}
		}
		stop := timing.Start(ctx, "lockstep: factors")
		grams, err := ls.tr.grams(ctx, st, h, ls.needGrams, ls.nworkers)
		if err == nil {
			if ls.withEvidence {
				for hi := range ls.evidence {
					ls.evidence[hi][h-1] = gramDiagonal(d, grams[hi])
				}
			}
			err = lockstepFactors(ctx, st, h, grams, ps, ls.lambdas, ls.passHold, ls.nworkers)
		}
		stop()
		if err != nil {
			return err
		}
		stop = timing.Start(ctx, "lockstep: right-hand sides")
		err = sv.rhsFolds(ctx, ps, h, ls.folds.Of)
		stop()
		if err != nil {
			return err
		}
		for _, p := range ps {
			coefficients(p, h, d, false)
			p.rhs = nil
			clear(p.factors[(h-1)*len(p.groups) : h*len(p.groups)])
		}
	}
	if err := sv.valueRound(ctx, ps, 1); err != nil {
		return err
	}
	s1 := &t.Steps[0]
	for _, p := range ps {
		p.run.V1 = p.vals[1]
		p.run.Rows = trainingRows(s1, p.inRun, p.skip)
	}
	return nil
}

// policy assembles run i's policy from its passes, with its hold's
// behaviour tables (beh[hold]) and evidence counts.
func (ls *lockstep) policy(i int, beh [][][]int32) *Policy {
	r := ls.runs[i]
	hi := ls.holdIndex[r.Holdout]
	s1 := &ls.st.Table.Steps[0]
	var ev [][]float64
	if ls.withEvidence {
		ev = ls.evidence[hi]
	}
	var skip *foldSkip
	if r.Holdout >= 0 {
		skip = &foldSkip{of: ls.folds.Of, fold: int32(r.Holdout)}
	}
	p := policyShell(ls.st, r.Problem, r.Settings, ls.tr.rows[hi])
	p.BehaviourAction, p.EvidenceCounts = beh[hi], ev
	plan := ls.plans[i]
	for gi, g := range plan.Groups {
		g.Trajectories = 0
		for _, k := range g.idx {
			g.Trajectories += ls.tr.trajectories[hi][k]
		}
		plan.Groups[gi] = g
	}
	p.Groups = plan.Groups
	combined := r.Problem.Method == PEVIAvg || r.Problem.Method == PEVIMin
	for j, at := range ls.runPasses[i] {
		run := ls.ps[at].run
		name := "all"
		if combined {
			name = plan.Passes[j].Name
		}
		p.Runs = append(p.Runs, PolicyRun{Group: name, Beta: run.Beta, Steps: run.Steps})
		if !combined {
			p.ValueEstimate = trainingMeanV1(run, s1, skip)
		}
	}
	if len(p.Runs) > 0 {
		p.Beta = p.Runs[0].Beta
	}
	return p
}

// policyShell returns the policy [Solver.Solve] starts from, on st's
// table with rows training rows, before its tables and runs.
func policyShell(st *Stats, prob Problem, s Settings, rows int) *Policy {
	t := st.Table
	d := st.Map.Dim()
	p := &Policy{
		Method: prob.Method, Map: st.Map, H: t.H, D: d, A: t.A, ActionLabels: t.Actions,
		Lambda: s.Lambda, C: s.C, Xi: s.Xi, BetaGiven: s.BetaSet, Fallback: s.Fallback,
		ValueEstimate: math.NaN(), Rows: rows, layout: &st.Layout,
	}
	if p.Fallback == "" {
		p.Fallback = FallbackBehaviour
	}
	if st.Map.Kind == features.Precomputed {
		p.BlockLabels = make([]int, d)
		for i := range p.BlockLabels {
			p.BlockLabels[i] = int(st.Layout.Blocks.Of[i])
		}
	}
	p.Sources = append(p.Sources, t.Sources...)
	return p
}

// training describes the training rows of each fold left out: holds[i]
// is the fold (-1: none), trajectories[i][k] site k's trajectories
// outside it and rows[i] the rows outside it, as the table with that
// fold's rows weighted 0 counts them.
type training struct {
	t            *traj.Table
	of           []int32
	holds        []int
	trajectories [][]int
	rows         []int
}

func newTraining(t *traj.Table, folds Folds, holds []int) *training {
	K := len(t.Sites)
	tr := &training{t: t, of: folds.Of, holds: holds, trajectories: make([][]int, len(holds)), rows: make([]int, len(holds))}
	// Every row and step-1 row (trajectory) per fold, once; a hold's
	// counts are the totals less its fold's (whole numbers: exact).
	rows := make([]int, folds.K)
	trajs := make([]int, folds.K*K)
	total, totalTraj := 0, make([]int, K)
	for h := range t.Steps {
		s := &t.Steps[h]
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				total++
				if h == 0 {
					totalTraj[k]++
				}
				i := s.Traj[j]
				if i < 0 {
					continue
				}
				f := int(folds.Of[i])
				rows[f]++
				if h == 0 {
					trajs[f*K+k]++
				}
			}
		}
	}
	for i, f := range holds {
		tr.rows[i] = total
		tr.trajectories[i] = slices.Clone(totalTraj)
		if f < 0 {
			continue
		}
		tr.rows[i] -= rows[f]
		for k := 0; k < K; k++ {
			tr.trajectories[i][k] -= trajs[f*K+k]
		}
	}
	return tr
}

// skip returns the rows hold i leaves out (nil for none).
func (tr *training) skip(i int) *foldSkip {
	if tr.holds[i] < 0 {
		return nil
	}
	return &foldSkip{of: tr.of, fold: int32(tr.holds[i])}
}

// grams returns, for every hold i with need[i], each site's Gram of step
// h over its training rows, summed in row order as [NewStats] sums the
// table with the fold's rows weighted 0 (the same bits).
func (tr *training) grams(ctx context.Context, st *Stats, h int, need []bool, nworkers int) ([][]Gram, error) {
	K := len(tr.t.Sites)
	s := &tr.t.Steps[h-1]
	out := make([][]Gram, len(tr.holds))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for i := range tr.holds {
		if !need[i] {
			continue
		}
		out[i] = make([]Gram, K)
		skip := tr.skip(i)
		for k := 0; k < K; k++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				lo, hi := int(s.SiteStart[k]), int(s.SiteStart[k+1])
				out[i][k] = st.gramSeq(h, func(yield func(int) bool) {
					for j := lo; j < hi; j++ {
						if !skip.drops(s.Traj[j]) && !yield(j) {
							return
						}
					}
				})
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// behaviour returns every hold's behaviour table per step, each as
// [Solver.Solve] counts it on the table with the fold's rows weighted 0.
func (tr *training) behaviour(ctx context.Context, m *features.Map, nworkers int) ([][][]int32, error) {
	t := tr.t
	out := make([][][]int32, len(tr.holds))
	acts := make([][][]float64, len(tr.holds))
	for i := range out {
		out[i], acts[i] = make([][]int32, t.H), make([][]float64, t.H)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for i := range tr.holds {
		skip := tr.skip(i)
		for h := 1; h <= t.H; h++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				// Step h of the training table alone: its rows with the
				// fold's weighted 0.
				v := *t
				v.Steps = make([]traj.Step, t.H)
				s := t.Steps[h-1]
				w := make([]float64, s.Len())
				for j := range w {
					if !skip.drops(s.Traj[j]) {
						w[j] = 1
						if s.Weight != nil {
							w[j] = s.Weight[j]
						}
					}
				}
				s.Weight = w
				v.Steps[h-1] = s
				out[i][h-1], acts[i][h-1] = behaviourAt(&v, m, h)
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i] = CompleteBehaviour(out[i], acts[i])
	}
	return out, nil
}

// lockstepFactors builds step h's factors of every pass from its hold's
// training Grams (grams[hold[i]]), each distinct (hold, lambda, grouping,
// inverse) once, in parallel, as [buildFactors] builds them.
func lockstepFactors(ctx context.Context, st *Stats, h int, grams [][]Gram, ps []*passState, lambda []float64, hold []int, nworkers int) error {
	type key struct {
		hold   int
		lambda uint64
		fk     factorKey
	}
	type want struct {
		key
		groups [][]int
		out    []*Factor
	}
	var wants []*want
	byKey := map[key]*want{}
	uses := make([]*want, len(ps)) // pass i's factors
	for i, p := range ps {
		k := key{hold[i], math.Float64bits(lambda[i]), factorKey{groupingOf(p.groups), p.kind == pevi}}
		w := byKey[k]
		if w == nil {
			w = &want{key: k, groups: p.groups, out: make([]*Factor, len(p.groups))}
			byKey[k] = w
			wants = append(wants, w)
		}
		uses[i] = w
	}
	g := workers.NewGroup(ctx, nworkers)
	for _, w := range wants {
		cells := grams[w.hold]
		for gi, members := range w.groups {
			g.Go(func(gctx context.Context) error {
				if err := gctx.Err(); err != nil {
					return err
				}
				gs := make([]*Gram, len(members))
				for i, k := range members {
					gs[i] = &cells[k]
				}
				f, err := NewFactor(&st.Layout, gs, math.Float64frombits(w.lambda), w.fk.inverse)
				if err != nil {
					return fmt.Errorf("step %d, group %d: %w", h, gi, err)
				}
				w.out[gi] = f
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, p := range ps {
		copy(p.factors[(h-1)*len(p.groups):h*len(p.groups)], uses[i].out)
	}
	return nil
}

// rhsFolds sets every pass's right-hand side of round h per site over
// its training rows, summed serially in row order as [Stats.rhsMulti]
// sums them on the table with the fold's rows weighted 0; one task per
// site reads each row once for every pass.
func (sv *Solver) rhsFolds(ctx context.Context, ps []*passState, h int, of []int32) error {
	st := sv.st
	t := st.Table
	K := len(t.Sites)
	m := &st.Map
	W := t.W
	s := &t.Steps[h-1]
	for _, p := range ps {
		p.rhs = make([][]float64, K)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(sv.settings.Workers))
	for k := 0; k < K; k++ {
		var in []*passState
		for _, p := range ps {
			if p.inRun[k] {
				in = append(in, p)
			}
		}
		if len(in) == 0 {
			continue
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			outs := make([][]float64, len(in))
			for i := range outs {
				outs[i] = make([]float64, m.Dim())
			}
			idx := make([]int32, m.MaxNonzeros())
			val := make([]float64, m.MaxNonzeros())
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				n := -1
				nx := s.Next[j]
				wt := 1.0
				if s.Weight != nil {
					wt = s.Weight[j]
				}
				for i, p := range in {
					if p.skip.drops(s.Traj[j]) {
						continue
					}
					if n < 0 {
						n = m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
					}
					y := s.Reward[j]
					if vnext := p.vals[h+1]; nx >= 0 && vnext != nil {
						y += vnext[nx]
					}
					y *= wt
					out := outs[i]
					for x := 0; x < n; x++ {
						out[idx[x]] += val[x] * y
					}
				}
			}
			for i, p := range in {
				p.rhs[k] = outs[i]
			}
			return nil
		})
	}
	return g.Wait()
}

// trainingRows is [runRows] over the rows skip keeps.
func trainingRows(step *traj.Step, inRun []bool, skip *foldSkip) float64 {
	rows := 0.0
	for k, in := range inRun {
		if !in {
			continue
		}
		for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
			if skip.drops(step.Traj[j]) {
				continue
			}
			if step.Weight == nil {
				rows++
			} else {
				rows += step.Weight[j]
			}
		}
	}
	return rows
}

// trainingMeanV1 is [weightedMeanV1] on the table with skip's rows
// weighted 0.
func trainingMeanV1(run *Run, s1 *traj.Step, skip *foldSkip) float64 {
	if run.Rows == 0 {
		return math.NaN()
	}
	sum := 0.0
	for j, v := range run.V1 {
		if skip.drops(s1.Traj[j]) {
			continue
		}
		if s1.Weight == nil {
			sum += v
		} else {
			sum += s1.Weight[j] * v
		}
	}
	return sum / run.Rows
}
