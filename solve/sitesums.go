package solve

import (
	"context"
	"fmt"
)

// SiteSums is what a solver's rows contribute to the value of one pass
// whose coefficients are known at every step (see [Solver.SiteValues]).
type SiteSums struct {
	// V1[k] is the sum of Vhat_1 over site k's step-1 rows (weighted),
	// Rows[k] the number of those rows (weighted): the value estimate is
	// the sum over sites of V1 over the sum of Rows.
	V1, Rows []float64
	// NoEvidence[h-1][k] is the weighted number of site k's step-h rows
	// whose decision has no evidence (only with steps).
	NoEvidence [][]float64
}

// SiteValues evaluates each pass at the solver's rows under its
// coefficients coefs[i][h-1] at every step, with the driver's own value
// sweep (the one behind a solve's value estimate and its no-evidence
// counts), and returns per pass and site the sums a coordinator adds up:
// the sum of Vhat_1 over the site's step-1 rows, their number and, when
// steps is set, the rows without evidence at every step. The per-site sums
// are formed row by row in row order, as the central mean of Vhat_1 adds
// them; the central mean adds every site's rows in one serial sum, so a
// mean formed from these per-site sums may differ from it in the last
// bits (float addition is not associative).
func (sv *Solver) SiteValues(ctx context.Context, passes []Pass, coefs [][]*StepCoef, steps bool) ([]SiteSums, error) {
	t := sv.st.Table
	H, K := t.H, len(t.Sites)
	if len(coefs) != len(passes) {
		return nil, fmt.Errorf("solve: %d passes and %d coefficient sets", len(passes), len(coefs))
	}
	ps := make([]*passState, len(passes))
	for i, pass := range passes {
		p := newPassState(pass.spec(), K, H)
		if len(coefs[i]) != H {
			return nil, fmt.Errorf("solve: pass %s has %d steps of coefficients, want %d", pass.Name, len(coefs[i]), H)
		}
		for h, c := range coefs[i] {
			if c == nil {
				return nil, fmt.Errorf("solve: pass %s lacks its step-%d coefficients", pass.Name, h+1)
			}
			p.run.Steps[h] = *c
			p.run.Steps[h].NoEvidence, p.run.Steps[h].NoEvidenceBySite = 0, nil
			if !pass.PEVI {
				p.run.Steps[h].setPenalized(pass.Beta)
			}
		}
		ps[i] = p
	}
	out := make([]SiteSums, len(ps))
	for i := range out {
		out[i].NoEvidence = make([][]float64, H)
	}
	lo := 1
	if steps {
		lo = H
	}
	for u := lo; u >= 1; u-- {
		if err := sv.valueRound(ctx, ps, u); err != nil {
			return nil, err
		}
		if steps {
			for i, p := range ps {
				out[i].NoEvidence[u-1] = p.run.Steps[u-1].NoEvidenceBySite
			}
		}
	}
	s1 := &t.Steps[0]
	for i, p := range ps {
		v1 := p.vals[1]
		out[i].V1, out[i].Rows = make([]float64, K), make([]float64, K)
		for k := 0; k < K; k++ {
			if !p.inRun[k] {
				continue
			}
			sum := 0.0
			for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
				if s1.Weight == nil {
					sum += v1[j]
				} else {
					sum += s1.Weight[j] * v1[j]
				}
			}
			out[i].V1[k] = sum
			out[i].Rows[k] = runRows(s1, onlySite(K, k))
		}
	}
	return out, nil
}

// onlySite returns the membership of site k alone among K sites.
func onlySite(K, k int) []bool {
	in := make([]bool, K)
	in[k] = true
	return in
}
