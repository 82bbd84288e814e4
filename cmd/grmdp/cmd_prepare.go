package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
)

func prepareCommand() *cli.Command {
	o := &PrepareOptions{
		Output:    outputGroup{usage: "Parquet `FILE` to write"},
		RowGroups: rowGroupsGroup{usage: "at most this many rows per row group (default 1048576)"},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "prepare",
		Usage:     "validate DATA and rewrite it sorted by (step, site, traj), with row groups aligned to steps (trajectories renumbered 0..N-1 in (site, traj) order; columns outside the contract are dropped)",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.Output, &o.RowGroups, own{fl: []cli.Flag{
		&cli.BoolFlag{Name: "out-of-core", Destination: &o.OutOfCore, Usage: "validate every row in one pass, then read and write one step at a time, holding two steps " +
			"instead of the whole input (automatic when it would not fit in --max-memory); the output is the same"},
	}}, from(&o.Paths, dataArgs)}, runPrepare))
}

// PrepareOptions is what the command line of `grmdp prepare` says.
type PrepareOptions struct {
	Data      dataGroup
	Workers   workersGroup
	Memory    memoryGroup
	Output    outputGroup
	RowGroups rowGroupsGroup
	// OutOfCore asks for the streaming rewrite, which is chosen anyway
	// when the input would not fit in the memory limit.
	OutOfCore bool
	Paths     []string
}

// runPrepare rewrites the data sorted by step, in memory or one step at a
// time.
func runPrepare(ctx context.Context, po PrepareOptions, stdout, stderr io.Writer) error {
	o := openOptions(&po.Data, po.Workers, po.Memory, stderr)
	o.OutOfCore, o.Note = po.OutOfCore, notesTo(stderr, "preparing out of core instead, one step at a time")
	out := po.Output.Path
	if err := prepareOutput(ctx, out); err != nil {
		return err
	}
	rows, H, err := dataset.WriteSorted(ctx, po.Paths, o, out, po.RowGroups.Rows)
	if err != nil {
		return dataErr(err)
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows sorted by (step, site, traj), row groups aligned to the %d steps\n", out, rows, H)
	return nil
}
