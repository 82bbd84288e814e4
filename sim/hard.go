package sim

import (
	"fmt"
	"math"
	"slices"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// Hard is the hard instance of the paper's section 4.2 (scenario
// "convergence"), after Jin et al. (2021): states s0 = 0 (start), s1 = 1
// (good, absorbing, reward 1) and s2 = 2 (bad, absorbing, reward 0);
// actions b_1..b_A are 0..A-1; indicator features (d = A+2). At s0 action
// b_j leads to s1 with probability p_j^k at site k, else to s2, with
// p_1 = 0.5 + delta^k, p_2 = 0.5 - delta^k, p_j = min(p_1, p_2) for j >= 3,
// and
//
//	delta^k = (1/8) sqrt(3 / (2 (n_1^k + n_2^k)))
//
// where n_j^k counts the trajectories of site k whose first action is b_j
// (n_1 + n_2 = 0 counts as 1). Rewards are deterministic: r(s0) = 0,
// r(s1) = 1, r(s2) = 0. The same kernel holds at every step (s0 only
// occurs at step 1).
//
// delta depends on the data, so New draws the first-step action counts
// n_1^k, n_2^k (uniform behaviour over the A actions) from Params.Seed, and
// every data set drawn from the model (Sample, SampleCompressed, any seed)
// has exactly those counts; the other first actions, their order and all
// later draws come from the sample's seed. Over both seeds this is the
// uniform behaviour policy of the paper.
//
// In closed form V*_1(s0) = (H-1) min_k p_1^k and, for a policy choosing
// b_j at s0, SubOpt = (H-1) [min_k p_1^k - min_k p_j^k].
type Hard struct {
	common
	spec   ConvergenceSpec
	K, A   int
	n1, n2 []int
	p      [][]float64 // [k][a]
	fin    finite
}

// NewHard builds the hard instance, drawing the first-step action counts
// from p.Seed.
func NewHard(p Params) (*Hard, error) {
	spec := DefaultConvergenceSpec()
	if p.Convergence != nil {
		spec = *p.Convergence
	}
	if spec.Actions < 3 {
		return nil, fmt.Errorf("sim: the hard instance needs A >= 3 actions, got %d", spec.Actions)
	}
	K, N, H, err := resolveSizes(p, spec.Sites, spec.Trajectories, spec.Horizon)
	if err != nil {
		return nil, err
	}
	A := spec.Actions
	n1, n2 := make([]int, K), make([]int, K)
	cnt := make([]int, A)
	ones := make([]float64, A)
	for a := range ones {
		ones[a] = 1
	}
	for k := 0; k < K; k++ {
		g := newRNG(p.Seed, streamCounts, uint64(k))
		g.multinomial(cnt, N[k], ones)
		n1[k], n2[k] = cnt[0], cnt[1]
	}
	p.Convergence = &spec
	p.Sites, p.Trajectories, p.Horizon, p.MinTrajectories = K, N, H, 0
	return newHard(p, n1, n2)
}

// hardProbs returns p_j^k from the first-action counts.
func hardProbs(A int, n1, n2 []int) (delta []float64, p [][]float64) {
	delta = make([]float64, len(n1))
	p = make([][]float64, len(n1))
	for k := range n1 {
		n := max(1, n1[k]+n2[k])
		delta[k] = math.Sqrt(3/(2*float64(n))) / 8
		p1, p2 := 0.5+delta[k], 0.5-delta[k]
		p[k] = make([]float64, A)
		for a := range p[k] {
			p[k][a] = min(p1, p2)
		}
		p[k][0], p[k][1] = p1, p2
	}
	return delta, p
}

func newHard(p Params, n1, n2 []int) (*Hard, error) {
	spec := *p.Convergence
	A, K, H := spec.Actions, p.Sites, p.Horizon
	for k := range n1 {
		if n1[k] < 0 || n2[k] < 0 || n1[k]+n2[k] > p.Trajectories[k] {
			return nil, fmt.Errorf("sim: site %d: first-action counts %d, %d do not fit %d trajectories", k+1, n1[k], n2[k], p.Trajectories[k])
		}
	}
	_, probs := hardProbs(A, n1, n2)
	m := &Hard{spec: spec, K: K, A: A, n1: n1, n2: n2, p: probs}
	fmap := features.Map{Kind: features.Indicator, A: A, StateColumns: []string{"state"}}
	m.fin = finite{fmap: fmap, states: [][]float64{{0}, {1}, {2}}, K: K, H: H}
	good, bad := sparse{Next: []int32{1}, P: []float64{1}}, sparse{Next: []int32{2}, P: []float64{1}}
	for k := 0; k < K; k++ {
		th := make([]float64, A+2)
		th[A] = 1
		rows := make([]sparse, A+2)
		for a := 0; a < A; a++ {
			rows[a] = sparse{Next: []int32{1, 2}, P: []float64{probs[k][a], 1 - probs[k][a]}}
		}
		rows[A], rows[A+1] = good, bad
		ths, mus := make([][]float64, H), make([][]sparse, H)
		for h := range ths {
			ths[h], mus[h] = th, rows
		}
		m.fin.theta = append(m.fin.theta, ths)
		m.fin.mu = append(m.fin.mu, mus)
	}
	m.common = common{
		scenario: ScenarioConvergence, params: p, H: H, sites: siteLabels(K), N: p.Trajectories, fmap: fmap,
		opts: traj.Options{State: traj.StateSpec{Columns: []string{"state"}, Integer: true, Max: 3}, Horizon: H, Actions: A},
		eval: &m.fin,
	}
	return m, nil
}

// P returns P_1^k(s1 | s0, b_j) as [k][j-1]. The result is a copy.
func (m *Hard) P() [][]float64 {
	out := make([][]float64, m.K)
	for k := range out {
		out[k] = slices.Clone(m.p[k])
	}
	return out
}

// Counts returns n_1^k and n_2^k, the first-step counts of b_1 and b_2.
func (m *Hard) Counts() (n1, n2 []int) { return slices.Clone(m.n1), slices.Clone(m.n2) }

// Delta returns delta^k per site.
func (m *Hard) Delta() []float64 {
	d, _ := hardProbs(m.A, m.n1, m.n2)
	return d
}

// OptimalValueClosedForm returns V*_1(s0) = (H-1) min_k p_1^k.
func (m *Hard) OptimalValueClosedForm() float64 {
	return float64(m.H-1) * m.minP(0)
}

// SubOpt returns the closed-form suboptimality at s0 of a policy choosing
// action a (b_{a+1}) there: (H-1) [min_k p_1^k - min_k p_{a+1}^k].
func (m *Hard) SubOpt(a int) float64 {
	return float64(m.H-1) * (m.minP(0) - m.minP(a))
}

func (m *Hard) minP(a int) float64 {
	v := math.Inf(1)
	for k := range m.p {
		v = min(v, m.p[k][a])
	}
	return v
}

// InitialStates returns n copies of s0.
func (m *Hard) InitialStates(n int, seed uint64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = []float64{0}
	}
	return out
}

// firstActions returns the first actions of site k's trajectories: n_1 b_1
// (0), n_2 b_2 (1), the rest uniform over b_3..b_A, in random order.
func (m *Hard) firstActions(g rng, k int) []int {
	N := m.N[k]
	out := make([]int, 0, N)
	for range m.n1[k] {
		out = append(out, 0)
	}
	for range m.n2[k] {
		out = append(out, 1)
	}
	for len(out) < N {
		out = append(out, 2+g.IntN(m.A-2))
	}
	g.Shuffle(N, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Sample draws the data set of SampleRows(seed) and builds its Table.
func (m *Hard) Sample(seed uint64) (*traj.Table, error) {
	c, err := m.SampleRows(seed)
	return buildTable(m.opts, c, err)
}

// SampleRows draws N_k trajectories per site: the first action as the type
// documents, uniform actions afterwards.
func (m *Hard) SampleRows(seed uint64) ([]*traj.Chunk, error) {
	H := m.H
	return perSite(m.K, func(k int) *traj.Chunk {
		g := newRNG(seed, streamData, uint64(k))
		c := newChunk(m.scenario, k, 1, m.N[k]*H)
		first := m.firstActions(g, k)
		st := []float64{0}
		for tau, a1 := range first {
			st[0] = 0
			addRow(c, k, tau, 1, a1, 0, st)
			s := 2.0
			if g.Float64() < m.p[k][a1] {
				s = 1
			}
			st[0] = s
			r := 0.0
			if s == 1 {
				r = 1
			}
			for h := 2; h <= H; h++ {
				addRow(c, k, tau, h, g.IntN(m.A), r, st)
			}
		}
		return c
	}), nil
}

// SampleCompressed draws a data set with the law of Sample as counts (see
// Compressor).
func (m *Hard) SampleCompressed(seed uint64) (*traj.Table, error) {
	K, A, H := m.K, m.A, m.H
	rows := make([][][]crow, K)
	parallel(K, func(k int) {
		g := newRNG(seed, streamCompress, uint64(k))
		rows[k] = make([][]crow, H)
		n := make([]int, A)
		ones := make([]float64, A)
		for a := range ones {
			ones[a] = 1
		}
		g.multinomial(n[2:], m.N[k]-m.n1[k]-m.n2[k], ones[2:])
		n[0], n[1] = m.n1[k], m.n2[k]
		var c [3]int // state counts at the next step
		for a := 0; a < A; a++ {
			good := g.binomial(n[a], m.p[k][a])
			if good > 0 {
				rows[k][0] = append(rows[k][0], crow{s: 0, a: int32(a), next: 1, n: good})
			}
			if n[a]-good > 0 {
				rows[k][0] = append(rows[k][0], crow{s: 0, a: int32(a), next: 2, n: n[a] - good})
			}
			c[1] += good
			c[2] += n[a] - good
		}
		for h := 2; h <= H; h++ {
			for s := int32(1); s <= 2; s++ {
				g.multinomial(n, c[s], ones)
				next := s
				if h == H {
					next = -1
				}
				for a := 0; a < A; a++ {
					if n[a] > 0 {
						rows[k][h-1] = append(rows[k][h-1], crow{s: s, a: int32(a), next: next, n: n[a], rsum: float64(n[a]) * float64(2-s)})
					}
				}
			}
		}
	})
	return compressedTable(m.sites, m.N, H, A, m.fin.states, rows), nil
}
