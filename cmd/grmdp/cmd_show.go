package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
)

func showCommand() *cli.Command {
	o := &ShowOptions{}
	return withConfig(leaf(&cli.Command{
		Name:      "show",
		Usage:     "print a policy's settings, its coefficients by state feature and action, and its decisions per state cell",
		ArgsUsage: "POLICY",
	}, o, []optionGroup{&o.jsonGroup, own{[]cli.Flag{
		&cli.IntSliceFlag{Name: "step", Usage: "show the tables of step `H` only (repeatable or comma-separated; default: every step)"},
		&cli.IntFlag{Name: "max-rows", Value: defaultShowRows, Usage: "at most `N` rows per table (0: all; --json shows all unless given)", Destination: &o.MaxRows},
	}, func(c *cli.Command) error {
		if c.NArg() != 1 {
			return usagef("show takes one POLICY file, got %d arguments", c.NArg())
		}
		o.Policy, o.Steps = c.Args().First(), c.IntSlice("step")
		if o.JSON && !c.IsSet("max-rows") {
			o.MaxRows = 0
		}
		if o.MaxRows < 0 {
			return usagef("--max-rows must not be negative, got %d", o.MaxRows)
		}
		return nil
	}}}, runShow))
}

// defaultShowRows bounds show's tables unless --max-rows says otherwise.
const defaultShowRows = 40

// ShowOptions is what the command line of `grmdp show` says.
type ShowOptions struct {
	Policy string
	jsonGroup
	// Steps picks the steps of the coefficient and decision tables (nil:
	// every step).
	Steps []int
	// MaxRows bounds the rows of each table (0: all).
	MaxRows int
}

// runShow prints the policy: its settings, the per-step summary, its
// coefficients by state feature and action and, for tabular and binned
// maps, the recommended action per state cell.
func runShow(_ context.Context, o ShowOptions, stdout, _ io.Writer) error {
	p, err := readPolicy(o.Policy)
	if err != nil {
		return err
	}
	v, err := dataset.ViewPolicy(p, o.Steps, o.MaxRows)
	if err != nil {
		return dataErr(err)
	}
	v.More = "--max-rows 0 shows all"
	return printResult(stdout, o.JSON, v)
}
