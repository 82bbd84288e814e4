package solve

import (
	"math"

	"github.com/grmdp/grmdp/features"
)

// Qhat_h(s, a) of one step of a backward pass has one of two forms over
// the feature vector phi(s, a) that the map returns, with top = H - h + 1:
//
//	linear (Algorithm 1; beta = 0 for no penalty): min{phi^T (w - beta m), top}^+
//	PEVI:                                          min{phi^T nu - beta sqrt(phi^T Lambda^{-1} phi), top}^+
//
// A phiRow holds one row's phi(s, .), and each form has one evaluator of
// every action's Qhat ([linearQ], [peviQ], chosen by [StepCoef.qValues]).
// Everything that evaluates Qhat goes through them: the backward pass and
// evaluation ([Solver.values]), a policy's decisions ([Policy.QValues],
// apply, compare, the diagnostics' sample). Specialisations compute only
// what their caller needs, bit for bit what the evaluators give: the
// largest Qhat ([linearBest], [peviBest]), one action's ([linearAt]) and a
// PEVI policy's decision ([Policy.decideLazy]).

// phiRow is one row's feature vectors phi(s, a), a = 0..A-1: for
// action-block maps the normalised state with its pairwise products
// (blockRow), for other maps the state, phi coming from the map when
// needed. It is scratch memory reused from row to row: one per goroutine
// and per map.
type phiRow struct {
	m     *features.Map
	state []float64
	block bool // b holds the row
	b     blockRow
	// idx and val hold one action's nonzeros (maps other than
	// action-block).
	idx []int32
	val []float64
}

// prepare makes r hold phi(state, .) of map m.
func (r *phiRow) prepare(m *features.Map, state []float64) {
	r.m, r.state = m, state
	r.block = r.b.init(m, state)
	if !r.block && len(r.idx) < m.MaxNonzeros() {
		r.idx, r.val = make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	}
}

// dots sets out[a] = phi(s,a)^T w for every action, the sums of
// [features.Map.DotAll] (their bits, except which NaN an addition keeps,
// which depends on the order of its operands: see [linearQ]).
func (r *phiRow) dots(w, out []float64) {
	if r.block {
		r.b.dots(w, out)
		return
	}
	r.m.DotAll(out, r.state, w)
}

// terms returns phi(s,a)^T w, summed as [features.Map.Dot] sums it, and
// phi(s,a)^T Lambda^{-1} phi(s,a) clamped at 0, from the packed block
// inverse linv.
func (r *phiRow) terms(l *Layout, w, linv []float64, a int) (dot, quad float64) {
	if r.block {
		return r.b.dot(w, a), r.b.quad(linv, l.Off[a])
	}
	n := r.m.Phi(r.state, a, r.idx, r.val)
	return sparseTerms(l, r.idx[:n], r.val[:n], w, linv)
}

// qValues sets q[a] = Qhat_h(s, a) for every action, for this step of a
// run with penalty kind and beta, top = H - h + 1.
func (c *StepCoef) qValues(kind penalty, beta, top float64, l *Layout, r *phiRow, q []float64) {
	if kind == pevi {
		peviQ(r, l, c.W, c.Linv, beta, top, q)
		return
	}
	linearQ(r, c.penalized(beta), top, q)
}

// linearQ sets q[a] = min{phi(s,a)^T c, top}^+ for every action, c = w -
// beta m ([StepCoef.penalized]), the dot products being DotAll's bit for
// bit: a NaN sends an action-block row to DotAll itself.
func linearQ(r *phiRow, c []float64, top float64, q []float64) {
	r.dots(c, q)
	if r.block && hasNaN(q) {
		r.m.DotAll(q, r.state, c)
	}
	for a := range q {
		q[a] = clip(q[a], top)
	}
}

// linearBest returns max_a min{phi(s,a)^T c, top}^+ (clip is monotone: the
// clipped maximum, a NaN kept by the scan); q is scratch.
// Kept: 1.20x CPU time without it, BenchmarkValues, and solve within 1.1x on (a), docs/PERFORMANCE.md item 53.
func linearBest(r *phiRow, c []float64, top float64, q []float64) float64 {
	r.dots(c, q)
	x := q[0]
	for _, y := range q[1:] {
		if y > x || y != y {
			x = y
		}
	}
	return clip(x, top)
}

// linearAt returns action a's min{phi(s,a)^T c, top}^+: one dot product,
// the bits of linearQ's q[a] (blockRow.dot and Map.Dot sum as DotAll).
// Kept: 1.20x user time without it, eval --bootstrap 0 --permutations 0 on (a), docs/PERFORMANCE.md item 53.
func linearAt(r *phiRow, c []float64, top float64, a int) float64 {
	if r.block {
		return clip(r.b.dot(c, a), top)
	}
	return clip(r.m.Dot(r.state, a, c), top)
}

// peviQ sets q[a] = min{phi^T nu - beta sqrt(phi^T Lambda^{-1} phi), top}^+
// for every action.
func peviQ(r *phiRow, l *Layout, nu, linv []float64, beta, top float64, q []float64) {
	for a := range q {
		dot, quad := r.terms(l, nu, linv, a)
		q[a] = clip(dot-beta*math.Sqrt(quad), top)
	}
}

// peviBest returns the largest of peviQ's values, bit for bit; q is
// scratch. Action-block rows skip the quadratic forms that cannot matter
// ([blockRow.peviBest]).
func peviBest(r *phiRow, l *Layout, nu, linv []float64, beta, top float64, q []float64) float64 {
	if r.block {
		return r.b.peviBest(l, nu, linv, beta, top, q)
	}
	peviQ(r, l, nu, linv, beta, top, q)
	best := 0.0
	for _, x := range q {
		best = max(best, x)
	}
	return best
}

// clip returns min{x, top}^+.
func clip(x, top float64) float64 {
	// Comparisons instead of min and max, whose NaN and signed-zero rules
	// cost branches: the same bits for top >= 1 (NaN stays NaN, -0 and
	// negatives give +0).
	switch {
	case x > top:
		return top
	case x > 0:
		return x
	case x != x:
		return x
	}
	return 0
}

// nonneg returns max(x, 0) with the bits of the built-in max: x when
// positive or NaN, +0 otherwise.
func nonneg(x float64) float64 {
	if x > 0 || x != x {
		return x
	}
	return 0
}

// sparseTerms returns phi^T w (when w is not nil) and phi^T Lambda^{-1} phi
// for the nonzeros (idx, val) of phi; the dot product sums in the order of
// [features.Map.Dot], so the two agree bit for bit.
func sparseTerms(l *Layout, idx []int32, val []float64, w, linv []float64) (dot, quad float64) {
	bl := &l.Blocks
	var pbuf, obuf [16]int
	var bbuf [16]int32
	pos, off, blk := pbuf[:], obuf[:], bbuf[:]
	if len(idx) > len(pbuf) {
		pos, off, blk = make([]int, len(idx)), make([]int, len(idx)), make([]int32, len(idx))
	}
	for x, i := range idx {
		if w != nil {
			dot += val[x] * w[i]
		}
		blk[x] = bl.Of[i]
		pos[x] = int(bl.Pos[i])
		off[x] = l.Off[blk[x]]
	}
	for x := range idx {
		px, bx, base := pos[x], blk[x], off[x]
		for y := range idx {
			if blk[y] != bx {
				continue
			}
			r, c := px, pos[y]
			if c > r {
				r, c = c, r
			}
			quad += val[x] * val[y] * linv[base+r*(r+1)/2+c]
		}
	}
	return dot, max(quad, 0)
}

// peviBest returns max_a Qhat(s,a), Qhat = min{phi^T nu - beta
// sqrt(phi^T Lambda^{-1} phi), top}^+, bit for bit the maximum of
// [peviQ]'s values, for a prepared row; q is scratch of length A. It skips
// the quadratic form of every action whose phi^T nu does not exceed the
// best so far: with beta >= 0 such an action's Qhat cannot, since rounding
// is monotone.
// Kept: 1.43x user time without it, compare --evaluate=false on (a), docs/PERFORMANCE.md item 53.
func (r *blockRow) peviBest(l *Layout, nu, linv []float64, beta, top float64, q []float64) float64 {
	if beta < 0 {
		best := 0.0
		for a := 0; a < r.a; a++ {
			best = max(best, clip(r.dot(nu, a)-beta*math.Sqrt(r.quad(linv, l.Off[a])), top))
		}
		return best
	}
	// Visit the action with the largest phi^T nu first: it sets a bar
	// that most others do not pass.
	r.dots(nu, q)
	first := 0
	for a := 1; a < r.a; a++ {
		if q[a] > q[first] {
			first = a
		}
	}
	best := 0.0
	for i, a := 0, first; i < r.a; i, a = i+1, a+1 {
		if a == r.a {
			a = 0
		}
		if !(q[a] > best) {
			continue
		}
		// best >= 0 and v >= 0 or NaN: the built-in max's bits.
		if v := clip(q[a]-beta*math.Sqrt(r.quad(linv, l.Off[a])), top); v > best || v != v {
			best = v
		}
	}
	return best
}

// blockRow holds one row's normalised action-block feature (phi(s,0); phi(s,a)
// is the same in block a) with its pairwise products and packed positions,
// so that every action's terms cost a few multiplications. Its code
// specialised to three nonzeros (n == 3) and width three (p == 3) serves
// the usual three-compartment state.
// Kept: 1.41x user time without it, compare on (a), docs/PERFORMANCE.md item 54.
type blockRow struct {
	n, p, a int
	paired  bool // vv and tp hold this row's products
	idx     [8]int
	val     [8]float64
	vv      [64]float64
	tp      [64]int
}

// init prepares r for state and reports whether the fast path applies
// (action-block maps with p <= 8).
func (r *blockRow) init(m *features.Map, state []float64) bool {
	if m.Kind != features.ActionBlock || m.P > len(r.idx) {
		return false
	}
	var ibuf [8]int32
	r.n = m.Phi(state, 0, ibuf[:], r.val[:])
	r.p, r.a = m.P, m.A
	for x := 0; x < r.n; x++ {
		r.idx[x] = int(ibuf[x])
	}
	r.paired = false
	return true
}

// pair computes the pairwise products and packed positions that
// [blockRow.quad] needs, once per row.
func (r *blockRow) pair() {
	r.paired = true
	if r.n == 3 && r.p == 3 {
		// quad's fixed positions need no tp; the products are the loop's
		// below, bit for bit (multiplication commutes exactly).
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		r.vv[0], r.vv[1], r.vv[2] = v0*v0, v0*v1, v0*v2
		r.vv[3], r.vv[4], r.vv[5] = r.vv[1], v1*v1, v1*v2
		r.vv[6], r.vv[7], r.vv[8] = r.vv[2], r.vv[5], v2*v2
		return
	}
	k := 0
	for x := 0; x < r.n; x++ {
		for y := 0; y < r.n; y++ {
			rr, c := r.idx[x], r.idx[y]
			if c > rr {
				rr, c = c, rr
			}
			r.vv[k] = r.val[x] * r.val[y]
			r.tp[k] = rr*(rr+1)/2 + c
			k++
		}
	}
}

// dots sets out[a] = phi(s,a)^T w for every action, as [blockRow.dot]
// does, in one call.
func (r *blockRow) dots(w []float64, out []float64) {
	p := r.p
	if r.n == 3 && p == 3 {
		// Every coordinate nonzero: idx is 0, 1, 2.
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		w, out := w[:3*r.a], out[:r.a]
		for a := range out {
			k := 3 * a
			dot := 0.0
			dot += v0 * w[k]
			dot += v1 * w[k+1]
			dot += v2 * w[k+2]
			out[a] = dot
		}
		return
	}
	if r.n == 3 {
		v0, v1, v2 := r.val[0], r.val[1], r.val[2]
		i0, i1, i2 := r.idx[0], r.idx[1], r.idx[2]
		for a := 0; a < r.a; a++ {
			wb := w[a*p : a*p+p]
			dot := 0.0
			dot += v0 * wb[i0]
			dot += v1 * wb[i1]
			dot += v2 * wb[i2]
			out[a] = dot
		}
		return
	}
	for a := 0; a < r.a; a++ {
		out[a] = r.dot(w, a)
	}
}

// dot returns phi(s,a)^T w, summed in the order of [features.Map.Dot].
func (r *blockRow) dot(w []float64, a int) float64 {
	wb := w[a*r.p : (a+1)*r.p]
	dot := 0.0
	if r.n == 3 {
		dot += r.val[0] * wb[r.idx[0]]
		dot += r.val[1] * wb[r.idx[1]]
		dot += r.val[2] * wb[r.idx[2]]
		return dot
	}
	for x := 0; x < r.n; x++ {
		dot += r.val[x] * wb[r.idx[x]]
	}
	return dot
}

// quad returns phi(s,a)^T Lambda^{-1} phi(s,a) (clamped at 0) for the
// block whose packed inverse starts at off, summed in the order of
// [sparseTerms].
func (r *blockRow) quad(linv []float64, off int) float64 {
	if !r.paired {
		r.pair()
	}
	quad := 0.0
	if r.n == 3 && r.p == 3 {
		// Every coordinate nonzero: the packed positions of the pairs
		// (x, y) are fixed.
		lb := linv[off : off+6 : off+6]
		vv := &r.vv
		quad += vv[0] * lb[0]
		quad += vv[1] * lb[1]
		quad += vv[2] * lb[3]
		quad += vv[3] * lb[1]
		quad += vv[4] * lb[2]
		quad += vv[5] * lb[4]
		quad += vv[6] * lb[3]
		quad += vv[7] * lb[4]
		quad += vv[8] * lb[5]
		return nonneg(quad)
	}
	lb := linv[off : off+r.p*(r.p+1)/2]
	if r.n == 3 {
		vv, tp := &r.vv, &r.tp
		quad += vv[0] * lb[tp[0]]
		quad += vv[1] * lb[tp[1]]
		quad += vv[2] * lb[tp[2]]
		quad += vv[3] * lb[tp[3]]
		quad += vv[4] * lb[tp[4]]
		quad += vv[5] * lb[tp[5]]
		quad += vv[6] * lb[tp[6]]
		quad += vv[7] * lb[tp[7]]
		quad += vv[8] * lb[tp[8]]
		return nonneg(quad)
	}
	for k := 0; k < r.n*r.n; k++ {
		quad += r.vv[k] * lb[r.tp[k]]
	}
	return nonneg(quad)
}
