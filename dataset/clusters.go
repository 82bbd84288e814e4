package dataset

import (
	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/solve"
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
	var w []string
	for _, e := range warns {
		w = append(w, e.Error())
	}
	return solve.Problem{Method: solve.Cluster, Groups: groups, GroupNames: names}, w, nil
}
