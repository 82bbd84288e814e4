package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/solve"
)

func compareCommand() *cli.Command {
	o := &CompareOptions{Data: dataGroup{Prep: &prepGroup{}}, JSON: jsonGroup{}, Solver: solverGroup{auto: true}}
	return withConfig(leaf(&cli.Command{
		Name:      "compare",
		Usage:     "solve every method on the same data, side by side",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.Solver, &o.Clusters, own{[]cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "compare", Usage: "`DIR` for the policies and compare.json (created if missing)"},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (from simulate --model-out) for exact robust values"},
	}, func(c *cli.Context) error {
		o.Dir, o.Model = c.String("output"), c.String("model")
		return nil
	}}, &o.JSON, own{[]cli.Flag{
		&cli.BoolFlag{Name: "evaluate", Value: true, Usage: "evaluate every method's policy by one estimator on the same data (eval's values, no bootstrap) and show the observed care per site (default; data in memory only; --evaluate=false skips it)"},
		&cli.BoolFlag{Name: "heldout", Usage: "also score every method held out: learned on K-1 folds of trajectories within sites, scored on the held-out fold by the lower limit of the worst site's value, as --c auto scores its candidates, with each method's difference from sitewise (paired intervals); costs about one cross-fit per setting (data in memory only)"},
		&cli.IntFlag{Name: "folds", Value: dataset.DefaultFolds, Usage: "with --heldout or --c auto: number of folds `K` of the cross-fit (at least 2)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "with --heldout or --c auto: seed of the folds and the bootstrap"},
	}, func(c *cli.Context) error {
		o.HeldOut, o.Folds, o.Seed = c.Bool("heldout"), c.Int("folds"), c.Uint64("seed")
		if o.Folds < 2 {
			return usagef("--folds must be at least 2, got %d", o.Folds)
		}
		o.NoEvaluate, o.RequireEvaluate = !c.Bool("evaluate"), c.IsSet("evaluate") && c.Bool("evaluate")
		o.Paths, o.Recorded = dataArgs(c), policySettings(c)
		return nil
	}}, &o.OutOfCore}, runCompare))
}

// CompareOptions is what the command line of `grmdp compare` says.
type CompareOptions struct {
	Data    dataGroup
	Workers workersGroup
	Memory  memoryGroup
	Solver  solverGroup
	// Clusters adds the cluster method when its file is given.
	Clusters clusterGroup
	// Dir receives the policies and compare.json.
	Dir string
	// Model is a true model file for exact robust values ("" for none).
	Model string
	// JSON prints compare.json instead of a table.
	JSON jsonGroup
	// NoEvaluate skips the shared evaluation: by default every policy is
	// scored by eval's estimator on the same data, with the observed care
	// (data in memory only; out of core the keys are null and a note says
	// why).
	NoEvaluate bool
	// RequireEvaluate refuses to run out of core (--evaluate given
	// explicitly).
	RequireEvaluate bool
	OutOfCore       outOfCoreGroup
	// HeldOut scores every method held out (--heldout); Folds and Seed
	// are the cross-fit's, with --heldout or --c auto.
	HeldOut bool
	Folds   int
	Seed    uint64
	// Paths are the DATA arguments.
	Paths []string
	// Recorded are the settings every policy records (policySettings), to
	// which each adds its method.
	Recorded map[string]string
}

// runCompare solves every method on the same data, writes their policies
// and compare.json to o.Dir and prints the comparison.
func runCompare(ctx context.Context, o CompareOptions, stdout, stderr io.Writer) error {
	// The output directory (and its missing parents) is created before
	// the data are read, and removed again if the run fails.
	if fi, err := os.Stat(o.Dir); err == nil && !fi.IsDir() {
		return usagef("--output %s is not a directory", o.Dir)
	}
	if err := makeOutputDir(ctx, o.Dir); err != nil {
		return err
	}
	var model *modelEval
	if o.Model != "" {
		var err error
		if model, err = loadModel(o.Model); err != nil {
			return err
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
	// The shared evaluation needs the rows in memory: out of core it is
	// skipped with a note, unless --evaluate asked for it.
	if !o.NoEvaluate && o.RequireEvaluate {
		if err := d.Held("--evaluate"); err != nil {
			return dataErr(err)
		}
	}
	probs, warnings, err := compareProblems(o.Clusters.Clusters, d.Sites())
	if err != nil {
		return err
	}
	co := dataset.ComparisonOptions{Dir: o.Dir, Warnings: warnings, Warn: solveWarnings, Version: version, Settings: o.Recorded,
		OutOfCore: noEvaluationOutOfCore, Write: writePolicy}
	if model != nil {
		co.Exact = model.evaluate
	}
	if o.NoEvaluate {
		co.Skip = noEvaluationFlag
	}
	if o.HeldOut {
		co.HeldOut = &dataset.SelectOptions{Folds: o.Folds, Seed: o.Seed}
	}
	if o.Solver.AutoC {
		lambdas, stationary := autoGrids(o.Solver, s)
		bar := newBar(stderr, "choosing c (methods x folds)")
		defer bar.Finish()
		co.Auto = &dataset.SelectOptions{Lambdas: lambdas, Stationary: stationary, Folds: o.Folds, Seed: o.Seed,
			OnFold: func(done, total int) { bar.SetTotal(int64(total)); bar.Add(1) }}
	}
	res, err := d.Compare(ctx, s, probs, co)
	if err != nil {
		return dataErr(err)
	}
	if o.JSON.JSON {
		_, err := stdout.Write(append(res.JSON, '\n'))
		return err
	}
	printCompare(stdout, res.Rows, model != nil, res.Observed, res.Note, o.Dir)
	if err := res.WriteHeldOut(stdout); err != nil {
		return err
	}
	tell(stderr, "warning", res.Warnings)
	return nil
}

// compareProblems lists every method's problem in solve.Methods' order;
// the cluster method only with a cluster file, whose warnings it returns.
func compareProblems(co clusterOptions, sites []string) ([]solve.Problem, []string, error) {
	var probs []solve.Problem
	var warnings []string
	for _, m := range solve.Methods {
		switch m {
		case solve.Cluster:
			if co.Path == "" {
				continue
			}
			p, w, err := clusterProblem(co, sites)
			if err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, w...)
			probs = append(probs, p)
		default:
			probs = append(probs, solve.Problem{Method: m})
		}
	}
	return probs, warnings, nil
}

// Why compare.json's evaluation keys are null, in compare.json's
// evaluation_note and under the table.
const (
	noEvaluationOutOfCore = "out of core: methods[].evaluation and observed are null, since the shared evaluation needs the data in memory; " +
		"run compare in memory (raise --max-memory) or grmdp eval --policy DIR/METHOD.parquet on each policy"
	noEvaluationFlag = "--evaluate=false: methods[].evaluation and observed are null; drop the flag to score every method by one estimator"
)

// printCompare prints the comparison table (with the model's columns when
// there is one).
func printCompare(w io.Writer, rows []dataset.MethodRow, withModel bool, observed []eval.ObservedValue, note, dir string) {
	evaluate := observed != nil
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "method\tgroups\tbeta\tvalue est.\tno evidence\tdiffers from sitewise\t")
	if withModel {
		fmt.Fprint(tw, "robust value\tsuboptimality\t")
	}
	if evaluate {
		fmt.Fprint(tw, "robust value (data)\tbounds\t")
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%s\t%s\t%.1f%%\t", r.Method, r.Groups, r.Beta, optFloat(r.ValueEstimate), pctp(r.NoEvidenceShare), 100*r.Disagreement)
		if withModel {
			fmt.Fprintf(tw, "%.4f\t%.4f\t", *r.PolicyValue, *r.Suboptimality)
		}
		if e := r.Evaluation; e != nil {
			b := "-"
			if e.HasBounds {
				b = fmt.Sprintf("[%s, %s]", num(e.Lower), num(e.Upper))
				if !e.Identified {
					b += " not identified"
				}
			}
			fmt.Fprintf(tw, "%.4g\t%s\t", e.PolicyValue, b)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if evaluate {
		fmt.Fprintln(w, "\nrobust value (data): every policy evaluated by eval's robust fitted-Q evaluation on these data, so the column ranks methods;")
		fmt.Fprintln(w, "value est. is each method's own estimate and is not comparable across methods.")
		fmt.Fprintln(w, "\nobserved care (mean realised return per trajectory):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "site\treturn\tci low\tci high\t")
		for _, o := range observed {
			fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t\n", quoteName(o.Site), o.Value, num(o.CILow), num(o.CIHigh))
		}
		tw.Flush()
	}
	if note != "" {
		fmt.Fprintf(w, "\nno shared evaluation: %s\n", note)
	}
	fmt.Fprintf(w, "\npolicies and compare.json in %s\n", dir)
}

func optFloat(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *v)
}

func pctp(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**v)
}
