package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/internal/textfmt"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
)

func simulateCommand() *cli.Command {
	o := &SimulateOptions{
		Output:    outputGroup{usage: "data `FILE` to write (Parquet)"},
		RowGroups: rowGroupsGroup{usage: "rows per Parquet row group (default 1048576)"},
	}
	return withConfig(leaf(&cli.Command{
		Name:  "simulate",
		Usage: "write trajectory data from one of the paper's instances (and its true model)",
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "scenario", Value: "benchmark", Usage: "benchmark (4.1), convergence (4.2 hard instance), trap (4.3), formulary (sparse tabular guardrail scenario) or clinical (five hospitals, lactate and SOFA, 0/1 survival, NULL lactate)", Destination: &o.Scenario},
		&cli.IntFlag{Name: "sites", Usage: "number of sites K (default: the scenario's)", Destination: &o.Params.Sites},
		&cli.StringFlag{Name: "trajectories", Usage: "trajectories per site, comma separated `N1,N2,...` (default: the scenario's)"},
		&cli.IntFlag{Name: "min-trajectories", Usage: "scale the scenario's site sizes so the smallest has `N` trajectories", Destination: &o.Params.MinTrajectories},
		&cli.IntFlag{Name: "horizon", Usage: "horizon H (default: the scenario's)", Destination: &o.Params.Horizon},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the model and the data", Destination: &o.Params.Seed},
		&cli.StringFlag{Name: "model-out", Usage: "write the true model to this JSON `FILE` for exact evaluation", Destination: &o.ModelOut},
		&cli.StringFlag{Name: "split-sites", Usage: "also write each site's rows to `PREFIX`<site>/data.parquet (--split-sites hospital- writes hospital-1/data.parquet, hospital-2/data.parquet, ...): the -o file cut by site, one folder per site", Destination: &o.SplitPrefix},
	}, func(c *cli.Command) error {
		var err error
		if s := c.String("trajectories"); s != "" {
			if o.Params.Trajectories, err = intList(s); err != nil {
				return usagef("--trajectories %q: %v", s, err)
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
	// model; SplitPrefix, if not "", each site's rows
	// (dataset.SplitPath).
	Output      outputGroup
	ModelOut    string
	SplitPrefix string
	RowGroups   rowGroupsGroup
	Memory      memoryGroup
}

// runSimulate samples the instance and writes its files.
func runSimulate(ctx context.Context, o SimulateOptions, stdout, _ io.Writer) error {
	m, err := sim.New(o.Scenario, o.Params)
	if err != nil {
		return usagef("%v", err)
	}
	res, err := dataset.WriteSimulation(ctx, m, o.Params.Seed, dataset.SimulationFiles{Data: o.Output.Path, Model: o.ModelOut,
		SplitPrefix: o.SplitPrefix, RowGroupRows: o.RowGroups.Rows, MaxMemory: o.Memory.Limit,
		Prepare: func(p string) error { return prepareOutput(ctx, p) }, WriteTable: writeTrajectories})
	if tl := (*dataset.TooLargeError)(nil); errors.As(err, &tl) {
		// The flags alone ask for this much: a usage error.
		return usagef("%s: %s", tooLargeFinding(tl), remedyWords[tl.Remedy])
	}
	if err != nil {
		return dataErr(err)
	}
	fm := m.Map()
	fmt.Fprintf(stdout, "wrote %s: %s scenario, %d sites, %d rows, H = %d, A = %d, features %s (solve with --features %s --state %s%s)\n",
		o.Output.Path, m.Scenario(), len(res.Sites), res.Rows, res.H, res.A, fm.Kind, fm.Kind, strings.Join(fm.StateColumns, ","), res.Flags)
	if o.ModelOut != "" {
		fmt.Fprintf(stdout, "wrote %s: the true model\n", o.ModelOut)
	}
	for _, f := range res.Split {
		fmt.Fprintf(stdout, "wrote %s: site %s, %d trajectories, %d rows\n", f.Path, textfmt.Quote(f.Site), f.Trajectories, f.Rows)
	}
	return nil
}

// writeTrajectories writes simulate's data files; tests replace it to make
// one of them fail.
var writeTrajectories = parquetio.WriteTrajectories
