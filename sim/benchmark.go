package sim

import (
	"fmt"
	"math"
	"sync"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// Benchmark is the linear-Beta model of the paper's section 4.1: states in
// [0,1]^p, action-block features (d = p*A), and for each (site k, step h,
// coordinate i = a*p+j') an atom (theta^k_{h,i}, mu^k_{h,i}) with
// mu^k_{h,i} = prod_j Beta(alpha_{k,h,i,j}, beta_{k,h,i,j}). A transition
// from (s, a) picks a coordinate i of block a with probability phi_i(s,a)
// = s_j'/||s||_1 and draws s' from mu^k_{h,i}.
//
// Exact evaluation replaces each mu^k_{h,i} by M fixed draws from it
// (common random numbers: the same draws for V* and every policy, seeded
// by the model), so V* and V^pi are the exact values of one empirical
// robust MDP and SubOpt = V* - V^pi is never negative. See
// docs/EXPERIMENTS.md for the measured accuracy.
type Benchmark struct {
	common
	spec BenchmarkSpec
	K, P int
	// theta[k][h-1][i]; alpha and beta [k][h-1][i*P+j].
	theta, alpha, beta [][][]float64
	evalSeed           uint64

	cacheLimit int64 // evalCacheBytes; tests lower it to force redrawing
	sampOnce   sync.Once
	samples    [][]float32 // [(k*(H-1)+h-1)*d+i]: M*P values; nil when over cacheLimit (then redrawn at each use)
}

// evalCacheBytes bounds the memory of cached Monte Carlo samples; above
// it, samples are drawn again (identically) at each evaluation.
const evalCacheBytes = 256 << 20

// NewBenchmark draws a linear-Beta model from p.Seed.
func NewBenchmark(p Params) (*Benchmark, error) {
	spec := DefaultBenchmarkSpec()
	if p.Benchmark != nil {
		spec = *p.Benchmark
	}
	if err := spec.check(); err != nil {
		return nil, err
	}
	K, N, H, err := resolveSizes(p, spec.Sites, spec.Trajectories, spec.Horizon)
	if err != nil {
		return nil, err
	}
	P, A := spec.P, spec.Actions
	d := P * A
	g := newRNG(p.Seed, streamParams)
	// Base shapes per (i, j), site factors per (k, i, j), step factors per
	// (h, i, j); alpha and beta drawn independently, in this order.
	draw := func(lo, hi float64, n int) []float64 {
		out := make([]float64, n)
		for x := range out {
			out[x] = g.uniform(lo, hi)
		}
		return out
	}
	shapes := func() [][][]float64 {
		base := draw(spec.ShapeLow, spec.ShapeHigh, d*P)
		site := make([][]float64, K)
		for k := range site {
			site[k] = draw(1-spec.SiteSpread, 1+spec.SiteSpread, d*P)
		}
		step := make([][]float64, H)
		for h := range step {
			step[h] = draw(1-spec.StepSpread, 1+spec.StepSpread, d*P)
		}
		out := make([][][]float64, K)
		for k := range out {
			out[k] = make([][]float64, H)
			for h := range out[k] {
				v := make([]float64, d*P)
				for x := range v {
					v[x] = max(spec.ShapeFloor, base[x]*site[k][x]*step[h][x])
				}
				out[k][h] = v
			}
		}
		return out
	}
	theta := make([][][]float64, K)
	for k := range theta {
		theta[k] = make([][]float64, H)
		for h := range theta[k] {
			theta[k][h] = draw(spec.ThetaLow, spec.ThetaHigh, d)
		}
	}
	alpha := shapes()
	beta := shapes()
	p.Benchmark = &spec
	p.Sites, p.Trajectories, p.Horizon, p.MinTrajectories = K, N, H, 0
	return newBenchmark(p, theta, alpha, beta, deriveSeed(p.Seed, streamEval))
}

func (s *BenchmarkSpec) check() error {
	switch {
	case s.P < 1 || s.Actions < 1:
		return fmt.Errorf("sim: benchmark needs p >= 1 and A >= 1, got p = %d, A = %d", s.P, s.Actions)
	case s.ThetaLow-s.RewardNoise < 0 || s.ThetaHigh+s.RewardNoise > 1 || s.ThetaLow > s.ThetaHigh || s.RewardNoise < 0:
		return fmt.Errorf("sim: benchmark theta range [%g, %g] with reward noise %g leaves [0,1]", s.ThetaLow, s.ThetaHigh, s.RewardNoise)
	case s.ShapeFloor <= 0 || s.ShapeLow <= 0 || s.ShapeHigh < s.ShapeLow || s.SiteSpread < 0 || s.SiteSpread >= 1 || s.StepSpread < 0 || s.StepSpread >= 1:
		return fmt.Errorf("sim: benchmark Beta shape settings out of range")
	case s.EvalSamples < 1:
		return fmt.Errorf("sim: benchmark needs at least one evaluation sample, got %d", s.EvalSamples)
	}
	return nil
}

// newBenchmark assembles a Benchmark from its atoms (p resolved).
func newBenchmark(p Params, theta, alpha, beta [][][]float64, evalSeed uint64) (*Benchmark, error) {
	spec := *p.Benchmark
	m := &Benchmark{spec: spec, K: p.Sites, P: spec.P, theta: theta, alpha: alpha, beta: beta, evalSeed: evalSeed, cacheLimit: evalCacheBytes}
	cols := make([]string, spec.P)
	for j := range cols {
		cols[j] = fmt.Sprintf("s%d", j+1)
	}
	m.common = common{
		scenario: ScenarioBenchmark, params: p, H: p.Horizon, sites: siteLabels(p.Sites), N: p.Trajectories,
		fmap: features.Map{Kind: features.ActionBlock, A: spec.Actions, P: spec.P, StateColumns: cols},
		opts: traj.Options{State: traj.StateSpec{Columns: cols, NonzeroSum: true}, Horizon: p.Horizon, Actions: spec.Actions},
		eval: m,
	}
	return m, nil
}

// Theta returns theta^k_{h,i} as [k][h-1][i] (shared: do not modify).
func (m *Benchmark) Theta() [][][]float64 { return m.theta }

// Alpha returns the Beta shapes alpha_{k,h,i,j} as [k][h-1][i*p+j]
// (shared: do not modify).
func (m *Benchmark) Alpha() [][][]float64 { return m.alpha }

// Beta returns the Beta shapes beta_{k,h,i,j} as [k][h-1][i*p+j] (shared:
// do not modify).
func (m *Benchmark) Beta() [][][]float64 { return m.beta }

// Sample draws the data set of SampleRows(seed) and builds its Table.
func (m *Benchmark) Sample(seed uint64) (*traj.Table, error) {
	c, err := m.SampleRows(seed)
	return buildTable(m.opts, c, err)
}

// SampleRows draws N_k trajectories per site under the uniform behaviour
// policy, initial states uniform on [0,1]^p.
func (m *Benchmark) SampleRows(seed uint64) ([]*traj.Chunk, error) {
	P, A, H := m.P, m.fmap.A, m.H
	eta := m.spec.RewardNoise
	return perSite(m.K, func(k int) *traj.Chunk {
		g := newRNG(seed, streamData, uint64(k))
		c := newChunk(m.scenario, k, P, m.N[k]*H)
		s := make([]float64, P)
		next := make([]float64, P)
		phi := make([]float64, P)
		for tau := 0; tau < m.N[k]; tau++ {
			uniformState(g, s)
			for h := 1; h <= H; h++ {
				a := g.IntN(A)
				sum := 0.0
				for _, v := range s {
					sum += v
				}
				mean := 0.0
				th := m.theta[k][h-1]
				for j, v := range s {
					phi[j] = v / sum
					mean += phi[j] * th[a*P+j]
				}
				r := min(1, max(0, mean+g.uniform(-eta, eta)))
				addRow(c, k, tau, h, a, r, s)
				if h == H {
					break
				}
				i := a*P + g.categorical(phi)
				m.drawNext(g, next, k, h, i)
				s, next = next, s
			}
		}
		return c
	}), nil
}

// drawNext writes to dst a draw from mu^k_{h,i}, redrawing the
// (probability zero) all-zero state.
func (m *Benchmark) drawNext(g rng, dst []float64, k, h, i int) {
	al, be := m.alpha[k][h-1][i*m.P:], m.beta[k][h-1][i*m.P:]
	for {
		nz := false
		for j := range dst {
			dst[j] = g.beta(al[j], be[j])
			nz = nz || dst[j] > 0
		}
		if nz {
			return
		}
	}
}

// uniformState fills s uniformly from [0,1]^p, redrawing the all-zero
// state.
func uniformState(g rng, s []float64) {
	for {
		nz := false
		for j := range s {
			s[j] = g.Float64()
			nz = nz || s[j] > 0
		}
		if nz {
			return
		}
	}
}

// InitialStates draws n states uniformly from [0,1]^p.
func (m *Benchmark) InitialStates(n int, seed uint64) [][]float64 {
	g := newRNG(seed, streamInit)
	out := make([][]float64, n)
	for x := range out {
		out[x] = make([]float64, m.P)
		uniformState(g, out[x])
	}
	return out
}

// EvalSamples returns M, the Monte Carlo draws per (site, step, coordinate).
func (m *Benchmark) EvalSamples() int { return m.spec.EvalSamples }

// evalDraws fills dst (M*P values) with the fixed draws from mu^k_{h,i}.
func (m *Benchmark) evalDraws(dst []float32, k, h, i int) {
	g := newRNG(m.evalSeed, uint64(k), uint64(h), uint64(i))
	P := m.P
	x := make([]float64, P)
	for s := 0; s < len(dst)/P; s++ {
		for {
			m.drawNext(g, x, k, h, i)
			nz := false
			for j, v := range x {
				dst[s*P+j] = float32(v)
				nz = nz || dst[s*P+j] > 0
			}
			if nz {
				break
			}
		}
	}
}

// draws returns the fixed draws of (k, h, i), from the cache when the
// cache fits in evalCacheBytes.
func (m *Benchmark) draws(k, h, i int) []float32 {
	d := m.fmap.Dim()
	M, P := m.spec.EvalSamples, m.P
	m.sampOnce.Do(func() {
		n := m.K * (m.H - 1) * d
		if n == 0 || int64(n)*int64(M*P)*4 > m.cacheLimit {
			return
		}
		m.samples = make([][]float32, n)
		parallel(n, func(t int) {
			kk, rest := t/((m.H-1)*d), t%((m.H-1)*d)
			buf := make([]float32, M*P)
			m.evalDraws(buf, kk, rest/d+1, rest%d)
			m.samples[t] = buf
		})
	})
	if m.samples != nil {
		return m.samples[(k*(m.H-1)+h-1)*d+i]
	}
	buf := make([]float32, M*P)
	m.evalDraws(buf, k, h, i)
	return buf
}

// weights runs the robust recursion with <mu^k_{h,i}, V_{h+1}> replaced by
// the mean of V_{h+1} over the fixed draws. V_{h+1}(s') = phi(s',a)^T
// w_{h+1} with a the greedy action (pi == nil) or pi(h+1, s').
func (m *Benchmark) weights(pi Policy, sites []int) [][]float64 {
	if sites == nil {
		sites = allSites(m.K)
	}
	K, H, P, A := m.K, m.H, m.P, m.fmap.A
	d := m.fmap.Dim()
	M := m.spec.EvalSamples
	ws := make([][]float64, H)
	w := make([]float64, d)
	for i := range w {
		w[i] = math.Inf(1)
		for _, k := range sites {
			w[i] = min(w[i], m.theta[k][H-1][i])
		}
	}
	ws[H-1] = w
	means := make([]float64, K*d)
	for h := H - 1; h >= 1; h-- {
		next := ws[h]
		parallel(len(sites)*d, func(t int) {
			k, i := sites[t/d], t%d
			xs := m.draws(k, h, i)
			state := make([]float64, P)
			sum := 0.0
			for s := 0; s < M; s++ {
				tot := 0.0
				for j := range state {
					state[j] = float64(xs[s*P+j])
					tot += state[j]
				}
				var v float64
				if pi == nil {
					v = math.Inf(-1)
					for a := 0; a < A; a++ {
						q := 0.0
						for j, x := range state {
							q += x / tot * next[a*P+j]
						}
						v = max(v, q)
					}
				} else {
					a := act(pi, A, h+1, state)
					for j := range state {
						state[j] = float64(xs[s*P+j])
					}
					v = m.fmap.Dot(state, a, next)
				}
				sum += v
			}
			means[k*d+i] = sum / float64(M)
		})
		w := make([]float64, d)
		for i := range w {
			w[i] = math.Inf(1)
			for _, k := range sites {
				w[i] = min(w[i], m.theta[k][h-1][i]+means[k*d+i])
			}
		}
		ws[h-1] = w
	}
	return ws
}
