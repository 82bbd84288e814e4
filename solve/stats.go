package solve

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"sync"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Gram is the statistic of one site at one step that does not depend on V:
// the weighted row count and sum phi phi^T, stored block by block as packed
// lower triangles (see [Layout]). It is a plain value that could cross a
// process boundary.
type Gram struct {
	N      float64   // number of rows (weighted)
	Packed []float64 // len Layout.Size()
}

// Layout places each block's packed lower triangle in a Gram.
type Layout struct {
	Blocks features.Blocks
	// Off[b] is the offset of block b's packed triangle; Off[len] = total.
	Off []int
}

// NewLayout returns the packed layout of blocks.
func NewLayout(b features.Blocks) Layout {
	off := make([]int, b.Len()+1)
	for i := 0; i < b.Len(); i++ {
		s := b.Size(i)
		off[i+1] = off[i] + s*(s+1)/2
	}
	return Layout{Blocks: b, Off: off}
}

// Size returns the number of packed entries.
func (l *Layout) Size() int { return l.Off[len(l.Off)-1] }

// tri returns the packed index of (r, c), r >= c, in a block.
func tri(r, c int) int { return r*(r+1)/2 + c }

// Stats holds the Gram of every (site, step) cell of a table, computed once.
type Stats struct {
	Table  *traj.Table
	Map    features.Map
	Layout Layout
	// Cells[h-1][k] is site k's Gram at step h. Nil when the Grams of
	// every (site, step) would take more than tuning.GramCacheBytes (large
	// tabular maps): [Stats.StepGrams] then computes a step's Grams when
	// a round needs them, and the memory of the statistics is O(K d)
	// instead of O(H K d). Unweighted action-block maps always keep
	// them, with the coverage counts computed beside them (their Grams
	// are p(p+1)/2 numbers per action, small unless p or the sites are
	// very many).
	Cells [][]Gram

	coverOnce sync.Once
	cover     [][]float64
	// counts[h-1][k][i], for an action-block map without row weights,
	// counts site k's rows at step h with phi_i nonzero (see coverage).
	counts [][][]float64
	// workers bounds StepGrams' parallelism (0: every core).
	workers int
	// disclosure is the disclosure control the statistics are formed
	// under; mask[h-1][k] says what it suppresses at (site k, step h), nil
	// when nothing can be (see [NewStatsDisclosed]).
	disclosure Disclosure
	mask       [][]cellMask
	tuning     Tuning
	// repShare, when set, holds the replicates' factors evaluations
	// share ([Stats.ShareReplicateFactors]).
	repShare *repShare
}

// Tuning holds the sizes at which the solver takes its memory-saving
// paths, and the size of the diagnostics' sample: the field
// [Settings].Tuning. The zero value gives the defaults. Results do not
// depend on it, except that the sample's rows depend on SampleRows; the
// memory-saving paths give the same bits as the others. [NewStats] and
// [Diagnose] use the defaults; [SolveStreamed] and the [Solver] read
// Settings.Tuning.
type Tuning struct {
	// GramCacheBytes bounds the Grams the statistics compute up front
	// for every (site, step): above it, Stats.Cells stays nil and each
	// round computes its step's Grams (see [Stats.StepGrams]). Zero means
	// 64 MiB; negative, none kept.
	GramCacheBytes int64
	// FactorCacheBytes bounds the factors a Solver keeps for every
	// (group, step): above it, each round builds its own and drops them
	// after. Zero means 64 MiB; negative, none kept.
	FactorCacheBytes int64
	// SampleRows is the size of the diagnostics' systematic sample of a
	// streamed solve. Zero means [SampleRows].
	SampleRows int
	// RepBatchBytes bounds the sums of the bootstrap replicates one
	// evaluation sweep carries ([Replicates]); more replicates take more
	// sweeps. Zero means 256 MiB.
	RepBatchBytes int64
}

func (tn Tuning) gramCache() int64   { return cmp.Or(tn.GramCacheBytes, 64<<20) }
func (tn Tuning) factorCache() int64 { return cmp.Or(tn.FactorCacheBytes, 64<<20) }
func (tn Tuning) repBatch() int64    { return cmp.Or(tn.RepBatchBytes, 256<<20) }

// stride returns the stride of the systematic sample of rows rows.
func (tn Tuning) stride(rows int) int {
	n := cmp.Or(tn.SampleRows, SampleRows)
	return max(1, (rows+n-1)/n)
}

// NewStats computes the Gram of every (site, step) cell in parallel. Each
// cell sums its rows serially in table order, so the result does not
// depend on workers. When those Grams would take more than 64 MiB (large
// tabular maps), it computes none: [Stats.StepGrams] computes a step's
// Grams, the same bits, when a round needs them. Unweighted action-block
// maps keep theirs whatever their size (see [Stats.Cells]).
func NewStats(ctx context.Context, t *traj.Table, m features.Map, blocks features.Blocks, nworkers int) (*Stats, error) {
	return newStats(ctx, t, m, blocks, nworkers, Tuning{})
}

// newStats is [NewStats] with the given tuning.
func newStats(ctx context.Context, t *traj.Table, m features.Map, blocks features.Blocks, nworkers int, tn Tuning) (*Stats, error) {
	if m.Width() != t.W {
		panic(fmt.Sprintf("solve: feature map width %d differs from the table's state width %d", m.Width(), t.W))
	}
	return completeStats(ctx, &Stats{Table: t, Map: m}, blocks, nworkers, tn)
}

// completeStats completes st (its table, map and disclosure masks set)
// with the Grams of NewStats, computed with the given tuning.
func completeStats(ctx context.Context, st *Stats, blocks features.Blocks, nworkers int, tn Tuning) (*Stats, error) {
	t, m := st.Table, st.Map
	st.Layout, st.workers, st.tuning = NewLayout(blocks), nworkers, tn
	K := len(t.Sites)
	// The action-block Gram also counts each coordinate's nonzero rows
	// when rows are unweighted: coverage then needs no pass of its own.
	// (Not under disclosure control: its Grams are formed row by row
	// through the masks, by gramAny.)
	if st.actionBlocks() && unweighted(t) && st.mask == nil {
		st.counts = make([][][]float64, t.H)
		for h := range st.counts {
			st.counts[h] = make([][]float64, K)
		}
	} else if int64(t.H)*int64(K)*int64(st.Layout.Size())*8 > tn.gramCache() {
		return st, nil
	}
	st.Cells = make([][]Gram, t.H)
	for h := range st.Cells {
		st.Cells[h] = make([]Gram, K)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for h := 1; h <= t.H; h++ {
		for k := 0; k < K; k++ {
			g.Go(func() error {
				if err := ctx.Err(); err != nil {
					return err
				}
				s := &t.Steps[h-1]
				rows := span(int(s.SiteStart[k]), int(s.SiteStart[k+1]))
				if st.counts != nil {
					count := make([]float64, m.Dim())
					st.Cells[h-1][k] = st.gramBlocks(h, rows, count)
					st.counts[h-1][k] = count
				} else {
					st.Cells[h-1][k] = st.gramSeq(h, rows)
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return st, nil
}

// StepGrams returns the Gram of every site at step h: Cells[h-1] when
// NewStats kept the Grams, or else computed now, in parallel over sites,
// each summed as NewStats sums it (the same bits). The caller drops them
// when its round is done.
func (st *Stats) StepGrams(ctx context.Context, h int) ([]Gram, error) {
	if st.Cells != nil {
		return st.Cells[h-1], nil
	}
	t := st.Table
	out := make([]Gram, len(t.Sites))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(st.workers))
	for k := range out {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			s := &t.Steps[h-1]
			out[k] = st.gramSeq(h, span(int(s.SiteStart[k]), int(s.SiteStart[k+1])))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// unweighted reports whether every row of t counts once.
func unweighted(t *traj.Table) bool {
	for h := range t.Steps {
		if t.Steps[h].Weight != nil {
			return false
		}
	}
	return true
}

// span yields lo..hi-1.
func span(lo, hi int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for j := lo; j < hi; j++ {
			if !yield(j) {
				return
			}
		}
	}
}

// gramSeq sums w phi phi^T over the given rows of step h, in order.
func (st *Stats) gramSeq(h int, rows iter.Seq[int]) Gram {
	if st.actionBlocks() && st.mask == nil {
		return st.gramBlocks(h, rows, nil)
	}
	return st.gramAny(h, rows)
}

// actionBlocks reports whether the map is action-block with its own
// blocks: coordinate a*P+j is position j of block a.
func (st *Stats) actionBlocks() bool {
	m := &st.Map
	bl := &st.Layout.Blocks
	if m.Kind != features.ActionBlock || m.P > 8 || st.Table.W < m.P || len(bl.Of) != m.A*m.P {
		return false
	}
	for c := range bl.Of {
		if int(bl.Of[c]) != c/m.P || int(bl.Pos[c]) != c%m.P {
			return false
		}
	}
	return true
}

// gramBlocks is gramAny for action-block maps: the same sums, each
// accumulated in the same order with the same products, without the
// general map's index lookups. With count, it also adds one to count[i]
// for every row whose phi_i is nonzero.
func (st *Stats) gramBlocks(h int, rows iter.Seq[int], count []float64) Gram {
	s := &st.Table.Steps[h-1]
	P, w := st.Map.P, st.Table.W
	off := st.Layout.Off
	packed := make([]float64, st.Layout.Size())
	var val [8]float64
	var pos [8]int
	n := 0.0
	for j := range rows {
		wt := 1.0
		if s.Weight != nil {
			wt = s.Weight[j]
		}
		n += wt
		state := s.State[j*w : j*w+P]
		// features.Map.Phi: the nonzero coordinates over their sum.
		sum := 0.0
		for _, v := range state {
			sum += v
		}
		nz := 0
		for c, v := range state {
			if v != 0 {
				val[nz], pos[nz] = v/sum, c
				nz++
			}
		}
		a := int(s.Action[j])
		base := off[a]
		if count != nil {
			for x := 0; x < nz; x++ {
				count[a*P+pos[x]]++
			}
		}
		for x := 0; x < nz; x++ {
			px := pos[x]
			row := packed[base+px*(px+1)/2:]
			wx := wt * val[x]
			for y := 0; y <= x; y++ {
				row[pos[y]] += wx * val[y]
			}
		}
	}
	return Gram{N: n, Packed: packed}
}

// gramAny sums w phi phi^T over the given rows of step h, in order, for any
// map.
func (st *Stats) gramAny(h int, rows iter.Seq[int]) Gram {
	s := &st.Table.Steps[h-1]
	m := &st.Map
	bl := &st.Layout.Blocks
	packed := make([]float64, st.Layout.Size())
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	w := st.Table.W
	n := 0.0
	for j := range rows {
		wt := 1.0
		if s.Weight != nil {
			wt = s.Weight[j]
		}
		nz := m.Phi(s.State[j*w:(j+1)*w], int(s.Action[j]), idx, val)
		if mask := st.maskAt(h, j); mask != nil {
			if mask.silent {
				continue
			}
			nz = suppress(mask, idx, val, nz)
		}
		n += wt
		for x := 0; x < nz; x++ {
			bx, px := bl.Of[idx[x]], int(bl.Pos[idx[x]])
			base := st.Layout.Off[bx]
			for y := 0; y < nz; y++ {
				if bl.Of[idx[y]] != bx {
					panic("solve: a feature vector spans two blocks")
				}
				py := int(bl.Pos[idx[y]])
				if py > px {
					continue
				}
				packed[base+tri(px, py)] += wt * val[x] * val[y]
			}
		}
	}
	return Gram{N: n, Packed: packed}
}

// rhsSeq returns sum over the given rows of step h of w phi (r + V(s')),
// with vnext the values at step h+1's rows (nil for zero).
func (st *Stats) rhsSeq(h int, rows iter.Seq[int], vnext []float64) []float64 {
	s := &st.Table.Steps[h-1]
	m := &st.Map
	W := st.Table.W
	out := make([]float64, m.Dim())
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	for j := range rows {
		y := s.Reward[j]
		if nx := s.Next[j]; nx >= 0 && vnext != nil {
			y += vnext[nx]
		}
		if s.Weight != nil {
			y *= s.Weight[j]
		}
		n := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		if mask := st.maskAt(h, j); mask != nil {
			n = suppress(mask, idx, val, n)
		}
		for x := 0; x < n; x++ {
			out[idx[x]] += val[x] * y
		}
	}
	return out
}

// rhsMulti returns, for each vnexts[i], what rhsSeq returns for the rows
// lo..hi of step h: one feature map per row serves every right-hand side,
// each summed in row order as rhsSeq sums it.
func (st *Stats) rhsMulti(h, lo, hi int, vnexts [][]float64) [][]float64 {
	s := &st.Table.Steps[h-1]
	m := &st.Map
	W := st.Table.W
	outs := make([][]float64, len(vnexts))
	for i := range outs {
		outs[i] = make([]float64, m.Dim())
	}
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	var mask *cellMask
	if lo < hi {
		// The rows lo..hi are one site's (rhsRound).
		mask = st.maskAt(h, lo)
	}
	for j := lo; j < hi; j++ {
		n := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		if mask != nil {
			n = suppress(mask, idx, val, n)
		}
		nx := s.Next[j]
		for i, vnext := range vnexts {
			y := s.Reward[j]
			if nx >= 0 && vnext != nil {
				y += vnext[nx]
			}
			if s.Weight != nil {
				y *= s.Weight[j]
			}
			out := outs[i]
			for x := 0; x < n; x++ {
				out[idx[x]] += val[x] * y
			}
		}
	}
	return outs
}

// Factor is the factorised Lambda = sum of a group's Grams + lambda I at one
// step: built once per (group, step) and reused for every right-hand side.
type Factor struct {
	layout *Layout
	// inv1 holds 1/Lambda_ii for blocks of size 1 (NaN elsewhere).
	inv1 []float64
	chol []*mat.Cholesky // per block of size > 1, nil for size 1; nil when every block has size 1
	// S is sqrt(diag(Lambda^{-1})).
	S []float64
	// Linv holds Lambda^{-1} block by block (packed), only when asked for.
	Linv []float64
	// N is the group's weighted row count at this step.
	N float64
}

// NewFactor sums the Grams (in the order given), adds lambda I and
// factorises each block. It returns an error when a block is not positive
// definite.
func NewFactor(layout *Layout, grams []*Gram, lambda float64, withInverse bool) (*Factor, error) {
	bl := &layout.Blocks
	d := len(bl.Of)
	f := &Factor{layout: layout, S: make([]float64, d), inv1: make([]float64, d)}
	var sum []float64
	if len(grams) == 1 {
		// One Gram (a site-wise group): its sums as they are, the same
		// bits as 0 + v (Gram entries are sums of products of
		// nonnegative features, never -0), without a copy of length
		// layout.Size() per (group, step).
		sum, f.N = grams[0].Packed, grams[0].N
	} else {
		sum = make([]float64, layout.Size())
		for _, g := range grams {
			f.N += g.N
			for i, v := range g.Packed {
				sum[i] += v
			}
		}
	}
	if withInverse {
		f.Linv = make([]float64, layout.Size())
	}
	for b := 0; b < bl.Len(); b++ {
		size := bl.Size(b)
		off := layout.Off[b]
		coords := bl.Coord[bl.Start[b]:bl.Start[b+1]]
		if size == 1 {
			l := sum[off] + lambda
			if !(l > 0) {
				return nil, fmt.Errorf("%w: Lambda[%d,%d] = %g is not positive", ErrSingular, coords[0], coords[0], l)
			}
			inv := 1 / l
			f.inv1[coords[0]] = inv
			f.S[coords[0]] = math.Sqrt(inv)
			if withInverse {
				f.Linv[off] = inv
			}
			continue
		}
		sym := mat.NewSymDense(size, nil)
		for r := 0; r < size; r++ {
			for c := 0; c <= r; c++ {
				v := sum[off+tri(r, c)]
				if r == c {
					v += lambda
				}
				sym.SetSym(r, c, v)
			}
		}
		var ch mat.Cholesky
		if ok := ch.Factorize(sym); !ok {
			return nil, fmt.Errorf("%w: block of coordinates %d..%d is not positive definite", ErrSingular, coords[0], coords[len(coords)-1])
		}
		if f.chol == nil {
			// Made only when a block needs it: d pointers per factor
			// for a tabular map would be scanned by every collection.
			f.chol = make([]*mat.Cholesky, bl.Len())
		}
		f.chol[b] = &ch
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			return nil, fmt.Errorf("%w: block of coordinates %d..%d: %v", ErrSingular, coords[0], coords[len(coords)-1], err)
		}
		for r := 0; r < size; r++ {
			f.S[coords[r]] = math.Sqrt(inv.At(r, r))
			f.inv1[coords[r]] = math.NaN()
			if withInverse {
				for c := 0; c <= r; c++ {
					f.Linv[off+tri(r, c)] = inv.At(r, c)
				}
			}
		}
	}
	return f, nil
}

// SolveTo sets dst = Lambda^{-1} rhs.
func (f *Factor) SolveTo(dst, rhs []float64) {
	bl := &f.layout.Blocks
	var x, bv mat.VecDense
	for b := 0; b < bl.Len(); b++ {
		coords := bl.Coord[bl.Start[b]:bl.Start[b+1]]
		if len(coords) == 1 {
			i := coords[0]
			dst[i] = rhs[i] * f.inv1[i]
			continue
		}
		rb := make([]float64, len(coords))
		for r, i := range coords {
			rb[r] = rhs[i]
		}
		bv = *mat.NewVecDense(len(coords), rb)
		x.Reset()
		// A mat.Condition error still comes with the solution; conditioning
		// is reported once per factor by Cond, so it is not repeated here.
		_ = f.chol[b].SolveVecTo(&x, &bv)
		for r, i := range coords {
			dst[i] = x.AtVec(r)
		}
	}
}

// Cond returns the condition number of Lambda as the solve sees it: the
// largest over Lambda's diagonal blocks, each solved on its own, of the
// 1-norm condition number kappa_1(B) = ||B||_1 ||B^-1||_1 as LAPACK's
// dpocon estimates it from the block's Cholesky factor (computed with the
// factorisation, so free here). The estimate is at most kappa_1(B), up to
// rounding, and in practice within a factor of 3 of it. A block of size 1 counts 1:
// its solve is one exact division. The whole matrix's condition number,
// which also compares one block's scale with another's, does not bound the
// error of a block-by-block solve and is not reported.
func (f *Factor) Cond() float64 {
	worst := 1.0
	for _, c := range f.chol {
		if c != nil {
			worst = max(worst, c.Cond())
		}
	}
	return worst
}

// BlocksFor returns the block structure of Lambda for map m on table t:
// the map's own for tabular, indicator and action-block maps, and for a
// precomputed map the finest partition in which every observed
// phi(s_h, a_h) lies in one block (features.DiscoverBlocks).
func BlocksFor(t *traj.Table, m *features.Map) features.Blocks {
	if m.Kind != features.Precomputed {
		return m.Blocks()
	}
	add, done := features.DiscoverBlocks(m.Dim())
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	for h := range t.Steps {
		st := &t.Steps[h]
		for j := 0; j < st.Len(); j++ {
			n := m.Phi(st.State[j*t.W:(j+1)*t.W], int(st.Action[j]), idx, val)
			add(idx[:n])
		}
	}
	return done()
}
