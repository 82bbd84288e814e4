package eval

import "github.com/grmdp/grmdp/traj"

// Censored episodes (traj.Table.Censored: episodes that --nulls truncate
// cut before a NULL) have an unknown return. Every estimator of a return
// here excludes them, and the report counts them per site
// (SiteValue.Censored):
//
//   - observed care averages the returns of the uncensored episodes only;
//   - PDWIS and WDR sum over the uncensored episodes only (their weights
//     and normalisers);
//   - fitted-Q keeps a censored episode's rows whose successors were
//     observed: they are transitions like any other. The last kept row,
//     whose successor is unknown, has weight 0 in the table, so it enters
//     no regression (it is not a terminal with value 0).
//
// Exclusion is unbiased when censoring is independent of the outcome given
// what the estimator conditions on: missing completely at random for
// observed care and the importance-sampling estimators, missing at random
// given the state and action for fitted-Q's regressions. A NULL that
// depends on the patient's course (a lab not drawn because the patient
// died or left) breaks that assumption, and no count of censored episodes
// can show it; the count says how much of the data the assumption covers.

// returnWeight is the weight of row j of step s in an estimate of a
// return: its row weight, or 0 when its trajectory is censored.
func returnWeight(t *traj.Table, s *traj.Step, j int) float64 {
	if t.IsCensored(s.Traj[j]) {
		return 0
	}
	return weight(s, j)
}
