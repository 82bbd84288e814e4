package solve

import (
	"context"
	"fmt"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/floats"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Replicates are weighted copies of a table (bootstrap replicates) that an
// evaluation's backward sweep carries in lockstep with its other passes
// (see [Solver.Evaluate]): each round reads a step's rows once for every
// replicate.
type Replicates struct {
	// B is the number of replicates.
	B int
	// Counts[i*B+b] is trajectory i's multiplicity in replicate b, i the
	// trajectory's index in the table ([traj.Step].Traj): in replicate b
	// each of its rows counts Counts[i*B+b] times its own weight.
	Counts []uint8
	// SitesOnly evaluates each site's own value alone: the replicates'
	// robust values are NaN, and the robust pass's right-hand sides and
	// solves are not formed. Each site's value is the same bits either
	// way.
	SitesOnly bool
}

// ReplicateValue is one replicate's evaluation: the robust value and each
// site's own value, as [Solver.EvaluatePolicy] computes them on the table
// with the replicate's weights (up to rounding: the sums are formed in
// another order). A value over no rows (a site every one of whose
// trajectories has multiplicity 0) is NaN, and so is Value with
// [Replicates].SitesOnly.
type ReplicateValue struct {
	Value float64
	Sites []float64
}

// EvaluateOptions say what [Solver.Evaluate] computes beside the robust
// value, its lower bound and each site's own value.
type EvaluateOptions struct {
	// LowerBoundOnly computes the lower bound alone (Value and Sites NaN):
	// one pass instead of 2 + K. NoLowerBound leaves it out (NaN).
	LowerBoundOnly, NoLowerBound bool
	// Replicates, when set, are evaluated in the same sweep
	// ([Evaluation].Replicates), or in batches of sweeps when their sums
	// would take more than 256 MiB (large tabular maps). Their penalty
	// is 0 and their ridge parameter the solver's: they replicate Value
	// and Sites, not LowerBound.
	Replicates *Replicates
	// OnRound, when set, is called after each round of a sweep that
	// carries replicates, with the number of replicates it advanced one
	// step (H times B calls' worth in all).
	OnRound func(replicates int)
	// OnStep, when set (and not LowerBoundOnly), is called once per step
	// u = H..1 of the sweep, as soon as the step's rows are valued, with
	// the policy's action at each row of step u (act) and each row's own
	// site's Vhat_u there (own: site k's own fitted-Q value at site k's
	// rows, with round u's coefficients). It reads what the sweep
	// computed; the slices are its to keep. An error stops the sweep.
	OnStep func(u int, act []int32, own []float64) error
	// OnReplicateStep, when set with Replicates, is called once per step
	// u = H..1 of the sweep and batch of replicates (see Replicates), as
	// soon as the step's rows are valued, with the batch's own-site
	// coefficients of round u: sites[bi*K+k] is site k's of replicate
	// b0+bi, the regression whose Vhat_1 is that replicate's
	// [ReplicateValue].Sites[k]. The slices are its to keep. An error
	// stops the sweep.
	OnReplicateStep func(u, b0 int, sites [][]float64) error
	// DecideOn, when set, holds the states the policy decides on: the
	// solver's rows, in the same order, with the state columns of the
	// policy's own map, which may differ from the solver's. The solver's
	// map then values the policy's decisions (an evaluation through
	// another feature map); nil: the policy decides on the solver's rows,
	// through the solver's map, which must be its own.
	DecideOn *traj.Table
	// Decisions, when set, are the policy's actions at every row of the
	// solver's table and Evidence whether each has evidence, the rows in
	// step order (step 1's, then step 2's, ...), as [ActAllMany] returns
	// them: the sweep reads them instead of asking the policy at every
	// row of every round. They must be the policy's own decisions (on
	// DecideOn's states when it is set); the values are then the same
	// bits. It needs non-stationary settings.
	Decisions []int32
	Evidence  []bool
}

// repState is a replicated pass's working state in [Solver.passes]: one
// pass that stands for B weighted copies of the robust-value pass and of
// every site's own pass. Per round it holds the step's Grams per
// (replicate, site) only while it solves them, and the coefficients of the
// round before.
type repState struct {
	*Replicates
	// act holds the followed policy's action at the rows of the step last
	// valued (step h+1 during round h).
	act []int32
	// wRob[b] and wSite[b*K+k] are replicate b's robust and site k's
	// coefficients of the last round solved (nil before round H).
	wRob, wSite [][]float64
	out         []ReplicateValue
	// rows and next hold, under an action-block map, the features at
	// action 0 of the rows of the step a round sums (rows) and of the
	// step after (next, the rows the round before summed): the next
	// states' features are those shifted to the followed action's block
	// (phi(s, a) is phi(s, 0) in block a), not formed again.
	rows, next *blockRows
}

// blockRows are one step's rows' features at action 0 under an
// action-block map with p state columns: row j's n[j] nonzeros have
// indices idx[j*p:] and values val[j*p:].
type blockRows struct {
	p   int
	n   []uint8
	idx []int32
	val []float64
}

// reset makes b hold rows rows of p state columns, reusing its memory.
func (b *blockRows) reset(rows, p int) {
	b.p = p
	b.n = slices.Grow(b.n[:0], rows)[:rows]
	b.idx = slices.Grow(b.idx[:0], rows*p)[:rows*p]
	b.val = slices.Grow(b.val[:0], rows*p)[:rows*p]
}

// set records row j's features idx, val at action a.
func (b *blockRows) set(j, a int, idx []int32, val []float64) {
	b.n[j] = uint8(len(idx))
	for x, i := range idx {
		b.idx[j*b.p+x] = i - int32(a*b.p)
		b.val[j*b.p+x] = val[x]
	}
}

// at sets idx and val to row j's features at action a, as
// [features.Map.Phi] forms them, and returns their number.
func (b *blockRows) at(j, a int, idx []int32, val []float64) int {
	n := int(b.n[j])
	for x := 0; x < n; x++ {
		idx[x] = b.idx[j*b.p+x] + int32(a*b.p)
		val[x] = b.val[j*b.p+x]
	}
	return n
}

// Evaluate is [Solver.EvaluatePolicy] with options: the lower bound alone,
// or bootstrap replicates evaluated in the same sweep. The un-replicated
// values are EvaluatePolicy's, bit for bit.
func (sv *Solver) Evaluate(ctx context.Context, p *Policy, beta float64, o EvaluateOptions) (*Evaluation, error) {
	if err := sv.checkEvaluate(p, o); err != nil {
		return nil, err
	}
	t := sv.st.Table
	given := givenDecisions{acts: o.Decisions, evidence: o.Evidence}
	ev := &Evaluation{Beta: beta, Sites: make([]float64, len(t.Sites)), Value: math.NaN()}
	specs := evaluationSpecs(len(t.Sites), p, beta, given, o)
	// The replicates in batches whose sums fit in RepBatchBytes: the first
	// with the sweep of the values, the others in sweeps of their own
	// (large tabular maps only: a replicate's sums are O(K d)).
	batches := sv.repBatches(o.Replicates, ntrajOf(t))
	var runs []*Run
	for i, r := range batches {
		rs := []passSpec{{groups: singletons(len(t.Sites)), kind: featurewise, follow: p, followOn: o.DecideOn, given: given, rep: r}}
		if i == 0 {
			rs = append(specs, rs...)
		}
		// The batch's first replicate is the number of those before.
		out, err := sv.passesWith(ctx, rs, evaluationHooks(t, o, r.B, len(ev.Replicates), i == 0))
		if err != nil {
			return nil, err
		}
		if i == 0 {
			runs = out
		}
		ev.Replicates = append(ev.Replicates, out[len(out)-1].reps...)
	}
	if len(batches) == 0 {
		var err error
		if runs, err = sv.passesWith(ctx, specs, evaluationHooks(t, o, 0, 0, true)); err != nil {
			return nil, err
		}
	}
	ev.summarize(runs, &t.Steps[0], o)
	return ev, nil
}

// checkEvaluate refuses options Evaluate cannot honour for p on sv's
// statistics.
func (sv *Solver) checkEvaluate(p *Policy, o EvaluateOptions) error {
	t := sv.st.Table
	if err := sv.fits(p, o.DecideOn); err != nil {
		return err
	}
	if o.Decisions != nil && (len(o.Decisions) != t.Rows || len(o.Evidence) != t.Rows || sv.settings.Stationary) {
		return fmt.Errorf("solve: %d decisions and %d evidence flags for %d rows (stationary %t): they need one per row and non-stationary settings",
			len(o.Decisions), len(o.Evidence), t.Rows, sv.settings.Stationary)
	}
	if r := o.Replicates; r != nil {
		if sv.settings.Stationary || sv.st.mask != nil {
			return fmt.Errorf("solve: bootstrap replicates need non-stationary statistics without disclosure control")
		}
		if ntraj := ntrajOf(t); r.B <= 0 || len(r.Counts) != r.B*ntraj {
			return fmt.Errorf("solve: %d replicate counts for %d replicates of %d trajectories", len(r.Counts), r.B, ntraj)
		}
	}
	return nil
}

// evaluationSpecs are the passes of an evaluation of p on K sites: the
// robust value, its lower bound and each site's own value, in lockstep
// (one sweep per round, in which the policy decides once per row for
// every pass; each pass computes what it would alone), as o asks.
func evaluationSpecs(K int, p *Policy, beta float64, given givenDecisions, o EvaluateOptions) []passSpec {
	var specs []passSpec
	if !o.LowerBoundOnly {
		specs = append(specs, passSpec{groups: singletons(K), kind: featurewise, beta: 0, follow: p, followOn: o.DecideOn, given: given, keepAct: o.OnStep != nil})
	}
	if !o.NoLowerBound {
		specs = append(specs, passSpec{groups: singletons(K), kind: featurewise, beta: beta, follow: p, followOn: o.DecideOn, given: given})
	}
	if !o.LowerBoundOnly {
		for k := 0; k < K; k++ {
			specs = append(specs, passSpec{groups: [][]int{{k}}, kind: featurewise, beta: 0, follow: p, followOn: o.DecideOn, given: given})
		}
	}
	return specs
}

// evaluationHooks are the hooks of one sweep of an evaluation: o.OnRound
// when it carries n replicates, and on the first sweep o.OnStep, with
// each row's own site's value, and o.OnReplicateStep with the coefficients
// of replicates b0, b0+1, ....
func evaluationHooks(t *traj.Table, o EvaluateOptions, n, b0 int, first bool) *driveHooks {
	var k driveHooks
	if o.OnRound != nil && n > 0 {
		k.onSolved = func(*Solver, int) { o.OnRound(n) }
	}
	step := first && o.OnStep != nil && !o.LowerBoundOnly
	rep := n > 0 && o.OnReplicateStep != nil
	if !step && !rep {
		return &k
	}
	// The site passes follow the robust pass and its lower bound.
	siteOff := 1
	if !o.NoLowerBound {
		siteOff = 2
	}
	k.onPasses = func(ps []*passState, u int) error {
		if step {
			s := &t.Steps[u-1]
			own := make([]float64, s.Len())
			for k := range t.Sites {
				lo, hi := s.SiteStart[k], s.SiteStart[k+1]
				copy(own[lo:hi], ps[siteOff+k].vals[u][lo:hi])
			}
			if err := o.OnStep(u, ps[0].act, own); err != nil {
				return err
			}
		}
		if !rep {
			return nil
		}
		// Step u's rows are valued in round u-1, before its solves: the
		// replicated pass, the last, still holds round u's coefficients.
		return o.OnReplicateStep(u, b0, ps[len(ps)-1].rep.wSite)
	}
	return &k
}

// summarize sets ev's values from the runs of evaluationSpecs (s1 the
// table's first step).
func (ev *Evaluation) summarize(runs []*Run, s1 *traj.Step, o EvaluateOptions) {
	nan := math.NaN()
	if o.LowerBoundOnly {
		ev.LowerBound = siteSummedMeanV1(runs[0], s1)
		for k := range ev.Sites {
			ev.Sites[k] = nan
		}
		return
	}
	ev.Value = siteSummedMeanV1(runs[0], s1)
	sites := runs[1:]
	if ev.LowerBound = nan; !o.NoLowerBound {
		ev.LowerBound = siteSummedMeanV1(runs[1], s1)
		sites = runs[2:]
	}
	for k := range ev.Sites {
		ev.Sites[k] = weightedMeanV1(sites[k], s1)
	}
}

// givenDecisions are a followed policy's decisions handed to a sweep
// ([EvaluateOptions].Decisions): acts and evidence at every row, in step
// order (nil: the policy decides).
type givenDecisions struct {
	acts     []int32
	evidence []bool
}

// at returns the decisions at step u's rows of t (zero without any).
func (g givenDecisions) at(t *traj.Table, u int) givenDecisions {
	if g.acts == nil {
		return g
	}
	lo := 0
	for h := 1; h < u; h++ {
		lo += t.Steps[h-1].Len()
	}
	hi := lo + t.Steps[u-1].Len()
	return givenDecisions{acts: g.acts[lo:hi], evidence: g.evidence[lo:hi]}
}

// repBatches splits r into batches of consecutive replicates whose sums
// of one round (each (replicate, site)'s Gram and two right-hand sides,
// with their copies while a task forms them, and the coefficients) take
// at most the tuning's bound (256 MiB by default), at least one replicate a batch; nil for nil r.
func (sv *Solver) repBatches(r *Replicates, ntraj int) []*Replicates {
	if r == nil {
		return nil
	}
	K, d := int64(len(sv.st.Table.Sites)), int64(sv.st.Map.Dim())
	per := 8 * (2*K*(int64(sv.st.Layout.Size())+2*d) + (K+1)*d)
	size := int(max(1, min(int64(r.B), sv.settings.Tuning.repBatch()/per)))
	if size >= r.B {
		return []*Replicates{r}
	}
	var out []*Replicates
	for lo := 0; lo < r.B; lo += size {
		hi := min(r.B, lo+size)
		c := make([]uint8, ntraj*(hi-lo))
		for i := 0; i < ntraj; i++ {
			copy(c[i*(hi-lo):(i+1)*(hi-lo)], r.Counts[i*r.B+lo:i*r.B+hi])
		}
		out = append(out, &Replicates{B: hi - lo, Counts: c, SitesOnly: r.SitesOnly})
	}
	return out
}

func ntrajOf(t *traj.Table) int {
	n := 0
	for _, x := range t.Trajectories {
		n += x
	}
	return n
}

// fits returns an error when p does not fit the solver's data, or, with
// on, does not decide on on's states (the solver's rows, in order).
func (sv *Solver) fits(p *Policy, on *traj.Table) error {
	t := sv.st.Table
	if on != nil {
		if p.A != t.A || p.H < t.H || p.Map.Width() != on.W || on.H != t.H || on.Rows != t.Rows {
			return fmt.Errorf("%w: the policy (%s, %d state values, A = %d, H = %d) does not decide on the states given (%d values, %d rows) for the data (A = %d, H = %d, %d rows)",
				ErrBadPolicy, p.Map.Kind, p.Map.Width(), p.A, p.H, on.W, on.Rows, t.A, t.H, t.Rows)
		}
		return nil
	}
	if p.A != t.A || p.H < t.H || p.Map.Kind != sv.st.Map.Kind || p.D != sv.st.Map.Dim() {
		return fmt.Errorf("%w: the policy (%s, d = %d, A = %d, H = %d) does not fit the data (%s, d = %d, A = %d, H = %d)",
			ErrBadPolicy, p.Map.Kind, p.D, p.A, p.H, sv.st.Map.Kind, sv.st.Map.Dim(), t.A, t.H)
	}
	return nil
}

// repRound is round h of a replicated pass: it reads step h's rows once
// per task and forms, for every replicate b and site k, the Gram and the
// right-hand sides of the robust pass and of site k's own pass with
// replicate b's weights and its Vhat_{h+1} (computed at each row's next
// state from round h+1's coefficients and the policy's decision there),
// then solves them. A task is one site and a range of replicates; every
// (replicate, site) sum runs over the site's rows in order, so the result
// does not depend on the workers.
func (sv *Solver) repRound(ctx context.Context, p *passState, h int) error {
	st := sv.st
	t := st.Table
	K, B := len(t.Sites), p.rep.B
	sums := make([]repSum, B*K)
	// Factors an earlier evaluation of the same replicates formed, when
	// the statistics share them: then the Grams are not formed.
	shared, store := st.sharedFactors(p.rep.Replicates, sv.settings.Lambda, h)
	var kept []*repFactor
	if store {
		kept = make([]*repFactor, B*K)
	}
	nw := workers.Or(sv.settings.Workers)
	// Replicate ranges per site: enough tasks for the workers.
	ranges := chunkRanges(B, max(1, (2*nw+K-1)/K))
	if st.Map.Kind == features.ActionBlock && st.Map.MaxNonzeros() <= math.MaxUint8 {
		p.rep.turnRows(t.Steps[h-1].Len(), st.Map.P, h == t.H)
	}
	g := workers.NewGroup(ctx, nw)
	for k := 0; k < K; k++ {
		for _, r := range ranges {
			g.Go(func(gctx context.Context) error {
				if err := gctx.Err(); err != nil {
					return err
				}
				return sv.repSums(p.rep, h, k, r[0], r[1], sums, shared == nil)
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := sv.repSolve(ctx, p, h, sums, shared, kept); err != nil {
		return err
	}
	if store {
		st.storeFactors(h, kept)
	}
	return nil
}

// repSolve solves round h's sums of every replicate b and site k with its
// factor (shared's, or one formed from the Gram and kept in kept when
// kept is not nil): site k's own coefficients, and unless the pass is
// for the sites only the robust coefficients, the row-min over sites in
// site order, as coefficients forms W.
func (sv *Solver) repSolve(ctx context.Context, p *passState, h int, sums []repSum, shared, kept []*repFactor) error {
	st := sv.st
	K, d, B := len(st.Table.Sites), st.Map.Dim(), p.rep.B
	wRob, wSite := make([][]float64, B), make([][]float64, B*K)
	sitesOnly := p.rep.SitesOnly
	g := workers.NewGroup(ctx, workers.Or(sv.settings.Workers))
	for b := 0; b < B; b++ {
		g.Go(func(gctx context.Context) error {
			if err := gctx.Err(); err != nil {
				return err
			}
			var w []float64
			nu := make([]float64, d)
			for k := 0; k < K; k++ {
				i := b*K + k
				var f *repFactor
				if shared != nil {
					f = shared[i]
				} else {
					var err error
					if f, err = newRepFactor(&st.Layout, &sums[i].gram, sv.settings.Lambda); err != nil {
						return fmt.Errorf("step %d, site %d, replicate %d: %w", h, k, b, err)
					}
					if kept != nil {
						kept[i] = f
					}
				}
				if !sitesOnly {
					f.SolveTo(nu, sums[i].rob)
					// The row-min over sites in site order, as
					// coefficients forms W.
					if w == nil {
						w = slices.Clone(nu)
					} else {
						for x := range w {
							w[x] = min(w[x], nu[x])
						}
					}
				}
				wSite[i] = make([]float64, d)
				f.SolveTo(wSite[i], sums[i].site)
			}
			wRob[b] = w
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	p.rep.wRob, p.rep.wSite = wRob, wSite
	return nil
}

// turnRows makes the round's block rows: the rows the round before kept
// as its next states' features become the step's own (their room reused),
// room for n rows of p state columns, and, unless the step is the last
// (last), the step's rows are kept for the round after, whose next states
// they are.
func (r *repState) turnRows(n, p int, last bool) {
	r.rows, r.next = r.next, r.rows
	if last {
		r.next = nil
	}
	if r.rows == nil {
		r.rows = &blockRows{}
	}
	r.rows.reset(n, p)
}

// repSum is one (replicate, site)'s sums of a round: the Gram and the
// right-hand sides of the robust pass and of the site's own pass.
type repSum struct {
	gram      Gram
	rob, site []float64
}

// repSums forms site k's sums of step h for replicates b0..b1-1 (see
// repRound) into sums[b*K+k]: the Grams only withGram.
func (sv *Solver) repSums(r *repState, h, k, b0, b1 int, sums []repSum, withGram bool) error {
	st := sv.st
	t := st.Table
	m := &st.Map
	K, B, W, H := len(t.Sites), r.B, t.W, t.H
	s := &t.Steps[h-1]
	var next *traj.Step
	if h < H {
		next = &t.Steps[h]
	}
	top := float64(H - h) // Vhat_{h+1} lies in [0, H-h]
	nzMax := m.MaxNonzeros()
	idx, val := make([]int32, nzMax), make([]float64, nzMax)
	nidx, nval := make([]int32, nzMax), make([]float64, nzMax)
	pos, prod := make([]int, 0, nzMax*nzMax), make([]float64, 0, nzMax*nzMax)
	acc := newRepAcc(b1-b0, m.Dim(), st.Layout.Size(), r.SitesOnly)
	acc.noGram = !withGram
	if h < H {
		acc.setNext(r, k, K, b0)
	}
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		rw := 1.0
		if s.Weight != nil {
			rw = s.Weight[j]
		}
		nz := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		if r.rows != nil && b0 == 0 {
			r.rows.set(j, int(s.Action[j]), idx[:nz], val[:nz])
		}
		if withGram {
			var err error
			if pos, prod, err = st.Layout.rowEntries(pos[:0], prod[:0], idx[:nz], val[:nz]); err != nil {
				return err
			}
		}
		nnz := 0
		if nx := s.Next[j]; nx >= 0 && next != nil {
			if r.next != nil {
				nnz = r.next.at(int(nx), int(r.act[nx]), nidx, nval)
			} else {
				nnz = m.Phi(next.State[int(nx)*W:(int(nx)+1)*W], int(r.act[nx]), nidx, nval)
			}
		}
		counts := r.Counts[int(s.Traj[j])*B+b0 : int(s.Traj[j])*B+b1]
		acc.add(counts, rw, s.Reward[j], top, pos, prod, idx[:nz], val[:nz], nidx[:nnz], nval[:nnz])
	}
	acc.store(sums, k, K, b0)
	return nil
}

// rowEntries appends to pos and prod the packed Gram entries a row with
// features idx and values val adds to, as gramAny forms them, and their
// products. It fails if the row's features span two blocks.
func (l *Layout) rowEntries(pos []int, prod []float64, idx []int32, val []float64) ([]int, []float64, error) {
	bl := &l.Blocks
	for x := range idx {
		bx, ix := bl.Of[idx[x]], int(bl.Pos[idx[x]])
		for y := range idx {
			if bl.Of[idx[y]] != bx {
				return pos, prod, fmt.Errorf("solve: a feature vector spans two blocks")
			}
			if iy := int(bl.Pos[idx[y]]); iy <= ix {
				pos = append(pos, l.Off[bx]+tri(ix, iy))
				prod = append(prod, val[x]*val[y])
			}
		}
	}
	return pos, prod, nil
}

// repAcc accumulates one site's sums for a range of nb replicates. The
// replicates' sums lie side by side, replicate-minor (entry i of
// replicate b at i*nb+b): a row adds to every replicate's entry i in one
// contiguous loop, a count of 0 adding 0, with no branch on the counts.
type repAcc struct {
	nb, d, size int
	// n, gram, rob and site are the weighted rows, the packed Gram and
	// the right-hand sides of the robust and the site's own pass.
	n, gram, rob, site []float64
	// cR and cS are round h+1's robust and site coefficients of the
	// replicates (nil at h = H).
	cR, cS []float64
	// Scratch per replicate: row weights, next-state values, targets.
	wt, dr, ds, yr, ys []float64
	// noGram leaves the Grams (n, gram) unformed: their factors are
	// shared.
	noGram bool
	// sitesOnly leaves the robust pass's sums (rob, cR, dr, yr) unformed.
	sitesOnly bool
}

// newRepAcc returns the zero accumulator of nb replicates, d features
// and a packed Gram of size entries; sitesOnly leaves out the robust
// pass's right-hand sides.
func newRepAcc(nb, d, size int, sitesOnly bool) *repAcc {
	a := &repAcc{nb: nb, d: d, size: size, sitesOnly: sitesOnly,
		n: make([]float64, nb), gram: make([]float64, size*nb),
		site: make([]float64, d*nb),
		wt:   make([]float64, nb), dr: make([]float64, nb), ds: make([]float64, nb),
		yr: make([]float64, nb), ys: make([]float64, nb)}
	if !sitesOnly {
		a.rob = make([]float64, d*nb)
	}
	return a
}

// setNext takes round h+1's coefficients of site k's replicates b0.. from
// r, replicate-minor.
func (a *repAcc) setNext(r *repState, k, K, b0 int) {
	nb, d := a.nb, a.d
	a.cS = make([]float64, d*nb)
	for bi := 0; bi < nb; bi++ {
		ws := r.wSite[(b0+bi)*K+k]
		for i := 0; i < d; i++ {
			a.cS[i*nb+bi] = ws[i]
		}
	}
	if a.sitesOnly {
		return
	}
	a.cR = make([]float64, d*nb)
	for bi := 0; bi < nb; bi++ {
		wr := r.wRob[b0+bi]
		for i := 0; i < d; i++ {
			a.cR[i*nb+bi] = wr[i]
		}
	}
}

// add adds one row to every replicate: the row has weight rw, reward rew,
// counts[bi] copies in replicate bi, features idx with values val (whose
// Gram entries are pos and prod, see rowEntries), and its next state's
// features nidx with values nval (none at the last step or the episode's
// end); top bounds Vhat_{h+1}. The loops over replicates are
// floats.AddScaled (dst += alpha s, in assembly): the products and sums
// of the plain loops.
func (a *repAcc) add(counts []uint8, rw, rew, top float64, pos []int, prod []float64, idx []int32, val []float64, nidx []int32, nval []float64) {
	nb := a.nb
	wt := a.wt[:len(counts)]
	if !a.noGram {
		for bi, c := range counts {
			wt[bi] = float64(c) * rw
		}
		floats.AddScaled(a.n, 1, wt)
		for q, at := range pos {
			floats.AddScaled(a.gram[at*nb:(at+1)*nb], prod[q], wt)
		}
	}
	if a.noGram {
		for bi, c := range counts {
			wt[bi] = float64(c) * rw
		}
	}
	dr, ds, yr, ys := a.dr, a.ds, a.yr[:len(wt)], a.ys[:len(wt)]
	if len(nidx) > 0 {
		clear(dr)
		clear(ds)
		if a.sitesOnly {
			for x, i := range nidx {
				floats.AddScaled(ds, nval[x], a.cS[int(i)*nb:(int(i)+1)*nb])
			}
			ds := ds[:len(wt)]
			for bi, w := range wt {
				ys[bi] = (rew + clip(ds[bi], top)) * w
			}
		} else {
			for x, i := range nidx {
				floats.AddScaled(dr, nval[x], a.cR[int(i)*nb:(int(i)+1)*nb])
				floats.AddScaled(ds, nval[x], a.cS[int(i)*nb:(int(i)+1)*nb])
			}
			dr, ds := dr[:len(wt)], ds[:len(wt)]
			for bi, w := range wt {
				yr[bi] = (rew + clip(dr[bi], top)) * w
				ys[bi] = (rew + clip(ds[bi], top)) * w
			}
		}
	} else {
		for bi, w := range wt {
			yr[bi] = rew * w
			ys[bi] = yr[bi]
		}
	}
	for x, i := range idx {
		if !a.sitesOnly {
			floats.AddScaled(a.rob[int(i)*nb:(int(i)+1)*nb], val[x], yr)
		}
		floats.AddScaled(a.site[int(i)*nb:(int(i)+1)*nb], val[x], ys)
	}
}

// store writes replicate bi's sums to sums[(b0+bi)*K+k].
func (a *repAcc) store(sums []repSum, k, K, b0 int) {
	nb := a.nb
	for bi := 0; bi < nb; bi++ {
		sum := repSum{gram: Gram{N: a.n[bi], Packed: make([]float64, a.size)}, site: make([]float64, a.d)}
		for i := range sum.gram.Packed {
			sum.gram.Packed[i] = a.gram[i*nb+bi]
		}
		for i := 0; i < a.d; i++ {
			sum.site[i] = a.site[i*nb+bi]
		}
		if !a.sitesOnly {
			sum.rob = make([]float64, a.d)
			for i := 0; i < a.d; i++ {
				sum.rob[i] = a.rob[i*nb+bi]
			}
		}
		sums[(b0+bi)*K+k] = sum
	}
}

// repValues sets every replicate's values from round 1's coefficients and
// the policy's decisions at step 1's rows: the weighted means of Vhat_1
// over the replicate's initial states, per site and over all sites.
func (sv *Solver) repValues(ctx context.Context, r *repState) error {
	st := sv.st
	t := st.Table
	m := &st.Map
	K, B, W := len(t.Sites), r.B, t.W
	s := &t.Steps[0]
	top := float64(t.H)
	// Per (replicate, site): the weighted sums of the robust and the
	// site's Vhat_1, and the weighted rows.
	sumR, sumS, rows := make([]float64, B*K), make([]float64, B*K), make([]float64, B*K)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(sv.settings.Workers))
	for k := 0; k < K; k++ {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			if r.SitesOnly {
				sitesV1(r, s, m, W, k, K, top, sumS, rows)
				return nil
			}
			idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				rw := 1.0
				if s.Weight != nil {
					rw = s.Weight[j]
				}
				nz := m.Phi(s.State[j*W:(j+1)*W], int(r.act[j]), idx, val)
				counts := r.Counts[int(s.Traj[j])*B:]
				for b := 0; b < B; b++ {
					c := counts[b]
					if c == 0 {
						continue
					}
					wt := float64(c) * rw
					i := b*K + k
					cr, cs := r.wRob[b], r.wSite[i]
					dr, ds := 0.0, 0.0
					if cr == nil {
						for x := 0; x < nz; x++ {
							ds += val[x] * cs[idx[x]]
						}
					} else {
						for x := 0; x < nz; x++ {
							dr += val[x] * cr[idx[x]]
							ds += val[x] * cs[idx[x]]
						}
					}
					sumR[i] += wt * clip(dr, top)
					sumS[i] += wt * clip(ds, top)
					rows[i] += wt
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	r.out = make([]ReplicateValue, B)
	for b := range r.out {
		v := ReplicateValue{Sites: make([]float64, K)}
		sum, n := 0.0, 0.0
		for k := 0; k < K; k++ {
			i := b*K + k
			sum += sumR[i]
			n += rows[i]
			v.Sites[k] = math.NaN()
			if rows[i] > 0 {
				v.Sites[k] = sumS[i] / rows[i]
			}
		}
		v.Value = math.NaN()
		if n > 0 && !r.SitesOnly {
			v.Value = sum / n
		}
		r.out[b] = v
	}
	return nil
}

// sitesV1 is repValues's sweep of site k's rows of step 1 (s) when each
// site's own value alone is formed: replicate b's weighted sum of Vhat_1
// into sumS[b*K+k] and its weighted rows into rows[b*K+k], each the same
// terms in the same order (a replicate in which the row counts 0 times
// gains nothing). The coefficients lie replicate-minor, so that a row's
// values of every replicate are one loop per feature. W is the number
// of state values per row.
func sitesV1(r *repState, s *traj.Step, m *features.Map, W, k, K int, top float64, sumS, rows []float64) {
	B, d := r.B, m.Dim()
	coef := make([]float64, d*B)
	for b := 0; b < B; b++ {
		for i, v := range r.wSite[b*K+k] {
			coef[i*B+b] = v
		}
	}
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	ds := make([]float64, B)
	sum, n := make([]float64, B), make([]float64, B)
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		rw := 1.0
		if s.Weight != nil {
			rw = s.Weight[j]
		}
		nz := m.Phi(s.State[j*W:(j+1)*W], int(r.act[j]), idx, val)
		clear(ds)
		for x := 0; x < nz; x++ {
			floats.AddScaled(ds, val[x], coef[int(idx[x])*B:(int(idx[x])+1)*B])
		}
		for b, c := range r.Counts[int(s.Traj[j])*B : int(s.Traj[j]+1)*B] {
			if c == 0 {
				continue
			}
			wt := float64(c) * rw
			sum[b] += wt * clip(ds[b], top)
			n[b] += wt
		}
	}
	for b := 0; b < B; b++ {
		sumS[b*K+k], rows[b*K+k] = sum[b], n[b]
	}
}
