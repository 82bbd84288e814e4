package dataset

import (
	"context"
	"fmt"
	"strings"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
)

// CheckPolicy returns an error wrapping ErrBadInput when the policy (named
// name in the message) does not fit the data: another feature dimension,
// number of actions or action labels.
func (d *Data) CheckPolicy(p *solve.Policy, name string) error {
	A := 0
	var labels []string
	if d.table != nil {
		A, labels = d.table.A, d.table.Actions
	} else {
		A, labels = d.plan.A, d.plan.Actions
	}
	if d.fmap.Dim() != p.D || A != p.A {
		return badInputf("%s: the policy (%s, d = %d, A = %d) does not fit the data (d = %d, A = %d)", name, p.Map.Kind, p.D, p.A, d.fmap.Dim(), A)
	}
	if p.ActionLabels != nil && strings.Join(p.ActionLabels, "\x00") != strings.Join(labels, "\x00") {
		return badInputf("%s: the policy's actions %v differ from the data's %v", name, p.ActionLabels, labels)
	}
	return nil
}

// Evaluate evaluates p on the data (in memory) under the settings s it was
// learned with: its robust value by fitted-Q evaluation, with intervals
// from opts.Bootstrap replicates (eval.FromData).
func (d *Data) Evaluate(ctx context.Context, p *solve.Policy, s solve.Settings, opts eval.Options) (*eval.Report, error) {
	if err := d.Held("an evaluation"); err != nil {
		return nil, err
	}
	return eval.FromData(ctx, solve.NewSolver(d.stats, s), p, s, opts)
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
