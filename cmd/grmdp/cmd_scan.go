package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
)

// scanCommand decodes the columns a solve needs and nothing else: the floor
// that solve's time is measured against in scripts/bench.sh.
func scanCommand() *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "decode the columns a solve reads and discard them (the performance floor)",
		ArgsUsage: "DATA...",
		Hidden:    true,
		Flags:     dataFlags(),
		Action: func(c *cli.Context) error {
			o, err := parseDataOptions(c)
			if err != nil {
				return err
			}
			paths := dataArgs(c)
			if len(paths) == 0 {
				return usagef("no DATA given")
			}
			if o.Map.Kind == features.ActionBlock && o.Map.StateColumns == nil {
				if o.Map.StateColumns, err = parquetio.PrefixedColumns(paths, "s"); err != nil {
					return err
				}
			}
			n, err := parquetio.Scan(c.Context, paths, o.ReadOptions(nil))
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%d rows decoded\n", n)
			return nil
		},
	}
}
