package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// pessimismCell is one (trial, N_min) result: the mean suboptimality for
// each c.
type pessimismCell struct {
	subopt []float64 // by c
	N      []int
}

func (c Config) trapParams(seed uint64, nmin int) sim.Params {
	spec := sim.DefaultTrapSpec()
	if c.TrapCount > 0 {
		spec.TrapCount = c.TrapCount
	}
	return sim.Params{Seed: seed, MinTrajectories: nmin, Trap: &spec}
}

func runPessimism(ctx context.Context, cfg Config) (*Summary, error) {
	P := len(cfg.NMin)
	for _, n := range cfg.NMin {
		if _, err := sim.NewTrap(cfg.trapParams(0, n)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	cells := make([]pessimismCell, cfg.Reps*P)
	err := forEach(ctx, cfg.Workers, len(cells), cfg.Progress, func(ctx context.Context, task int) error {
		r, i := task/P, task%P
		c, err := pessimismRun(ctx, cfg, Derive(cfg.Seed, uint64(r), tagModel), Derive(cfg.Seed, uint64(r), tagData, uint64(i)), Derive(cfg.Seed, uint64(r), tagEval), cfg.NMin[i])
		if err != nil {
			return fmt.Errorf("trial %d, N_min = %d: %w", r, cfg.NMin[i], err)
		}
		cells[task] = c
		return nil
	})
	if err != nil {
		return nil, err
	}

	m, _ := sim.NewTrap(cfg.trapParams(0, cfg.NMin[0]))
	fm := m.Map()
	spec := m.Params().Trap
	s := &Summary{
		Experiment: Pessimism, Paper: "section 4.3, Figure 3", Command: cfg.Command, Reps: cfg.Reps, Seed: cfg.Seed,
		Settings: Settings{
			Scenario: sim.ScenarioTrap, Features: fm.Kind.String(), Sites: len(m.Sites()), Actions: fm.A, Horizon: m.Horizon(), D: fm.Dim(),
			SiteRatio: sim.DefaultTrapSpec().Trajectories, NMin: cfg.NMin, Methods: []string{string(solve.Sitewise)},
			Lambda: Number(cfg.Lambda), Xi: Number(cfg.Xi), C: numbers(cfg.C), Fallback: string(solve.FallbackLowest), EvalStates: cfg.States,
			Model:   "one model per trial (its transition laws mu drawn from the trial's model seed), shared by every N_min and c of the trial",
			Sampler: "compressed", TrapCount: spec.TrapCount, RewardScale: Number(cfg.RewardScale), BetaNMin: cfg.BetaNMin, Spec: spec, Level: Level,
		},
	}
	all := make([]int, P)
	for i := range all {
		all[i] = i
	}
	for ci, c := range cfg.C {
		means := make([]float64, P)
		for i, n := range cfg.NMin {
			x := make([]float64, cfg.Reps)
			for r := 0; r < cfg.Reps; r++ {
				x[r] = cells[r*P+i].subopt[ci]
			}
			pt := Point{C: Number(c), NMin: n, Trajectories: cells[i].N, Suboptimality: estimate(x)}
			means[i] = float64(pt.Suboptimality.Mean)
			s.Points = append(s.Points, pt)
		}
		f := fitPoints(MetricSuboptimality, c, cfg.NMin, means, all, "all points with a positive mean")
		f.Paper = paperPessimism(c)
		s.Fits = append(s.Fits, f)
		if P > 3 {
			rf := fitPoints(MetricSuboptimality, c, cfg.NMin, means, all[:P-1], fmt.Sprintf("first %d points", P-1))
			rf.Paper = paperPessimism(c)
			s.RangeFits = append(s.RangeFits, rf)
		}
	}
	for r := 0; r < cfg.Reps; r++ {
		ts := TrialSeeds{Rep: r, Model: Derive(cfg.Seed, uint64(r), tagModel), Eval: Derive(cfg.Seed, uint64(r), tagEval)}
		for i := range cfg.NMin {
			ts.Data = append(ts.Data, Derive(cfg.Seed, uint64(r), tagData, uint64(i)))
		}
		s.Seeds = append(s.Seeds, ts)
	}
	s.Notes = []string{
		fmt.Sprintf("each trial's value is the mean robust suboptimality V*_1(s) - V^pi_1(s) over %d initial states drawn uniformly from the 15 grid states; exact (finite model)", cfg.States),
		"the c values of one trial and N_min solve the same data set",
		fmt.Sprintf("site sizes N_k = N_min x (1, 1.5, 2.5); %d trap transitions per (site, step) whatever N_k; Bernoulli rewards (means 0.70 safe, 0.65 trap)", spec.TrapCount),
		"data drawn as counts (sim's SampleCompressed): the same law as per-trajectory sampling, with memory independent of N",
		"fits: OLS of log(mean over trials) on log(N_min); slope 95% t-interval with n-2 degrees of freedom",
	}
	if cfg.BetaNMin > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("ablation: beta is frozen at its value for N_min = %d (beta = c d H sqrt(log(2 d K H N_max / xi)) with that N_min's N_max) for every N_min", cfg.BetaNMin))
	}
	if cfg.RewardScale != 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("ablation: every reward's deviation from its action's mean is scaled by %g (a two-point reward with %.4g times the Bernoulli variance)", cfg.RewardScale, cfg.RewardScale*cfg.RewardScale))
	}
	return s, nil
}

func paperPessimism(c float64) *PaperFit {
	switch c {
	case 0:
		return &PaperFit{Slope: -0.15, HalfWidth: 0.09, Range: "all 6 points"}
	case 1e-3:
		return &PaperFit{Slope: -0.88, HalfWidth: 0.23, Range: "first 5 points (0 at N_min = 2e6)"}
	}
	return nil
}

// pessimismRun solves one trap data set for every c and returns the mean
// suboptimality over the trial's initial states.
func pessimismRun(ctx context.Context, cfg Config, modelSeed, dataSeed, evalSeed uint64, nmin int) (pessimismCell, error) {
	m, err := sim.NewTrap(cfg.trapParams(modelSeed, nmin))
	if err != nil {
		return pessimismCell{}, err
	}
	t, err := m.SampleCompressed(dataSeed)
	if err != nil {
		return pessimismCell{}, err
	}
	if cfg.RewardScale != 1 {
		spec := m.Params().Trap
		scaleRewards(t, []float64{spec.SafeMean, spec.TrapMean}, cfg.RewardScale)
	}
	fm := m.Map()
	st, err := solve.NewStats(ctx, t, fm, fm.Blocks(), 1)
	if err != nil {
		return pessimismCell{}, err
	}
	states := m.InitialStates(cfg.States, evalSeed)
	vstar := m.OptimalValue(states)
	out := pessimismCell{subopt: make([]float64, len(cfg.C)), N: m.Trajectories()}
	var frozenNMax float64
	if cfg.BetaNMin > 0 {
		ref, err := sim.NewTrap(cfg.trapParams(modelSeed, cfg.BetaNMin))
		if err != nil {
			return pessimismCell{}, err
		}
		frozenNMax = float64(slices.Max(ref.Trajectories()))
	}
	for ci, c := range cfg.C {
		set := cfg.settings(c)
		if cfg.BetaNMin > 0 {
			set.Beta = solve.Beta(c, fm.Dim(), len(m.Sites()), m.Horizon(), frozenNMax, cfg.Xi)
			set.BetaSet = true
		}
		p, err := solve.NewSolver(st, set).Solve(ctx, solve.Problem{Method: solve.Sitewise})
		if err != nil {
			return pessimismCell{}, fmt.Errorf("c = %g: %w", c, err)
		}
		out.subopt[ci] = meanDiff(vstar, m.PolicyValue(policyOf(p), states))
	}
	return out, nil
}

// scaleRewards replaces every row's reward r by mean_a + f (r - mean_a),
// mean_a the mean reward of the row's action. A row's reward is the mean
// of its transitions' rewards, so this is exactly the data of a two-point
// reward with the same mean and f^2 times the variance.
func scaleRewards(t *traj.Table, mean []float64, f float64) {
	for h := range t.Steps {
		st := &t.Steps[h]
		for j := range st.Reward {
			mu := mean[st.Action[j]]
			st.Reward[j] = mu + f*(st.Reward[j]-mu)
		}
	}
}
