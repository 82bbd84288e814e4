package eval

import (
	"context"

	"golang.org/x/sync/errgroup"

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
	st := sv.Stats()
	t := st.Table
	m := &st.Map
	K, W := len(t.Sites), m.Width()
	bl := &st.Layout.Blocks
	lambda := sv.Settings().Lambda
	stride := solve.SampleStride(t)
	// own[h-1][i] and every[h-1][i] say whether the i-th sampled row of
	// step h has evidence at its own site and at every site.
	own, every := make([][]bool, t.H), make([][]bool, t.H)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for h := 1; h <= t.H; h++ {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			s := &t.Steps[h-1]
			grams, err := st.StepGrams(gctx, h)
			if err != nil {
				return err
			}
			// Each site's Lambda^-1, block by block (packed).
			linv := make([][]float64, K)
			for k := 0; k < K; k++ {
				f, err := solve.NewFactor(&st.Layout, []*solve.Gram{&grams[k]}, lambda, true)
				if err != nil {
					return err
				}
				linv[k] = f.Linv
			}
			idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
			at := make([]int, m.MaxNonzeros()*m.MaxNonzeros())
			q := make([]float64, p.A)
			for k := 0; k < K; k++ {
				for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
					if j%stride != 0 || weight(s, j) == 0 {
						continue
					}
					state := s.State[j*W : (j+1)*W]
					a, _, _ := p.Act(h, decisionState(on, h, j, state), q)
					n := m.Phi(state, a, idx, val)
					norm2 := 0.0
					for i := 0; i < n; i++ {
						norm2 += val[i] * val[i]
						// The packed index of (i, y) in phi's block.
						bi, pi := bl.Of[idx[i]], int(bl.Pos[idx[i]])
						for y := 0; y < n; y++ {
							py := int(bl.Pos[idx[y]])
							at[i*n+y] = st.Layout.Off[bi] + max(pi, py)*(max(pi, py)+1)/2 + min(pi, py)
							if bl.Of[idx[y]] != bi {
								at[i*n+y] = -1 // Lambda^-1 is 0 between blocks
							}
						}
					}
					limit := norm2 / (lambda + norm2) * (1 + 1e-12)
					// The leverage phi^T Lambda^-1 phi, as a quadratic
					// form in the block-diagonal inverse.
					evidence := func(kk int) bool {
						inv := linv[kk]
						lev := 0.0
						for i := 0; i < n; i++ {
							for y := 0; y < n; y++ {
								if c := at[i*n+y]; c >= 0 {
									lev += val[i] * inv[c] * val[y]
								}
							}
						}
						return lev <= limit
					}
					ok := evidence(k)
					all := ok
					for kk := 0; kk < K && all; kk++ {
						all = kk == k || evidence(kk)
					}
					own[h-1], every[h-1] = append(own[h-1], ok), append(every[h-1], all)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
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
	return site, allWith / allVisits, nil
}
