package solve

import (
	"bytes"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// repShare holds the factors of the bootstrap replicates' Grams that
// evaluations on one Stats share (see [Stats.ShareReplicateFactors]):
// those of the first replicated pass, with its replicates and ridge
// parameter, per round.
type repShare struct {
	mu     sync.Mutex
	counts []uint8
	B      int
	lambda float64
	// steps[h-1] holds round h's factors, replicate-major (b*K+k); nil
	// until the first pass has solved round h.
	steps [][]*repFactor
	// off is set when the replicates' factors would take more than the
	// tuning allows: nothing is kept.
	off bool
}

// ShareReplicateFactors makes the evaluations on st that carry bootstrap
// replicates ([EvaluateOptions].Replicates) share the factors of the
// replicates' Grams: the first replicated evaluation keeps them, and each
// later one whose replicates (the same counts) and ridge parameter are
// the first's reads them instead of forming its Grams and factorising
// them again. Evaluating several policies on the same rows and
// replicates (a cross-fit's policy and behaviour cloning on a held-out
// fold) then forms each replicate's Grams once. The values are the same
// bits either way. The factors of every (replicate, site, step) are kept
// while st lives, unless they would take more than the tuning's
// RepBatchBytes (256 MiB by default): then nothing is shared.
func (st *Stats) ShareReplicateFactors() {
	if st.repShare == nil {
		st.repShare = &repShare{}
	}
}

// sharedFactors returns round h's shared factors for the replicates r
// under lambda (nil when none are shared yet or these replicates are not
// the shared ones), and whether this pass should store its own (it is
// the first).
func (st *Stats) sharedFactors(r *Replicates, lambda float64, h int) (factors []*repFactor, store bool) {
	s := st.repShare
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off {
		return nil, false
	}
	if s.counts == nil {
		K, H := int64(len(st.Table.Sites)), int64(st.Table.H)
		d, packed := int64(st.Map.Dim()), int64(st.Layout.Size())
		if H*int64(r.B)*K*8*(3*d+packed) > st.tuning.repBatch() {
			s.off = true
			return nil, false
		}
		s.counts, s.B, s.lambda = r.Counts, r.B, lambda
		s.steps = make([][]*repFactor, st.Table.H)
	}
	if s.B != r.B || math.Float64bits(s.lambda) != math.Float64bits(lambda) || !bytes.Equal(s.counts, r.Counts) {
		return nil, false
	}
	if f := s.steps[h-1]; f != nil {
		return f, false
	}
	return nil, true
}

// storeFactors keeps round h's factors of the shared replicates.
func (st *Stats) storeFactors(h int, factors []*repFactor) {
	s := st.repShare
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps[h-1] = factors
}

// repFactor is a replicate's factor of Lambda = Gram + lambda I: each
// block's Cholesky factor as [NewFactor] computes it
// (mat.Cholesky.Factorize's lapack64.Potrf), without the condition
// estimate and the inverse, which a replicate's solves do not read. Its
// solves are mat.Cholesky.SolveVecTo's (lapack64.Potrs): the bits of
// [Factor.SolveTo].
type repFactor struct {
	layout *Layout
	// inv1 holds 1/Lambda_ii for blocks of size 1.
	inv1 []float64
	// chol holds, per block of size > 1, its upper Cholesky factor, row
	// major (nil for blocks of size 1).
	chol [][]float64
}

// newRepFactor factorises g's Gram plus lambda I block by block; it
// fails as NewFactor does when a block is not positive definite.
func newRepFactor(layout *Layout, g *Gram, lambda float64) (*repFactor, error) {
	bl := &layout.Blocks
	f := &repFactor{layout: layout, inv1: make([]float64, len(bl.Of))}
	sum := g.Packed
	for b := 0; b < bl.Len(); b++ {
		size := bl.Size(b)
		off := layout.Off[b]
		coords := bl.Coord[bl.Start[b]:bl.Start[b+1]]
		if size == 1 {
			l := sum[off] + lambda
			if !(l > 0) {
				return nil, fmt.Errorf("%w: Lambda[%d,%d] = %g is not positive", ErrSingular, coords[0], coords[0], l)
			}
			f.inv1[coords[0]] = 1 / l
			continue
		}
		// The upper triangle, as mat.SymDense stores it and
		// mat.Cholesky copies it.
		u := make([]float64, size*size)
		for r := 0; r < size; r++ {
			for c := 0; c <= r; c++ {
				v := sum[off+tri(r, c)]
				if r == c {
					v += lambda
				}
				u[c*size+r] = v
			}
		}
		if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: size, Stride: size, Data: u}); !ok {
			return nil, fmt.Errorf("%w: block of coordinates %d..%d is not positive definite", ErrSingular, coords[0], coords[len(coords)-1])
		}
		if f.chol == nil {
			f.chol = make([][]float64, bl.Len())
		}
		f.chol[b] = u
	}
	return f, nil
}

// SolveTo sets dst = Lambda^{-1} rhs.
func (f *repFactor) SolveTo(dst, rhs []float64) {
	bl := &f.layout.Blocks
	for b := 0; b < bl.Len(); b++ {
		coords := bl.Coord[bl.Start[b]:bl.Start[b+1]]
		if len(coords) == 1 {
			i := coords[0]
			dst[i] = rhs[i] * f.inv1[i]
			continue
		}
		n := len(coords)
		x := make([]float64, n)
		for r, i := range coords {
			x[r] = rhs[i]
		}
		lapack64.Potrs(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: n, Stride: n, Data: f.chol[b]},
			blas64.General{Rows: n, Cols: 1, Stride: 1, Data: x})
		for r, i := range coords {
			dst[i] = x[r]
		}
	}
}
