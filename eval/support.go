package eval

import (
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
func leverageSupport(sv *solve.Solver, p *solve.Policy) (site []float64, all float64, err error) {
	st := sv.Stats()
	t := st.Table
	m := &st.Map
	K, d, W := len(t.Sites), m.Dim(), m.Width()
	lambda := sv.Lambda()
	stride := solve.SampleStride(t)
	visits, with := make([]float64, K), make([]float64, K)
	allVisits, allWith := 0.0, 0.0
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	q := make([]float64, p.A)
	phi, x := make([]float64, d), make([]float64, d)
	for h := 1; h <= t.H; h++ {
		s := &t.Steps[h-1]
		factors := make([]*solve.Factor, K)
		for k := 0; k < K; k++ {
			rows := make([]int, 0, int(s.SiteStart[k+1]-s.SiteStart[k]))
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				rows = append(rows, j)
			}
			g := st.GramRows(h, rows)
			if factors[k], err = solve.NewFactor(&st.Layout, []*solve.Gram{&g}, lambda, false); err != nil {
				return nil, 0, err
			}
		}
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				if j%stride != 0 {
					continue
				}
				w := weight(s, j)
				if w == 0 {
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
				visits[k] += w
				allVisits += w
				if evidence(k) {
					with[k] += w
				}
				every := true
				for kk := 0; kk < K && every; kk++ {
					every = evidence(kk)
				}
				if every {
					allWith += w
				}
			}
		}
	}
	site = make([]float64, K)
	for k := range site {
		site[k] = with[k] / visits[k]
	}
	return site, allWith / allVisits, nil
}
