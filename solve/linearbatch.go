package solve

import (
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
}

// newLinearBatch returns the batch of specs' featurewise passes that
// follow no policy, for a sweep over rows of map m; nil unless m is an
// action-block map that blockRow serves and at least two passes qualify
// (a plain solve's one pass keeps linearBest).
func newLinearBatch(m *features.Map, specs []valSpec) *linearBatch {
	if m.Kind != features.ActionBlock || m.P > len(blockRow{}.idx) {
		return nil
	}
	var in []int
	var coefs [][]float64
	for i := range specs {
		sp := &specs[i]
		if !sp.decide && sp.follow == nil && sp.kind == featurewise {
			in = append(in, i)
			coefs = append(coefs, sp.coef.penalized(sp.beta))
		}
	}
	return batchOf(len(specs), in, coefs, m.Dim())
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
// pass b (the scan of [linearBest]: a NaN is kept), r holding the row.
func (lb *linearBatch) bests(r *blockRow, best []float64) {
	n, p := lb.n, r.p
	best = best[:n]
	if r.n == 3 {
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		i0, i1, i2 := r.idx[0], r.idx[1], r.idx[2]
		for a := 0; a < r.a; a++ {
			c0 := lb.coef[(a*p+i0)*n:][:n]
			c1 := lb.coef[(a*p+i1)*n:][:n]
			c2 := lb.coef[(a*p+i2)*n:][:n]
			if a == 0 {
				for b := range best {
					dot := 0.0
					dot += v0 * c0[b]
					dot += v1 * c1[b]
					dot += v2 * c2[b]
					best[b] = dot
				}
				continue
			}
			for b := range best {
				dot := 0.0
				dot += v0 * c0[b]
				dot += v1 * c1[b]
				dot += v2 * c2[b]
				if dot > best[b] || dot != dot {
					best[b] = dot
				}
			}
		}
		return
	}
	for a := 0; a < r.a; a++ {
		for b := range best {
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
