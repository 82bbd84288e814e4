package sim

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// Scenario names, as `grmdp simulate --scenario` takes them.
const (
	ScenarioBenchmark   = "benchmark"
	ScenarioConvergence = "convergence"
	ScenarioTrap        = "trap"
	ScenarioFormulary   = "formulary"
	ScenarioClinical    = "clinical"
)

// Scenarios returns the scenario names New accepts.
func Scenarios() []string {
	return []string{ScenarioBenchmark, ScenarioConvergence, ScenarioTrap, ScenarioFormulary, ScenarioClinical}
}

// Policy is a deterministic Markov policy: the action (0..A-1) at step h
// (1..H) in state. The state slice is only valid during the call. Exact
// evaluation may call a Policy from several goroutines at once, so it must
// be safe for concurrent use (a pure function of h and state is).
type Policy func(h int, state []float64) int

// Model is a multi-site episodic MDP known exactly: it samples offline
// data and evaluates policies by the robust Bellman recursion of the
// paper's eq. (Bellman-Operator). Models are safe for concurrent use.
type Model interface {
	// Scenario returns the scenario name (see Scenarios).
	Scenario() string
	// Params returns the parameters the model was built from, with every
	// default filled in.
	Params() Params
	// Map returns the feature map phi the model is linear in.
	Map() features.Map
	// Horizon returns H; Sites the site labels ("1".."K", as the sampled
	// table reads them); Trajectories N_k per site.
	Horizon() int
	Sites() []string
	Trajectories() []int
	// Options returns the Builder and reader options that read the
	// sampled data back: state columns and checks, H and A.
	Options() traj.Options

	// SampleRows draws one offline data set: one chunk per site, rows in
	// (trajectory, step) order, in the columns Options names. Writing the
	// chunks to Parquet and reading the file with Options gives back the
	// table Sample returns.
	SampleRows(seed uint64) ([]*traj.Chunk, error)
	// Sample draws the same data set as SampleRows(seed) and builds it with
	// traj.NewBuilder(Options()).
	Sample(seed uint64) (*traj.Table, error)
	// InitialStates draws n evaluation initial states (see the scenario's
	// documentation).
	InitialStates(n int, seed uint64) [][]float64

	// OptimalWeights returns w*_h for h = 1..H (index h-1): the robust
	// optimal Q-function is Q*_h(s,a) = phi(s,a)^T w*_h. The result is
	// shared: do not modify it.
	OptimalWeights() [][]float64
	// PolicyWeights returns w^pi_h for h = 1..H: Q^pi_h(s,a) =
	// phi(s,a)^T w^pi_h, so V^pi_h(s) = phi(s, pi(h,s))^T w^pi_h.
	PolicyWeights(pi Policy) [][]float64
	// OptimalValue returns V*_1 at each state, by robust backward
	// induction.
	OptimalValue(states [][]float64) []float64
	// PolicyValue returns V^pi_1 at each state, by robust policy
	// evaluation.
	PolicyValue(pi Policy, states [][]float64) []float64
	// SitePolicyValue returns site k's own value of pi (k = 0..K-1, in
	// the order of Sites) at each state: policy evaluation under site k's
	// transitions and rewards alone, no minimum over sites.
	SitePolicyValue(k int, pi Policy, states [][]float64) []float64
	// OptimalPolicy returns the greedy policy of w*: argmax_a Q*_h(s,a),
	// the lowest action on ties.
	OptimalPolicy() Policy

	file() *modelFile
}

// SiteInitialLaw is implemented by models whose sites draw their initial
// states from laws of their own (the formulary's case-mix per hospital).
// SiteInitialLaw(k) returns site k's law (k = 0..K-1, in the order of
// Sites) as finitely many states and their probabilities, summing to one.
// In the other models every site's trajectories start from the law
// InitialStates draws from.
type SiteInitialLaw interface {
	SiteInitialLaw(k int) (states [][]float64, probs []float64)
}

// Compressor is implemented by models with finitely many states (trap and
// convergence) whose data can be drawn as counts: the table holds one row
// per (site, step, state, action, next state) with Step.Weight its number
// of transitions and Reward their mean reward, so its size does not grow
// with N. Its law is exactly that of Sample's, summarised.
//
// In a compressed table Next points to some row of the same site at step
// h+1 whose state is the next state (several rows may point to one), Traj
// holds the row's index within its step (a row is not one trajectory),
// and Trajectories still counts the trajectories.
type Compressor interface {
	SampleCompressed(seed uint64) (*traj.Table, error)
}

// New builds the model of a scenario. It returns an error for an unknown
// scenario or parameters out of range.
func New(scenario string, p Params) (Model, error) {
	switch scenario {
	case ScenarioBenchmark:
		return NewBenchmark(p)
	case ScenarioConvergence:
		return NewHard(p)
	case ScenarioTrap:
		return NewTrap(p)
	case ScenarioFormulary:
		return NewFormulary(p)
	case ScenarioClinical:
		return NewClinical(p)
	}
	return nil, fmt.Errorf("sim: unknown scenario %q (want benchmark, convergence, trap, formulary or clinical)", scenario)
}

// evaluator computes the w-vectors of the robust recursion: w^pi for a
// policy, w* for pi == nil. The row-min runs over the given sites (nil:
// all sites), so one site gives that site's own, non-robust recursion.
type evaluator interface {
	weights(pi Policy, sites []int) [][]float64
}

// common holds what every model shares and implements the evaluation
// methods on top of an evaluator.
type common struct {
	scenario string
	params   Params
	fmap     features.Map
	H        int
	sites    []string
	N        []int
	opts     traj.Options
	eval     evaluator

	optOnce sync.Once
	optW    [][]float64
}

func (c *common) Scenario() string      { return c.scenario }
func (c *common) Map() features.Map     { return c.fmap }
func (c *common) Horizon() int          { return c.H }
func (c *common) Sites() []string       { return append([]string(nil), c.sites...) }
func (c *common) Trajectories() []int   { return append([]int(nil), c.N...) }
func (c *common) Options() traj.Options { return c.opts }

func (c *common) Params() Params {
	p := c.params
	p.Trajectories = append([]int(nil), p.Trajectories...)
	if p.Benchmark != nil {
		s := *p.Benchmark
		s.Trajectories = append([]int(nil), s.Trajectories...)
		p.Benchmark = &s
	}
	if p.Convergence != nil {
		s := *p.Convergence
		s.Trajectories = append([]int(nil), s.Trajectories...)
		p.Convergence = &s
	}
	if p.Trap != nil {
		s := *p.Trap
		s.Trajectories = append([]int(nil), s.Trajectories...)
		p.Trap = &s
	}
	if p.Formulary != nil {
		s := *p.Formulary
		s.Trajectories = append([]int(nil), s.Trajectories...)
		p.Formulary = &s
	}
	if p.Clinical != nil {
		s := *p.Clinical
		s.Trajectories = append([]int(nil), s.Trajectories...)
		s.OffFormulary = make([][]int, len(p.Clinical.OffFormulary))
		for i, off := range p.Clinical.OffFormulary {
			s.OffFormulary[i] = append([]int{}, off...)
		}
		p.Clinical = &s
	}
	return p
}

func (c *common) OptimalWeights() [][]float64 {
	c.optOnce.Do(func() { c.optW = c.eval.weights(nil, nil) })
	return c.optW
}

func (c *common) PolicyWeights(pi Policy) [][]float64 {
	if pi == nil {
		panic("sim: nil policy")
	}
	return c.eval.weights(pi, nil)
}

func (c *common) SitePolicyValue(k int, pi Policy, states [][]float64) []float64 {
	if pi == nil {
		panic("sim: nil policy")
	}
	if k < 0 || k >= len(c.sites) {
		panic(fmt.Sprintf("sim: site index %d outside 0..%d", k, len(c.sites)-1))
	}
	return valuesAt(&c.fmap, c.eval.weights(pi, []int{k})[0], pi, states)
}

func (c *common) OptimalValue(states [][]float64) []float64 {
	return valuesAt(&c.fmap, c.OptimalWeights()[0], nil, states)
}

func (c *common) PolicyValue(pi Policy, states [][]float64) []float64 {
	return valuesAt(&c.fmap, c.PolicyWeights(pi)[0], pi, states)
}

func (c *common) OptimalPolicy() Policy {
	w := c.OptimalWeights()
	m := c.fmap
	return func(h int, state []float64) int {
		a, _ := greedy(&m, state, w[h-1])
		return a
	}
}

// greedy returns argmax_a phi(state,a)^T w (lowest a on ties) and the max.
func greedy(m *features.Map, state []float64, w []float64) (int, float64) {
	best, arg := m.Dot(state, 0, w), 0
	for a := 1; a < m.A; a++ {
		if q := m.Dot(state, a, w); q > best {
			best, arg = q, a
		}
	}
	return arg, best
}

// act calls pi and checks its answer.
func act(pi Policy, A, h int, state []float64) int {
	a := pi(h, state)
	if a < 0 || a >= A {
		panic(fmt.Sprintf("sim: policy chose action %d at step %d: want 0..%d", a, h, A-1))
	}
	return a
}

// valuesAt returns V_1 at each state from w_1: the max over actions for a
// nil policy, else phi(s, pi(1,s))^T w_1. It panics if a state has the
// wrong width.
func valuesAt(m *features.Map, w1 []float64, pi Policy, states [][]float64) []float64 {
	out := make([]float64, len(states))
	buf := make([]float64, m.Width())
	for i, s := range states {
		if len(s) != m.Width() {
			panic(fmt.Sprintf("sim: state of width %d, want %d", len(s), m.Width()))
		}
		if pi == nil {
			_, out[i] = greedy(m, s, w1)
			continue
		}
		copy(buf, s)
		out[i] = m.Dot(s, act(pi, m.A, 1, buf), w1)
	}
	return out
}

// buildTable adds the chunks to a Builder in order and builds the Table.
func buildTable(opts traj.Options, chunks []*traj.Chunk, err error) (*traj.Table, error) {
	if err != nil {
		return nil, err
	}
	b := traj.NewBuilder(opts)
	for _, c := range chunks {
		if err := b.Add(c); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// newChunk returns an empty chunk for site k (0-based) with room for n
// rows of width w.
func newChunk(scenario string, k, w, n int) *traj.Chunk {
	return &traj.Chunk{
		Src:       traj.Origin{File: "simulated " + scenario + " data", RowGroup: k},
		SiteInt:   make([]int64, 0, n),
		TrajInt:   make([]int64, 0, n),
		ActionInt: make([]int64, 0, n),
		Step:      make([]int64, 0, n),
		Reward:    make([]float64, 0, n),
		State:     make([]float64, 0, n*w),
		W:         w,
	}
}

// addRow appends one row to c; site k and traj are 0-based, written as
// k+1 and traj.
func addRow(c *traj.Chunk, k, traj, h, a int, r float64, state []float64) {
	c.SiteInt = append(c.SiteInt, int64(k+1))
	c.TrajInt = append(c.TrajInt, int64(traj))
	c.Step = append(c.Step, int64(h))
	c.ActionInt = append(c.ActionInt, int64(a))
	c.Reward = append(c.Reward, r)
	c.State = append(c.State, state...)
}

// perSite runs f for each site in parallel and returns the chunks in site
// order, with their Origin rows set as if written one after another.
func perSite(K int, f func(k int) *traj.Chunk) []*traj.Chunk {
	out := make([]*traj.Chunk, K)
	parallel(K, func(k int) { out[k] = f(k) })
	row := int64(0)
	for _, c := range out {
		c.Src.Row = row
		row += int64(c.Len())
	}
	return out
}

// parallel runs f(0..n-1) on up to GOMAXPROCS goroutines. Each call must
// write only its own outputs.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
}

// allSites returns 0..K-1.
func allSites(K int) []int {
	s := make([]int, K)
	for k := range s {
		s[k] = k
	}
	return s
}
