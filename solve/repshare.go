package solve

import (
	"bytes"
	"math"
	"sync"
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
	steps [][]*Factor
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
func (st *Stats) sharedFactors(r *Replicates, lambda float64, h int) (factors []*Factor, store bool) {
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
		s.steps = make([][]*Factor, st.Table.H)
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
func (st *Stats) storeFactors(h int, factors []*Factor) {
	s := st.repShare
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps[h-1] = factors
}
