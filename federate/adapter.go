package federate

// This file is the coordinator's and the site's use of package solve's
// backward pass: the plan (groups, names, betas) is solve.PlanFor, and
// each step is a solve.Round, whose RHS a site forms from its rows and
// whose Solve the coordinator runs on the sites' sums, so that a federated
// job computes the central solve's bits.

import (
	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/solve"
)

// layoutOf returns the job's Gram layout: the map's own blocks.
func layoutOf(j *Job) *solve.Layout {
	l := solve.NewLayout(j.Map.Blocks())
	return &l
}

// settingsOf returns the job's solve settings.
func settingsOf(j *Job) solve.Settings {
	return solve.Settings{Lambda: j.Lambda, C: j.C, Xi: j.Xi, Beta: j.Beta, BetaSet: j.BetaGiven, Fallback: j.Fallback, Stationary: j.Stationary}
}

// planOf returns the job's plan over the sites in order with their
// trajectory counts, as a central solve plans it; the cluster method's
// groups come from the job's clusters as cluster.Assignment orders them.
func planOf(j *Job, order []string, traj []int) (*solve.Plan, error) {
	prob := solve.Problem{Method: j.Method}
	if j.Method == solve.Cluster {
		a := cluster.Assignment{Source: "job " + j.ID, Method: cluster.MethodAssignment}
		for _, c := range j.Clusters {
			a.Clusters = append(a.Clusters, cluster.Cluster(c))
		}
		groups, names, _, err := a.Groups(order, false)
		if err != nil {
			return nil, err
		}
		prob.Groups, prob.GroupNames = groups, names
	}
	return solve.PlanFor(prob, settingsOf(j), order, traj, j.H, j.Map.Dim())
}

// runsOf returns the job's runs for plan, without coefficients: each
// pass's name, groups (site names), penalty and beta.
func runsOf(j *Job, pl *solve.Plan, order []string) []Run {
	var runs []Run
	for _, pass := range pl.Passes {
		r := Run{Name: pass.Name, PEVI: pass.PEVI, Beta: pass.Beta, Steps: make([]*solve.StepCoef, j.H)}
		for _, g := range pass.Groups {
			var names []string
			for _, k := range g {
				names = append(names, order[k])
			}
			r.Groups = append(r.Groups, names)
		}
		runs = append(runs, r)
	}
	return runs
}

// pevi reports whether the job's runs have the PEVI penalty.
func pevi(m solve.Method) bool {
	return m == solve.PEVIPooled || m == solve.PEVIAvg || m == solve.PEVIMin
}
