package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

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

--json prints {"folds", "seed", "bootstrap", "level", "method", "estimator",
"in_sample": false, "sites": [{"site", "trajectories", "fold_sizes",
"policy", "cloning", "observed", "diff_observed", "diff_cloning", "ess"}],
"worst_site", "worst_cloning", "worst_observed", "warnings"}; every value is
{"estimator", "value", "ci_low", "ci_high"} (null where undefined), the
policy's and cloning's add "estimates" (fqe, pdwis, wdr, as eval's), and
the worst ones add "site".`

func validateCommand() *cli.Command {
	o := &ValidateOptions{
		Data: dataGroup{Prep: &prepGroup{}},
		JSON: jsonGroup{usage: "print the cross-fit as JSON (keys: see the description)"},
	}
	return withConfig(leaf(&cli.Command{
		Name:        "validate",
		Usage:       "cross-fit a method: learn on K-1 folds of trajectories, evaluate on the held-out fold, per site, beside behaviour cloning and the observed care",
		Description: validateDescription,
		ArgsUsage:   "DATA...",
	}, o, []optionGroup{&o.Data, &o.Solver, &o.Clusters, &o.Workers, &o.Memory, &o.JSON, own{[]cli.Flag{
		&cli.StringFlag{Name: "method", Value: "sitewise", Usage: "sitewise, cluster, pooled, pevi-pooled, pevi-avg, pevi-min or behaviour"},
		&cli.IntFlag{Name: "folds", Value: dataset.DefaultFolds, Usage: "number of folds `K` (at least 2)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the folds and the bootstrap"},
		&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates of each held-out fold for the intervals (0: none)"},
	}, func(c *cli.Context) (err error) {
		o.Folds, o.Seed, o.Bootstrap, o.Paths = c.Int("folds"), c.Uint64("seed"), c.Int("bootstrap"), dataArgs(c)
		if o.Method, err = solve.ParseMethod(c.String("method")); err != nil {
			return usagef("--method: %v", err)
		}
		if o.Folds < 2 {
			return usagef("--folds must be at least 2, got %d", o.Folds)
		}
		if o.Bootstrap < 0 {
			return usagef("--bootstrap must not be negative, got %d", o.Bootstrap)
		}
		return nil
	}}}, runValidate))
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
	o := vo.Data.options()
	o.Workers, o.MaxMemory = vo.Workers.Workers, vo.Memory.Value
	o.Note, o.Progress = noteTo(stderr), barsTo(stderr)
	o.InMemory = "a cross-fit evaluates held-out rows held in memory"
	d, err := dataset.Open(ctx, vo.Paths, o)
	if err != nil {
		return dataErr(err)
	}
	s := vo.Solver.Settings
	s.Workers = vo.Workers.Workers
	prob := solve.Problem{Method: vo.Method}
	if vo.Method == solve.Cluster {
		if prob, _, err = clusterProblem(vo.Clusters.Clusters, d.Sites()); err != nil {
			return err
		}
	}
	folds := newBar(stderr, "cross-fit (folds)")
	folds.SetTotal(int64(vo.Folds))
	v, err := d.Validate(ctx, dataset.ValidateOptions{Settings: s, Problem: prob, Folds: vo.Folds, Seed: vo.Seed, Bootstrap: vo.Bootstrap,
		OnFold: func(int, int) { folds.Add(1) }})
	folds.Finish()
	if err != nil {
		return dataErr(err)
	}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}
	tell(stderr, "warning", v.Warnings)
	if vo.JSON.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	printValidation(stdout, v)
	return nil
}

// printValidation prints the cross-fit's table: per site the held-out
// values and differences with their intervals, then the worst sites.
func printValidation(w io.Writer, v *dataset.Validation) {
	fmt.Fprintf(w, "cross-fitted %s (%d folds by trajectory within sites, seed %d): every value is held out, from policies learned without its trajectories\n",
		v.Method, v.Folds, v.Seed)
	level := ""
	if v.Bootstrap > 0 {
		level = fmt.Sprintf(", %g%% basic bootstrap intervals (%d replicates per fold)", 100*v.Level, v.Bootstrap)
	}
	fmt.Fprintf(w, "estimator: %s (policy and cloning)%s\n\n", v.Estimator, level)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "site\ttrajectories\tpolicy\tcloning\tobserved care\tpolicy - observed\tpolicy - cloning")
	for _, s := range v.Sites {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Site, s.Trajectories, heldOutCell(s.Policy), heldOutCell(s.Cloning), heldOutCell(s.Observed),
			heldOutCell(s.DiffObserved), heldOutCell(s.DiffCloning))
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, x := range []struct {
		what string
		v    dataset.WorstHeldOut
	}{{"policy", v.WorstSite}, {"cloning", v.WorstCloning}, {"observed care", v.WorstObserved}} {
		fmt.Fprintf(w, "worst site (%s): %s %s\n", x.what, x.v.Site, heldOutCell(x.v.HeldOut))
	}
}

// heldOutCell formats a value with its interval.
func heldOutCell(v dataset.HeldOut) string {
	if math.IsNaN(v.CILow) || math.IsNaN(v.CIHigh) {
		return fmt.Sprintf("%.4g", v.Value)
	}
	return fmt.Sprintf("%.4g [%.4g, %.4g]", v.Value, v.CILow, v.CIHigh)
}
