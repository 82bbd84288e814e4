package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
)

func inspectCommand() *cli.Command {
	o := &InspectOptions{}
	return withConfig(leaf(&cli.Command{
		Name:      "inspect",
		Usage:     "summarise trajectory data: sites, steps, actions, counts, episode lengths, coverage",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{&o.Data, &o.Workers, &o.Memory, &o.JSON, from(&o.Paths, dataArgs)}, runInspect))
}

// InspectOptions is what the command line of `grmdp inspect` says.
type InspectOptions struct {
	Data    dataGroup
	Workers workersGroup
	Memory  memoryGroup
	JSON    jsonGroup
	Paths   []string
}

// runInspect reads the data and prints their summary.
func runInspect(ctx context.Context, o InspectOptions, stdout, stderr io.Writer) error {
	do := openOptions(&o.Data, o.Workers, o.Memory, stderr)
	do.InMemory = "an inspection reads every row"
	d, err := dataset.Open(ctx, o.Paths, do)
	if err != nil {
		return dataErr(err)
	}
	rep, err := d.Inspect()
	if err != nil {
		return dataErr(err)
	}
	defer tell(stderr, "warning", rep.Warnings)
	return printResult(stdout, o.JSON.JSON, rep)
}
