package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

func applyCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output `FILE` (Parquet)", Required: true},
		&cli.StringFlag{Name: "fallback", Usage: "override the policy's rule for decisions without evidence: behaviour or lowest"},
		&cli.StringFlag{Name: "step-col", Value: "step", Usage: "step column (default: the policy's)"},
		&cli.StringFlag{Name: "action-col", Value: "action", Usage: "action column, checked against the policy's actions when present (default: the policy's)"},
		&cli.IntFlag{Name: "workers", Usage: "parallel workers (default: all cores)"},
		&cli.BoolFlag{Name: "json", Usage: "print a JSON summary (rows, recommended actions, agreement with the recorded action, no-evidence share, per site) instead of the \"wrote\" line"},
	}
	flags = append(flags, policyDataFlags(flagNames(flags))...)
	return withConfig(&cli.Command{
		Name:      "apply",
		Usage:     "add recommended_action, recommended_q and evidence to every row of DATA",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			o, err := parseApplyOptions(c)
			if err != nil {
				return err
			}
			return runApply(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	})
}

// ApplyOptions is what the command line of `grmdp apply` says.
type ApplyOptions struct {
	// FirstStep is --first-step.
	FirstStep traj.FirstStep
	// Policy is the policy file to apply.
	Policy string
	// Output is the annotated data file to write.
	Output string
	// Fallback overrides the policy's rule for decisions without evidence
	// ("" keeps it).
	Fallback string
	// StepCol and ActionCol name the data's step and action columns (""
	// for the columns the policy was learned with).
	StepCol, ActionCol string
	Workers            int
	// JSON prints a summary of the recommendations as JSON.
	JSON bool
	// Declared are the data flags the policy decides, checked against it.
	Declared policyData
	// Paths are the DATA arguments.
	Paths []string
}

func parseApplyOptions(c *cli.Context) (ApplyOptions, error) {
	fs, nulls, err := parsePrep(c)
	if err != nil {
		return ApplyOptions{}, err
	}
	if nulls != traj.NullsError {
		return ApplyOptions{}, usagef("--nulls %s: apply recommends an action for every row and drops none; impute or drop the rows with NULLs before apply", nulls)
	}
	return ApplyOptions{FirstStep: fs, Policy: c.String("policy"), Output: c.String("output"), Fallback: c.String("fallback"),
		StepCol: givenString(c, "step-col"), ActionCol: givenString(c, "action-col"), Workers: c.Int("workers"), JSON: c.Bool("json"),
		Declared: parsePolicyData(c), Paths: dataArgs(c)}, nil
}

// runApply adds the policy's recommended action, its Qhat and the evidence
// flag to every row of the data and writes them to o.Output.
func runApply(ctx context.Context, o ApplyOptions, stdout, stderr io.Writer) error {
	p, err := readPolicy(o.Policy)
	if err != nil {
		return err
	}
	if err := checkAgainstPolicy(o.Declared, p); err != nil {
		return err
	}
	switch f := o.Fallback; f {
	case "":
	case "behaviour", "lowest":
		p.Fallback = solve.Fallback(f)
	default:
		return usagef("--fallback must be behaviour or lowest, got %q", f)
	}
	out := o.Output
	if err := prepareOutput(ctx, out); err != nil {
		return err
	}
	// The per-site counts read the site column the policy was learned
	// with (apply reads no site, so has no flag of its own for it).
	sum, err := dataset.Apply(ctx, o.Paths, p, out, dataset.ApplyOptions{Step: orPolicy(o.StepCol, p, "step-col", "step"),
		Action: orPolicy(o.ActionCol, p, "action-col", "action"), Site: policyColumn(p, "site-col", "site"),
		FirstStep: o.FirstStep, Workers: o.Workers, Summary: o.JSON, Note: noteTo(stderr)})
	if err != nil {
		return dataErr(err)
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	return nil
}

// checkOutput refuses, before any work is done, an output path that is a
// directory or lies below a file. Missing directories are created
// (prepareOutput, makeOutputDir).
func checkOutput(path string) error {
	if path == "" {
		return usagef("no output path given")
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil {
			if !fi.IsDir() {
				return usagef("output %s: %s is not a directory", path, dir)
			}
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("output %s is a directory", path)
	}
	return nil
}
