package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

// validateDescription documents the command and its JSON keys.
const validateDescription = `Cross-fits: each site's trajectories are split into --folds folds (seeded by
--seed, stratified by site); for each fold, the method is learned with the
given settings on the other folds and evaluated on the held-out fold, and so
is behaviour cloning (--method behaviour). Every trajectory counts once, in
the fold that holds it out: a site's value is the mean of its trajectories'
held-out contributions, so no value is in-sample. The observed care is the
held-out trajectories' mean return; the differences (policy minus observed
care, policy minus cloning) have intervals from the same paired bootstrap
replicates, so "better than current care" is a held-out, per-site
comparison.

With --c auto (and --lambda auto, --stationary=auto) the choice of settings
is part of what is cross-fitted: on each fold, c is chosen as solve --c auto
chooses it, from the fold's training trajectories alone (inner folds:
--folds, the same seed, 30 bootstrap replicates), so the held-out fold plays
no part in the choice; it costs about K times solve --c auto.

--json prints {"folds", "seed", "bootstrap", "level", "method", "estimator",
"in_sample": false, "sites": [{"site", "trajectories", "fold_sizes",
"policy", "cloning", "observed", "diff_observed", "diff_cloning", "ess"}],
"worst_site", "worst_cloning", "worst_observed", "warnings"}, with --c auto
also "selections" (each fold's choice, solve --json's selection); every value is
{"estimator", "value", "ci_low", "ci_high"} (null where undefined), the
policy's and cloning's add "estimates" (fqe, pdwis, wdr, as eval's), and
the worst ones add "site"; a worst one's "ci_low" and "ci_high" are the
interval of the minimum over sites, the smallest low end and the smallest
high end of the sites' intervals (eval's rule), whose ends may be other
sites'.`

func validateCommand() *cli.Command {
	o := &ValidateOptions{
		JSON:   jsonGroup{usage: "print the cross-fit as JSON (keys: see the description)"},
		Solver: solverGroup{auto: true},
	}
	return withConfig(leaf(&cli.Command{
		Name:        "validate",
		Usage:       "cross-fit a method: learn on K-1 folds of trajectories, evaluate on the held-out fold, per site, beside behaviour cloning and the observed care",
		Description: validateDescription,
		ArgsUsage:   "DATA...",
	}, o, []optionGroup{&o.Data, &o.Solver, &o.Clusters, &o.Workers, &o.Memory, &o.JSON, &methodGroup{dst: &o.Method, autoC: &o.Solver.AutoC}, own{[]cli.Flag{
		&cli.IntFlag{Name: "folds", Value: dataset.DefaultFolds, Usage: "number of folds `K` (at least 2)", Destination: &o.Folds},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the folds and the bootstrap", Destination: &o.Seed},
		&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates of each held-out fold for the intervals (0: none)", Destination: &o.Bootstrap},
	}, func(c *cli.Command) (err error) {
		if o.Folds < 2 {
			return usagef("--folds must be at least 2, got %d", o.Folds)
		}
		if o.Bootstrap < 0 {
			return usagef("--bootstrap must not be negative, got %d", o.Bootstrap)
		}
		return nil
	}}, from(&o.Paths, dataArgs)}, runValidate))
}

// ValidateOptions is what the command line of `grmdp validate` says.
type ValidateOptions struct {
	Data     dataGroup
	Solver   solverGroup
	Clusters clusterGroup
	Workers  workersGroup
	Memory   memoryGroup
	JSON     jsonGroup
	Method   solve.Method
	Folds    int
	Seed     uint64
	// Bootstrap is the number of replicates of each held-out fold.
	Bootstrap int
	Paths     []string
}

// runValidate opens the data, cross-fits and prints the result.
func runValidate(ctx context.Context, vo ValidateOptions, stdout, stderr io.Writer) error {
	o := openOptions(&vo.Data, vo.Workers, vo.Memory, stderr)
	o.InMemory = "a cross-fit evaluates held-out rows held in memory"
	d, err := dataset.Open(ctx, vo.Paths, o)
	if err != nil {
		return dataErr(err)
	}
	s := vo.Solver.Settings
	s.Workers = vo.Workers.Workers
	prob, _, err := problem(vo.Method, vo.Clusters.Clusters, d.Sites())
	if err != nil {
		return err
	}
	folds := newBar(stderr, "cross-fit (folds)")
	folds.SetTotal(int64(vo.Folds))
	v, err := d.Validate(ctx, dataset.ValidateOptions{Settings: s, Problem: prob, Folds: vo.Folds, Seed: vo.Seed, Bootstrap: vo.Bootstrap,
		OnFold: func(int, int) { folds.Add(1) }, Select: vo.Solver.selection(vo.Folds, vo.Seed)})
	folds.Finish()
	if err != nil {
		return dataErr(err)
	}
	tell(stderr, "warning", v.Warnings)
	return printResult(stdout, vo.JSON.JSON, v)
}
