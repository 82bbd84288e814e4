package dataset

import (
	"context"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// ClusterProblem is the cluster method's problem over sites: the cluster
// file path (cut as o says) mapped onto them, with the mapping's warnings.
// A site missing from the file is an error wrapping cluster.ErrMissingSite,
// or with allowSingletons a cluster of its own.
func ClusterProblem(path string, o cluster.Options, allowSingletons bool, sites []string) (solve.Problem, []string, error) {
	a, err := cluster.Load(path, o)
	if err != nil {
		return solve.Problem{}, nil, err
	}
	groups, names, warns, err := a.Groups(sites, allowSingletons)
	if err != nil {
		return solve.Problem{}, nil, err
	}
	return solve.Problem{Method: solve.Cluster, Groups: groups, GroupNames: names}, messages(warns), nil
}

// ClusterCounts maps a onto the sites of the data at paths, reading only
// their site and trajectory columns (o.Columns and o.Workers), and
// returns each site's number of trajectories with the mapping's warnings
// (nothing without paths). A site missing from a is an error wrapping
// cluster.ErrMissingSite, or with allowSingletons a cluster of its own.
func ClusterCounts(ctx context.Context, a *cluster.Assignment, paths []string, o traj.Options, allowSingletons bool) (map[string]int, []string, error) {
	if len(paths) == 0 {
		return nil, nil, nil
	}
	sites, trajectories, err := parquetio.SiteTrajectories(ctx, paths, o)
	if err != nil {
		return nil, nil, err
	}
	_, _, warns, err := a.Groups(sites, allowSingletons)
	if err != nil {
		return nil, nil, err
	}
	counts := map[string]int{}
	for k, s := range sites {
		counts[s] = trajectories[k]
	}
	return counts, messages(warns), nil
}

// messages are the errors' messages.
func messages(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
