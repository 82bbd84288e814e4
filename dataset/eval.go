package dataset

import (
	"context"
	"fmt"
	"strings"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// UsePolicyThrough sets o to read data that p is evaluated on through
// the feature map m (its state columns, bins and sizes as [Options].Map
// takes them), with p's horizon and actions as [Options.UsePolicy] sets
// them. When m is not p's own map, the data's rows are read with the
// state columns of both maps, held in memory: m forms the statistics
// (the evaluation's fitted-Q, behaviour propensities and identification
// bounds) and p decides on its own columns ([Data.Evaluate]). When m is
// p's own map, it is [Options.UsePolicy].
func (o *Options) UsePolicyThrough(p *solve.Policy, m features.Spec) {
	o.UsePolicy(p)
	pm := p.Map
	o.Map, o.policyMap = m, &pm
}

// CheckPolicy returns an error wrapping ErrBadInput when the policy (named
// name in the message) does not fit the data: another feature dimension,
// number of actions or action labels; for data read for a policy
// evaluated through another map ([Options.UsePolicyThrough]), another
// number of state columns than its map reads.
func (d *Data) CheckPolicy(p *solve.Policy, name string) error {
	A := 0
	var labels []string
	if d.table != nil {
		A, labels = d.table.A, d.table.Actions
	} else {
		A, labels = d.plan.A, d.plan.Actions
	}
	if d.decide != nil {
		if d.decide.W != p.Map.Width() || A != p.A {
			return badInputf("%s: the policy (%s, %d state columns, A = %d) does not fit the data (%d state columns read for it, A = %d)", name, p.Map.Kind, p.Map.Width(), p.A, d.decide.W, A)
		}
	} else if d.fmap.Dim() != p.D || A != p.A {
		return badInputf("%s: the policy (%s, d = %d, A = %d) does not fit the data (d = %d, A = %d)", name, p.Map.Kind, p.D, p.A, d.fmap.Dim(), A)
	}
	if p.ActionLabels != nil && strings.Join(p.ActionLabels, "\x00") != strings.Join(labels, "\x00") {
		return badInputf("%s: the policy's actions %v differ from the data's %v", name, p.ActionLabels, labels)
	}
	return nil
}

// Evaluate evaluates p on the data (in memory) under the settings s it was
// learned with: its robust value by fitted-Q evaluation, with intervals
// from opts.Bootstrap replicates (eval.FromData). For data read for p
// through another map ([Options.UsePolicyThrough]), the data's map
// evaluates and p decides on its own state columns (opts.DecideOn).
func (d *Data) Evaluate(ctx context.Context, p *solve.Policy, s solve.Settings, opts eval.Options) (*eval.Report, error) {
	if err := d.Held("an evaluation"); err != nil {
		return nil, err
	}
	if d.decide != nil && opts.DecideOn == nil {
		opts.DecideOn = d.decide
	}
	return eval.FromData(ctx, solve.NewSolver(d.stats, s), p, s, opts)
}

// PolicyRows returns the rows with the state columns the policy decides
// on: for data read for a policy through another map
// ([Options.UsePolicyThrough]), its own map's columns; otherwise the
// table itself (nil out of core).
func (d *Data) PolicyRows() *traj.Table {
	if d.decide != nil {
		return d.decide
	}
	return d.table
}

// Delta adds to rep Delta_h, the distance of each site's regression from
// its group's under prob's grouping, with permutation p-values
// (eval.Delta).
func (d *Data) Delta(ctx context.Context, rep *eval.Report, s solve.Settings, prob solve.Problem, opts eval.Options) error {
	if err := d.Held("Delta_h"); err != nil {
		return err
	}
	stop := timing.Start(ctx, "Delta")
	cells, sum, yard, err := eval.Delta(ctx, solve.NewSolver(d.stats, s), prob, opts)
	stop()
	if err != nil {
		return err
	}
	rep.Delta, rep.DeltaSum, rep.Yardstick, rep.Permutations = cells, sum, yard, opts.Permutations
	return nil
}

// EvaluateAll scores every policy of res by eval's estimator (no
// bootstrap) on the data, so that methods can be ranked without a model.
func (d *Data) EvaluateAll(ctx context.Context, res *Compared, s solve.Settings) ([]*eval.Report, error) {
	if err := d.Held("the shared evaluation"); err != nil {
		return nil, err
	}
	var out []*eval.Report
	for _, p := range res.Policies {
		rep, err := eval.FromData(ctx, solve.NewSolver(d.stats, s), p, s, eval.Options{Workers: s.Workers})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Method, err)
		}
		out = append(out, rep)
	}
	return out, nil
}

// Observed is each site's observed care: the mean realised return per
// trajectory, with a bootstrap interval of the given level from B
// replicates drawn from seed.
func (d *Data) Observed(B int, seed uint64, level float64) ([]eval.ObservedValue, error) {
	if err := d.Held("the observed care"); err != nil {
		return nil, err
	}
	return eval.ObservedCare(d.table, B, seed, level), nil
}
