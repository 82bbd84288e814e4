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
	stride := s.Tuning.stride(rows)
	// off[u-1] is the index of step u's first row among all rows in step
	// order: the systematic sample of [DiagnoseSampled] counts from it.
	off := make([]int, H+1)
	for u := 1; u <= H; u++ {
		off[u] = off[u-1]
		for _, n := range cellRows[u-1] {
			off[u] += n
		}
	}
	src := &streamSource{r: r, m: m, blocks: blocks, s: s, H: H, K: K}
	// The first window gives what every problem's plan needs.
	sv, err := src.round(ctx, H)
	if err != nil {
		return nil, err
	}
	ss, err := newStreamState(sv, probs, H, K, rows, stride)
	if err != nil {
		return nil, err
	}
	// The evidence counts of tabular and binned maps, step by step.
	var evc [][]float64
	var evcErr error
	hooks := &driveHooks{
		onValued: func(sv *Solver, u int) error {
			sample(sv.st.Table, u, off[u-1], stride, ss.pols, ss.out, ss.sampled, ss.noev)
			return nil
		},
		onSolved: func(sv *Solver, h int) {
			ss.beh[h-1], ss.acts[h-1] = sv.behaviourStep(h)
			addCoverage(sv.st, h, ss.cover)
			if evcErr == nil && HasEvidenceCounts(m.Kind) && blocks.Diagonal() {
				cells, err := sv.st.StepGrams(ctx, h)
				if err != nil {
					evcErr = err
					return
				}
				if evc == nil {
					evc = make([][]float64, H)
				}
				evc[h-1] = gramDiagonal(m.Dim(), cells)
			}
		},
	}
	if sv, err = drive(ctx, src, H, ss.ps, true, hooks); err != nil {
		return nil, err
	}
	if evcErr != nil {
		return nil, evcErr
	}
	ss.completeBehaviour(off, stride)
	// The policies from the passes, and their diagnostics.
	out := ss.out
	out.Windows = src.windows
	sv.runs = map[runKey]*Run{}
	for i, p := range ss.ps {
		sv.runs[ss.keys[i]] = p.run
	}
	sv.beh, sv.evc = ss.beh, evc
	st := sv.st
	st.coverOnce.Do(func() { st.cover = ss.cover })
	for pi, prob := range probs {
		pol, err := sv.Solve(ctx, prob)
		if err != nil {
			return nil, err
		}
		pol.Rows = rows
		out.Policies = append(out.Policies, pol)
		out.Diagnostics = append(out.Diagnostics, streamDiagnostics(st, pol, cellRows, ss.sampled[pi], ss.noev[pi]))
	}
	return out, nil
}

// streamSource reads the rows of round h, steps h and h+1, from a
// StepReader, and keeps the window until another round asks.
type streamSource struct {
	r       StepReader
	m       features.Map
	blocks  features.Blocks
	s       Settings
	H, K    int
	h       int
	sv      *Solver
	windows int
}

func (src *streamSource) round(ctx context.Context, h int) (*Solver, error) {
	if src.sv != nil && src.h == h {
		return src.sv, nil
	}
	src.sv = nil // the previous window may go
	t, err := src.r.ReadSteps(ctx, h, min(h+1, src.H))
	if err != nil {
		return nil, err
	}
	src.windows++
	if t.H != src.H || len(t.Sites) != src.K {
		return nil, fmt.Errorf("solve: step window %d..%d has H = %d and %d sites, the survey %d and %d", h, min(h+1, src.H), t.H, len(t.Sites), src.H, src.K)
	}
	st, err := newStats(ctx, t, src.m, src.blocks, src.s.Workers, src.s.Tuning)
	if err != nil {
		return nil, err
	}
	src.h, src.sv = h, NewSolver(st, src.s)
	return src.sv, nil
}

// streamState is what [SolveStreamed] keeps beside the passes: every
// problem's passes (each distinct pass once), its policy as far as solved
// (for the sample), the sample's counts, the behaviour tables with each
// step's counts per action, and the coverage.
type streamState struct {
	ps      []*passState
	keys    []runKey
	pols    []*Policy
	sampled [][]float64
	noev    [][]float64
	beh     [][]int32
	acts    [][]float64
	cover   [][]float64
	out     *Streamed
}

// completeBehaviour completes the behaviour tables once every step is
// counted ([CompleteBehaviour]) and corrects the sample's decisions at the
// steps without counts that came from the table: the sample took them
// from the step's table before the over-steps action was known. off[u-1]
// is the index of step u's first row among all rows in step order.
func (ss *streamState) completeBehaviour(off []int, stride int) {
	done := CompleteBehaviour(ss.beh, ss.acts)
	for h := range done {
		if counted(ss.acts[h]) {
			continue
		}
		over := done[h][0]
		for i := (off[h] + stride - 1) / stride; i < (off[h+1]+stride-1)/stride; i++ {
			for pi, p := range ss.pols {
				if p.fromTable(ss.out.Evidence[pi][i]) {
					ss.out.Actions[pi][i] = over
				}
			}
		}
	}
	// The policies share ss.beh.
	copy(ss.beh, done)
}

// newStreamState plans every problem's passes on the first window's
// solver sv.
func newStreamState(sv *Solver, probs []Problem, H, K, rows, stride int) (*streamState, error) {
	s := sv.settings
	ss := &streamState{
		pols:    make([]*Policy, len(probs)),
		sampled: make([][]float64, len(probs)),
		noev:    make([][]float64, len(probs)),
		beh:     make([][]int32, H),
		acts:    make([][]float64, H),
		cover:   make([][]float64, K),
		out:     &Streamed{Actions: make([][]int32, len(probs)), Evidence: make([][]bool, len(probs))},
	}
	n := (rows + stride - 1) / stride
	fallback := s.Fallback
	if fallback == "" {
		fallback = FallbackBehaviour
	}
	byKey := map[runKey]*passState{}
	for pi, prob := range probs {
		_, names, specs, err := sv.plan(prob)
		if err != nil {
			return nil, err
		}
		var runs []PolicyRun
		for i, spec := range specs {
			key := keyOfRun(spec.groups, spec.kind, spec.beta)
			p := byKey[key]
			if p == nil {
				p = newPassState(spec, K, H)
				p.factors = make([]*Factor, H*len(spec.groups))
				byKey[key] = p
				ss.ps = append(ss.ps, p)
				ss.keys = append(ss.keys, key)
			}
			runs = append(runs, PolicyRun{Group: names[i], Beta: spec.beta, Steps: p.run.Steps})
		}
		ss.pols[pi] = &Policy{Method: prob.Method, Map: sv.st.Map, H: H, A: sv.st.Table.A, Runs: runs, layout: &sv.st.Layout,
			Fallback: fallback, BehaviourAction: ss.beh}
		ss.sampled[pi], ss.noev[pi] = make([]float64, K), make([]float64, K)
		ss.out.Actions[pi], ss.out.Evidence[pi] = make([]int32, n), make([]bool, n)
	}
	for k := range ss.cover {
		ss.cover[k] = make([]float64, sv.st.Map.Dim())
	}
	return ss, nil
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

// sample evaluates each policy at the rows of step u that fall in the
// systematic sample (every stride-th row of the whole input in step order;
// step u's rows start at first): its action and evidence, and per site the
// sampled rows and those without evidence, as [DiagnoseSampled] counts
// them. Step u's coefficients and behaviour are known by then.
func sample(t *traj.Table, u, first, stride int, pols []*Policy, out *Streamed, sampled, noev [][]float64) {
	step := &t.Steps[u-1]
	ac := newActors(pols, t.A)
	k := 0
	for j := (first + stride - 1) / stride * stride; j < first+step.Len(); j += stride {
		i := j - first
		for int32(i) >= step.SiteStart[k+1] {
			k++
		}
		state := step.State[i*t.W : (i+1)*t.W]
		for pi := range pols {
			a, ev := ac.act(pi, u, state)
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
	fromPass := passEvidence(p, t.H, noev, dg.PenaltyShare)
	for h := 1; h <= t.H; h++ {
		for k := 0; k < K; k++ {
			if cellRows[h-1][k] == 0 {
				dg.EmptyCells = append(dg.EmptyCells, Cell{Site: t.Sites[k], Step: h})
			}
			rows[k] += float64(cellRows[h-1][k])
		}
	}
	if !fromPass && p.Method != Behaviour {
		rows, noev = sampled, noevSample
	}
	dg.finish(st, p, noev, rows)
	return dg
}
