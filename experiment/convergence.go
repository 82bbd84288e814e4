package experiment

import (
	"context"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// convergenceCell is one (trial, N_min) result.
type convergenceCell struct {
	subopt, gap float64
	N           []int
}

func runConvergence(ctx context.Context, cfg Config) (*Summary, error) {
	P := len(cfg.NMin)
	for _, n := range cfg.NMin {
		if _, err := sim.NewHard(sim.Params{MinTrajectories: n}); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	cells := make([]convergenceCell, cfg.Reps*P)
	err := forEach(ctx, cfg.Workers, len(cells), cfg.Progress, func(ctx context.Context, task int) error {
		r, i := task/P, task%P
		c, err := convergenceRun(ctx, cfg, Derive(cfg.Seed, uint64(r), tagModel), Derive(cfg.Seed, uint64(r), tagData, uint64(i)), cfg.NMin[i])
		if err != nil {
			return fmt.Errorf("trial %d, N_min = %d: %w", r, cfg.NMin[i], err)
		}
		cells[task] = c
		return nil
	})
	if err != nil {
		return nil, err
	}

	m, _ := sim.NewHard(sim.Params{})
	fm := m.Map()
	spec := m.Params().Convergence
	s := &Summary{
		Experiment: Convergence, Paper: "section 4.2, Figure 2", Command: cfg.Command, Reps: cfg.Reps, Seed: cfg.Seed,
		Settings: Settings{
			Scenario: sim.ScenarioConvergence, Features: fm.Kind.String(), Sites: len(m.Sites()), Actions: fm.A, Horizon: m.Horizon(), D: fm.Dim(),
			SiteRatio: sim.DefaultConvergenceSpec().Trajectories, NMin: cfg.NMin, Methods: []string{string(solve.Sitewise)},
			Lambda: Number(cfg.Lambda), Xi: Number(cfg.Xi), C: numbers(cfg.C), Fallback: string(solve.FallbackLowest), EvalStates: 1,
			Model:   "redrawn per trial and N_min: the model seed draws the first-step counts n_1^k, n_2^k that delta^k depends on; the data seed draws the rest",
			Sampler: "compressed", Spec: spec, Level: Level,
		},
	}
	subMeans, gapMeans := make([]float64, P), make([]float64, P)
	for i, n := range cfg.NMin {
		sub, gap := make([]float64, cfg.Reps), make([]float64, cfg.Reps)
		for r := 0; r < cfg.Reps; r++ {
			c := cells[r*P+i]
			sub[r], gap[r] = c.subopt, c.gap
		}
		g := estimate(gap)
		pt := Point{C: Number(cfg.C[0]), NMin: n, Trajectories: cells[i].N, Suboptimality: estimate(sub), ValueGap: &g}
		subMeans[i], gapMeans[i] = float64(pt.Suboptimality.Mean), float64(g.Mean)
		s.Points = append(s.Points, pt)
	}
	all := make([]int, P)
	for i := range all {
		all[i] = i
	}
	fs := fitPoints(MetricSuboptimality, cfg.C[0], cfg.NMin, subMeans, all, "all points with a positive mean")
	fs.Paper = &PaperFit{Slope: -0.45, HalfWidth: 0.03, R2: paperR2(0.995), Range: "all 7 points"}
	fg := fitPoints(MetricValueGap, cfg.C[0], cfg.NMin, gapMeans, all, "all points with a positive mean")
	fg.Paper = &PaperFit{Slope: -0.62, HalfWidth: 0.03, R2: paperR2(0.997), Range: "all 7 points"}
	s.Fits = []Fit{fs, fg}
	for r := 0; r < cfg.Reps; r++ {
		ts := TrialSeeds{Rep: r, Model: Derive(cfg.Seed, uint64(r), tagModel)}
		for i := range cfg.NMin {
			ts.Data = append(ts.Data, Derive(cfg.Seed, uint64(r), tagData, uint64(i)))
		}
		s.Seeds = append(s.Seeds, ts)
	}
	s.Notes = []string{
		"suboptimality at s0 in closed form: (H-1)[min_k p_1^k - min_k P_1^k(s1 | s0, pihat_1(s0))] (sim's Hard.SubOpt); value gap V*_1(s0) - Vhat_1(s0) with Vhat_1(s0) = max_a Qhat_1(s0, a)",
		"site sizes N_k = N_min x (1, 1.5, 2, 3); delta^k = (1/8) sqrt(3 / (2 (n_1^k + n_2^k))) from each data set's first-step counts",
		"data drawn as counts (sim's SampleCompressed): the same law as per-trajectory sampling, and Algorithm 1's statistics are the same sums",
		"fits: OLS of log(mean over trials) on log(N_min); slope 95% t-interval with n-2 degrees of freedom",
	}
	return s, nil
}

// convergenceRun solves one hard-instance data set and returns the
// suboptimality and the value gap at s0.
func convergenceRun(ctx context.Context, cfg Config, modelSeed, dataSeed uint64, nmin int) (convergenceCell, error) {
	m, err := sim.NewHard(sim.Params{Seed: modelSeed, MinTrajectories: nmin})
	if err != nil {
		return convergenceCell{}, err
	}
	t, err := m.SampleCompressed(dataSeed)
	if err != nil {
		return convergenceCell{}, err
	}
	fm := m.Map()
	st, err := solve.NewStats(ctx, t, fm, fm.Blocks(), 1)
	if err != nil {
		return convergenceCell{}, err
	}
	p, err := solve.NewSolver(st, cfg.settings(cfg.C[0])).Solve(ctx, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		return convergenceCell{}, err
	}
	s0 := []float64{0}
	q := make([]float64, p.A)
	a, _, _ := p.Act(1, s0, q) // fills q with Qhat_1(s0, .)
	vhat := slices.Max(q)      // Vhat_1(s0) = max_a Qhat_1(s0, a)
	return convergenceCell{subopt: m.SubOpt(a), gap: m.OptimalValueClosedForm() - vhat, N: m.Trajectories()}, nil
}
