package solve

import (
	"cmp"
	"slices"

	"github.com/grmdp/grmdp/features"
)

// linearBatch evaluates, at one action-block row, phi(s,a)^T c for every
// action of several linear passes at once: the featurewise passes of a
// values sweep that follow no policy (the runs of a lockstep sweep,
// [SolveLockstep]), or single-run linear policies deciding together
// ([ActAllMany]). Their penalized coefficients lie side by side,
// pass-minor (coordinate i of batch pass b at i*n+b), so a row's features
// are read once for every pass and the passes' sums are independent
// iterations of one loop. Each dot product, and the scan over actions, is
// [linearBest]'s and [linearQ]'s, bit for bit.
// Kept: 1.39x CPU time without it on BenchmarkLockstepValues (40 passes)
// and 1.66x on BenchmarkDecideCandidates (9 policies), docs/PERFORMANCE.md
// item 63.
type linearBatch struct {
	n int
	// pos[i] is spec (or policy) i's place in the batch, or -1; spec[b]
	// is the spec at place b.
	pos, spec []int
	// coef holds the passes' W - beta M, pass-minor.
	coef []float64
	// The places of passes that leave out a fold's rows ([foldSkip]) lie
	// together, fold by fold; of is their trajectories' folds (every
	// [foldSkip] of a sweep reads the same) and keep[f] the ranges of
	// places [lo, hi) that keep fold f's rows (nil when no pass leaves
	// out any; a fold past them is kept by every pass).
	of   []int32
	keep [][][2]int
}

// minBatch is the fewest passes newLinearBatch batches; fewer take
// linearBest each, which is faster for them: the batch of 2 passes takes
// 1.5x the time of 2 linearBest calls, of 4 passes 1.2x, of 6 about the
// same and of 8 0.73x (BenchmarkLinearBatchSize, docs/PERFORMANCE.md
// item 68).
const minBatch = 6

// newLinearBatch returns the batch of specs' featurewise passes that
// follow no policy, for a sweep over rows of map m; nil unless m is an
// action-block map that blockRow serves and at least minBatch passes
// qualify (compare's sitewise and pooled passes, and a plain solve's one
// pass, keep linearBest).
func newLinearBatch(m *features.Map, specs []valSpec) *linearBatch {
	if m.Kind != features.ActionBlock || m.P > len(blockRow{}.idx) {
		return nil
	}
	var in []int
	for i := range specs {
		sp := &specs[i]
		if !sp.decide && sp.follow == nil && sp.kind == featurewise {
			in = append(in, i)
		}
	}
	if len(in) < minBatch {
		return nil
	}
	// The passes that leave out the same fold side by side, so that a
	// row's bests skip those that leave it out.
	fold := func(i int) int {
		if sk := specs[i].skip; sk != nil {
			return int(sk.fold)
		}
		return -1
	}
	slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(fold(a), fold(b)) })
	coefs := make([][]float64, len(in))
	for b, i := range in {
		sp := &specs[i]
		coefs[b] = sp.coef.penalized(sp.beta)
	}
	lb := batchOf(len(specs), in, coefs, m.Dim())
	if lb == nil {
		return nil
	}
	folds := 0
	for _, i := range in {
		if f := fold(i); f >= 0 {
			lb.of = specs[i].skip.of
			folds = max(folds, f+1)
		}
	}
	if lb.of != nil {
		lb.keep = make([][][2]int, folds)
		for f := range lb.keep {
			lo := 0
			for b := 0; b <= len(in); b++ {
				if b < len(in) && fold(in[b]) != f {
					continue
				}
				if b > lo {
					lb.keep[f] = append(lb.keep[f], [2]int{lo, b})
				}
				lo = b + 1
			}
		}
	}
	return lb
}

// batchOf returns the batch of places in (of n specs or policies) with
// coefficients coefs, d each; nil for fewer than two.
func batchOf(n int, in []int, coefs [][]float64, d int) *linearBatch {
	if len(in) < 2 {
		return nil
	}
	lb := &linearBatch{n: len(in), pos: make([]int, n), spec: in, coef: make([]float64, d*len(in))}
	for i := range lb.pos {
		lb.pos[i] = -1
	}
	for b, i := range in {
		lb.pos[i] = b
		for x, v := range coefs[b][:d] {
			lb.coef[x*lb.n+b] = v
		}
	}
	return lb
}

// bests sets best[b] to max_a phi(s,a)^T c_b, unclipped, for every batch
// pass b that keeps the row (the scan of [linearBest]: a NaN is kept), r
// holding the row and traj its trajectory ([traj.Step].Traj); the bests
// of the passes that leave the row out are not set.
func (lb *linearBatch) bests(r *blockRow, best []float64, traj int32) {
	if lb.keep != nil && traj >= 0 {
		if f := int(lb.of[traj]); f < len(lb.keep) {
			for _, k := range lb.keep[f] {
				lb.bestsIn(r, best, k[0], k[1])
			}
			return
		}
	}
	lb.bestsIn(r, best, 0, lb.n)
}

// bestsIn is bests for the batch passes lo..hi-1.
func (lb *linearBatch) bestsIn(r *blockRow, best []float64, lo, hi int) {
	n, p := lb.n, r.p
	best = best[lo:hi]
	lb.dotsAt(r, 0, lo, best)
	for a := 1; a < r.a; a++ {
		// 3 features: 1.86x on BenchmarkLockstepValues.
		if r.n == 3 {
			v0, v1, v2 := r.val[0], r.val[1], r.val[2]
			c0 := lb.coef[(a*p+r.idx[0])*n:][lo:hi]
			c1 := lb.coef[(a*p+r.idx[1])*n:][lo:hi]
			c2 := lb.coef[(a*p+r.idx[2])*n:][lo:hi]
			for b := range best {
				dot := 0.0
				dot += v0 * c0[b]
				dot += v1 * c1[b]
				dot += v2 * c2[b]
				if dot > best[b] || dot != dot {
					best[b] = dot
				}
			}
			continue
		}
		for b := range best {
			dot := 0.0
			for x := 0; x < r.n; x++ {
				dot += r.val[x] * lb.coef[(a*p+r.idx[x])*n+lo+b]
			}
			if dot > best[b] || dot != dot {
				best[b] = dot
			}
		}
	}
}

// dotsAt sets out[b] = phi(s,a)^T c_{lo+b} for the batch passes
// lo..lo+len(out)-1, r holding the row.
func (lb *linearBatch) dotsAt(r *blockRow, a, lo int, out []float64) {
	n, p := lb.n, r.p
	// 3 features: 1.28x on BenchmarkDecideCandidates.
	if r.n == 3 {
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		c0 := lb.coef[(a*p+r.idx[0])*n:][lo : lo+len(out)]
		c1 := lb.coef[(a*p+r.idx[1])*n:][lo : lo+len(out)]
		c2 := lb.coef[(a*p+r.idx[2])*n:][lo : lo+len(out)]
		for b := range out {
			dot := 0.0
			dot += v0 * c0[b]
			dot += v1 * c1[b]
			dot += v2 * c2[b]
			out[b] = dot
		}
		return
	}
	for b := range out {
		dot := 0.0
		for x := 0; x < r.n; x++ {
			dot += r.val[x] * lb.coef[(a*p+r.idx[x])*n+lo+b]
		}
		out[b] = dot
	}
}

// newPolicyBatch returns the batch of ps's policies whose decision at
// step h is one linear run's (Algorithm 1 with a single run, not
// behaviour cloning) over the same action-block map, with their places
// (pos[i], -1 for the others); nil unless at least two qualify.
func newPolicyBatch(ps []*Policy, h int) *linearBatch {
	var in []int
	for i, p := range ps {
		if p.Method == Behaviour || len(p.Runs) != 1 || p.penalty() != featurewise ||
			p.Map.Kind != features.ActionBlock || p.Map.P > len(blockRow{}.idx) || h > p.H {
			continue
		}
		if len(in) > 0 {
			if q := ps[in[0]]; q.Map.P != p.Map.P || q.Map.A != p.Map.A {
				continue
			}
		}
		in = append(in, i)
	}
	if len(in) < 2 {
		return nil
	}
	coefs := make([][]float64, len(in))
	for b, i := range in {
		run := &ps[i].Runs[0]
		coefs[b] = run.Steps[h-1].penalized(run.Beta)
	}
	return batchOf(len(ps), in, coefs, ps[in[0]].Map.Dim())
}

// dots sets q[a*n+b] = phi(s,a)^T c_b for every action a and batch pass
// b, each sum [blockRow.dots]'s, r holding the row.
func (lb *linearBatch) dots(r *blockRow, q []float64) {
	n := lb.n
	for a := 0; a < r.a; a++ {
		lb.dotsAt(r, a, 0, q[a*n:(a+1)*n])
	}
}

// decide returns batch policy p's action at step h of the row r holds
// and whether it has evidence, from its place b in qb (see
// [linearBatch.dots]): [Policy.actRow]'s decision, bit for bit (a NaN
// among the dot products sends the row to it); q is scratch.
func (lb *linearBatch) decide(p *Policy, h int, r *phiRow, qb []float64, b int, q []float64) (int, bool) {
	top := float64(p.H - h + 1)
	nan := false
	for a := range q {
		x := qb[a*lb.n+b]
		if x != x {
			nan = true
		}
		q[a] = clip(x, top)
	}
	if nan {
		a, _, ev := p.actRow(h, r, q)
		return a, ev
	}
	a, _, ev := p.decide(h, r.state, q)
	return a, ev
}
