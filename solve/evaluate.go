package solve

import (
	"context"
	"fmt"
	"math"

	"github.com/grmdp/grmdp/traj"
)

// Evaluation is a policy's value estimated from data alone by robust
// fitted-Q evaluation: the backward recursion of Algorithm 1 with the
// policy's action in place of the max.
type Evaluation struct {
	// Value is the mean over the data's initial states of V^pi_1 with the
	// row-min over sites and no penalty.
	Value float64
	// LowerBound is the same with the penalty beta phi^T m subtracted: a
	// pessimistic lower bound.
	LowerBound float64
	// Beta is the penalty scale of LowerBound.
	Beta float64
	// Sites holds each site's own (non-robust) value: fitted-Q evaluation
	// on that site's data alone, averaged over its initial states.
	Sites []float64
	// Replicates holds the values of each replicate asked for
	// ([EvaluateOptions].Replicates).
	Replicates []ReplicateValue
}

// SitewiseBeta returns the beta of Algorithm 1 with one group per site
// under the solver's settings.
func (sv *Solver) SitewiseBeta() float64 {
	t := sv.st.Table
	return sv.settings.BetaFor(sv.st.Map.Dim(), t.H, t.Trajectories, singletons(len(t.Sites)))
}

// EvaluatePolicy estimates p's robust value, its pessimistic lower bound
// (with beta, typically [Solver.SitewiseBeta]) and each site's own value
// from the solver's data.
func (sv *Solver) EvaluatePolicy(ctx context.Context, p *Policy, beta float64) (*Evaluation, error) {
	return sv.Evaluate(ctx, p, beta, EvaluateOptions{})
}

// weightedMeanV1 returns the mean of Vhat_1 over the run's initial states,
// each step-1 row counted with its weight (run.Rows is the weighted count;
// rows outside the run hold 0). Bootstrap replicates and compressed tables
// carry row weights.
func weightedMeanV1(run *Run, s1 *traj.Step) float64 {
	if s1.Weight == nil {
		return meanV1(run)
	}
	if run.Rows == 0 {
		return math.NaN()
	}
	sum := 0.0
	for j, v := range run.V1 {
		sum += s1.Weight[j] * v
	}
	return sum / run.Rows
}

// siteSummedMeanV1 is [weightedMeanV1] of a run over every site with its
// sums formed site by site and added in site order, as a federated
// evaluation adds the sites' sums ([Solver.SiteValues]), so that the two
// agree bit for bit.
func siteSummedMeanV1(run *Run, s1 *traj.Step) float64 {
	K := len(s1.SiteStart) - 1
	sum, rows := 0.0, 0.0
	for k := 0; k < K; k++ {
		sk := 0.0
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			if s1.Weight == nil {
				sk += run.V1[j]
			} else {
				sk += s1.Weight[j] * run.V1[j]
			}
		}
		sum += sk
		rows += runRows(s1, onlySite(K, k))
	}
	if rows == 0 {
		return math.NaN()
	}
	return sum / rows
}

// DeltaCell is Delta_{h,m}: the largest distance between a site's own
// regression and its cluster's, at the cluster solve's Vhat_{h+1}.
type DeltaCell struct {
	Step    int     `json:"step"`
	Cluster string  `json:"cluster"`
	Delta   float64 `json:"delta"`
}

// Delta solves the clustering prob (Algorithm 1 over clusters) and returns
// Delta_{h,m} = max_{k in C_m} ||nu_h^k - nu_h^m||_2 for every step and
// cluster, with the pass (its Vhat at every step's rows, for permutation
// tests).
func (sv *Solver) Delta(ctx context.Context, prob Problem) ([]DeltaCell, *Run, error) {
	t := sv.st.Table
	groups := prob.Groups
	if len(groups) == 0 {
		groups = [][]int{make([]int, len(t.Sites))}
		for k := range groups[0] {
			groups[0][k] = k
		}
	}
	names := prob.GroupNames
	if names == nil {
		for i := range groups {
			names = append(names, fmt.Sprintf("c%d", i+1))
		}
	}
	beta := sv.settings.BetaFor(sv.st.Map.Dim(), t.H, t.Trajectories, groups)
	run, err := sv.pass(ctx, passSpec{groups: groups, kind: featurewise, beta: beta, siteNu: true, keepV: true})
	if err != nil {
		return nil, nil, err
	}
	var out []DeltaCell
	for h := 1; h <= t.H; h++ {
		for gi, x := range run.Steps[h-1].Delta {
			out = append(out, DeltaCell{Step: h, Cluster: names[gi], Delta: x})
		}
	}
	return out, run, nil
}

// Distance is the Euclidean norm of x - y, summed in index order: the
// distance Delta_{h,m} takes between a site's regression and its
// cluster's. Every computation of Delta uses it, so that their bits agree.
func Distance(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		d := x[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s)
}
