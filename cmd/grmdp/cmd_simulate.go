package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
)

func simulateCommand() *cli.Command {
	return withConfig(&cli.Command{
		Name:  "simulate",
		Usage: "write trajectory data from one of the paper's instances (and its true model)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "scenario", Value: "benchmark", Usage: "benchmark (4.1), convergence (4.2 hard instance), trap (4.3) or formulary (sparse tabular guardrail scenario)"},
			&cli.IntFlag{Name: "sites", Usage: "number of sites K (default: the scenario's)"},
			&cli.StringFlag{Name: "trajectories", Usage: "trajectories per site, comma separated `N1,N2,...` (default: the scenario's)"},
			&cli.IntFlag{Name: "min-trajectories", Usage: "scale the scenario's site sizes so the smallest has `N` trajectories"},
			&cli.IntFlag{Name: "horizon", Usage: "horizon H (default: the scenario's)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the model and the data"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "data `FILE` to write (Parquet)", Required: true},
			&cli.StringFlag{Name: "model-out", Usage: "write the true model to this JSON `FILE` for exact evaluation"},
			&cli.IntFlag{Name: "row-group-rows", Usage: "rows per Parquet row group (default 1048576)"},
			memoryFlag(),
		},
		Action: func(c *cli.Context) error {
			p := sim.Params{Sites: c.Int("sites"), Horizon: c.Int("horizon"), Seed: c.Uint64("seed"), MinTrajectories: c.Int("min-trajectories")}
			if s := c.String("trajectories"); s != "" {
				for _, f := range strings.Split(s, ",") {
					n, err := strconv.Atoi(strings.TrimSpace(f))
					if err != nil || n < 1 {
						return usagef("--trajectories %q: each entry must be a positive integer", s)
					}
					p.Trajectories = append(p.Trajectories, n)
				}
				if p.Sites == 0 {
					p.Sites = len(p.Trajectories)
				}
			}
			out := c.String("output")
			if err := prepareOutput(c.Context, out); err != nil {
				return err
			}
			if mo := c.String("model-out"); mo != "" {
				if err := prepareOutput(c.Context, mo); err != nil {
					return err
				}
			}
			m, err := sim.New(c.String("scenario"), p)
			if err != nil {
				return usagef("%v", err)
			}
			limit, err := memoryLimit(c)
			if err != nil {
				return err
			}
			if err := checkSimulationMemory(limit, m); err != nil {
				return err
			}
			if c.Int("row-group-rows") < 0 {
				return usagef("--row-group-rows must not be negative")
			}
			return writeSimulation(c.App.Writer, m, c.Uint64("seed"), out, c.String("model-out"), c.Int("row-group-rows"))
		},
	})
}

// writeSimulation samples m and writes the data (and the model).
func writeSimulation(w io.Writer, m sim.Model, seed uint64, out, modelOut string, rowGroup int) error {
	t, err := m.Sample(seed)
	if err != nil {
		return err
	}
	o := m.Options()
	wo := parquetio.WriteOptions{StateColumns: o.State.Columns, List: o.State.List, IntSites: true, RowGroupRows: rowGroup}
	if err := parquetio.WriteTrajectories(out, t, wo); err != nil {
		return err
	}
	if modelOut != "" {
		if err := fileio.WriteAtomic(modelOut, func(w io.Writer) error { return sim.WriteModel(w, m) }); err != nil {
			return err
		}
	}
	fmap := m.Map()
	fmt.Fprintf(w, "wrote %s: %s scenario, %d sites, %d rows, H = %d, A = %d, features %s (solve with --features %s --state %s)\n",
		out, m.Scenario(), len(t.Sites), t.Rows, t.H, t.A, fmap.Kind, fmap.Kind, strings.Join(fmap.StateColumns, ","))
	if modelOut != "" {
		fmt.Fprintf(w, "wrote %s: the true model\n", modelOut)
	}
	return nil
}
