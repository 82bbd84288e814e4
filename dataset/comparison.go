package dataset

import (
	"context"
	"fmt"
	"io"
	"maps"
	"text/tabwriter"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/internal/textfmt"
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
	// HeldOut, when not nil, also scores every method held out
	// ([Data.HeldOutMethods]) on HeldOut's Folds, Seed, Bootstrap and
	// Level, each method under the settings it was solved with; the data
	// must be in memory.
	HeldOut *SelectOptions
	// Auto, when not nil, chooses each method's settings by a
	// cross-fitted choice of its own ([Data.Select]) among Auto's
	// candidates (Cs, Lambdas, Stationary) on Auto's folds and seed; the
	// method's Problem and the base settings are set per method, and
	// behaviour cloning, with no penalty, is solved as given. A method
	// whose choice is the behaviour fallback is behaviour cloning, written
	// under the method's name with its selection.
	Auto *SelectOptions
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
	// HeldOut is how the methods were scored held out (nil unless
	// o.HeldOut asked for it); each row's HeldOut holds its record.
	HeldOut *HeldOutComparison
	// Selections are the methods' choices of settings under o.Auto, in
	// the rows' order (nil for behaviour cloning; nil without o.Auto).
	Selections []*Selection

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
	var res *Compared
	var sels []*Selection
	var err error
	if o.Auto != nil {
		res, sels, err = d.solveAllSelected(ctx, s, probs, *o.Auto)
	} else {
		res, err = d.SolveAll(ctx, s, probs)
	}
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
	c := &Comparison{Rows: rows, Note: o.Skip, Warnings: append(warnings, methodWarnings...), Selections: sels, exact: o.Exact != nil, dir: o.Dir}
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
	if o.HeldOut != nil {
		if err := d.scoreHeldOut(ctx, c, s, res, sels, *o.HeldOut); err != nil {
			return nil, err
		}
	}
	if err := res.WritePolicies(ctx, rows, s.Workers, o.Write); err != nil {
		return nil, err
	}
	if c.JSON, err = WriteComparison(o.Dir, rows, c.Observed, c.Note, c.HeldOut); err != nil {
		return nil, err
	}
	return c, nil
}

// solveAllSelected solves every problem of probs under the settings its
// own cross-fitted choice picks among auto's candidates (behaviour
// cloning under s), with each policy's diagnostics and its actions at a
// systematic sample of rows, as [Data.SolveAll]. A policy records its
// selection.
func (d *Data) solveAllSelected(ctx context.Context, s solve.Settings, probs []solve.Problem, auto SelectOptions) (*Compared, []*Selection, error) {
	if err := d.Held("a cross-fitted choice of settings"); err != nil {
		return nil, nil, err
	}
	res := &Compared{Problems: probs}
	sels := make([]*Selection, len(probs))
	for i, prob := range probs {
		if prob.Method == solve.Behaviour {
			r, err := d.Solve(ctx, s, prob)
			if err != nil {
				return nil, nil, err
			}
			res.Policies = append(res.Policies, r.Policy)
			continue
		}
		so := auto
		so.Settings, so.Problem = s, prob
		if auto.OnFold != nil {
			so.OnFold = func(done, folds int) { auto.OnFold(i*folds+done, len(probs)*folds) }
		}
		r, sel, err := d.SolveSelected(ctx, so)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", prob.Method, err)
		}
		res.Policies, sels[i] = append(res.Policies, r.Policy), sel
	}
	t := d.table
	stop := timing.Start(ctx, "sampled actions")
	actions, evidence, err := solve.ActAllMany(ctx, res.Policies, t, s.Workers, solve.SampleStride(t))
	stop()
	if err != nil {
		return nil, nil, err
	}
	res.Actions = actions
	for i, p := range res.Policies {
		res.Diagnostics = append(res.Diagnostics, solve.DiagnoseSampled(d.stats, p, evidence[i]))
	}
	return res, sels, nil
}

// scoreHeldOut scores every method of res held out under ho (each under
// the settings it was solved with: its selection's choice when sels has
// one) and records the scores in c and its rows.
func (d *Data) scoreHeldOut(ctx context.Context, c *Comparison, s solve.Settings, res *Compared, sels []*Selection, ho SelectOptions) error {
	defer timing.Start(ctx, "held-out scores")()
	ms := make([]MethodSpec, len(res.Problems))
	for i, prob := range res.Problems {
		ms[i] = MethodSpec{Method: prob.Method, Problem: prob, Settings: s}
		if sels != nil && sels[i] != nil {
			ms[i].Problem, ms[i].Settings = sels[i].Problem(prob), sels[i].Settings(s)
		}
	}
	hc, recs, err := d.HeldOutMethods(ctx, ho, ms)
	if err != nil {
		return err
	}
	for i, r := range recs {
		c.Rows[i].HeldOut = r
	}
	if sels != nil {
		hc.Note = HeldOutAutoNote
	}
	c.HeldOut = hc
	return nil
}

// HeldOutAutoNote says what held-out scores mean when each method's
// settings were chosen on the same folds (compare --c auto).
const HeldOutAutoNote = "each method's settings were chosen by these held-out scores on these folds, so each score is the best of its method's candidates and flatters it a little; the differences between methods are paired all the same"

// bestRow returns the index of the highest score (the earlier on ties),
// -1 when none has one.
func bestRow(recs []*MethodHeldOut) int {
	best := -1
	for i, r := range recs {
		if r.Score != nil && (best < 0 || *r.Score > *recs[best].Score) {
			best = i
		}
	}
	return best
}

// writeHeldOut prints the methods' held-out scores (nothing when the
// comparison did not score them): per method the score, the worst site,
// the share of held-out decisions without evidence and the worst site's
// value minus sitewise's with its interval, then the best method.
func (c *Comparison) writeHeldOut(w io.Writer) error {
	h := c.HeldOut
	if h == nil {
		return nil
	}
	ew := &textfmt.ErrWriter{W: w}
	fmt.Fprintf(ew, "\nheld out (%d folds by trajectory within sites, seed %d; estimator %s", h.Folds, h.Seed, h.Estimator)
	if h.Bootstrap > 0 {
		fmt.Fprintf(ew, "; %g%% basic bootstrap intervals, %d replicates per fold", 100*h.Level, h.Bootstrap)
	}
	fmt.Fprintln(ew, "):")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tscore\tworst site\tno evidence\tworst site - sitewise's\t")
	for _, r := range c.Rows {
		m := r.HeldOut
		if m == nil {
			continue
		}
		diff := "-"
		if v := m.VsSitewise; v != nil && v.Value != nil {
			diff = fmt.Sprintf("%+.4g", *v.Value)
			if v.CILow != nil && v.CIHigh != nil {
				diff += fmt.Sprintf(" [%+.4g, %+.4g]", *v.CILow, *v.CIHigh)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s\t\n", m.Method, optNum(m.Score), m.WorstSite, 100*m.NoEvidenceShare, diff)
	}
	tw.Flush()
	fmt.Fprintln(ew, "score: the lower limit of the basic interval of the minimum over sites of the held-out values (a ranking score, paired across methods); every method is learned on the other folds and scored on the held-out one.")
	if h.Best != "" {
		fmt.Fprintf(ew, "best held out: %s\n", h.Best)
	}
	if h.Note != "" {
		fmt.Fprintf(ew, "note: %s\n", h.Note)
	}
	return ew.Err
}
