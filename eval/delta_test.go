package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// tabularTable draws a tabular data set with S states, A actions and
// horizon H: sizes[k] trajectories at site k, uniform states and actions,
// episodes that may end early, and rewards mean[k] + U[-spread, spread].
// With equal means every site follows the same process (exchangeable).
func tabularTable(t testing.TB, S, A, H int, sizes []int, mean []float64, spread float64, seed uint64) *traj.Table {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	m := features.Map{Kind: features.Tabular, S: S, A: A, StateColumns: []string{"state"}}
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: A, Horizon: H})
	for k, n := range sizes {
		c := &traj.Chunk{Src: traj.Origin{File: fmt.Sprintf("site%d", k)}, W: 1}
		for tr := 0; tr < n; tr++ {
			length := H
			if rng.IntN(5) == 0 {
				length = 1 + rng.IntN(H)
			}
			for h := 1; h <= length; h++ {
				c.SiteStr = append(c.SiteStr, fmt.Sprintf("s%d", k))
				c.TrajInt = append(c.TrajInt, int64(tr))
				c.Step = append(c.Step, int64(h))
				c.ActionInt = append(c.ActionInt, int64(rng.IntN(A)))
				c.Reward = append(c.Reward, mean[k]+spread*(2*rng.Float64()-1))
				c.State = append(c.State, float64(rng.IntN(S)))
			}
		}
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

// identicalSites returns K sites holding the same rows: same trajectories,
// states, actions, rewards and next states.
func identicalSites(t testing.TB, m features.Map, K, H, n int, seed uint64) *traj.Table {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	proto := &traj.Chunk{W: 1}
	for tr := 0; tr < n; tr++ {
		length := H
		if rng.IntN(4) == 0 {
			length = 1 + rng.IntN(H)
		}
		for h := 1; h <= length; h++ {
			proto.TrajInt = append(proto.TrajInt, int64(tr))
			proto.Step = append(proto.Step, int64(h))
			proto.ActionInt = append(proto.ActionInt, int64(rng.IntN(m.A)))
			proto.Reward = append(proto.Reward, rng.Float64())
			proto.State = append(proto.State, float64(rng.IntN(m.S)))
		}
	}
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: m.A, Horizon: H})
	for k := 0; k < K; k++ {
		c := *proto
		c.Src = traj.Origin{File: fmt.Sprintf("site%d", k)}
		c.SiteStr = make([]string, proto.Len())
		for i := range c.SiteStr {
			c.SiteStr[i] = fmt.Sprintf("s%d", k)
		}
		if err := b.Add(&c); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// handDelta computes Delta_h for K identical tabular sites pooled into one
// cluster, with beta = 0, coordinate by coordinate: with n_i the site's
// count and b_i its sum of r + Vhat_{h+1}(s') for coordinate i at step h,
//
//	nu_k,i = b_i / (n_i + lambda),   nu_m,i = K b_i / (K n_i + lambda),
//
// and Vhat_h(s) = max_a clip(nu_m,(s,a), 0, H-h+1) from the pooled fit.
// It also returns ||nu_m||_2 per step.
func handDelta(tb *traj.Table, m features.Map, K int, lambda float64) (delta, norm []float64) {
	H, d := tb.H, m.Dim()
	out := make([]float64, H)
	norm = make([]float64, H)
	var vnext []float64 // Vhat_{h+1} per state
	for h := H; h >= 1; h-- {
		st := &tb.Steps[h-1]
		n, b := make([]float64, d), make([]float64, d)
		for j := int(st.SiteStart[0]); j < int(st.SiteStart[1]); j++ {
			i := int(st.State[j])*m.A + int(st.Action[j])
			y := st.Reward[j]
			if nx := st.Next[j]; nx >= 0 {
				y += vnext[int(tb.Steps[h].State[nx])]
			}
			n[i]++
			b[i] += y
		}
		numK := float64(K)
		sq := 0.0
		num := make([]float64, d)
		for i := 0; i < d; i++ {
			site := b[i] / (n[i] + lambda)
			num[i] = numK * b[i] / (numK*n[i] + lambda)
			sq += (site - num[i]) * (site - num[i])
			norm[h-1] += num[i] * num[i]
		}
		norm[h-1] = math.Sqrt(norm[h-1])
		out[h-1] = math.Sqrt(sq)
		vnext = make([]float64, m.S)
		for s := 0; s < m.S; s++ {
			for a := 0; a < m.A; a++ {
				vnext[s] = max(vnext[s], max(0, min(num[s*m.A+a], float64(H-h+1))))
			}
		}
	}
	return out, norm
}

// Delta vanishes when the sites of a cluster share their data, up to the
// ridge: with lambda tiny it is below 1e-6, with lambda = 1 it is small,
// positive (below a quarter of ||nu_m||: the relative gap is
// lambda (K-1) / (K (n_i + lambda)) per coordinate) and equals the hand
// computation for tabular features.
func TestDeltaIdenticalSites(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, S: 3, A: 2, StateColumns: []string{"state"}}
	const K, H, N = 3, 4, 40
	tb := identicalSites(t, m, K, H, N, 17)
	for _, lambda := range []float64{1e-9, 1} {
		t.Run(fmt.Sprintf("lambda=%g", lambda), func(t *testing.T) {
			s := solve.DefaultSettings
			s.Lambda = lambda
			s.Beta, s.BetaSet = 0, true
			sv := newSolver(t, tb, m, s)
			prob := solve.Problem{Method: solve.Cluster, Groups: [][]int{{0, 1, 2}}, GroupNames: []string{"all3"}}
			cells, sum, yard, err := Delta(ctx, sv, prob, Options{Permutations: 19, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) != H {
				t.Fatalf("got %d cells, want %d (one cluster, H steps)", len(cells), H)
			}
			want, norm := handDelta(tb, m, K, lambda)
			wantSum := 0.0
			for h, c := range cells {
				if c.Step != h+1 || c.Cluster != "all3" {
					t.Errorf("cell %d: got step %d cluster %q, want step %d cluster all3", h, c.Step, c.Cluster, h+1)
				}
				if lambda < 1e-6 && !(c.Delta < 1e-6) {
					t.Errorf("step %d: Delta = %g, want < 1e-6 for shared data", c.Step, c.Delta)
				}
				if lambda == 1 && !(c.Delta > 1e-3 && c.Delta < norm[h]/4) {
					t.Errorf("step %d: Delta = %g, want small but positive (||nu_m|| = %g)", c.Step, c.Delta, norm[h])
				}
				if !near(c.Delta, want[h], 1e-10) {
					t.Errorf("step %d: Delta = %.15g, hand computation %.15g", c.Step, c.Delta, want[h])
				}
				// Every reshuffle of identical sites makes them differ: the
				// observed Delta is the smallest possible.
				if c.PValue != 1 {
					t.Errorf("step %d: p-value %v, want 1 for identical sites", c.Step, c.PValue)
				}
				wantSum += want[h]
			}
			if !near(sum, wantSum, 1e-10) {
				t.Errorf("DeltaSum: got %v, want %v", sum, wantSum)
			}
			if wantYard := 1/math.Sqrt(N) - 1/math.Sqrt(K*N); !near(yard, wantYard, 1e-14) {
				t.Errorf("yardstick: got %v, want %v", yard, wantYard)
			}
		})
	}
}

// denseDelta computes Delta_{h,m} from the definition: the cluster-level
// Algorithm 1 (pooled ridge per cluster, row-min, row-max penalty, clip,
// max over actions) gives Vhat_{h+1}; at that V each site's own ridge nu
// and its cluster's pooled nu are compared in L2. Result [h-1][m].
func denseDelta(tb *traj.Table, m *features.Map, groups [][]int, lambda, beta float64) [][]float64 {
	H, d := tb.H, m.Dim()
	out := make([][]float64, H)
	var vnext []float64
	for h := H; h >= 1; h-- {
		w, mm := make([]float64, d), make([]float64, d)
		for i := range w {
			w[i], mm[i] = math.Inf(1), math.Inf(-1)
		}
		out[h-1] = make([]float64, len(groups))
		for gi, g := range groups {
			nuM, s := denseRidge(tb, m, h, g, lambda, vnext)
			for i := 0; i < d; i++ {
				w[i] = math.Min(w[i], nuM[i])
				mm[i] = math.Max(mm[i], s[i])
			}
			for _, k := range g {
				nuK, _ := denseRidge(tb, m, h, []int{k}, lambda, vnext)
				diff := 0.0
				for i := range nuK {
					diff += (nuK[i] - nuM[i]) * (nuK[i] - nuM[i])
				}
				out[h-1][gi] = math.Max(out[h-1][gi], math.Sqrt(diff))
			}
		}
		st := &tb.Steps[h-1]
		v := make([]float64, st.Len())
		for j := range v {
			state := st.State[j*tb.W : (j+1)*tb.W]
			for a := 0; a < m.A; a++ {
				phi := densePhi(m, state, a)
				q := math.Max(0, math.Min(dot(phi, w)-beta*dot(phi, mm), float64(H-h+1)))
				v[j] = math.Max(v[j], q)
			}
		}
		vnext = v
	}
	return out
}

// Delta_{h,m} equals the dense computation on random data with two
// clusters, with a given beta and with the formula's cluster-level beta
// (G = 2 clusters, N_max the largest cluster).
func TestDeltaMatchesDense(t *testing.T) {
	ctx := context.Background()
	groups := [][]int{{0, 2}, {1, 3}}
	sizes := []int{30, 45, 25, 40}
	for _, m := range testMaps() {
		for _, beta := range []float64{-1, 0.1} {
			t.Run(fmt.Sprintf("%v/beta=%g", m.Kind, beta), func(t *testing.T) {
				tb := randomTable(t, m, 4, 4, sizes, 23)
				s := solve.DefaultSettings
				wantBeta := beta
				if beta >= 0 {
					s.Beta, s.BetaSet = beta, true
				} else {
					wantBeta = solve.Beta(s.C, m.Dim(), 2, tb.H, float64(45+40), s.Xi)
				}
				sv := newSolver(t, tb, m, s)
				cells, sum, _, err := Delta(ctx, sv, solve.Problem{Method: solve.Cluster, Groups: groups}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				want := denseDelta(tb, &m, groups, 1, wantBeta)
				if len(cells) != tb.H*len(groups) {
					t.Fatalf("got %d cells, want %d", len(cells), tb.H*len(groups))
				}
				wantSum := 0.0
				for h := 1; h <= tb.H; h++ {
					worst := 0.0
					for gi := range groups {
						c := cells[(h-1)*len(groups)+gi]
						if c.Step != h || c.Cluster != fmt.Sprintf("c%d", gi+1) {
							t.Errorf("cell (%d, %d): got step %d cluster %q", h, gi, c.Step, c.Cluster)
						}
						if !near(c.Delta, want[h-1][gi], 1e-10) {
							t.Errorf("step %d cluster %d: Delta = %.15g, want %.15g", h, gi+1, c.Delta, want[h-1][gi])
						}
						if !math.IsNaN(c.PValue) {
							t.Errorf("step %d cluster %d: p-value %v without permutations, want NaN", h, gi+1, c.PValue)
						}
						worst = max(worst, want[h-1][gi])
					}
					wantSum += worst
				}
				if !near(sum, wantSum, 1e-10) {
					t.Errorf("DeltaSum: got %v, want %v", sum, wantSum)
				}
			})
		}
	}
}

// Under exchangeable sites the adjusted permutation p-values are rarely
// small and the smallest of each data set's is roughly uniform (its mean
// near 1/2); when the sites' rewards differ strongly they are small.
func TestDeltaPermutationPValues(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, S: 2, A: 2, StateColumns: []string{"state"}}
	const H, B = 3, 49
	groups := [][]int{{0, 1, 2}}
	sizes := []int{30, 40, 50}
	var minima []float64
	pvalues := func(t *testing.T, mean []float64, spread float64, datasets int) []float64 {
		var ps []float64
		minima = minima[:0]
		for ds := 0; ds < datasets; ds++ {
			tb := tabularTable(t, 2, 2, H, sizes, mean, spread, uint64(1000+ds))
			sv := newSolver(t, tb, m, solve.DefaultSettings)
			cells, _, _, err := Delta(ctx, sv, solve.Problem{Method: solve.Cluster, Groups: groups}, Options{Permutations: B, Seed: uint64(ds)})
			if err != nil {
				t.Fatal(err)
			}
			lo := 1.0
			for _, c := range cells {
				if c.PValue < 1.0/(B+1) || c.PValue > 1 {
					t.Fatalf("p-value %v outside [1/(B+1), 1]", c.PValue)
				}
				ps = append(ps, c.PValue)
				lo = min(lo, c.PValue)
			}
			minima = append(minima, lo)
		}
		return ps
	}
	t.Run("exchangeable", func(t *testing.T) {
		ps := pvalues(t, []float64{0.5, 0.5, 0.5}, 0.5, 40)
		below, mean := 0.0, 0.0
		for _, p := range ps {
			if p < 0.1 {
				below++
			}
			mean += p
		}
		below /= float64(len(ps))
		mean /= float64(len(ps))
		minMean := 0.0
		for _, p := range minima {
			minMean += p
		}
		minMean /= float64(len(minima))
		t.Logf("%d p-values: share below 0.1 = %.3f, mean = %.3f; mean of each data set's smallest = %.3f", len(ps), below, mean, minMean)
		if below > 0.3 {
			t.Errorf("share of p-values below 0.1: got %.3f, want <= 0.3", below)
		}
		// Adjusted p-values are conservative cell by cell; the smallest
		// per data set is the one the family-wise guarantee is about.
		if minMean < 0.3 || minMean > 0.7 {
			t.Errorf("mean of the smallest adjusted p-value per data set: got %.3f, want within [0.3, 0.7]", minMean)
		}
	})
	t.Run("different", func(t *testing.T) {
		ps := pvalues(t, []float64{0.1, 0.5, 0.9}, 0.1, 5)
		small := 0
		for _, p := range ps {
			if p <= 0.05 {
				small++
			}
		}
		if float64(small) < 0.9*float64(len(ps)) {
			t.Errorf("p-values <= 0.05 at %d of %d steps, want at least 90%%: %v", small, len(ps), ps)
		}
	})
}

// Two sites drawn from one model: over many data sets, the share whose
// smallest adjusted p-value (over steps) is at most 0.05 is the
// family-wise error, which the max-statistic test holds at 0.05. With
// B = 99 the event has probability exactly 5/100 under exchangeability;
// over 300 data sets its count is Binomial(300, 0.05) (mean 15, sd 3.8),
// and the test accepts 4..28 (about 3 sd). Per-step unadjusted p-values
// over 3 steps could give up to 1 - 0.95^3, about 14%.
func TestDeltaFamilywiseError(t *testing.T) {
	if testing.Short() {
		t.Skip("300 data sets")
	}
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, S: 2, A: 2, StateColumns: []string{"state"}}
	const H, B, datasets = 3, 99, 300
	hits := 0
	for ds := 0; ds < datasets; ds++ {
		tb := tabularTable(t, 2, 2, H, []int{30, 30}, []float64{0.5, 0.5}, 0.5, uint64(5000+ds))
		sv := newSolver(t, tb, m, solve.DefaultSettings)
		cells, _, _, err := Delta(ctx, sv, solve.Problem{Method: solve.Cluster, Groups: [][]int{{0, 1}}}, Options{Permutations: B, Seed: uint64(ds)})
		if err != nil {
			t.Fatal(err)
		}
		lo := 1.0
		for _, c := range cells {
			lo = min(lo, c.PValue)
		}
		if lo <= 0.05 {
			hits++
		}
	}
	t.Logf("family-wise rejections at 0.05: %d of %d", hits, datasets)
	if hits < 4 || hits > 28 {
		t.Errorf("family-wise rejections at 0.05: %d of %d, want 4..28 (Binomial(%d, 0.05))", hits, datasets, datasets)
	}
}

// maxStatPValues on a hand-made case: two cells, three permutations.
// Cell 0 permutes to 0, 1, 2 (mean 1, sd 1), cell 1 to 0, 0, 3 (mean 1,
// sd sqrt(3)); the maxima of the standardised permutation statistics are
// max(-1, -1/sqrt3) = -0.577, max(0, -0.577) = 0, max(1, 1.155) = 1.155.
// Observed 2 (z = 1) is reached by one maximum: p = 2/4; observed 1 at
// cell 1 (z = 0) by two: p = 3/4; a NaN cell is not tested.
func TestMaxStatPValues(t *testing.T) {
	perm := [][]float64{{0, 0, 5}, {1, 0, 5}, {2, 3, 5}}
	got := maxStatPValues([]float64{2, 1, math.NaN()}, perm)
	if !near(got[0], 0.5, 1e-15) || !near(got[1], 0.75, 1e-15) || !math.IsNaN(got[2]) {
		t.Errorf("got %v, want [0.5 0.75 NaN]", got)
	}
}
