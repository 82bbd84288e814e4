package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/internal/timing"
)

func quickstartCommand() *cli.Command {
	o := &QuickstartOptions{}
	return leaf(&cli.Command{
		Name:  "quickstart",
		Usage: "the main job on the built-in example: simulate three hospitals, solve, compare every method, evaluate",
	}, o, []optionGroup{own{fl: []cli.Flag{
		&cli.StringFlag{Name: "dir", Value: "grmdp-quickstart", Usage: "`DIR` for the example's files (created if missing)", Destination: &o.Dir},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the example", Destination: &o.Seed},
	}}}, runQuickstart)
}

// QuickstartOptions is what the command line of `grmdp quickstart` says.
type QuickstartOptions struct {
	Dir  string
	Seed uint64
}

// runQuickstart runs the example's commands one after the other, each
// printed before it runs.
func runQuickstart(ctx context.Context, o QuickstartOptions, stdout, stderr io.Writer) error {
	dir := o.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--dir %s: %v", dir, err)
	}
	data := filepath.Join(dir, "data.parquet")
	model := filepath.Join(dir, "model.json")
	policy := filepath.Join(dir, "policy.parquet")
	seed := fmt.Sprint(o.Seed)
	steps := []struct {
		what string
		args []string
	}{
		{"simulate the paper's three-site benchmark (section 4.1) with its true model",
			[]string{"simulate", "--scenario", "benchmark", "--seed", seed, "-o", data, "--model-out", model}},
		{"learn the site-wise robust policy (Algorithm 1)",
			[]string{"solve", "--features", "action-block", "--method", "sitewise", "-o", policy, data}},
		{"solve every method on the same data and score each against the true model",
			[]string{"compare", "--features", "action-block", "--model", model, "-o", filepath.Join(dir, "compare"), data}},
		{"evaluate the site-wise policy from the data, with intervals, and write a report",
			[]string{"eval", "--policy", policy, "--model", model, "--bootstrap", "50", "--report", filepath.Join(dir, "report"), data}},
		{"recommend an action for every row",
			[]string{"apply", "--policy", policy, "-o", filepath.Join(dir, "recommendations.parquet"), data}},
	}
	step := stepContext(ctx)
	for i, s := range steps {
		fmt.Fprintf(stdout, "\n== %d/%d: %s\n$ grmdp %s\n", i+1, len(steps), s.what, strings.Join(s.args, " "))
		if err := newApp(stdout, stderr).Run(step, append([]string{"grmdp"}, s.args...)); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "\ndone: the files are in %s; the report is %s\n", dir, filepath.Join(dir, "report", "report.md"))
	fmt.Fprintf(stdout, "on your own data, solve with --c auto: it chooses the penalty held out and falls back to the care given unless a learned policy beats it, held out, at its worst site (the paper's default c, used here, is for reproducing the paper)\n")
	return nil
}

// stepContext is the context a quickstart step runs in: ctx's cancellation
// and the values the commands read (the --timings recorder, the output
// directories a failed run removes), but not the command running
// quickstart. urfave/cli takes a command's parent from its context; a step
// run in ctx would be a subcommand of the outer grmdp and see its
// --cpuprofile and --timings again.
func stepContext(ctx context.Context) context.Context {
	step := context.Context(cancelOnly{ctx})
	if r := timing.From(ctx); r != nil {
		step = timing.With(step, r)
	}
	if d := ctx.Value(outputDirsKey{}); d != nil {
		step = context.WithValue(step, outputDirsKey{}, d)
	}
	return step
}

// cancelOnly is a context with its parent's deadline and cancellation and
// none of its values.
type cancelOnly struct{ context.Context }

func (cancelOnly) Value(any) any { return nil }
