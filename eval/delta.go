package eval

import (
	"context"
	"math"
	"math/rand/v2"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/solve"
)

// Delta computes Delta_{h,m} for the clustering prob, the sum over steps of
// Delta_h = max_m Delta_{h,m}, the paper's yardstick, and, with
// opts.Permutations > 0, a permutation p-value per (step, cluster),
// adjusted for multiplicity: each permutation reassigns every cluster's
// trajectories to its sites at random, keeping the sites' sizes, and
// recomputes every Delta_{h,m} at the same Vhat_{h+1}; the p-values are
// the max-statistic ones of [maxStatPValues] over all (step, cluster)
// cells, so p < 0.05 at any cell holds the family-wise error at 0.05. A
// small p-value says the sites differ more than reshuffling would make
// them; a large one that their differences look like noise. The smallest
// attainable p-value is 1/(1+B).
func Delta(ctx context.Context, sv *solve.Solver, prob solve.Problem, opts Options) (cells []DeltaValue, sum, yardstick float64, err error) {
	raw, run, err := sv.Delta(ctx, prob)
	if err != nil {
		return nil, 0, 0, err
	}
	st := sv.Stats()
	t := st.Table
	groups := prob.Groups
	if len(groups) == 0 {
		all := make([]int, len(t.Sites))
		for k := range all {
			all[k] = k
		}
		groups = [][]int{all}
	}
	G := len(groups)
	cells = make([]DeltaValue, len(raw))
	for i, c := range raw {
		cells[i] = DeltaValue{Step: c.Step, Cluster: c.Cluster, Delta: c.Delta, PValue: math.NaN()}
	}
	for h := 1; h <= t.H; h++ {
		worst := 0.0
		for gi := 0; gi < G; gi++ {
			worst = max(worst, cells[(h-1)*G+gi].Delta)
		}
		sum += worst
	}
	nmin, nminPool := math.Inf(1), math.Inf(1)
	for _, g := range groups {
		n := 0
		for _, k := range g {
			n += t.Trajectories[k]
			nmin = min(nmin, float64(t.Trajectories[k]))
		}
		nminPool = min(nminPool, float64(n))
	}
	yardstick = 1/math.Sqrt(nmin) - 1/math.Sqrt(nminPool)
	// Permutations reassign trajectories; a weighted (compressed) table has
	// no trajectories to reassign, so its p-values stay NaN.
	weighted := false
	for h := range t.Steps {
		weighted = weighted || t.Steps[h].Weight != nil
	}
	if opts.Permutations <= 0 || weighted {
		return cells, sum, yardstick, nil
	}
	// Trajectory ordinals of site k are off[k] .. off[k]+N_k-1.
	off := make([]int, len(t.Sites)+1)
	for k, n := range t.Trajectories {
		off[k+1] = off[k] + n
	}
	testable := false
	for _, members := range groups {
		testable = testable || len(members) >= 2
	}
	if !testable {
		return cells, sum, yardstick, nil
	}
	B := opts.Permutations
	// stat[b][(h-1)*G+gi] is Delta_{h,m} under permutation b (NaN for
	// clusters of one site).
	stat := make([][]float64, B)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(opts.Workers))
	progress := progressOf(opts.Progress)
	progress.SetTotal(int64(B))
	for b := 0; b < B; b++ {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			rng := rand.New(rand.NewPCG(opts.Seed^0x5851f42d4c957f2d, uint64(b)))
			out := make([]float64, len(cells))
			for i := range out {
				out[i] = math.NaN()
			}
			// newSite[ordinal] = position of the trajectory's new site in
			// its cluster's members.
			newSite := make([]int, off[len(t.Sites)])
			for gi, members := range groups {
				if len(members) < 2 {
					continue
				}
				var pool []int32
				for _, k := range members {
					for o := off[k]; o < off[k+1]; o++ {
						pool = append(pool, int32(o))
					}
				}
				rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
				pos := 0
				for mi, k := range members {
					for i := 0; i < t.Trajectories[k]; i++ {
						newSite[pool[pos]] = mi
						pos++
					}
				}
				for h := 1; h <= t.H; h++ {
					step := &t.Steps[h-1]
					rows := make([][]int, len(members))
					for _, k := range members {
						for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
							mi := newSite[step.Traj[j]]
							rows[mi] = append(rows[mi], j)
						}
					}
					var vnext []float64
					if h < t.H {
						vnext = run.V[h]
					}
					nu := run.Steps[h-1].Nu[gi]
					worst := 0.0
					for mi := range members {
						gram := st.GramRows(h, rows[mi])
						f, err := solve.NewFactor(&st.Layout, []*solve.Gram{&gram}, sv.Lambda(), false)
						if err != nil {
							return err
						}
						x := make([]float64, len(nu))
						f.SolveTo(x, st.RHSRows(h, rows[mi], vnext))
						worst = max(worst, dist(x, nu))
					}
					out[(h-1)*G+gi] = worst
				}
			}
			stat[b] = out
			progress.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, 0, err
	}
	observed := make([]float64, len(cells))
	for i, c := range cells {
		observed[i] = c.Delta
		if math.IsNaN(stat[0][i]) {
			observed[i] = math.NaN()
		}
	}
	for i, p := range maxStatPValues(observed, stat) {
		cells[i].PValue = p
	}
	return cells, sum, yardstick, nil
}

// maxStatPValues returns the max-statistic permutation p-values of the
// observed statistics (NaN: not tested) given their values under B
// permutations, perm[b][i]. Each statistic is standardised by its
// permutation mean and standard deviation, z = (T - mean) / sd (a
// statistic constant under permutation gives z = 0 where it equals its
// constant, +-Inf elsewhere); the p-value of cell i is
// (1 + #{b : max_j z_j^b >= z_i}) / (1 + B). It controls the family-wise
// error over all tested cells (Westfall and Young's single-step maxT).
func maxStatPValues(observed []float64, perm [][]float64) []float64 {
	n, B := len(observed), len(perm)
	mean, sd := make([]float64, n), make([]float64, n)
	for i := range observed {
		for b := range perm {
			mean[i] += perm[b][i]
		}
		mean[i] /= float64(B)
		for b := range perm {
			d := perm[b][i] - mean[i]
			sd[i] += d * d
		}
		sd[i] = math.Sqrt(sd[i] / float64(max(1, B-1)))
	}
	z := func(x float64, i int) float64 {
		d := x - mean[i]
		if sd[i] > 0 {
			return d / sd[i]
		}
		switch {
		case d > 0:
			return math.Inf(1)
		case d < 0:
			return math.Inf(-1)
		}
		return 0
	}
	maxes := make([]float64, B)
	for b := range perm {
		maxes[b] = math.Inf(-1)
		for i := range observed {
			if !math.IsNaN(observed[i]) {
				maxes[b] = max(maxes[b], z(perm[b][i], i))
			}
		}
	}
	out := make([]float64, n)
	for i := range observed {
		if math.IsNaN(observed[i]) {
			out[i] = math.NaN()
			continue
		}
		zi := z(observed[i], i)
		count := 0
		for _, m := range maxes {
			if m >= zi {
				count++
			}
		}
		out[i] = float64(1+count) / float64(1+B)
	}
	return out
}

func dist(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		d := x[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s)
}
