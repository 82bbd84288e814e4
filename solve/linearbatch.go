package solve

import (
	"cmp"
	"slices"

	"github.com/grmdp/grmdp/features"
)

// linearBatch evaluates, at one action-block row, the largest
// phi(s,a)^T c over the actions of several passes at once: the
// featurewise passes of a values sweep that follow no policy (the runs of
// a lockstep sweep, [SolveLockstep]). Their penalized coefficients lie
// side by side, pass-minor (coordinate i of batch pass b at i*n+b), so a
// row's features are read once for every pass and the passes' sums are
// independent iterations of one loop. Each pass's dot products and scan
// over the actions are those of [linearBest], bit for bit.
// Kept: see docs/PERFORMANCE.md item 61 for its figure on --c auto.
type linearBatch struct {
	n int
	// pos[i] is spec i's place in the batch, or -1.
	pos []int
	// coef holds the passes' W - beta M, pass-minor.
	coef []float64
	// segs are the ranges of batch places whose passes leave out the
	// same rows (one fold's, or none).
	segs []batchSeg
}

type batchSeg struct {
	skip   *foldSkip
	lo, hi int
}

// newLinearBatch returns the batch of specs' featurewise passes that
// follow no policy, for a sweep over rows of map m; nil unless m is an
// action-block map that blockRow serves and at least two passes qualify
// (one pass gains nothing).
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
	if len(in) < 2 {
		return nil
	}
	foldOf := func(i int) int {
		if s := specs[i].skip; s != nil {
			return int(s.fold)
		}
		return -1
	}
	// Passes that leave out the same fold side by side: a row skips
	// its fold's range whole.
	slices.SortStableFunc(in, func(x, y int) int { return cmp.Compare(foldOf(x), foldOf(y)) })
	d := m.Dim()
	lb := &linearBatch{n: len(in), pos: make([]int, len(specs)), coef: make([]float64, d*len(in))}
	for i := range lb.pos {
		lb.pos[i] = -1
	}
	for b, i := range in {
		lb.pos[i] = b
		c := specs[i].coef.penalized(specs[i].beta)
		for x := 0; x < d; x++ {
			lb.coef[x*lb.n+b] = c[x]
		}
		if b == 0 || foldOf(i) != foldOf(in[b-1]) {
			lb.segs = append(lb.segs, batchSeg{skip: specs[i].skip, lo: b})
		}
		lb.segs[len(lb.segs)-1].hi = b + 1
	}
	return lb
}

// bests sets best[b] to max_a phi(s,a)^T c_b, unclipped, for every batch
// pass b that keeps the row of trajectory tr (the scan of [linearBest]:
// a NaN is kept), r holding the row.
func (lb *linearBatch) bests(r *blockRow, tr int32, best []float64) {
	n, p := lb.n, r.p
	for _, sg := range lb.segs {
		if sg.skip.drops(tr) {
			continue
		}
		lo, hi := sg.lo, sg.hi
		if r.n == 3 {
			v0, v1, v2 := r.val[0], r.val[1], r.val[2]
			i0, i1, i2 := r.idx[0], r.idx[1], r.idx[2]
			for a := 0; a < r.a; a++ {
				c0 := lb.coef[(a*p+i0)*n : (a*p+i0+1)*n][lo:hi]
				c1 := lb.coef[(a*p+i1)*n : (a*p+i1+1)*n][lo:hi]
				c2 := lb.coef[(a*p+i2)*n : (a*p+i2+1)*n][lo:hi]
				out := best[lo:hi]
				c1, c2 = c1[:len(out)], c2[:len(out)]
				c0 = c0[:len(out)]
				if a == 0 {
					for b := range out {
						dot := 0.0
						dot += v0 * c0[b]
						dot += v1 * c1[b]
						dot += v2 * c2[b]
						out[b] = dot
					}
					continue
				}
				for b := range out {
					dot := 0.0
					dot += v0 * c0[b]
					dot += v1 * c1[b]
					dot += v2 * c2[b]
					if dot > out[b] || dot != dot {
						out[b] = dot
					}
				}
			}
			continue
		}
		for a := 0; a < r.a; a++ {
			for b := lo; b < hi; b++ {
				dot := 0.0
				for x := 0; x < r.n; x++ {
					dot += r.val[x] * lb.coef[(a*p+r.idx[x])*n+b]
				}
				if a == 0 || dot > best[b] || dot != dot {
					best[b] = dot
				}
			}
		}
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
	d := ps[in[0]].Map.Dim()
	lb := &linearBatch{n: len(in), pos: make([]int, len(ps)), coef: make([]float64, d*len(in))}
	for i := range lb.pos {
		lb.pos[i] = -1
	}
	for b, i := range in {
		lb.pos[i] = b
		run := &ps[i].Runs[0]
		c := run.Steps[h-1].penalized(run.Beta)
		for x := 0; x < d; x++ {
			lb.coef[x*lb.n+b] = c[x]
		}
	}
	lb.segs = []batchSeg{{lo: 0, hi: lb.n}}
	return lb
}

// dots sets q[a*n+b] = phi(s,a)^T c_b for every action a and batch pass
// b, each sum [blockRow.dots]'s, r holding the row.
func (lb *linearBatch) dots(r *blockRow, q []float64) {
	n, p := lb.n, r.p
	for a := 0; a < r.a; a++ {
		out := q[a*n : (a+1)*n]
		if r.n == 3 {
			v0, v1, v2 := r.val[0], r.val[1], r.val[2]
			c0 := lb.coef[(a*p+r.idx[0])*n : (a*p+r.idx[0]+1)*n]
			c1 := lb.coef[(a*p+r.idx[1])*n : (a*p+r.idx[1]+1)*n]
			c2 := lb.coef[(a*p+r.idx[2])*n : (a*p+r.idx[2]+1)*n]
			c0, c1, c2 = c0[:len(out)], c1[:len(out)], c2[:len(out)]
			for b := range out {
				dot := 0.0
				dot += v0 * c0[b]
				dot += v1 * c1[b]
				dot += v2 * c2[b]
				out[b] = dot
			}
			continue
		}
		for b := range out {
			dot := 0.0
			for x := 0; x < r.n; x++ {
				dot += r.val[x] * lb.coef[(a*p+r.idx[x])*n+b]
			}
			out[b] = dot
		}
	}
}

// decide returns batch policy p's action at step h of the row r holds
// and whether it has evidence, from its place b in qb (see
// [linearBatch.dots]): [Policy.actRow]'s decision, bit for bit (a NaN
// among the dot products sends the row to it); q is scratch.
func (lb *linearBatch) decide(p *Policy, h int, r *phiRow, qb []float64, b int, q []float64) (int, bool) {
	for a := range q {
		q[a] = qb[a*lb.n+b]
	}
	if hasNaN(q) {
		a, _, ev := p.actRow(h, r, q)
		return a, ev
	}
	top := float64(p.H - h + 1)
	for a := range q {
		q[a] = clip(q[a], top)
	}
	a, _, ev := p.decide(h, r.state, q)
	return a, ev
}
