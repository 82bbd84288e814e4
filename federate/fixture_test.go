package federate

// Fixtures the tests of a job against the central solve share: the job
// they play, the sites' and the central statistics, and the central
// problem of the job's method.

import (
	"context"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// testJob returns the job of method over the sites names that the tests
// play: map m, H steps, lambda 1, c 5e-4, xi 0.05, the behaviour fallback,
// disclosure control dc and at least 3 sites.
func testJob(method solve.Method, m features.Map, H int, names []string, dc solve.Disclosure) *Job {
	return &Job{FormatVersion: FormatVersion, ID: "test", Method: method, Map: m, H: H, Lambda: 1, C: 5e-4, Xi: 0.05,
		Fallback: solve.FallbackBehaviour, Sites: names, Disclosure: dc, MinSites: 3}
}

// siteInputs returns the sites' inputs: site names[k] holds the
// statistics, under dc, of chunks[k]'s table of H steps (one worker).
func siteInputs(t testing.TB, m features.Map, H int, names []string, chunks []*traj.Chunk, dc solve.Disclosure) []SiteInput {
	t.Helper()
	var sites []SiteInput
	for k, c := range chunks {
		st, err := solve.NewStatsDisclosed(context.Background(), buildTable(t, m, H, c), m, m.Blocks(), 1, dc)
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, SiteInput{Stats: st, Site: names[k]})
	}
	return sites
}

// centralStats returns the statistics, under dc, of the central table of
// every site's rows (two workers).
func centralStats(t testing.TB, central *traj.Table, m features.Map, dc solve.Disclosure) *solve.Stats {
	t.Helper()
	st, err := solve.NewStatsDisclosed(context.Background(), central, m, m.Blocks(), 2, dc)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fourClusters returns the clusters of a cluster job over the four sites
// n: north holds the fourth and the first, south the second and the
// third.
func fourClusters(n []string) []Cluster {
	return []Cluster{{Name: "north", Sites: []string{n[3], n[0]}}, {Name: "south", Sites: []string{n[1], n[2]}}}
}

// jobProblem returns the central problem of j's method; for the cluster
// method it first gives j the clusters.
func jobProblem(t *testing.T, j *Job, central *traj.Table, clusters []Cluster) solve.Problem {
	t.Helper()
	if j.Method != solve.Cluster {
		return solve.Problem{Method: j.Method}
	}
	j.Clusters = clusters
	return centralClusters(t, central.Sites, j.Clusters)
}

// playEvalCentral plays j to its policy p and p's federated evaluation
// res, and evaluates p centrally (want) with sv, the solver of the central
// statistics cst under p's evaluation settings.
func playEvalCentral(t *testing.T, j *Job, sites []SiteInput, cst *solve.Stats) (p *solve.Policy, sv *solve.Solver, want *eval.Report, res *EvalResult) {
	t.Helper()
	s := playJob(t, j, sites)
	p, err := Policy(j, s)
	if err != nil {
		t.Fatal(err)
	}
	settings := evalSettingsOf(p)
	sv = solve.NewSolver(cst, settings)
	want, err = eval.FromData(context.Background(), sv, p, settings, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p, sv, want, playEval(t, j, s, p, sites)
}
