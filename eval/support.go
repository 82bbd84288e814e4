package eval

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/solve"
)

// leverageSupport returns the support of p on the solver's data for maps
// whose features are not indicators. A visit (a row at step h, state s)
// has evidence at site k when the leverage of the policy's feature vector
// under site k's ridge Gram at step h is at most that of one observation
// of exactly that vector:
//
//	phi^T (lambda I + Gram_{k,h})^-1 phi <= |phi|^2 / (lambda + |phi|^2),
//
// with phi = phi(s, pi(h, s)). For indicator maps this is the count
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
func leverageSupport(ctx context.Context, sv *solve.Solver, p *solve.Policy, nworkers int) (site []float64, all float64, err error) {
	st := sv.Stats()
	t := st.Table
	m := &st.Map
	K, d, W := len(t.Sites), m.Dim(), m.Width()
	lambda := sv.Lambda()
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
			factors := make([]*solve.Factor, K)
			for k := 0; k < K; k++ {
				if factors[k], err = solve.NewFactor(&st.Layout, []*solve.Gram{&grams[k]}, lambda, false); err != nil {
					return err
				}
			}
			idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
			q := make([]float64, p.A)
			phi, x := make([]float64, d), make([]float64, d)
			for k := 0; k < K; k++ {
				for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
					if j%stride != 0 || weight(s, j) == 0 {
						continue
					}
					state := s.State[j*W : (j+1)*W]
					a, _, _ := p.Act(h, state, q)
					n := m.Phi(state, a, idx, val)
					clear(phi)
					norm2 := 0.0
					for i := 0; i < n; i++ {
						phi[idx[i]] = val[i]
						norm2 += val[i] * val[i]
					}
					limit := norm2 / (lambda + norm2) * (1 + 1e-12)
					evidence := func(kk int) bool {
						factors[kk].SolveTo(x, phi)
						lev := 0.0
						for i := 0; i < n; i++ {
							lev += val[i] * x[idx[i]]
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
