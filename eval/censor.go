package eval

import "github.com/grmdp/grmdp/traj"

// returnWeight is the weight of row j of step s in an estimate of a
// return (observed care, PDWIS, WDR): its row weight, or 0 when its
// trajectory is censored, whose return is unknown (see "Censored
// episodes" in the package documentation).
func returnWeight(t *traj.Table, s *traj.Step, j int) float64 {
	if t.IsCensored(s.Traj[j]) {
		return 0
	}
	return weight(s, j)
}
