package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
)

// scanCommand decodes the columns a solve needs and nothing else: the floor
// that solve's time is measured against in scripts/bench.sh.
func scanCommand() *cli.Command {
	o := &ScanOptions{}
	return leaf(&cli.Command{
		Name:      "scan",
		Usage:     "decode the columns a solve reads and discard them (the performance floor)",
		ArgsUsage: "DATA...",
		Hidden:    true,
	}, o, []optionGroup{&o.Data, &o.workersGroup, from(&o.Paths, dataArgs)}, runScan)
}

// ScanOptions is what the command line of `grmdp scan` says.
type ScanOptions struct {
	Data dataGroup
	workersGroup
	Paths []string
}

// runScan decodes the columns and prints how many rows it decoded.
func runScan(ctx context.Context, o ScanOptions, stdout, _ io.Writer) error {
	do := o.Data.options()
	do.Workers = o.Workers
	n, err := dataset.Scan(ctx, o.Paths, do)
	if err != nil {
		return dataErr(err)
	}
	fmt.Fprintf(stdout, "%d rows decoded\n", n)
	return nil
}
