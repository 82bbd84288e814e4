package eval

import (
	"context"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// leverageSupport returns the support of p on the solver's data for maps
// whose features are not indicators. A visit (a row at step h, state s)
// has evidence at site k when the leverage of the policy's feature vector
// under site k's ridge Gram at step h is at most that of one observation
// of exactly that vector:
//
//	phi^T (lambda I + Gram_{k,h})^-1 phi <= |phi|^2 / (lambda + |phi|^2),
//
// with phi = phi(s, pi(h, s)), the policy deciding on on's states when
// on is not nil (see [Options].DecideOn). For indicator maps this is the count
// criterion (the cell observed at least once, with integer weights). A
// site's support is the weighted share of its visits with evidence at the
// site; the robust support the share of all visits with evidence at every
// site. Tables of more than solve.SampleRows rows are read at the
// systematic sample of [solve.SampleStride] (row j of each step with j a
// multiple of the stride).
//
// The steps are read in parallel, each with its own factors; the counts
// are then summed in row order, so the result does not depend on the
// workers.
func leverageSupport(ctx context.Context, sv *solve.Solver, p *solve.Policy, on *traj.Table, nworkers int) (site []float64, all float64, err error) {
	t := sv.Stats().Table
	stride := solve.SampleStride(t)
	// own[h-1][i] and every[h-1][i] say whether the i-th sampled row of
	// step h has evidence at its own site and at every site.
	own, every := make([][]bool, t.H), make([][]bool, t.H)
	g := workers.NewGroup(ctx, nworkers)
	for h := 1; h <= t.H; h++ {
		g.Go(func(gctx context.Context) error {
			if err := gctx.Err(); err != nil {
				return err
			}
			var err error
			own[h-1], every[h-1], err = stepEvidence(gctx, sv, p, on, h, stride)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	site, all = evidenceShares(t, stride, own, every)
	return site, all, nil
}

// stepEvidence says, for each sampled row of step h (site by site, in row
// order), whether the policy's action there has evidence at the row's own
// site and at every site.
func stepEvidence(ctx context.Context, sv *solve.Solver, p *solve.Policy, on *traj.Table, h, stride int) (own, every []bool, err error) {
	st := sv.Stats()
	t := st.Table
	m := &st.Map
	K, W := len(t.Sites), m.Width()
	s := &t.Steps[h-1]
	lev, err := newLeverage(ctx, sv, h)
	if err != nil {
		return nil, nil, err
	}
	q := make([]float64, p.A)
	for k := 0; k < K; k++ {
		for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
			if j%stride != 0 || weight(s, j) == 0 {
				continue
			}
			state := s.State[j*W : (j+1)*W]
			a, _, _ := p.Act(h, decisionState(on, h, j, state), q)
			lev.set(state, a)
			ok := lev.evidence(k)
			all := ok
			for kk := 0; kk < K && all; kk++ {
				all = kk == k || lev.evidence(kk)
			}
			own, every = append(own, ok), append(every, all)
		}
	}
	return own, every, nil
}

// leverage holds one step's per-site Lambda^-1 (block by block, packed)
// and one feature vector phi, whose leverage phi^T Lambda^-1 phi it
// compares with the count criterion's limit.
type leverage struct {
	st     *solve.Stats
	lambda float64
	linv   [][]float64
	idx    []int32
	val    []float64
	// at[i*n+y] is the packed index of (i, y) of phi's nonzeros in
	// Lambda^-1, -1 between blocks (where Lambda^-1 is 0).
	at    []int
	n     int
	limit float64
}

func newLeverage(ctx context.Context, sv *solve.Solver, h int) (*leverage, error) {
	st := sv.Stats()
	grams, err := st.StepGrams(ctx, h)
	if err != nil {
		return nil, err
	}
	lambda := sv.Settings().Lambda
	linv := make([][]float64, len(grams))
	for k := range grams {
		f, err := solve.NewFactor(&st.Layout, []*solve.Gram{&grams[k]}, lambda, true)
		if err != nil {
			return nil, err
		}
		linv[k] = f.Linv
	}
	nz := st.Map.MaxNonzeros()
	return &leverage{st: st, lambda: lambda, linv: linv, idx: make([]int32, nz), val: make([]float64, nz), at: make([]int, nz*nz)}, nil
}

// set makes phi(state, a) the vector whose leverage evidence measures.
func (l *leverage) set(state []float64, a int) {
	bl := &l.st.Layout.Blocks
	n := l.st.Map.Phi(state, a, l.idx, l.val)
	norm2 := 0.0
	for i := 0; i < n; i++ {
		norm2 += l.val[i] * l.val[i]
		bi, pi := bl.Of[l.idx[i]], int(bl.Pos[l.idx[i]])
		for y := 0; y < n; y++ {
			py := int(bl.Pos[l.idx[y]])
			l.at[i*n+y] = l.st.Layout.Off[bi] + max(pi, py)*(max(pi, py)+1)/2 + min(pi, py)
			if bl.Of[l.idx[y]] != bi {
				l.at[i*n+y] = -1
			}
		}
	}
	l.n = n
	l.limit = norm2 / (l.lambda + norm2) * (1 + 1e-12)
}

// evidence reports whether phi has evidence at site k: its leverage, as a
// quadratic form in the block-diagonal inverse, is at most the limit.
func (l *leverage) evidence(k int) bool {
	inv := l.linv[k]
	lev := 0.0
	for i := 0; i < l.n; i++ {
		for y := 0; y < l.n; y++ {
			if c := l.at[i*l.n+y]; c >= 0 {
				lev += l.val[i] * inv[c] * l.val[y]
			}
		}
	}
	return lev <= l.limit
}

// evidenceShares sums the sampled rows' evidence in row order: each site's
// weighted share of its visits with evidence at the site, and the share
// of all visits with evidence at every site.
func evidenceShares(t *traj.Table, stride int, own, every [][]bool) (site []float64, all float64) {
	K := len(t.Sites)
	visits, with := make([]float64, K), make([]float64, K)
	allVisits, allWith := 0.0, 0.0
	for h := 1; h <= t.H; h++ {
		s := &t.Steps[h-1]
		i := 0
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				w := weight(s, j)
				if j%stride != 0 || w == 0 {
					continue
				}
				visits[k] += w
				allVisits += w
				if own[h-1][i] {
					with[k] += w
				}
				if every[h-1][i] {
					allWith += w
				}
				i++
			}
		}
	}
	site = make([]float64, K)
	for k := range site {
		site[k] = with[k] / visits[k]
	}
	return site, allWith / allVisits
}
