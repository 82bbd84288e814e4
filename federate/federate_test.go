package federate

// The federated rounds against the central solve: for every method and
// map, with and without disclosure control, the folded policy's w, m,
// Lambda^{-1} and behaviour table equal solve's bit for bit.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// siteChunks returns random rows of K sites for map m, one chunk per site;
// numeric names the sites 10, 2, 33, ... (integers out of lexical order).
func siteChunks(m features.Map, K, H int, perSite []int, numeric bool, seed uint64) ([]string, []*traj.Chunk) {
	rng := rand.New(rand.NewPCG(seed, 3))
	var names []string
	var chunks []*traj.Chunk
	for k := 0; k < K; k++ {
		name := fmt.Sprintf("s%d", k)
		id := int64([]int{10, 2, 33, 4, 5, 60}[k])
		if numeric {
			name = strconv.FormatInt(id, 10)
		}
		names = append(names, name)
		c := &traj.Chunk{Src: traj.Origin{File: name}, W: m.Width()}
		for tr := 0; tr < perSite[k]; tr++ {
			length := H
			if rng.IntN(4) == 0 {
				length = 1 + rng.IntN(H)
			}
			for h := 1; h <= length; h++ {
				if numeric {
					c.SiteInt = append(c.SiteInt, id)
				} else {
					c.SiteStr = append(c.SiteStr, name)
				}
				c.TrajInt = append(c.TrajInt, int64(tr))
				c.Step = append(c.Step, int64(h))
				// Skewed actions and states: rare features at every site.
				c.ActionInt = append(c.ActionInt, int64(min(rng.IntN(m.A+2), m.A-1)))
				c.Reward = append(c.Reward, rng.Float64())
				switch m.Kind {
				case features.Tabular:
					c.State = append(c.State, float64(min(rng.IntN(m.S+3), m.S-1)))
				case features.Indicator:
					c.State = append(c.State, float64(rng.IntN(3)))
				case features.ActionBlock:
					for j := 0; j < m.P; j++ {
						v := rng.Float64()
						if rng.IntN(3) == 0 && j > 0 {
							v = 0
						}
						c.State = append(c.State, v)
					}
				}
			}
		}
		chunks = append(chunks, c)
	}
	return names, chunks
}

func buildTable(t testing.TB, m features.Map, H int, chunks ...*traj.Chunk) *traj.Table {
	t.Helper()
	spec := traj.StateSpec{Columns: m.StateColumns}
	switch m.Kind {
	case features.Tabular:
		spec.Integer, spec.Max = true, m.S
	case features.Indicator:
		spec.Integer, spec.Max = true, 3
	case features.ActionBlock:
		spec.NonzeroSum = true
	}
	b := traj.NewBuilder(traj.Options{State: spec, Actions: m.A, Horizon: H})
	for _, c := range chunks {
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func maps() []features.Map {
	return []features.Map{
		{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}},
		{Kind: features.ActionBlock, A: 3, P: 3, StateColumns: []string{"s1", "s2", "s3"}},
		{Kind: features.Indicator, A: 4, StateColumns: []string{"state"}},
	}
}

// runJob plays every round in memory (messages through Encode and Decode)
// and returns the policy.
func runJob(t testing.TB, j *Job, sites []SiteInput) *solve.Policy {
	t.Helper()
	p, err := Policy(j, playJob(t, j, sites))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFederatedEqualsCentral(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, numeric := range []bool{false, true} {
		for _, m := range maps() {
			names, chunks := siteChunks(m, 4, H, []int{120, 90, 160, 60}, numeric, 17)
			central := buildTable(t, m, H, chunks...)
			for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
				cst := centralStats(t, central, m, dc)
				var sites []SiteInput
				for k, c := range chunks {
					tb := buildTable(t, m, H, c)
					st, err := solve.NewStatsDisclosed(ctx, tb, m, m.Blocks(), 1, dc)
					if err != nil {
						t.Fatal(err)
					}
					sites = append(sites, SiteInput{Stats: st, Site: names[k], Numeric: numeric})
				}
				if dc.Active() {
					// The case must suppress something to test anything.
					n := 0
					for _, site := range sites {
						for h := 1; h <= H; h++ {
							silent, f := site.Stats.Suppressed(h, 0)
							if silent {
								f++
							}
							n += f
						}
					}
					if n == 0 {
						t.Fatalf("%s: nothing suppressed with %+v", m.Kind, dc)
					}
				}
				for _, method := range solve.Methods {
					j := testJob(method, m, H, names, dc)
					prob := jobProblem(t, j, central, fourClusters(names))
					want, err := solve.NewSolver(cst, solve.DefaultSettings).Solve(ctx, prob)
					if err != nil {
						t.Fatal(err)
					}
					got := runJob(t, j, sites)
					if method != solve.Behaviour && !slices.ContainsFunc(want.Runs[0].Steps[H-1].W, func(x float64) bool { return x != 0 }) {
						t.Fatalf("%s %s: w_H is zero: the case tests nothing", m.Kind, method)
					}
					samePolicy(t, fmt.Sprintf("%s %s numeric=%v %+v", m.Kind, method, numeric, dc), want, got)
				}
			}
		}
	}
}

// centralClusters is the cluster problem a central solve builds from
// clusters for the table's sites, as grmdp solve builds it
// (cluster.Assignment.Groups).
func centralClusters(t *testing.T, sites []string, cs []Cluster) solve.Problem {
	t.Helper()
	a := cluster.Assignment{Source: "test"}
	for _, c := range cs {
		a.Clusters = append(a.Clusters, cluster.Cluster{Name: c.Name, Sites: slices.Clone(c.Sites)})
	}
	groups, names, _, err := a.Groups(sites, false)
	if err != nil {
		t.Fatal(err)
	}
	return solve.Problem{Method: solve.Cluster, Groups: groups, GroupNames: names}
}

// samePolicy fails unless the policies agree bit for bit on everything
// that decides: runs, betas, w, m, Lambda^{-1}, groups and behaviour.
func samePolicy(t *testing.T, what string, want, got *solve.Policy) {
	t.Helper()
	bits := func(x []float64) []uint64 {
		out := make([]uint64, len(x))
		for i, v := range x {
			out[i] = math.Float64bits(v)
		}
		return out
	}
	if len(want.Runs) != len(got.Runs) {
		t.Fatalf("%s: %d runs, want %d", what, len(got.Runs), len(want.Runs))
	}
	if math.Float64bits(want.Beta) != math.Float64bits(got.Beta) {
		t.Fatalf("%s: beta %v, want %v", what, got.Beta, want.Beta)
	}
	for r := range want.Runs {
		if want.Runs[r].Group != got.Runs[r].Group || math.Float64bits(want.Runs[r].Beta) != math.Float64bits(got.Runs[r].Beta) {
			t.Fatalf("%s: run %d is %s beta %v, want %s beta %v", what, r, got.Runs[r].Group, got.Runs[r].Beta, want.Runs[r].Group, want.Runs[r].Beta)
		}
		for h := range want.Runs[r].Steps {
			a, b := &want.Runs[r].Steps[h], &got.Runs[r].Steps[h]
			for _, v := range []struct {
				name string
				x, y []float64
			}{{"w", a.W, b.W}, {"m", a.M, b.M}, {"Linv", a.Linv, b.Linv}} {
				if !slices.Equal(bits(v.x), bits(v.y)) {
					t.Fatalf("%s: run %d step %d: %s = %v, want %v", what, r, h+1, v.name, v.y, v.x)
				}
			}
		}
	}
	if len(want.Groups) != len(got.Groups) {
		t.Fatalf("%s: %d groups, want %d", what, len(got.Groups), len(want.Groups))
	}
	for i := range want.Groups {
		w, g := want.Groups[i], got.Groups[i]
		if w.Name != g.Name || !slices.Equal(w.Sites, g.Sites) || w.Trajectories != g.Trajectories {
			t.Fatalf("%s: group %d is %+v, want %+v", what, i, g, w)
		}
	}
	for h := range want.BehaviourAction {
		if !slices.Equal(want.BehaviourAction[h], got.BehaviourAction[h]) {
			t.Fatalf("%s: behaviour table at step %d is %v, want %v", what, h+1, got.BehaviourAction[h], want.BehaviourAction[h])
		}
	}
	if want.Rows != got.Rows {
		t.Fatalf("%s: rows %d, want %d", what, got.Rows, want.Rows)
	}
}
