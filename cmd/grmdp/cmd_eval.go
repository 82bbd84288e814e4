package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/solve"
)

func evalCommand() *cli.Command {
	o := &EvalOptions{
		Clusters: clusterGroup{use: "cluster `FILE` for Delta_h (default: the policy's own groups when it pools sites)"},
		Declared: policyDataGroup{through: true},
		Columns:  columnsGroup{fromPolicy: true},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "eval",
		Usage:     "evaluate a policy: robust value from data with intervals, Delta_h, exact values under a known model",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{own{fl: []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true, Destination: &o.Policy},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (simulate --model-out) for exact robust values", Destination: &o.Model},
	}}, &o.Clusters, own{fl: []cli.Flag{
		&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates for the intervals (0: none)", Destination: &o.Bootstrap},
		&cli.IntFlag{Name: "permutations", Value: 199, Usage: "permutations for the Delta_h p-values, adjusted across steps and clusters (0: none; the smallest p-value is 1/(1+N))", Destination: &o.Permutations},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the bootstrap and the permutations", Destination: &o.Seed},
	}}, &o.JSON, own{fl: []cli.Flag{
		&cli.StringFlag{Name: "report", Usage: "write a Markdown report with plots to `DIR`", Destination: &o.Report},
	}}, &o.returnRangeGroup, &o.Columns, &o.Workers, &o.Memory, &o.Disclosure, &o.Declared, &o.Prep,
		from(&o.Paths, dataArgs), from(&o.Recorded, settingsUsed), from(&o.CommandLine, commandLine)}, runEval))
}

// EvalOptions is what the command line of `grmdp eval` says.
type EvalOptions struct {
	// Policy is the policy file; Model, if not "", a true model file for
	// exact robust values; Report, if not "", the report's directory.
	Policy, Model, Report string
	// Clusters is the clustering of Delta_h (no file: the policy's own
	// groups when it pools sites).
	Clusters     clusterGroup
	Bootstrap    int
	Permutations int
	Seed         uint64
	JSON         jsonGroup
	// Columns names the data's columns ("" for the column the policy was
	// learned with; the state columns come from the policy).
	Columns columnsGroup
	Workers workersGroup
	Memory  memoryGroup
	// Disclosure is the disclosure control the evaluation's statistics
	// are formed under (0 by default), as a federated job's sites apply
	// it, so that federate eval's result can be checked against this one.
	Disclosure disclosureGroup
	// Declared are the data flags the policy decides, checked against
	// it, except that --features (with --state, --bins, --num-states)
	// names the evaluation's map (evaluationMap).
	Declared policyDataGroup
	Prep     prepGroup
	Paths    []string
	// Recorded are the settings the JSON records (settingsUsed), and
	// CommandLine the command the report records.
	Recorded    map[string]string
	CommandLine string
	returnRangeGroup
}

// runEval evaluates a policy on data: its robust value with intervals,
// Delta_h, and exact values under a known model; it prints them and writes
// a report.
func runEval(ctx context.Context, o EvalOptions, stdout, stderr io.Writer) error {
	if o.Bootstrap < 0 || o.Permutations < 0 {
		return usagef("--%s must not be negative", map[bool]string{true: "bootstrap", false: "permutations"}[o.Bootstrap < 0])
	}
	p, err := readPolicy(o.Policy)
	if err != nil {
		return err
	}
	if err := dataErr(o.Declared.Declared.CheckEval(p)); err != nil {
		return err
	}
	eo := dataset.PolicyEvalOptions{Name: o.Policy, Report: o.Report, Commands: []string{o.CommandLine},
		Settings: solve.RecordColumns(o.Recorded, p.Columns(o.Columns.Columns)), Options: eval.Options{
			Bootstrap: o.Bootstrap, Permutations: o.Permutations, Seed: o.Seed, Workers: o.Workers.Workers, ReturnRange: o.ReturnRange}}
	if o.Model != "" {
		if eo.Model, err = readModel(o.Model); err != nil {
			return err
		}
		if err := modelErr(o.Model, eo.Model.Check(p)); err != nil {
			return err
		}
	}
	if o.Report != "" {
		if err := makeOutputDir(ctx, o.Report); err != nil {
			return err
		}
	}
	do := dataset.Options{FirstStep: o.Prep.FirstStep, Nulls: o.Prep.Nulls, Workers: o.Workers.Workers, Columns: p.Columns(o.Columns.Columns),
		MaxMemory: o.Memory.Value, Note: noteTo(stderr), Progress: barsTo(stderr), Disclosure: o.Disclosure.Disclosure}
	do.UsePolicy(p)
	if o.Declared.Declared.Through(p) {
		m, err := evaluationMap(o.Declared.Declared)
		if err != nil {
			return err
		}
		do.UsePolicyThrough(p, m)
	}
	d, err := dataset.Open(ctx, o.Paths, do)
	if err != nil {
		return dataErr(err)
	}
	if o.Clusters.Clusters.Path != "" {
		pr, warns, err := problem(solve.Cluster, o.Clusters.Clusters, d.Sites())
		if err != nil {
			return err
		}
		tell(stderr, "warning", warns)
		eo.Clusters = &pr
	}
	eo.Progress = barsTo(stderr)
	res, err := d.EvaluatePolicy(ctx, p, eo)
	if err != nil {
		return dataErr(err)
	}
	tell(stderr, "note", res.Notes)
	tell(stderr, "warning", res.Warnings)
	res.CensoredBy = censoredBy
	if err := printResult(stdout, o.JSON.JSON, res); err != nil || o.JSON.JSON {
		return err
	}
	if o.Report != "" {
		fmt.Fprintf(stdout, "\nreport in %s/report.md\n", o.Report)
	}
	return nil
}

// censoredBy names, in eval's text, the flag whose rule cuts censored
// episodes.
const censoredBy = "--nulls truncate"
