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
// opts.Permutations > 0, a permutation p-value per (step, cluster): the
// cluster's trajectories are reassigned to its sites at random, keeping
// the sites' sizes, and Delta_{h,m} recomputed at the same Vhat_{h+1}. A
// small p-value says the sites differ more than reshuffling would make
// them; a large one that their differences look like noise.
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
	for gi, members := range groups {
		if len(members) < 2 {
			continue
		}
		B := opts.Permutations
		// exceed[b][h-1] says whether permutation b reached the observed
		// Delta at step h.
		exceed := make([][]bool, B)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(workers.Or(opts.Workers))
		for b := 0; b < B; b++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				rng := rand.New(rand.NewPCG(opts.Seed^0x5851f42d4c957f2d, uint64(gi)<<32|uint64(b)))
				var pool []int32
				for _, k := range members {
					for o := off[k]; o < off[k+1]; o++ {
						pool = append(pool, int32(o))
					}
				}
				rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
				// newSite[ordinal] = position in members.
				newSite := map[int32]int{}
				pos := 0
				for mi, k := range members {
					for i := 0; i < t.Trajectories[k]; i++ {
						newSite[pool[pos]] = mi
						pos++
					}
				}
				exceed[b] = make([]bool, t.H)
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
					exceed[b][h-1] = worst >= cells[(h-1)*G+gi].Delta
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, 0, 0, err
		}
		for h := 1; h <= t.H; h++ {
			n := 0
			for b := 0; b < B; b++ {
				if exceed[b][h-1] {
					n++
				}
			}
			cells[(h-1)*G+gi].PValue = float64(1+n) / float64(1+B)
		}
	}
	return cells, sum, yardstick, nil
}

func dist(x, y []float64) float64 {
	s := 0.0
	for i := range x {
		d := x[i] - y[i]
		s += d * d
	}
	return math.Sqrt(s)
}
