package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// The experiments, by the name `grmdp experiment` takes.
const (
	Benchmark   = "benchmark"   // paper section 4.1, Figure 1
	Convergence = "convergence" // paper section 4.2, Figure 2
	Pessimism   = "pessimism"   // paper section 4.3, Figure 3
	// Coverage is the calibration study of grmdp eval's intervals and
	// flags (not in the paper).
	Coverage = "coverage"
)

// Names returns the experiment names Run accepts.
func Names() []string { return []string{Benchmark, Convergence, Pessimism} }

// Metric names, as summary.json writes them.
const (
	MetricSuboptimality = "suboptimality"
	MetricValueGap      = "value_gap"
)

// ErrConfig is wrapped by every error about a Config.
var ErrConfig = errors.New("experiment: bad configuration")

// Progress receives the number of finished tasks. Implementations must be
// safe for concurrent use; a nil Progress is silent.
type Progress interface {
	SetTotal(n int64)
	Add(n int64)
}

// Config selects an experiment and its settings. The zero value of every
// field but Experiment and Seed takes the paper's setting for that
// experiment (see the field and docs/EXPERIMENTS.md).
type Config struct {
	// Experiment is Benchmark, Convergence or Pessimism.
	Experiment string
	// Reps is R, the number of independent trials (default 50; at least 2).
	Reps int
	// Seed is S: trial r draws everything from seeds derived from (S, r)
	// alone (see Derive).
	Seed uint64
	// Workers bounds the trials run at once (default GOMAXPROCS). Results
	// do not depend on it.
	Workers int

	// Trajectories is N_k per site for the benchmark (default 3000, 2000,
	// 5000).
	Trajectories []int
	// NMin is the N_min grid of the convergence experiment (default 50,
	// 100, 500, 1000, 2000, 5000, 8000) or of the pessimism experiment
	// (default 20, 200, ..., 2e6).
	NMin []int
	// C holds the penalty constants: one for the benchmark and the
	// convergence experiment (default 5e-4), the curves of the pessimism
	// experiment (default 0, 5e-4, 1e-3).
	C []float64
	// Lambda is the ridge parameter (default 1; 1e-5 for pessimism), Xi the
	// confidence parameter (default 0.05).
	Lambda, Xi float64
	// States is the number of uniform initial states a trial's
	// suboptimality averages over (default 200; the convergence experiment
	// evaluates at s0).
	States int
	// FixedModel (benchmark only) draws one model from S for every trial,
	// instead of a new model per trial (the default).
	FixedModel bool
	// TrapCount (pessimism only) overrides the trap instance's number of
	// trap transitions per (site, step) (default: the sim default, 5).
	TrapCount int
	// RewardScale (pessimism only), in (0, 1], scales each reward's
	// deviation from its action's mean: the data then follow a two-point
	// reward with the same mean and RewardScale^2 times the Bernoulli
	// variance. Default 1 (Bernoulli rewards, the sim default).
	RewardScale float64
	// BetaNMin (pessimism only), when positive, freezes the penalty: every
	// N_min is solved with the beta that c gives at N_min = BetaNMin, so
	// that the curves show what more data does at a fixed penalty. Zero
	// (the paper's rule) lets beta grow with N_max as sqrt(log N_max).
	BetaNMin int

	// Scenario (coverage only) is the simulation scenario of the
	// calibration study: sim.ScenarioBenchmark, sim.ScenarioFormulary or
	// sim.ScenarioClinical.
	Scenario string
	// Bootstrap (coverage only) is the number of bootstrap replicates of
	// each evaluation (default 100, grmdp eval's).
	Bootstrap int

	// Command is the command line recorded in the summary.
	Command string
	// Progress receives one count per finished task (nil: silent).
	Progress Progress

	// evalSamples, when positive, overrides the benchmark model's Monte
	// Carlo draws per (site, step, coordinate) and the clinical model's
	// Monte Carlo episodes per site; tests use it to stay fast.
	evalSamples int
}

// Paper's settings.
var (
	paperBenchmarkN      = []int{3000, 2000, 5000}
	paperConvergenceNMin = []int{50, 100, 500, 1000, 2000, 5000, 8000}
	paperPessimismNMin   = []int{20, 200, 2000, 20000, 200000, 2000000}
	paperPessimismC      = []float64{0, 5e-4, 1e-3}
)

const (
	defaultReps   = 50
	defaultStates = 200
	// defaultBootstrap is grmdp eval's default.
	defaultBootstrap = 100
)

// resolve fills the defaults in and checks the ranges.
func (c Config) resolve() (Config, error) {
	for _, step := range []func() error{c.resolveStudy, c.resolveRuns, c.resolveSolver, c.resolveSizes, c.resolveScenario} {
		if err := step(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// configErr returns an [ErrConfig] with the formatted detail.
func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
}

// resolveStudy checks the experiment's name and the coverage study's
// scenario and bootstrap replicates.
func (c *Config) resolveStudy() error {
	if !slices.Contains(Names(), c.Experiment) && c.Experiment != Coverage {
		return configErr("unknown experiment %q (want benchmark, convergence, pessimism or coverage)", c.Experiment)
	}
	if c.Experiment == Coverage {
		if c.Scenario != sim.ScenarioBenchmark && c.Scenario != sim.ScenarioFormulary && c.Scenario != sim.ScenarioClinical {
			return configErr("the coverage study's scenario %q: want benchmark, formulary or clinical", c.Scenario)
		}
		if c.Bootstrap == 0 {
			c.Bootstrap = defaultBootstrap
		}
		if c.Bootstrap < 2 {
			return configErr("%d bootstrap replicates: want at least 2 for an interval", c.Bootstrap)
		}
	} else if c.Scenario != "" || c.Bootstrap != 0 {
		return configErr("a scenario and bootstrap replicates are options of the coverage study")
	}
	return nil
}

// resolveRuns fills in and checks the repetitions, workers and
// evaluation states.
func (c *Config) resolveRuns() error {
	if c.Reps == 0 {
		c.Reps = defaultReps
	}
	if c.Reps < 2 {
		return configErr("%d repetitions: want at least 2 for a confidence interval", c.Reps)
	}
	if c.Workers < 0 {
		return configErr("negative workers %d", c.Workers)
	}
	c.Workers = workers.Or(c.Workers)
	if c.States == 0 {
		c.States = defaultStates
	}
	if c.States < 1 {
		return configErr("%d evaluation states: want at least 1", c.States)
	}
	return nil
}

// resolveSolver fills in and checks xi, lambda and the penalty constants
// (the pessimism experiment sweeps c; the others take one).
func (c *Config) resolveSolver() error {
	if c.Xi == 0 {
		c.Xi = 0.05
	}
	if !(c.Xi > 0 && c.Xi < 1) {
		return configErr("xi %g outside (0,1)", c.Xi)
	}
	if c.Lambda == 0 {
		c.Lambda = 1
		if c.Experiment == Pessimism {
			c.Lambda = 1e-5
		}
	}
	if !(c.Lambda > 0) || math.IsInf(c.Lambda, 0) {
		return configErr("lambda %g: want a positive number", c.Lambda)
	}
	if c.C == nil {
		c.C = []float64{5e-4}
		if c.Experiment == Pessimism {
			c.C = slices.Clone(paperPessimismC)
		}
	}
	for _, v := range c.C {
		if !(v >= 0) || math.IsInf(v, 0) {
			return configErr("penalty constant c = %g: want a number >= 0", v)
		}
	}
	if c.Experiment != Pessimism && len(c.C) != 1 {
		return configErr("the %s experiment takes one penalty constant c, got %d", c.Experiment, len(c.C))
	}
	return nil
}

// resolveSizes fills in and checks the sample sizes: site sizes for the
// benchmark and the coverage study, an N_min grid for the others.
func (c *Config) resolveSizes() error {
	switch c.Experiment {
	case Coverage:
		if c.NMin != nil {
			return configErr("the coverage study takes site sizes, not an N_min grid")
		}
	case Benchmark:
		if c.Trajectories == nil {
			c.Trajectories = slices.Clone(paperBenchmarkN)
		}
		if c.NMin != nil {
			return configErr("the benchmark takes site sizes, not an N_min grid")
		}
	case Convergence:
		if c.NMin == nil {
			c.NMin = slices.Clone(paperConvergenceNMin)
		}
	case Pessimism:
		if c.NMin == nil {
			c.NMin = slices.Clone(paperPessimismNMin)
		}
	}
	if c.Experiment != Benchmark && c.Experiment != Coverage && c.Trajectories != nil {
		return configErr("the %s experiment takes an N_min grid, not site sizes", c.Experiment)
	}
	for _, n := range append(slices.Clone(c.Trajectories), c.NMin...) {
		if n < 1 {
			return configErr("sample size %d: want at least 1", n)
		}
	}
	return nil
}

// resolveScenario checks the options that shape one experiment's model:
// the benchmark's fixed model and the pessimism experiment's trap count,
// reward scale and frozen beta.
func (c *Config) resolveScenario() error {
	if c.FixedModel && c.Experiment != Benchmark {
		return configErr("a fixed model is a benchmark option")
	}
	if c.TrapCount != 0 || c.RewardScale != 0 || c.BetaNMin != 0 {
		if c.Experiment != Pessimism {
			return configErr("the trap count, the reward scale and a frozen beta are pessimism options")
		}
	}
	if c.BetaNMin < 0 {
		return configErr("beta N_min %d: want at least 0", c.BetaNMin)
	}
	if c.TrapCount < 0 {
		return configErr("trap count %d: want at least 0", c.TrapCount)
	}
	if c.RewardScale == 0 {
		c.RewardScale = 1
	}
	if !(c.RewardScale > 0 && c.RewardScale <= 1) {
		return configErr("reward scale %g outside (0, 1]", c.RewardScale)
	}
	return nil
}

// Run runs the experiment cfg names and returns its summary. Trials run in
// parallel on cfg.Workers goroutines; each writes only its own slot, and
// the summary is assembled afterwards in trial order, so it does not
// depend on the number of workers.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if cfg.Progress == nil {
		cfg.Progress = silent{}
	}
	switch cfg.Experiment {
	case Benchmark:
		return runBenchmark(ctx, cfg)
	case Convergence:
		return runConvergence(ctx, cfg)
	case Coverage:
		return runCoverage(ctx, cfg)
	default:
		return runPessimism(ctx, cfg)
	}
}

type silent struct{}

func (silent) SetTotal(int64) {}
func (silent) Add(int64)      {}

// forEach runs task(ctx, i) for i = 0..n-1 on up to nworkers goroutines
// and stops at the first error: that of the lowest i that failed, as a
// serial run would report it. Task i must write only its own outputs.
func forEach(ctx context.Context, nworkers, n int, progress Progress, task func(ctx context.Context, i int) error) error {
	progress.SetTotal(int64(n))
	g := workers.NewGroup(ctx, nworkers)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func(ctx context.Context) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := task(ctx, i); err != nil {
				return err
			}
			progress.Add(1)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// Seed tags: what a derived seed is for.
const (
	tagModel uint64 = 1 + iota
	tagData
	tagEval
)

// Derive returns the seed for one purpose of one trial: a splitmix64 hash
// of (seed, tags...), masked to 53 bits so that any JSON reader reads it
// exactly. Trial r of an experiment run with seed S draws its model from
// Derive(S, r, 1), its data at grid point i from Derive(S, r, 2, i) and its
// evaluation states from Derive(S, r, 3); a fixed benchmark model comes
// from Derive(S, 1).
func Derive(seed uint64, tags ...uint64) uint64 {
	x := mix(seed ^ 0x6772_6d64_7065_7870) // "grmdpexp"
	for _, t := range tags {
		x = mix(x ^ mix(t+0x9e3779b97f4a7c15))
	}
	return x & (1<<53 - 1)
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// settings returns the solver settings of a run with penalty constant c:
// the paper's tie rule (the lowest action when no action has evidence) and
// one worker, since trials already run in parallel.
func (c Config) settings(pc float64) solve.Settings {
	return solve.Settings{Lambda: c.Lambda, C: pc, Xi: c.Xi, Workers: 1, Fallback: solve.FallbackLowest}
}

// policyOf turns a solved policy into a sim.Policy (safe for concurrent
// use).
func policyOf(p *solve.Policy) sim.Policy {
	pool := sync.Pool{New: func() any { q := make([]float64, p.A); return &q }}
	return func(h int, state []float64) int {
		q := pool.Get().(*[]float64)
		a, _, _ := p.Act(h, state, *q)
		pool.Put(q)
		return a
	}
}

// meanDiff returns the mean of a[i] - b[i].
func meanDiff(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] - b[i]
	}
	return s / float64(len(a))
}

// Number is a float64 that JSON encodes as null when it is NaN or
// infinite (an interval that cannot be computed).
type Number float64

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON implements json.Unmarshaler; null reads as NaN.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Number(f)
	return nil
}

func numbers(x []float64) []Number {
	out := make([]Number, len(x))
	for i, v := range x {
		out[i] = Number(v)
	}
	return out
}

// joinInts formats 1,2,3.
func joinInts(x []int) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}
