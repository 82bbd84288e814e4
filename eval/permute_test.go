package eval

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// The permutations in lockstep give every permutation's Delta_{h,m} bit
// for bit as the reference below (each permutation on its own: its rows
// listed per new site, then each site's Gram and right-hand side summed
// over them in row order), for a tabular and an
// action-block map, two clusters (one of a single site), with 1 and 3
// workers and with batches of one permutation.
func TestPermutationsLockstep(t *testing.T) {
	ctx := context.Background()
	for _, m := range []features.Map{testMaps()[0], testMaps()[1]} {
		t.Run(m.Kind.String(), func(t *testing.T) {
			tb := randomTable(t, m, 4, 3, []int{15, 25, 10, 12}, 7)
			s := solve.DefaultSettings
			sv := newSolver(t, tb, m, s)
			prob := solve.Problem{Method: solve.Cluster, Groups: [][]int{{2, 0, 1}, {3}}}
			_, run, err := sv.Delta(ctx, prob)
			if err != nil {
				t.Fatal(err)
			}
			dp := &deltaPermuter{sv: sv, st: sv.Stats(), run: run, groups: prob.Groups, off: siteOffsets(tb.Trajectories)}
			const B, seed = 9, 5
			n := tb.H * len(prob.Groups)
			for _, w := range []int{1, 3, -1} {
				if w < 0 {
					// Batches of one permutation.
					defer func(b int64) { permBatchBytes = b }(permBatchBytes)
					permBatchBytes, w = 1, 2
				}
				got, err := dp.statistics(ctx, Options{Permutations: B, Seed: seed, Workers: w}, n)
				if err != nil {
					t.Fatal(err)
				}
				for b := 0; b < B; b++ {
					want, err := dp.refPermutation(seed, b, n)
					if err != nil {
						t.Fatal(err)
					}
					for i := range want {
						if math.Float64bits(got[b][i]) != math.Float64bits(want[i]) {
							t.Errorf("workers %d, permutation %d, cell %d: %v, reference %v", w, b, i, got[b][i], want[i])
						}
					}
				}
			}
		})
	}
}

// permutation returns the n cells' Delta_{h,m} under permutation b, drawn
// from its own stream of seed so that it does not depend on the workers.
func (dp *deltaPermuter) refPermutation(seed uint64, b, n int) ([]float64, error) {
	rng := rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, uint64(b)))
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	// newSite[ordinal] = position of the trajectory's new site in its
	// cluster's members.
	newSite := make([]int32, dp.off[len(dp.off)-1])
	H, G := dp.st.Table.H, len(dp.groups)
	for gi, members := range dp.groups {
		if len(members) < 2 {
			continue
		}
		dp.reassign(rng, members, newSite)
		for h := 1; h <= H; h++ {
			worst, err := dp.refClusterDelta(h, gi, members, newSite)
			if err != nil {
				return nil, err
			}
			out[(h-1)*G+gi] = worst
		}
	}
	return out, nil
}

// clusterDelta returns Delta_{h,m} of cluster gi at step h with the
// trajectories at the sites newSite gives them: the largest distance from
// the cluster's pooled nu to a site's own fit at the same Vhat_{h+1}.
func (dp *deltaPermuter) refClusterDelta(h, gi int, members []int, newSite []int32) (float64, error) {
	t, st := dp.st.Table, dp.st
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
		vnext = dp.run.V[h]
	}
	nu := dp.run.Steps[h-1].Nu[gi]
	worst := 0.0
	for mi := range members {
		gram := refGram(st, h, rows[mi])
		f, err := solve.NewFactor(&st.Layout, []*solve.Gram{&gram}, dp.sv.Settings().Lambda, false)
		if err != nil {
			return 0, err
		}
		x := make([]float64, len(nu))
		f.SolveTo(x, refRHS(st, h, rows[mi], vnext))
		worst = max(worst, solve.Distance(x, nu))
	}
	return worst, nil
}

// refGram sums w phi phi^T over the given rows of step h, in order, into
// the packed lower triangles of st's layout: the reference for a site's
// Gram, computed from the table's rows.
func refGram(st *solve.Stats, h int, rows []int) solve.Gram {
	s, m, l := &st.Table.Steps[h-1], &st.Map, &st.Layout
	W := st.Table.W
	g := solve.Gram{Packed: make([]float64, l.Size())}
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	for _, j := range rows {
		wt := 1.0
		if s.Weight != nil {
			wt = s.Weight[j]
		}
		g.N += wt
		nz := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		for x := 0; x < nz; x++ {
			bx, px := l.Blocks.Of[idx[x]], int(l.Blocks.Pos[idx[x]])
			for y := 0; y < nz; y++ {
				if py := int(l.Blocks.Pos[idx[y]]); py <= px {
					g.Packed[l.Off[bx]+px*(px+1)/2+py] += wt * val[x] * val[y]
				}
			}
		}
	}
	return g
}

// refRHS sums w phi (r + V(s')) over the given rows of step h, in order,
// with vnext the values at step h+1's rows (nil for zero).
func refRHS(st *solve.Stats, h int, rows []int, vnext []float64) []float64 {
	s, m := &st.Table.Steps[h-1], &st.Map
	W := st.Table.W
	out := make([]float64, m.Dim())
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	for _, j := range rows {
		y := s.Reward[j]
		if nx := s.Next[j]; nx >= 0 && vnext != nil {
			y += vnext[nx]
		}
		if s.Weight != nil {
			y *= s.Weight[j]
		}
		nz := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		for x := 0; x < nz; x++ {
			out[idx[x]] += val[x] * y
		}
	}
	return out
}
