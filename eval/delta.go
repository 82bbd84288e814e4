package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
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
	t := sv.Stats().Table
	groups := clustersOrAll(prob.Groups, len(t.Sites))
	cells = make([]DeltaValue, len(raw))
	for i, c := range raw {
		cells[i] = DeltaValue{Step: c.Step, Cluster: c.Cluster, Delta: c.Delta, PValue: math.NaN()}
	}
	sum = sumOfWorst(cells, t.H, len(groups))
	yardstick = deltaYardstick(groups, t.Trajectories)
	// Permutations reassign trajectories; a weighted (compressed) table has
	// no trajectories to reassign, so its p-values stay NaN.
	if opts.Permutations <= 0 || isWeighted(t) || !anyTestable(groups) {
		return cells, sum, yardstick, nil
	}
	dp := &deltaPermuter{sv: sv, st: sv.Stats(), run: run, groups: groups, off: siteOffsets(t.Trajectories)}
	stat, err := dp.statistics(ctx, opts, len(cells))
	if err != nil {
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

// clustersOrAll returns the clusters, or, if there are none, one cluster
// of all nSites sites.
func clustersOrAll(groups [][]int, nSites int) [][]int {
	if len(groups) > 0 {
		return groups
	}
	all := make([]int, nSites)
	for k := range all {
		all[k] = k
	}
	return [][]int{all}
}

// sumOfWorst returns the sum over the H steps of Delta_h, the largest
// Delta_{h,m} over the G clusters (cells in step-major order), floored at 0.
func sumOfWorst(cells []DeltaValue, H, G int) float64 {
	sum := 0.0
	for h := 1; h <= H; h++ {
		worst := 0.0
		for gi := 0; gi < G; gi++ {
			worst = max(worst, cells[(h-1)*G+gi].Delta)
		}
		sum += worst
	}
	return sum
}

// deltaYardstick returns the paper's yardstick 1/sqrt(n_min) -
// 1/sqrt(n_min,pool): the smallest site's and the smallest cluster's
// trajectory counts.
func deltaYardstick(groups [][]int, trajectories []int) float64 {
	nmin, nminPool := math.Inf(1), math.Inf(1)
	for _, g := range groups {
		n := 0
		for _, k := range g {
			n += trajectories[k]
			nmin = min(nmin, float64(trajectories[k]))
		}
		nminPool = min(nminPool, float64(n))
	}
	return 1/math.Sqrt(nmin) - 1/math.Sqrt(nminPool)
}

// isWeighted reports whether any step of the table carries row weights.
func isWeighted(t *traj.Table) bool {
	for h := range t.Steps {
		if t.Steps[h].Weight != nil {
			return true
		}
	}
	return false
}

// anyTestable reports whether some cluster has two sites or more, so that
// reshuffling its trajectories among its sites means something.
func anyTestable(groups [][]int) bool {
	for _, members := range groups {
		if len(members) >= 2 {
			return true
		}
	}
	return false
}

// siteOffsets returns off with site k's trajectory ordinals off[k] ..
// off[k+1]-1.
func siteOffsets(trajectories []int) []int {
	off := make([]int, len(trajectories)+1)
	for k, n := range trajectories {
		off[k+1] = off[k] + n
	}
	return off
}

// deltaPermuter recomputes Delta_{h,m} with each cluster's trajectories
// reassigned at random to its sites.
type deltaPermuter struct {
	sv     *solve.Solver
	st     *solve.Stats
	run    *solve.Run
	groups [][]int
	off    []int // site k's trajectory ordinals are off[k] .. off[k+1]-1
}

// statistics returns stat[b][(h-1)*G+gi], Delta_{h,m} under permutation b
// (NaN for clusters of one site), for opts.Permutations permutations, n
// cells each, computed on opts.Workers workers. The permutations advance
// in lockstep, in batches whose assignments and sums fit permBatchBytes:
// each (cluster, step) task reads the step's rows once for every
// permutation of the batch (see clusterDeltas). Progress counts
// permutation-steps.
func (dp *deltaPermuter) statistics(ctx context.Context, opts Options, n int) ([][]float64, error) {
	B := opts.Permutations
	t, st := dp.st.Table, dp.st
	H, G := t.H, len(dp.groups)
	stat := make([][]float64, B)
	for b := range stat {
		stat[b] = make([]float64, n)
		for i := range stat[b] {
			stat[b][i] = math.NaN()
		}
	}
	nw := workers.Or(opts.Workers)
	progress := progressOf(opts.Progress)
	progress.SetTotal(int64(B) * int64(H))
	ntraj := dp.off[len(dp.off)-1]
	most := 0
	for _, members := range dp.groups {
		most = max(most, len(members))
	}
	per := int64(4*ntraj) + int64(nw)*int64(8*most*(st.Layout.Size()+st.Map.Dim()))
	// At most permBatch permutations a batch: their sums stay in cache.
	size := int(max(1, min(int64(B), permBatch, permBatchBytes/per)))
	for lo := 0; lo < B; lo += size {
		hi := min(B, lo+size)
		nb := hi - lo
		// newSite[ordinal*nb+b-lo]: the trajectory's new site under
		// permutation b (its position in its cluster's members), drawn
		// from b's own stream, so it does not depend on the workers; a
		// trajectory's sites under the batch's permutations side by side.
		newSite := make([]int32, ntraj*nb)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(nw)
		for b := lo; b < hi; b++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				rng := rand.New(rand.NewPCG(opts.Seed^0x5851f42d4c957f2d, uint64(b)))
				ns := make([]int32, ntraj)
				for _, members := range dp.groups {
					if len(members) >= 2 {
						dp.reassign(rng, members, ns)
					}
				}
				for o, mi := range ns {
					newSite[o*nb+b-lo] = mi
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		g, gctx = errgroup.WithContext(ctx)
		g.SetLimit(nw)
		for h := 1; h <= H; h++ {
			g.Go(func() error {
				for gi, members := range dp.groups {
					if err := gctx.Err(); err != nil {
						return err
					}
					if len(members) < 2 {
						continue
					}
					worst, err := dp.clusterDeltas(h, gi, members, newSite, nb)
					if err != nil {
						return err
					}
					for bi, w := range worst {
						stat[lo+bi][(h-1)*G+gi] = w
					}
				}
				progress.Add(int64(hi - lo))
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	return stat, nil
}

// permBatchBytes bounds the memory of one batch of permutations: their
// assignments of trajectories to sites and the sums of the tasks in
// flight (a variable for tests), permBatch the number of permutations.
var permBatchBytes int64 = 128 << 20

const permBatch = 32

// reassign shuffles the trajectories of the cluster's members and deals
// them back out keeping each site's size, recording in newSite each
// trajectory's new site (its position in members).
func (dp *deltaPermuter) reassign(rng *rand.Rand, members []int, newSite []int32) {
	var pool []int32
	for _, k := range members {
		for o := dp.off[k]; o < dp.off[k+1]; o++ {
			pool = append(pool, int32(o))
		}
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	pos := 0
	for mi, k := range members {
		for i := 0; i < dp.st.Table.Trajectories[k]; i++ {
			newSite[pool[pos]] = int32(mi)
			pos++
		}
	}
}

// clusterDeltas returns Delta_{h,m} of cluster gi at step h under each
// of nb permutations (newSite[ordinal*nb+bi] the trajectory's new site
// under permutation bi, its position in members): for each, the largest distance from the
// cluster's pooled nu to a site's own fit at the same Vhat_{h+1}. The
// cluster's rows are read once, members in order and each site's rows in
// order, and each row adds to the Gram and right-hand side of its new
// site under every permutation, so each site's sums run over its rows in
// row order, as solve sums a site's Gram and right-hand side
// (the same bits; the table has no row weights: see Delta).
func (dp *deltaPermuter) clusterDeltas(h, gi int, members []int, newSite []int32, nb int) ([]float64, error) {
	t, st := dp.st.Table, dp.st
	m := &st.Map
	bl := &st.Layout.Blocks
	W := t.W
	d, size := m.Dim(), st.Layout.Size()
	M := len(members)
	step := &t.Steps[h-1]
	var vnext []float64
	if h < t.H {
		vnext = dp.run.V[h]
	}
	stride := size + d
	acc := make([]float64, nb*M*stride)
	count := make([]float64, nb*M)
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	pos, prod := make([]int, 0, m.MaxNonzeros()*m.MaxNonzeros()), make([]float64, 0, m.MaxNonzeros()*m.MaxNonzeros())
	for _, k := range members {
		for j := int(step.SiteStart[k]); j < int(step.SiteStart[k+1]); j++ {
			nz := m.Phi(step.State[j*W:(j+1)*W], int(step.Action[j]), idx, val)
			pos, prod = pos[:0], prod[:0]
			for x := 0; x < nz; x++ {
				bx, ix := bl.Of[idx[x]], int(bl.Pos[idx[x]])
				for y := 0; y < nz; y++ {
					if bl.Of[idx[y]] != bx {
						return nil, fmt.Errorf("eval: a feature vector spans two blocks")
					}
					if iy := int(bl.Pos[idx[y]]); iy <= ix {
						pos = append(pos, st.Layout.Off[bx]+ix*(ix+1)/2+iy)
						prod = append(prod, val[x]*val[y])
					}
				}
			}
			y := step.Reward[j]
			if nx := step.Next[j]; nx >= 0 && vnext != nil {
				y += vnext[nx]
			}
			o := int(step.Traj[j])
			for bi, mi := range newSite[o*nb : (o+1)*nb] {
				c := bi*M + int(mi)
				count[c]++
				a := acc[c*stride : (c+1)*stride]
				for q, at := range pos {
					a[at] += prod[q]
				}
				r := a[size:]
				for x, i := range idx[:nz] {
					r[i] += val[x] * y
				}
			}
		}
	}
	nu := dp.run.Steps[h-1].Nu[gi]
	out := make([]float64, nb)
	x := make([]float64, d)
	for bi := range out {
		worst := 0.0
		for mi := 0; mi < M; mi++ {
			c := bi*M + mi
			a := acc[c*stride : (c+1)*stride]
			gram := solve.Gram{N: count[c], Packed: a[:size]}
			f, err := solve.NewFactor(&st.Layout, []*solve.Gram{&gram}, dp.sv.Settings().Lambda, false)
			if err != nil {
				return nil, err
			}
			f.SolveTo(x, a[size:])
			worst = max(worst, solve.Distance(x, nu))
		}
		out[bi] = worst
	}
	return out, nil
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
