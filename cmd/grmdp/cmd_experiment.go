package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/experiment"
	"github.com/grmdp/grmdp/solve"
)

func experimentCommand() *cli.Command {
	return &cli.Command{
		Name:      "experiment",
		Usage:     "reproduce one of the paper's simulations (section 4): tables, plots and fitted slopes",
		ArgsUsage: "benchmark|convergence|pessimism|coverage",
		Commands: []*cli.Command{
			experimentSubcommand(experiment.Benchmark, "section 4.1: Algorithm 1 against the PEVI baselines on the linear-Beta model (Figure 1)",
				penaltyFlags(1, "5e-4", "penalty constant `C` in beta = c d H sqrt(zeta)"),
				&cli.StringFlag{Name: "trajectories", Value: "3000,2000,5000", Usage: "trajectories per site, comma separated `N1,N2,...`"},
				statesFlag(),
				&cli.BoolFlag{Name: "fixed-model", Usage: "draw one model from --seed for every trial (default: a new model per trial)"},
			),
			experimentSubcommand(experiment.Convergence, "section 4.2: suboptimality and value gap against N_min on the hard instance (Figure 2)",
				penaltyFlags(1, "5e-4", "penalty constant `C` in beta = c d H sqrt(zeta)"),
				&cli.StringFlag{Name: "n-min", Value: "50,100,500,1000,2000,5000,8000", Usage: "smallest site sizes, comma separated `N,N,...`"},
			),
			experimentSubcommand(experiment.Pessimism, "section 4.3: suboptimality against N_min with and without the penalty on the trap instance (Figure 3)",
				penaltyFlags(1e-5, "0,5e-4,1e-3", "penalty constants, one curve each, comma separated `C,C,...`"),
				&cli.StringFlag{Name: "n-min", Value: "20,200,2000,20000,200000,2000000", Usage: "smallest site sizes, comma separated `N,N,...`"},
				statesFlag(),
				&cli.IntFlag{Name: "trap-count", Usage: "ablation: trap transitions per (site, step) (default: the instance's, 5)"},
				&cli.Float64Flag{Name: "reward-scale", Value: 1, Usage: "ablation: scale each reward's deviation from its action's mean by `F` in (0,1] (variance times F^2)"},
				&cli.IntFlag{Name: "beta-n-min", Usage: "ablation: freeze each c's beta at its value for N_min = `N` (default: beta grows with N, the paper's rule)"},
			),
			experimentSubcommand(experiment.Coverage, "calibration of eval's intervals and flags: R simulated data sets with known models, every value against its exact value",
				penaltyFlags(1, "5e-4", "penalty constant `C` of the site-wise policy"),
				&cli.StringFlag{Name: "scenario", Usage: "simulation scenario: benchmark, formulary or clinical", Required: true},
				&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates per evaluation (at least 2)"},
				&cli.StringFlag{Name: "trajectories", Usage: "trajectories per site, comma separated `N1,N2,...` (default: the scenario's)"},
			),
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.NArg() == 0 {
				return usagef("name an experiment: grmdp experiment benchmark|convergence|pessimism|coverage [flags] -o DIR")
			}
			return usagef("unknown experiment %q (want benchmark, convergence, pessimism or coverage)", c.Args().First())
		},
	}
}

// penaltyFlags are an experiment's --lambda, --xi and --c, with its
// defaults.
func penaltyFlags(lambda float64, c, cUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.Float64Flag{Name: "lambda", Value: lambda, Usage: "ridge parameter lambda (> 0)"},
		&cli.Float64Flag{Name: "xi", Value: 0.05, Usage: "confidence parameter xi in (0,1)"},
		&cli.StringFlag{Name: "c", Value: c, Usage: cUsage},
	}
}

func statesFlag() cli.Flag {
	return &cli.IntFlag{Name: "states", Value: 200, Usage: "uniform initial states each trial averages over"}
}

// experimentSubcommand returns the subcommand of one experiment: the
// flags every experiment has (--reps, --seed, --workers, -o), then its
// penalty flags and its own, which ExperimentOptions.parse reads.
func experimentSubcommand(name, usage string, penalty []cli.Flag, ownFlags ...cli.Flag) *cli.Command {
	o := &ExperimentOptions{
		Workers: workersGroup{usage: "trials run at once (default: all cores); results do not depend on it"},
		Output:  outputGroup{usage: "`DIR` for summary.json, table.md, table.csv and the plots (created if missing)"},
	}
	flags := append([]cli.Flag{
		&cli.IntFlag{Name: "reps", Value: 50, Usage: "number of independent trials R (at least 2)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed S; trial r's seeds derive from (S, r) alone"},
	}, append(penalty, ownFlags...)...)
	return withConfig(leaf(&cli.Command{Name: name, Usage: usage}, o, []optionGroup{own{flags, func(c *cli.Command) error { return o.parse(c, name) }}, &o.Workers, &o.Output}, runExperiment))
}

// ExperimentOptions is what the command line of `grmdp experiment` says.
type ExperimentOptions struct {
	Config  experiment.Config
	Workers workersGroup
	Output  outputGroup
}

func (o *ExperimentOptions) parse(c *cli.Command, name string) error {
	if c.NArg() > 0 {
		return usagef("unexpected argument %q: grmdp experiment %s takes flags only", c.Args().First(), name)
	}
	// A flag the experiment does not declare reads as zero, which
	// experiment.Run takes as its default or as not applying.
	o.Config = experiment.Config{Experiment: name, Reps: c.Int("reps"), Seed: c.Uint64("seed"), Lambda: c.Float64("lambda"), Xi: c.Float64("xi"),
		States: c.Int("states"), FixedModel: c.Bool("fixed-model"), TrapCount: c.Int("trap-count"), RewardScale: c.Float64("reward-scale"),
		BetaNMin: c.Int("beta-n-min"), Scenario: c.String("scenario"), Bootstrap: c.Int("bootstrap")}
	cfg := &o.Config
	// experiment.Run checks the ranges; those where it would read a zero
	// as its default are checked here, when given.
	switch {
	case cfg.Reps < 2:
		return usagef("--reps must be at least 2 (a confidence interval needs two trials), got %d", cfg.Reps)
	case c.IsSet("bootstrap") && cfg.Bootstrap < 2:
		return usagef("--bootstrap must be at least 2, got %d", cfg.Bootstrap)
	case c.IsSet("states") && cfg.States < 1:
		return usagef("--states must be at least 1, got %d", cfg.States)
	case c.IsSet("reward-scale") && !(cfg.RewardScale > 0 && cfg.RewardScale <= 1):
		return usagef("--reward-scale must be in (0,1], got %v", cfg.RewardScale)
	}
	if err := (solve.Settings{Lambda: cfg.Lambda, Xi: cfg.Xi}).Check(); err != nil {
		return dataErr(err)
	}
	for _, f := range strings.Split(c.String("c"), ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return usagef("--c %q: want comma-separated numbers >= 0", c.String("c"))
		}
		cfg.C = append(cfg.C, v)
	}
	// The coverage study's --trajectories has no default (the scenario's
	// sizes) and is read only when given.
	for _, l := range []struct {
		flag string
		dst  *[]int
	}{{"n-min", &cfg.NMin}, {"trajectories", &cfg.Trajectories}} {
		if s := c.String(l.flag); s != "" || c.IsSet(l.flag) {
			var err error
			if *l.dst, err = intList(s); err != nil {
				return usagef("--%s %q: %v", l.flag, s, err)
			}
		}
	}
	// The command that reproduces the run: the subcommand (with the
	// coverage study's scenario), --reps and --seed, and every other flag
	// given (as parsed), but not --workers, --output or --config, which do
	// not change results.
	parts := []string{"grmdp", "experiment", name}
	if name == experiment.Coverage {
		parts = append(parts, "--scenario", cfg.Scenario)
	}
	for _, f := range c.Flags {
		flag := f.Names()[0]
		switch v := c.Value(flag); {
		case slices.Contains([]string{"workers", "output", "config", "help", "scenario"}, flag) || !c.IsSet(flag) && flag != "reps" && flag != "seed":
		case v == true:
			parts = append(parts, "--"+flag)
		case v != false:
			parts = append(parts, "--"+flag, fmt.Sprint(v))
		}
	}
	cfg.Command = strings.Join(parts, " ")
	return nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, errors.New("each entry must be a positive integer")
		}
		out = append(out, n)
	}
	return out, nil
}

// runExperiment runs one experiment, writes its files and prints its
// headline numbers.
func runExperiment(ctx context.Context, o ExperimentOptions, stdout, stderr io.Writer) error {
	// Create the directory first, so that a bad path fails before the run.
	if err := makeOutputDir(ctx, o.Output.Path); err != nil {
		return err
	}
	b := newBar(stderr, o.Config.Experiment)
	o.Config.Progress, o.Config.Workers = b, o.Workers.Workers
	start := time.Now()
	s, err := experiment.Run(ctx, o.Config)
	b.Finish()
	if errors.Is(err, experiment.ErrConfig) {
		return usagef("%v", strings.TrimPrefix(err.Error(), experiment.ErrConfig.Error()+": "))
	}
	if err != nil {
		return err
	}
	if err := s.Write(o.Output.Path); err != nil {
		return err
	}
	if err := s.WriteHeadline(stdout); err != nil {
		return err
	}
	files := "summary.json, table.md, table.csv and plots"
	if len(s.Coverage) > 0 {
		files = "summary.json, table.md and table.csv"
	}
	fmt.Fprintf(stdout, "\n%d trials in %s; %s in %s\n", s.Reps, time.Since(start).Round(time.Millisecond), files, o.Output.Path)
	return nil
}
