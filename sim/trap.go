package sim

import (
	"fmt"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// Trap is the pessimism instance of the paper's section 4.3: two actions,
// 0 = safe (mean reward 0.70) and 1 = trap (0.65), Bernoulli rewards, and
// a trap taken by only TrapCount trajectories per (site, step) whatever N
// is. States are the points of a simplex grid in [0,1]^p (15 points for
// p = 3, grid 4) with action-block features, so the model is a linear MDP
// of the same family as the benchmark's; coordinate j's next-state law
// mu^k_{h,j} is a distribution on the grid points, the same for both
// actions. The safe action is therefore robustly optimal everywhere, by
// exactly SafeMean - TrapMean in Q at every (h, s).
//
// Initial states are uniform on the grid, in the data and in
// InitialStates. Because the states are finite, SampleCompressed draws the
// same law as Sample as counts, which serves N_k up to millions.
type Trap struct {
	common
	spec TrapSpec
	K, P int
	grid [][]float64
	mu   [][][][]float64 // [k][h-1][j][s]
	fin  finite
}

// NewTrap draws the trap instance's transition laws from p.Seed.
func NewTrap(p Params) (*Trap, error) {
	spec := DefaultTrapSpec()
	if p.Trap != nil {
		spec = *p.Trap
	}
	switch {
	case spec.P < 1 || spec.Grid < 1:
		return nil, fmt.Errorf("sim: trap needs p >= 1 and grid >= 1, got p = %d, grid = %d", spec.P, spec.Grid)
	case spec.SafeMean < 0 || spec.SafeMean > 1 || spec.TrapMean < 0 || spec.TrapMean > 1:
		return nil, fmt.Errorf("sim: trap mean rewards %g, %g outside [0,1]", spec.SafeMean, spec.TrapMean)
	case spec.TrapCount < 0:
		return nil, fmt.Errorf("sim: negative trap count %d", spec.TrapCount)
	case spec.SiteWeight < 0 || spec.SiteWeight > 1:
		return nil, fmt.Errorf("sim: trap site weight %g outside [0,1]", spec.SiteWeight)
	}
	K, N, H, err := resolveSizes(p, spec.Sites, spec.Trajectories, spec.Horizon)
	if err != nil {
		return nil, err
	}
	grid := simplexGrid(spec.P, spec.Grid)
	S := len(grid)
	g := newRNG(p.Seed, streamParams)
	dirichlet := func() []float64 {
		v := make([]float64, S)
		tot := 0.0
		for s := range v {
			v[s] = g.gamma(1)
			tot += v[s]
		}
		for s := range v {
			v[s] /= tot
		}
		return v
	}
	base := make([][][]float64, H)
	for h := range base {
		base[h] = make([][]float64, spec.P)
		for j := range base[h] {
			base[h][j] = dirichlet()
		}
	}
	mu := make([][][][]float64, K)
	for k := range mu {
		mu[k] = make([][][]float64, H)
		for h := range mu[k] {
			mu[k][h] = make([][]float64, spec.P)
			for j := range mu[k][h] {
				site := dirichlet()
				v := make([]float64, S)
				for s := range v {
					v[s] = (1-spec.SiteWeight)*base[h][j][s] + spec.SiteWeight*site[s]
				}
				mu[k][h][j] = v
			}
		}
	}
	p.Trap = &spec
	p.Sites, p.Trajectories, p.Horizon, p.MinTrajectories = K, N, H, 0
	return newTrap(p, grid, mu)
}

// simplexGrid returns the points x in [0,1]^p with x = n/m, sum x = 1, in
// lexicographic order of n.
func simplexGrid(p, m int) [][]float64 {
	var out [][]float64
	n := make([]int, p)
	var rec func(j, left int)
	rec = func(j, left int) {
		if j == p-1 {
			n[j] = left
			x := make([]float64, p)
			for i, v := range n {
				x[i] = float64(v) / float64(m)
			}
			out = append(out, x)
			return
		}
		for v := 0; v <= left; v++ {
			n[j] = v
			rec(j+1, left-v)
		}
	}
	rec(0, m)
	return out
}

func newTrap(p Params, grid [][]float64, mu [][][][]float64) (*Trap, error) {
	spec := *p.Trap
	K, H, P := p.Sites, p.Horizon, spec.P
	m := &Trap{spec: spec, K: K, P: P, grid: grid, mu: mu}
	cols := make([]string, P)
	for j := range cols {
		cols[j] = fmt.Sprintf("s%d", j+1)
	}
	fmap := features.Map{Kind: features.ActionBlock, A: 2, P: P, StateColumns: cols}
	m.fin = finite{fmap: fmap, states: grid, K: K, H: H}
	th := make([]float64, 2*P)
	for j := 0; j < P; j++ {
		th[j], th[P+j] = spec.SafeMean, spec.TrapMean
	}
	for k := 0; k < K; k++ {
		ths, mus := make([][]float64, H), make([][]sparse, H)
		for h := 0; h < H; h++ {
			ths[h] = th
			rows := make([]sparse, 2*P)
			for j := 0; j < P; j++ {
				rows[j] = dense(mu[k][h][j])
				rows[P+j] = rows[j]
			}
			mus[h] = rows
		}
		m.fin.theta = append(m.fin.theta, ths)
		m.fin.mu = append(m.fin.mu, mus)
	}
	m.common = common{
		scenario: ScenarioTrap, params: p, H: H, sites: siteLabels(K), N: p.Trajectories, fmap: fmap,
		opts: traj.Options{State: traj.StateSpec{Columns: cols, NonzeroSum: true}, Horizon: H, Actions: 2},
		eval: &m.fin,
	}
	return m, nil
}

// States returns the grid states (shared: do not modify).
func (m *Trap) States() [][]float64 { return m.grid }

// Mu returns mu^k_{h,j} as [k][h-1][j][state index] (shared: do not
// modify).
func (m *Trap) Mu() [][][][]float64 { return m.mu }

// TrapCount returns the number of trap transitions per (site, step) of
// site k: min(TrapCount, N_k).
func (m *Trap) TrapCount(k int) int { return min(m.spec.TrapCount, m.N[k]) }

// InitialStates draws n states uniformly from the grid.
func (m *Trap) InitialStates(n int, seed uint64) [][]float64 {
	g := newRNG(seed, streamInit)
	out := make([][]float64, n)
	for i := range out {
		out[i] = append([]float64(nil), m.grid[g.IntN(len(m.grid))]...)
	}
	return out
}

// nextLaw writes P^k_h(. | s, a) = sum_j phi_j(s) mu^k_{h,j} to dst (the
// same for both actions).
func (m *Trap) nextLaw(dst []float64, k, h, s int) {
	clear(dst)
	x := m.grid[s]
	tot := 0.0
	for _, v := range x {
		tot += v
	}
	for j, v := range x {
		if v == 0 {
			continue
		}
		for s2, q := range m.mu[k][h-1][j] {
			dst[s2] += v / tot * q
		}
	}
}

func (m *Trap) mean(a int) float64 {
	if a == 0 {
		return m.spec.SafeMean
	}
	return m.spec.TrapMean
}

// Sample draws the data set of SampleRows(seed) and builds its Table.
func (m *Trap) Sample(seed uint64) (*traj.Table, error) {
	c, err := m.SampleRows(seed)
	return buildTable(m.opts, c, err)
}

// SampleRows draws N_k trajectories per site one by one: at each step a
// uniformly chosen set of TrapCount(k) trajectories takes the trap, the
// others the safe action. Use SampleCompressed for large N.
func (m *Trap) SampleRows(seed uint64) ([]*traj.Chunk, error) {
	H, S := m.H, len(m.grid)
	return perSite(m.K, func(k int) *traj.Chunk {
		g := newRNG(seed, streamData, uint64(k))
		N := m.N[k]
		c := newChunk(m.scenario, k, m.P, N*H)
		cur := make([]int, N)
		for tau := range cur {
			cur[tau] = g.IntN(S)
		}
		// rows by trajectory: collect the per-step draws first.
		acts := make([][]int8, N)
		rews := make([][]float64, N)
		states := make([][]int32, N)
		for tau := range acts {
			acts[tau], rews[tau], states[tau] = make([]int8, H), make([]float64, H), make([]int32, H)
		}
		trap := make([]bool, N)
		for h := 1; h <= H; h++ {
			clear(trap)
			for _, tau := range g.distinct(m.TrapCount(k), N) {
				trap[tau] = true
			}
			for tau := 0; tau < N; tau++ {
				a := 0
				if trap[tau] {
					a = 1
				}
				s := cur[tau]
				acts[tau][h-1], states[tau][h-1] = int8(a), int32(s)
				rews[tau][h-1] = g.bernoulli(m.mean(a))
				if h < H {
					j := g.categorical(m.grid[s])
					cur[tau] = g.categorical(m.mu[k][h-1][j])
				}
			}
		}
		for tau := 0; tau < N; tau++ {
			for h := 1; h <= H; h++ {
				addRow(c, k, tau, h, int(acts[tau][h-1]), rews[tau][h-1], m.grid[states[tau][h-1]])
			}
		}
		return c
	}), nil
}

// SampleCompressed draws a data set with the law of Sample as counts (see
// Compressor): multinomial state counts, a multivariate hypergeometric
// split of the trap count over states, multinomial next states and
// binomial reward sums.
func (m *Trap) SampleCompressed(seed uint64) (*traj.Table, error) {
	K, H, S := m.K, m.H, len(m.grid)
	rows := make([][][]crow, K)
	parallel(K, func(k int) {
		g := newRNG(seed, streamCompress, uint64(k))
		rows[k] = make([][]crow, H)
		c := make([]int, S)
		flat := make([]float64, S)
		for s := range flat {
			flat[s] = 1
		}
		g.multinomial(c, m.N[k], flat)
		law := make([]float64, S)
		nc := make([]int, S)
		next := make([]int, S)
		t := make([]int, S)
		for h := 1; h <= H; h++ {
			// The trap set: TrapCount draws without replacement.
			clear(t)
			left := m.N[k]
			for range m.TrapCount(k) {
				u := g.IntN(left)
				for s := range c {
					if u < c[s]-t[s] {
						t[s]++
						break
					}
					u -= c[s] - t[s]
				}
				left--
			}
			clear(nc)
			for s := 0; s < S; s++ {
				if h < H {
					m.nextLaw(law, k, h, s)
				}
				for a := 0; a < 2; a++ {
					n := c[s] - t[s]
					if a == 1 {
						n = t[s]
					}
					if n == 0 {
						continue
					}
					if h == H {
						rows[k][h-1] = append(rows[k][h-1], crow{s: int32(s), a: int32(a), next: -1, n: n, rsum: float64(g.binomial(n, m.mean(a)))})
						continue
					}
					g.multinomial(next, n, law)
					for s2, n2 := range next {
						if n2 == 0 {
							continue
						}
						rows[k][h-1] = append(rows[k][h-1], crow{s: int32(s), a: int32(a), next: int32(s2), n: n2, rsum: float64(g.binomial(n2, m.mean(a)))})
						nc[s2] += n2
					}
				}
			}
			c, nc = nc, c
		}
	})
	return compressedTable(m.sites, m.N, H, 2, m.grid, rows), nil
}
