package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/solve"
)

func compareCommand() *cli.Command {
	o := &CompareOptions{Solver: solverGroup{auto: true}}
	return withConfig(leaf(&cli.Command{
		Name:      "compare",
		Usage:     "solve every method on the same data, side by side",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.Solver, &o.Clusters, own{fl: []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "compare", Usage: "`DIR` for the policies and compare.json (created if missing)", Destination: &o.Dir},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (from simulate --model-out) for exact robust values", Destination: &o.Model},
	}}, &o.JSON, own{[]cli.Flag{
		&cli.BoolFlag{Name: "evaluate", Value: true, Usage: "evaluate every method's policy by one estimator on the same data (eval's values, no bootstrap) and show the observed care per site (default; data in memory only; --evaluate=false skips it)"},
		&cli.BoolFlag{Name: "heldout", Usage: "also score every method held out: learned on K-1 folds of trajectories within sites, scored on the held-out fold by the lower limit of the basic interval of the minimum over sites' values (a ranking score, as --c auto scores its candidates), with each method's difference from sitewise (paired intervals); costs about one cross-fit per setting (data in memory only)", Destination: &o.HeldOut},
		&cli.IntFlag{Name: "folds", Usage: "with --heldout or --c auto: number of folds `K` of the cross-fit (at least 2; default 2, or 5 for maps of cell indicators: tabular, indicator, binned)", Destination: &o.Folds},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "with --heldout or --c auto: seed of the folds and the bootstrap", Destination: &o.Seed},
	}, func(c *cli.Command) error {
		if c.IsSet("folds") && o.Folds < 2 {
			return usagef("--folds must be at least 2, got %d", o.Folds)
		}
		o.NoEvaluate, o.RequireEvaluate = !c.Bool("evaluate"), c.IsSet("evaluate") && c.Bool("evaluate")
		return nil
	}}, &o.OutOfCore, from(&o.Paths, dataArgs), from(&o.Recorded, policySettings)}, runCompare))
}

// CompareOptions is what the command line of `grmdp compare` says.
type CompareOptions struct {
	Data    dataGroup
	Workers workersGroup
	Memory  memoryGroup
	Solver  solverGroup
	// Clusters adds the cluster method when its file is given.
	Clusters clusterGroup
	// Dir receives the policies and compare.json; Model, if not "", is a
	// true model file for exact robust values.
	Dir, Model string
	JSON       jsonGroup
	// NoEvaluate skips the shared evaluation: by default every policy is
	// scored by eval's estimator on the same data, with the observed care
	// (data in memory only; out of core the keys are null and a note says
	// why, unless RequireEvaluate: --evaluate given explicitly refuses to
	// run out of core).
	NoEvaluate, RequireEvaluate bool
	OutOfCore                   outOfCoreGroup
	// HeldOut scores every method held out (--heldout); Folds and Seed
	// are the cross-fit's, with --heldout or --c auto.
	HeldOut bool
	Folds   int
	Seed    uint64
	Paths   []string
	// Recorded are the settings every policy records (policySettings), to
	// which each adds its method.
	Recorded map[string]string
}

// runCompare solves every method on the same data, writes their policies
// and compare.json to o.Dir and prints the comparison.
func runCompare(ctx context.Context, o CompareOptions, stdout, stderr io.Writer) error {
	// The output directory (and its missing parents) is created before
	// the data are read, and removed again if the run fails.
	if err := makeOutputDir(ctx, o.Dir); err != nil {
		return err
	}
	co := dataset.ComparisonOptions{Dir: o.Dir, Warn: solveWarnings, Version: version, Settings: o.Recorded,
		OutOfCore: noEvaluationOutOfCore, Write: dataset.WritePolicy}
	if o.Model != "" {
		model, err := readModel(o.Model)
		if err != nil {
			return err
		}
		co.Exact = func(p *solve.Policy) (eval.ExactValues, error) {
			v, err := model.Exact(p)
			return v, modelErr(o.Model, err)
		}
	}
	s := o.Solver.Settings
	s.Workers = o.Workers.Workers
	do := openOptions(&o.Data, o.Workers, o.Memory, stderr)
	do.OutOfCore = o.OutOfCore.OutOfCore
	if o.HeldOut || o.Solver.AutoC {
		do.InMemory = "--heldout and --c auto cross-fit from statistics held in memory"
	}
	d, err := openData(ctx, do, o.Paths, s, false)
	if err != nil {
		return err
	}
	if !o.NoEvaluate && o.RequireEvaluate {
		if err := d.Held("--evaluate"); err != nil {
			return dataErr(err)
		}
	}
	// Every method in solve.Methods' order; the cluster method only with
	// a cluster file.
	var probs []solve.Problem
	for _, m := range solve.Methods {
		if m == solve.Cluster && o.Clusters.Clusters.Path == "" {
			continue
		}
		prob, warns, err := problem(m, o.Clusters.Clusters, d.Sites())
		if err != nil {
			return err
		}
		co.Warnings = append(co.Warnings, warns...)
		probs = append(probs, prob)
	}
	if o.NoEvaluate {
		co.Skip = noEvaluationFlag
	}
	if o.HeldOut {
		co.HeldOut = &dataset.SelectOptions{Folds: o.Folds, Seed: o.Seed}
	}
	if co.Auto = o.Solver.selection(o.Folds, o.Seed); co.Auto != nil {
		bar := newBar(stderr, "choosing c (methods x folds)")
		defer bar.Finish()
		co.Auto.OnFold = func(done, total int) { bar.SetTotal(int64(total)); bar.Add(1) }
	}
	res, err := d.Compare(ctx, s, probs, co)
	if err != nil {
		return dataErr(err)
	}
	if o.JSON.JSON {
		_, err := stdout.Write(append(res.JSON, '\n'))
		return err
	}
	if err := res.WriteText(stdout); err != nil {
		return err
	}
	tell(stderr, "warning", res.Warnings)
	return nil
}

// Why compare.json's evaluation keys are null, in compare.json's
// evaluation_note and under the table.
const (
	noEvaluationOutOfCore = "out of core: methods[].evaluation and observed are null, since the shared evaluation needs the data in memory; " +
		"run compare in memory (raise --max-memory) or grmdp eval --policy DIR/METHOD.parquet on each policy"
	noEvaluationFlag = "--evaluate=false: methods[].evaluation and observed are null; drop the flag to score every method by one estimator"
)
