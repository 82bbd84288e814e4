package dataset

import (
	"context"
	"fmt"
	"strings"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/eval/report"
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

// PolicyEvalOptions are the settings of [Data.EvaluatePolicy].
type PolicyEvalOptions struct {
	// Options are the evaluation's: bootstrap, permutations, seed,
	// workers, return range. Their Progress is not used: see Progress.
	eval.Options
	// Name names the policy in the result and in errors (its file).
	Name string
	// Clusters is the grouping of Delta_h; nil for the policy's own
	// groups when it pools sites (cluster, pooled), and otherwise no
	// Delta_h.
	Clusters *solve.Problem
	// Model, when not nil, adds the exact values under this known model.
	Model *eval.Model
	// Settings are the settings the result records.
	Settings map[string]string
	// Report, when not "", is the directory (which must exist) of a
	// Markdown report with plots, which names Commands as the commands
	// that made it.
	Report   string
	Commands []string
	// Progress, when not nil, is asked for the progress of each phase in
	// turn ("bootstrap (replicate-steps)", then "permutations"), which is
	// told the phase's total and then its work as it finishes
	// ([eval.Options].Progress), and finished when the phase ends.
	Progress func(phase string) Progress
}

// EvaluatePolicy evaluates p (learned with the settings it records) on
// the data, held in memory: its robust value and each site's with
// bootstrap intervals ([Data.Evaluate]), Delta_h with permutation
// p-values ([Data.Delta]), the exact values under a known model, the
// agreement with the recorded actions, and whether the evaluation is in
// sample ([Data.LearnedFrom]); with o.Report, it writes the report.
func (d *Data) EvaluatePolicy(ctx context.Context, p *solve.Policy, o PolicyEvalOptions) (*eval.Result, error) {
	if err := d.CheckPolicy(p, o.Name); err != nil {
		return nil, err
	}
	prob := o.Clusters
	if prob == nil && (p.Method == solve.Cluster || p.Method == solve.Pooled) {
		var err error
		if prob, err = policyGroups(p, d.Sites(), o.Name); err != nil {
			return nil, err
		}
	}
	progress := func(phase string) Progress {
		if o.Progress == nil {
			return silent{}
		}
		return o.Progress(phase)
	}
	s := EvalSettings(p, o.Workers)
	stop := timing.Start(ctx, "evaluation and bootstrap")
	bar := progress("bootstrap (replicate-steps)")
	o.Options.Progress = bar
	rep, err := d.Evaluate(ctx, p, s, o.Options)
	bar.Finish()
	stop()
	if err != nil {
		return nil, err
	}
	res := &eval.Result{Policy: o.Name, Method: string(p.Method), Report: rep, Settings: o.Settings}
	if prob != nil {
		bar := progress("permutations")
		o.Options.Progress = bar
		err := d.Delta(ctx, rep, s, *prob, o.Options)
		bar.Finish()
		if err != nil {
			return nil, err
		}
	}
	if o.Model != nil {
		x, err := o.Model.Exact(p)
		if err != nil {
			return nil, err
		}
		sites, err := o.Model.ExactSites(p)
		if err != nil {
			return nil, err
		}
		rep.SetExact(o.Model.Model.Sites(), sites)
		res.Exact = &x
	}
	if res.Agreement, err = eval.AgreementOf(ctx, p, d.PolicyRows(), o.Workers); err != nil {
		return nil, err
	}
	res.InSample, res.Sample = d.LearnedFrom(p)
	if o.Report != "" {
		in := report.ForResult("grmdp evaluation of "+o.Name, p, res, d.Stats())
		in.Commands = o.Commands
		if err := report.Write(o.Report, in); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// policyGroups is the grouping of p's groups over the data's sites, for
// Delta_h.
func policyGroups(p *solve.Policy, sites []string, name string) (*solve.Problem, error) {
	pr := &solve.Problem{Method: solve.Cluster}
	index := map[string]int{}
	for k, site := range sites {
		index[site] = k
	}
	for _, g := range p.Groups {
		var members []int
		for _, site := range g.Sites {
			k, ok := index[site]
			if !ok {
				return nil, badInputf("%s: the policy's site %s is not in the data", name, site)
			}
			members = append(members, k)
		}
		pr.Groups = append(pr.Groups, members)
		pr.GroupNames = append(pr.GroupNames, g.Name)
	}
	return pr, nil
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
