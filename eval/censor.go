package eval

import "github.com/grmdp/grmdp/traj"

// censorWeights returns each trajectory's inverse probability of
// censoring weight (by ordinal, [traj.Step].Traj), or nil when no
// trajectory is censored: 0 for a censored trajectory, whose return is
// unknown, and 1 / G_k(L) for an uncensored one of site k whose last row
// is at step L, where G_k(L) is the Kaplan-Meier estimate of the
// probability that an episode of site k that runs to step L is not
// censored before its end (see "Censored episodes" in the package
// documentation).
//
// A censored trajectory whose last kept row is at step h was censored at
// step h+1 (its row there had a NULL). At step g >= 2 the trajectories at
// risk of censoring are those with a row at step g and those censored at
// g; the hazard is the second count over their sum, and G_k(L) is the
// product of 1 - hazard over g = 2..L. Censoring at step 1 removes an
// episode without a trace, so it is not estimated: it scales every weight
// alike, and the estimates normalise the weights.
func censorWeights(t *traj.Table) []float64 {
	if t.Censored == nil || len(t.Steps) == 0 {
		return nil
	}
	K, H := len(t.Sites), len(t.Steps)
	n := len(t.Censored)
	last := make([]int, n) // each trajectory's last step (1-based), 0 if none
	// rows[k*(H+1)+h]: site k's trajectories with a row at step h;
	// cens[k*(H+1)+h]: site k's censored trajectories last seen at step h.
	rows, cens := make([]float64, K*(H+1)), make([]float64, K*(H+1))
	site := make([]int, n)
	for h := range t.Steps {
		s := &t.Steps[h]
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				i := s.Traj[j]
				if i < 0 || int(i) >= n {
					continue
				}
				last[i], site[i] = h+1, k
				rows[k*(H+1)+h+1]++
			}
		}
	}
	for i, c := range t.Censored {
		if c && last[i] > 0 {
			cens[site[i]*(H+1)+last[i]]++
		}
	}
	// G[k*(H+1)+L] is G_k(L).
	G := make([]float64, K*(H+1))
	for k := 0; k < K; k++ {
		g := 1.0
		G[k*(H+1)+1] = g
		for h := 2; h <= H; h++ {
			c := cens[k*(H+1)+h-1]
			if risk := rows[k*(H+1)+h] + c; risk > 0 {
				g *= 1 - c/risk
			}
			G[k*(H+1)+h] = g
		}
	}
	out := make([]float64, n)
	for i, c := range t.Censored {
		if c || last[i] == 0 {
			continue
		}
		if g := G[site[i]*(H+1)+last[i]]; g > 0 {
			out[i] = 1 / g
		}
	}
	return out
}

// returnWeight is the weight of row j of step s in an estimate of a
// return (observed care, PDWIS, WDR): its row weight times its
// trajectory's inverse probability of censoring weight cw (from
// [censorWeights]; nil: 0 for a censored trajectory, 1 otherwise).
func returnWeight(t *traj.Table, cw []float64, s *traj.Step, j int) float64 {
	if cw != nil {
		if i := s.Traj[j]; i >= 0 && int(i) < len(cw) {
			return cw[i] * weight(s, j)
		}
	}
	if t.IsCensored(s.Traj[j]) {
		return 0
	}
	return weight(s, j)
}
