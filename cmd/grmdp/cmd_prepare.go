package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
)

func prepareCommand() *cli.Command {
	flags := append(dataFlags(),
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "Parquet `FILE` to write", Required: true},
		&cli.IntFlag{Name: "row-group-rows", Usage: "at most this many rows per row group (default 1048576)"},
	)
	return withConfig(&cli.Command{
		Name:      "prepare",
		Usage:     "validate DATA and rewrite it sorted by (step, site, traj), with row groups aligned to steps (trajectories renumbered 0..N-1 in (site, traj) order; columns outside the contract are dropped)",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			o, err := parseDataOptions(c)
			if err != nil {
				return err
			}
			out := c.String("output")
			if err := checkOutput(out); err != nil {
				return err
			}
			if c.Int("row-group-rows") < 0 {
				return usagef("--row-group-rows must not be negative")
			}
			ds, err := loadData(c.Context, c, o, c.Args().Slice())
			if err != nil {
				return err
			}
			t := ds.Table
			intSites := true
			for _, s := range t.Sites {
				if _, err := strconv.ParseInt(s, 10, 64); err != nil {
					intSites = false
				}
			}
			all, err := t.Chunk(intSites)
			if err != nil {
				return err
			}
			// One chunk per step: each is written as its own row group(s),
			// so every row group's step statistics hold a single step.
			var chunks []*parquetio.Chunk
			row := 0
			for h := 1; h <= t.H; h++ {
				n := t.Steps[h-1].Len()
				idx := make([]int, n)
				for j := range idx {
					idx[j] = row + j
				}
				row += n
				if n > 0 {
					chunks = append(chunks, all.Select(idx))
				}
			}
			wo := parquetio.WriteOptions{Columns: o.Columns, StateColumns: ds.Map.StateColumns, List: ds.Map.Kind == features.Precomputed,
				IntSites: intSites, RowGroupRows: c.Int("row-group-rows")}
			if err := parquetio.WriteChunks(out, chunks, wo); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "wrote %s: %d rows sorted by (step, site, traj), row groups aligned to the %d steps\n", out, t.Rows, t.H)
			return nil
		},
	})
}
