package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/traj"
)

func simulateCommand() *cli.Command {
	o := &SimulateOptions{
		Output:    outputGroup{usage: "data `FILE` to write (Parquet)", required: true},
		RowGroups: rowGroupsGroup{usage: "rows per Parquet row group (default 1048576)"},
	}
	return withConfig(leaf(&cli.Command{
		Name:  "simulate",
		Usage: "write trajectory data from one of the paper's instances (and its true model)",
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "scenario", Value: "benchmark", Usage: "benchmark (4.1), convergence (4.2 hard instance), trap (4.3), formulary (sparse tabular guardrail scenario) or clinical (five hospitals, lactate and SOFA, 0/1 survival, NULL lactate)"},
		&cli.IntFlag{Name: "sites", Usage: "number of sites K (default: the scenario's)"},
		&cli.StringFlag{Name: "trajectories", Usage: "trajectories per site, comma separated `N1,N2,...` (default: the scenario's)"},
		&cli.IntFlag{Name: "min-trajectories", Usage: "scale the scenario's site sizes so the smallest has `N` trajectories"},
		&cli.IntFlag{Name: "horizon", Usage: "horizon H (default: the scenario's)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the model and the data"},
		&cli.StringFlag{Name: "model-out", Usage: "write the true model to this JSON `FILE` for exact evaluation"},
		&cli.StringFlag{Name: "split-sites", Usage: "also write each site's rows to `PREFIX`<site>/data.parquet (--split-sites hospital- writes hospital-1/data.parquet, hospital-2/data.parquet, ...): the -o file cut by site, one folder per site"},
	}, func(c *cli.Context) error {
		o.Scenario, o.ModelOut, o.SplitPrefix = c.String("scenario"), c.String("model-out"), c.String("split-sites")
		o.Params = sim.Params{Sites: c.Int("sites"), Horizon: c.Int("horizon"), Seed: c.Uint64("seed"), MinTrajectories: c.Int("min-trajectories")}
		if s := c.String("trajectories"); s != "" {
			for _, f := range strings.Split(s, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 1 {
					return usagef("--trajectories %q: each entry must be a positive integer", s)
				}
				o.Params.Trajectories = append(o.Params.Trajectories, n)
			}
			if o.Params.Sites == 0 {
				o.Params.Sites = len(o.Params.Trajectories)
			}
		}
		return nil
	}}, &o.Output, &o.RowGroups, &o.Memory}, runSimulate))
}

// SimulateOptions is what the command line of `grmdp simulate` says.
type SimulateOptions struct {
	// Scenario and Params choose the simulated instance (sim.New); its
	// seed also draws the data.
	Scenario string
	Params   sim.Params
	// Output is the data file; ModelOut, if not "", receives the true
	// model; SplitPrefix, if not "", each site's rows (splitPath).
	Output      outputGroup
	ModelOut    string
	SplitPrefix string
	RowGroups   rowGroupsGroup
	Memory      memoryGroup
}

// runSimulate samples the instance and writes its files.
func runSimulate(ctx context.Context, o SimulateOptions, stdout, _ io.Writer) error {
	if err := prepareOutput(ctx, o.Output.Path); err != nil {
		return err
	}
	if o.ModelOut != "" {
		if err := prepareOutput(ctx, o.ModelOut); err != nil {
			return err
		}
	}
	m, err := sim.New(o.Scenario, o.Params)
	if err != nil {
		return usagef("%v", err)
	}
	if err := checkSimulationMemory(o.Memory.Limit, m); err != nil {
		return err
	}
	return writeSimulation(ctx, stdout, m, o.Params.Seed, simOutputs{
		data: o.Output.Path, model: o.ModelOut, splitPrefix: o.SplitPrefix, rowGroup: o.RowGroups.Rows})
}

// writeTrajectories writes simulate's data files; tests replace it to make
// one of them fail.
var writeTrajectories = parquetio.WriteTrajectories

// simOutputs names what simulate writes: the data, the true model (if
// model is not ""), each site's rows in splitPrefix<site>/data.parquet (if
// splitPrefix is not "").
type simOutputs struct {
	data, model, splitPrefix string
	rowGroup                 int
}

// splitPath is the file of site's rows under --split-sites prefix.
func splitPath(prefix, site string) string {
	return filepath.Join(prefix+site, "data.parquet")
}

// writeSimulation samples m and writes the data (and the model, and each
// site's rows): all of them, or, when one cannot be written or the run is
// interrupted, none.
func writeSimulation(ctx context.Context, w io.Writer, m sim.Model, seed uint64, o simOutputs) error {
	t, err := m.Sample(seed)
	if err != nil {
		return err
	}
	var splits []string
	if o.splitPrefix != "" {
		for _, site := range t.Sites {
			p := splitPath(o.splitPrefix, site)
			if filepath.Clean(p) == filepath.Clean(o.data) || (o.model != "" && filepath.Clean(p) == filepath.Clean(o.model)) {
				return usagef("--split-sites %s writes site %s's rows to %s, which is also an output (-o or --model-out)", o.splitPrefix, site, p)
			}
			if err := prepareOutput(ctx, p); err != nil {
				return err
			}
			splits = append(splits, p)
		}
	}
	opts := m.Options()
	wo := parquetio.WriteOptions{StateColumns: opts.State.Columns, List: opts.State.List, IntSites: true, RowGroupRows: o.rowGroup}
	var out fileio.Staged
	defer out.Abort()
	write := func(path string, fn func(tmp string) error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		tmp, err := out.Add(path)
		if err != nil {
			return err
		}
		return fn(tmp)
	}
	// A model whose data have NULLs (clinical) writes its rows as drawn,
	// NULLs included; t is what its Options read back.
	var rows []*traj.Chunk
	if opts.Nulls != traj.NullsError {
		if rows, err = m.SampleRows(seed); err != nil {
			return err
		}
		wo.NullNaN = true
	}
	if err := write(o.data, func(tmp string) error {
		if rows != nil {
			return parquetio.WriteChunks(tmp, rows, wo)
		}
		return writeTrajectories(tmp, t, wo)
	}); err != nil {
		return err
	}
	if o.model != "" {
		if err := write(o.model, func(tmp string) error {
			return fileio.WriteAtomic(tmp, func(w io.Writer) error { return sim.WriteModel(w, m) })
		}); err != nil {
			return err
		}
	}
	for k, p := range splits {
		if err := write(p, func(tmp string) error {
			if rows != nil {
				return parquetio.WriteChunks(tmp, rows[k:k+1], wo)
			}
			return writeTrajectories(tmp, t.Site(k), wo)
		}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	fmap := m.Map()
	hint, nrows := "", t.Rows
	for _, b := range fmap.Bins {
		hint += " --bins " + b.String()
	}
	siteRows := func(k int) int { return t.Site(k).Rows }
	if rows != nil {
		hint += " --nulls " + opts.Nulls.String()
		siteRows = func(k int) int { return rows[k].Len() }
		nrows = 0
		for _, c := range rows {
			nrows += c.Len()
		}
	}
	fmt.Fprintf(w, "wrote %s: %s scenario, %d sites, %d rows, H = %d, A = %d, features %s (solve with --features %s --state %s%s)\n",
		o.data, m.Scenario(), len(t.Sites), nrows, t.H, t.A, fmap.Kind, fmap.Kind, strings.Join(fmap.StateColumns, ","), hint)
	if o.model != "" {
		fmt.Fprintf(w, "wrote %s: the true model\n", o.model)
	}
	for k, p := range splits {
		fmt.Fprintf(w, "wrote %s: site %s, %d trajectories, %d rows\n", p, quoteName(t.Sites[k]), m.Trajectories()[k], siteRows(k))
	}
	return nil
}
