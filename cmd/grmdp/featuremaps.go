package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
)

// binsFlag is --bins, the binned and soft-binned maps' cut points.
func binsFlag(usage string) cli.Flag {
	return &cli.StringSliceFlag{Name: "bins", Usage: usage}
}

const binsUsage = "binned and soft-binned maps: cut `COL:c1,c2,...` (ascending cut points; a value equal to one falls in the bin below) " +
	"or COL:qK (K quantile bins from every row of every site); repeat for each column"

// binsValues returns the --bins values, each "COL:..." spec whole:
// urfave/cli splits a slice flag's values at commas, so a piece without a
// colon continues the spec before it.
func binsValues(c *cli.Context) []string {
	var out []string
	for _, v := range c.StringSlice("bins") {
		if strings.Contains(v, ":") || len(out) == 0 {
			out = append(out, v)
		} else {
			out[len(out)-1] += "," + v
		}
	}
	return out
}

// parseBins reads the --bins specs for the map k: the binned maps need
// them, the others refuse them. It returns the bins and the state columns
// they name (the columns --state must then leave unnamed or name alike).
func parseBins(specs []string, k features.Kind, state []string) ([]features.Bins, []string, error) {
	binned := k == features.Binned || k == features.SoftBinned
	if !binned {
		if len(specs) > 0 {
			return nil, state, usagef("--bins is for --features binned or soft-binned, not %s", k)
		}
		return nil, state, nil
	}
	if len(specs) == 0 {
		return nil, nil, usagef("--features %s needs --bins COL:c1,c2,... or COL:qK for each state column", k)
	}
	var bins []features.Bins
	var cols []string
	for _, s := range specs {
		b, err := features.ParseBins(s)
		if err != nil {
			return nil, nil, usagef("--bins: %v", strings.TrimPrefix(err.Error(), "features: "))
		}
		bins = append(bins, b)
		cols = append(cols, b.Column)
	}
	if state != nil && strings.Join(state, ",") != strings.Join(cols, ",") {
		return nil, nil, usagef("--state %s: the %s map reads the columns --bins names (%s); leave --state out", strings.Join(state, ","), k, strings.Join(cols, ","))
	}
	return bins, cols, nil
}

// evaluationMap is the feature map --features, --state, --bins and
// --num-states name for the evaluation, read as solve reads them: the
// policy's own map decides, this one evaluates
// (dataset.Options.UsePolicyThrough).
func evaluationMap(d dataset.Declared) (features.Spec, error) {
	m := mapGroup{kind: d.Features, state: d.State, NumState: d.NumStates}
	if err := m.read(d.Bins); err != nil {
		return features.Spec{}, err
	}
	if err := m.spec().Check(); err != nil {
		return features.Spec{}, dataErr(err)
	}
	return m.spec().WithDefaultState()
}
