package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

func applyCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true},
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "output `FILE` (Parquet)", Required: true},
		&cli.StringFlag{Name: "fallback", Usage: "override the policy's rule for decisions without evidence: behaviour or lowest"},
		&cli.StringFlag{Name: "step-col", Value: "step", Usage: "step column"},
		&cli.StringFlag{Name: "action-col", Value: "action", Usage: "action column (checked against the policy's actions when present)"},
		&cli.IntFlag{Name: "workers", Usage: "parallel workers (default: all cores)"},
	}
	flags = append(flags, policyDataFlags(flagNames(flags))...)
	return withConfig(&cli.Command{
		Name:      "apply",
		Usage:     "add recommended_action, recommended_q and evidence to every row of DATA",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			p, err := readPolicy(c.String("policy"))
			if err != nil {
				return err
			}
			if err := checkAgainstPolicy(c, p); err != nil {
				return err
			}
			switch f := c.String("fallback"); f {
			case "":
			case "behaviour", "lowest":
				p.Fallback = solve.Fallback(f)
			default:
				return usagef("--fallback must be behaviour or lowest, got %q", f)
			}
			out := c.String("output")
			if err := checkOutput(out); err != nil {
				return err
			}
			if c.NArg() == 0 {
				return usagef("no DATA given: name one or more Parquet files, directories or globs")
			}
			spec := traj.StateSpec{Columns: p.Map.StateColumns}
			switch p.Map.Kind {
			case features.Tabular:
				spec.Integer, spec.Max = true, p.Map.S
			case features.Indicator:
				spec.Integer, spec.Max = true, 3
			case features.ActionBlock:
				spec.NonzeroSum = true
			case features.Precomputed:
				spec.List, spec.D = true, p.Map.D
			}
			opts := traj.Options{
				Columns: traj.Columns{Step: c.String("step-col"), Action: c.String("action-col")},
				State:   spec, Horizon: p.H, Actions: p.A, ActionLabels: p.ActionLabels, Workers: c.Int("workers"),
			}
			var prep dataOptions
			if err := parsePrep(c, &prep); err != nil {
				return err
			}
			if prep.Nulls != traj.NullsError {
				return usagef("--nulls %s: apply recommends an action for every row and drops none; impute or drop the rows with NULLs before apply", prep.Nulls)
			}
			opts.FirstStep = prep.FirstStep
			if opts.FirstStep == traj.StepsDetect {
				var zero string
				if opts.FirstStep, zero, err = parquetio.DetectFirstStep(c.Context, c.Args().Slice(), opts); err != nil {
					return err
				}
				prepNotes(c.App.ErrWriter, zero, traj.NullsError, nil)
			}
			if err := parquetio.CheckActions(c.Context, c.Args().Slice(), opts); err != nil {
				return err
			}
			w := p.Map.Width()
			fn := func(steps []int64, state []float64, width int, action []int32, q []float64, evidence []bool) error {
				if width != w {
					return badInputf("the data's state has width %d but the policy's %s map needs %d: the policy was learned on other features", width, p.Map.Kind, w)
				}
				d := p.NewDecider()
				for i, h := range steps {
					a, v, ev := d.Act(int(h), state[i*w:(i+1)*w])
					action[i], q[i], evidence[i] = int32(a), v, ev
				}
				return nil
			}
			stop := timing.Start(c.Context, "read, recommend and write")
			err = parquetio.Annotate(c.Context, c.Args().Slice(), out, opts, p.ActionLabels, fn)
			stop()
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "wrote %s\n", out)
			return nil
		},
	})
}

// checkOutput refuses an output path whose directory does not exist, before
// any work is done.
func checkOutput(path string) error {
	if path == "" {
		return usagef("no output path given")
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return usagef("output %s: directory %s does not exist", path, dir)
	}
	if !fi.IsDir() {
		return usagef("output %s: %s is not a directory", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usagef("output %s is a directory", path)
	}
	return nil
}
