package dataset

import (
	"context"
	"maps"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
)

// ComparisonOptions say what [Data.Compare] writes and records beside the
// solves.
type ComparisonOptions struct {
	// Dir receives every method's policy (Dir/METHOD.parquet) and
	// compare.json.
	Dir string
	// Warnings are added to every policy, after the data's own.
	Warnings []string
	// Warn and Exact are [Compared.Rows]'.
	Warn  func(*solve.Diagnostics) []string
	Exact func(*solve.Policy) (eval.ExactValues, error)
	// Version and Settings are recorded in every policy, Settings with
	// the policy's own method.
	Version  string
	Settings map[string]string
	// Skip, when not "", skips the shared evaluation (every policy
	// evaluated by eval's estimator on the compared data, and the observed
	// care) and says why; OutOfCore says why data not held in memory skip
	// it.
	Skip, OutOfCore string
	// Write writes a policy to path.
	Write func(path string, p *solve.Policy) error
}

// Comparison is what [Data.Compare] wrote.
type Comparison struct {
	Rows []MethodRow
	// Observed is the observed care per site, nil when the shared
	// evaluation did not run; Note then says why.
	Observed []eval.ObservedValue
	Note     string
	// JSON is compare.json's content.
	JSON []byte
	// Warnings are the data's and o.Warnings, then the methods' (each
	// once, naming the methods it applies to).
	Warnings []string

	// exact says that the rows have values under a model; dir is where
	// the policies are.
	exact bool
	dir   string
}

// The observed care's bootstrap replicates and seed in a comparison.
const (
	observedBootstrap = 200
	observedSeed      = 1
)

// Compare solves every problem under s, evaluates every policy on the same
// data (unless o skips it) and writes the policies and compare.json to
// o.Dir.
func (d *Data) Compare(ctx context.Context, s solve.Settings, probs []solve.Problem, o ComparisonOptions) (*Comparison, error) {
	warnings := append(append([]string(nil), d.Warnings()...), o.Warnings...)
	res, err := d.SolveAll(ctx, s, probs)
	if err != nil {
		return nil, err
	}
	for i, p := range res.Policies {
		p.Version = o.Version
		p.Settings = maps.Clone(o.Settings)
		p.Settings["method"] = string(res.Problems[i].Method)
	}
	rows, methodWarnings, err := res.Rows(o.Dir, warnings, o.Warn, o.Exact)
	if err != nil {
		return nil, err
	}
	c := &Comparison{Rows: rows, Note: o.Skip, Warnings: append(warnings, methodWarnings...), exact: o.Exact != nil, dir: o.Dir}
	if c.Note == "" && !d.InMemory() {
		c.Note = o.OutOfCore
	}
	if c.Note == "" {
		stop := timing.Start(ctx, "shared evaluation")
		reps, err := d.EvaluateAll(ctx, res, s)
		stop()
		if err != nil {
			return nil, err
		}
		for i, rep := range reps {
			rows[i].Evaluation = rep
		}
		if c.Observed, err = d.Observed(observedBootstrap, observedSeed, 0.95); err != nil {
			return nil, err
		}
		if c.Observed == nil {
			c.Observed = []eval.ObservedValue{}
		}
	}
	if err := res.WritePolicies(ctx, rows, s.Workers, o.Write); err != nil {
		return nil, err
	}
	if c.JSON, err = WriteComparison(o.Dir, rows, c.Observed, c.Note); err != nil {
		return nil, err
	}
	return c, nil
}
