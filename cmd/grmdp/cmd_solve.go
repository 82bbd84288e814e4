package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

// methodGroup is --method, read into *dst; it refuses behaviour, which
// has no penalty, when *autoC (the solver group's --c auto) is set.
type methodGroup struct {
	dst   *solve.Method
	autoC *bool
	name  string
}

func (g *methodGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "method", Value: "sitewise", Usage: "sitewise, cluster, pooled, pevi-pooled, pevi-avg, pevi-min or behaviour", Destination: &g.name}}
}

func (g *methodGroup) check(*cli.Command) (err error) {
	if *g.dst, err = solve.ParseMethod(g.name); err != nil {
		return usagef("--method: %v", err)
	}
	if *g.dst == solve.Behaviour && g.autoC != nil && *g.autoC {
		return usagef("--c auto needs a method with a penalty, not behaviour")
	}
	return nil
}

func solveCommand() *cli.Command {
	o := &SolveOptions{
		Output: outputGroup{usage: "policy `FILE` to write (Parquet)"},
		JSON:   jsonGroup{usage: "print the result and its diagnostics as JSON"},
		Solver: solverGroup{auto: true},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "solve",
		Usage:     "learn a robust policy from trajectory data (Algorithm 1 or a baseline)",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.Solver, &o.Clusters, &methodGroup{dst: &o.Method, autoC: &o.Solver.AutoC}, &o.Output, &o.JSON, own{[]cli.Flag{
		&cli.StringFlag{Name: "c-path", Usage: "also solve at N values of c from LO to HI (`LO:HI:N`, log-spaced) and report beta, evidence, values and agreement with behaviour per c; with --c auto, the candidates of c", Destination: &o.CPath},
		&cli.IntFlag{Name: "folds", Usage: "with --c auto: number of folds `K` of the cross-fit (at least 2; default 2, or 5 for maps of cell indicators: tabular, indicator, binned)", Destination: &o.Folds},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "with --c auto: seed of the folds and the bootstrap", Destination: &o.Seed},
	}, func(c *cli.Command) error {
		if c.IsSet("folds") && o.Folds < 2 {
			return usagef("--folds must be at least 2, got %d", o.Folds)
		}
		return nil
	}}, &o.OutOfCore, &o.Disclosure, from(&o.Paths, dataArgs), from(&o.Recorded, policySettings)}, runSolve))
}

// SolveOptions is what the command line of `grmdp solve` says.
type SolveOptions struct {
	Data       dataGroup
	Workers    workersGroup
	Memory     memoryGroup
	Solver     solverGroup
	Clusters   clusterGroup
	Method     solve.Method
	Output     outputGroup
	JSON       jsonGroup
	OutOfCore  outOfCoreGroup
	Disclosure disclosureGroup
	// CPath is --c-path, LO:HI:N ("" for none).
	CPath string
	// Folds (0: the map's default, dataset.SelectFolds) and Seed are the
	// cross-fit's, with --c auto.
	Folds int
	Seed  uint64
	Paths []string
	// Recorded are the settings the policy records (policySettings).
	Recorded map[string]string
}

// runSolve solves one method, writes its policy and prints a summary (and
// with --c-path, the path of c).
func runSolve(ctx context.Context, o SolveOptions, stdout, stderr io.Writer) error {
	method, s, out, auto := o.Method, o.Solver.Settings, o.Output.Path, o.Solver.AutoC
	s.Workers = o.Workers.Workers
	do := openOptions(&o.Data, o.Workers, o.Memory, stderr)
	do.OutOfCore, do.Disclosure = o.OutOfCore.OutOfCore, o.Disclosure.Disclosure
	if method != solve.Cluster && o.Clusters.Clusters.Path != "" {
		// A script may pass one --clusters to every method, as compare takes it.
		fmt.Fprintf(stderr, "grmdp: warning: --clusters is used only by --method cluster; ignored for %s\n", method)
	}
	if method == solve.Behaviour && o.CPath != "" {
		return usagef("--c-path needs a method with a penalty, not behaviour")
	}
	err := prepareOutput(ctx, out)
	if err != nil {
		return err
	}
	var cpath []float64
	if o.CPath != "" {
		if cpath, err = dataset.ParsePenaltyGrid(o.CPath); err != nil {
			return usagef("--c-path%s", strings.TrimPrefix(err.Error(), "dataset: penalty grid"))
		}
	}
	if auto {
		do.InMemory = "--c auto cross-fits from statistics held in memory"
	}
	d, err := openData(ctx, do, o.Paths, s, cpath != nil && !auto)
	if err != nil {
		return err
	}
	prob, warnings, err := problem(method, o.Clusters.Clusters, d.Sites())
	if err != nil {
		return err
	}
	warnings = append(append([]string(nil), d.Warnings()...), warnings...)
	po := dataset.PolicyOptions{Settings: s, Problem: prob, Warnings: warnings, Warn: solveWarnings, Version: version, Record: o.Recorded, Path: out}
	folds := newBar(io.Discard, "")
	if po.Select = o.Solver.selection(o.Folds, o.Seed); auto {
		po.Select.Cs = cpath
		folds = newBar(stderr, "choosing c (folds)")
		po.Select.OnFold = func(_, k int) { folds.SetTotal(int64(k)); folds.Add(1) }
	}
	res, err := d.SolvePolicy(ctx, po)
	folds.Finish()
	if err != nil {
		return dataErr(err)
	}
	p, diag := res.Policy, res.Diagnostics
	if err := printResult(stdout, o.JSON.JSON, dataset.NewSolveReport(p, diag, out, d.Nulls())); err != nil {
		return err
	}
	if auto && p.Method == solve.Behaviour {
		fmt.Fprintf(stderr, "grmdp: note: --c auto: no candidate's held-out worst site beats the behaviour fallback's (gain above 0), so the policy is the behaviour fallback (cloning)\n")
	}
	if n := p.Map.Note(); n != "" {
		fmt.Fprintf(stderr, "grmdp: note: %s\n", n)
	}
	tell(stderr, "warning", p.Warnings)
	if diag != nil && p.Method != solve.Behaviour {
		printFallbackLine(stderr, diag.NoEvidenceShare, p.Fallback)
	}
	if cpath == nil {
		return nil
	}
	// With --json stdout holds the JSON alone; the path's table goes to
	// stderr (its CSV and plot are written all the same).
	tw, prefix := stdout, strings.TrimSuffix(out, filepath.Ext(out))
	if o.JSON.JSON {
		tw = stderr
	}
	pts, err := res.PenaltyPath(ctx, s, prob, cpath)
	if err == nil {
		err = pts.WriteText(tw)
	}
	if err == nil {
		err = pts.WriteFiles(prefix, s, p)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(tw, "wrote %s.cpath.csv and %s.cpath.png/.svg\n", prefix, prefix)
	return nil
}
