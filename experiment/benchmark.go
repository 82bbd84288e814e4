package experiment

import (
	"context"
	"fmt"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// benchmarkMethods are the paper's four methods of section 4.1, in the
// order of its Figure 1.
var benchmarkMethods = []solve.Method{solve.Sitewise, solve.PEVIPooled, solve.PEVIAvg, solve.PEVIMin}

// benchmarkTrial is one trial's mean robust suboptimality per method.
type benchmarkTrial struct {
	subopt []float64 // by method
	seeds  TrialSeeds
}

func runBenchmark(ctx context.Context, cfg Config) (*Summary, error) {
	params := func(seed uint64) sim.Params {
		p := sim.Params{Seed: seed, Trajectories: cfg.Trajectories}
		if cfg.evalSamples > 0 {
			spec := sim.DefaultBenchmarkSpec()
			spec.EvalSamples = cfg.evalSamples
			p.Benchmark = &spec
		}
		return p
	}
	var fixed sim.Model
	if cfg.FixedModel {
		m, err := sim.New(sim.ScenarioBenchmark, params(Derive(cfg.Seed, tagModel)))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		fixed = m
	} else if _, err := sim.New(sim.ScenarioBenchmark, params(0)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	trials := make([]benchmarkTrial, cfg.Reps)
	err := forEach(ctx, cfg.Workers, cfg.Reps, cfg.Progress, func(ctx context.Context, r int) error {
		seeds := TrialSeeds{Rep: r, Model: Derive(cfg.Seed, uint64(r), tagModel), Data: []uint64{Derive(cfg.Seed, uint64(r), tagData, 0)}, Eval: Derive(cfg.Seed, uint64(r), tagEval)}
		m := fixed
		if m == nil {
			var err error
			if m, err = sim.New(sim.ScenarioBenchmark, params(seeds.Model)); err != nil {
				return err
			}
		} else {
			seeds.Model = Derive(cfg.Seed, tagModel)
		}
		sub, err := benchmarkTrialRun(ctx, cfg, m, seeds)
		if err != nil {
			return fmt.Errorf("trial %d: %w", r, err)
		}
		trials[r] = benchmarkTrial{subopt: sub, seeds: seeds}
		return nil
	})
	if err != nil {
		return nil, err
	}

	m := fixed
	if m == nil {
		m, _ = sim.New(sim.ScenarioBenchmark, params(trials[0].seeds.Model))
	}
	fm := m.Map()
	spec := m.Params().Benchmark
	s := &Summary{
		Experiment: Benchmark, Paper: "section 4.1, Figure 1", Command: cfg.Command, Reps: cfg.Reps, Seed: cfg.Seed,
		Settings: Settings{
			Scenario: sim.ScenarioBenchmark, Features: fm.Kind.String(), Sites: len(m.Sites()), Actions: fm.A, Horizon: m.Horizon(), D: fm.Dim(),
			Trajectories: m.Trajectories(), Lambda: Number(cfg.Lambda), Xi: Number(cfg.Xi), C: numbers(cfg.C),
			Fallback: string(solve.FallbackLowest), EvalStates: cfg.States, Sampler: "trajectories", Spec: spec, Level: Level,
			Model: "redrawn per trial: trial r draws theta, the Beta shapes and the evaluation draws from its model seed",
		},
	}
	if cfg.FixedModel {
		s.Settings.Model = "fixed: every trial uses the model drawn from Derive(seed, 1); only the data and the evaluation states change"
	}
	for _, meth := range benchmarkMethods {
		s.Settings.Methods = append(s.Settings.Methods, string(meth))
	}
	for j, meth := range benchmarkMethods {
		x := make([]float64, cfg.Reps)
		for r := range trials {
			x[r] = trials[r].subopt[j]
		}
		s.Methods = append(s.Methods, MethodResult{Method: string(meth), Estimate: estimate(x)})
	}
	for _, t := range trials {
		s.Seeds = append(s.Seeds, t.seeds)
	}
	s.Notes = []string{
		fmt.Sprintf("each trial's value is the mean robust suboptimality V*_1(s) - V^pi_1(s) over %d initial states drawn uniformly from [0,1]^3 (sim's InitialStates with the trial's eval seed); V* and V^pi are exact for the model's empirical robust MDP of %d Monte Carlo draws per (site, step, coordinate), common to V* and every policy (docs/EXPERIMENTS.md)", cfg.States, spec.EvalSamples),
		"mean and 95% t-interval (R-1 degrees of freedom) over the R trials",
		"methods: sitewise = Algorithm 1 (one group per site); pevi-pooled = PEVI on all sites pooled (the paper's Naive Pooling); pevi-avg and pevi-min = PEVI per site, Qhat averaged or minimised",
		"decisions without evidence (every Qhat = 0) take the lowest action, the paper's rule",
	}
	return s, nil
}

// benchmarkTrialRun draws one data set from m, solves every method and
// returns their mean suboptimality over the trial's initial states.
func benchmarkTrialRun(ctx context.Context, cfg Config, m sim.Model, seeds TrialSeeds) ([]float64, error) {
	t, err := m.Sample(seeds.Data[0])
	if err != nil {
		return nil, err
	}
	fm := m.Map()
	st, err := solve.NewStats(ctx, t, fm, fm.Blocks(), 1)
	if err != nil {
		return nil, err
	}
	states := m.InitialStates(cfg.States, seeds.Eval)
	vstar := m.OptimalValue(states)
	sv := solve.NewSolver(st, cfg.settings(cfg.C[0]))
	out := make([]float64, len(benchmarkMethods))
	for j, meth := range benchmarkMethods {
		p, err := sv.Solve(ctx, solve.Problem{Method: meth})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", meth, err)
		}
		out[j] = meanDiff(vstar, m.PolicyValue(policyOf(p), states))
	}
	return out, nil
}
