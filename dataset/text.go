package dataset

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/grmdp/grmdp/internal/textfmt"
	"github.com/grmdp/grmdp/solve"
)

// Each result type's WriteText prints it as tables for a person to read;
// its JSON is for programs. Names from the data are quoted when they hold
// a character a terminal would act on (textfmt.Quote).

// WriteText prints the solve's summary: the policy's method, map, groups,
// penalty, value estimate and share of decisions without evidence, the
// file it was written to and, after a blank line, the record of a
// cross-fitted choice of c.
func (r *SolveReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\t%s\n", r.Method)
	fmt.Fprintf(tw, "features\t%s (d = %d, A = %d, H = %d)\n", r.Features, r.D, r.Actions, r.H)
	fmt.Fprintf(tw, "groups\t%d\n", len(r.Groups))
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "  %s\t%d trajectories, sites %v\n", textfmt.Quote(g.Name), g.Trajectories, textfmt.QuoteAll(g.Sites))
	}
	fmt.Fprintf(tw, "lambda\t%g\n", r.Lambda)
	if len(r.runs) > 1 {
		for _, run := range r.runs {
			fmt.Fprintf(tw, "beta (%s)\t%.6g\n", run.Group, run.Beta)
		}
	} else {
		fmt.Fprintf(tw, "beta\t%.6g\n", r.Beta)
	}
	if r.ValueEstimate != nil {
		fmt.Fprintf(tw, "value estimate\t%.6g (mean Vhat_1 over the data's initial states)\n", *r.ValueEstimate)
	}
	if r.Diagnostics != nil {
		fmt.Fprintf(tw, "no evidence\t%.1f%% of decisions (fallback: %s)\n", 100*r.Diagnostics.NoEvidenceShare, r.Fallback)
	}
	fmt.Fprintf(tw, "policy\t%s\n", r.Policy)
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Selection == nil {
		return nil
	}
	fmt.Fprintln(w)
	return writeSelection(w, r.Selection)
}

// writeSelection prints the record of a cross-fitted choice of c (a
// policy's Selection): one row per candidate, the chosen one marked.
func writeSelection(w io.Writer, js json.RawMessage) error {
	var sel Selection
	if err := json.Unmarshal(js, &sel); err != nil {
		return fmt.Errorf("the policy's selection record: %w", err)
	}
	fmt.Fprintf(w, "c chosen by cross-fitting (%d folds by trajectory within sites, seed %d): score = lower limit of the %g%% basic interval of the minimum over sites of the held-out values (a ranking score, paired across candidates), gain = of the paired difference from the fallback's worst site by wdr (for maps of cell indicators the smaller of it and fqe's); among those with gain above 0 and score at least the fallback's, the most pessimistic whose worst site the held-out data do not show below the best score's wins\n",
		sel.Folds, sel.Seed, 100*sel.Level)
	same := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tc\tlambda\tscore\tgain\tworst site\tno evidence\n")
	for _, c := range sel.Candidates {
		mark, name := "", optNum(c.C)
		if c.C == nil {
			name = "behaviour fallback"
		}
		if same(c.C, sel.Chosen.C) && same(c.Lambda, sel.Chosen.Lambda) && (c.Stationary == nil || sel.Chosen.Stationary == nil || *c.Stationary == *sel.Chosen.Stationary) {
			mark = "*"
		}
		if c.Stationary != nil && *c.Stationary {
			name += " (stationary)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\n", mark, name, optNum(c.Lambda), optNum(c.Score), optNum(c.Gain), textfmt.Quote(c.WorstSite), 100*c.NoEvidenceShare)
	}
	return tw.Flush()
}

// optNum formats *x as the tables do, "-" for nil.
func optNum(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *x)
}

// WriteText prints the comparison table (with the model's columns when
// the comparison has exact values, and the shared evaluation's when it
// ran), the observed care, why the shared evaluation did not run, and
// where the policies are, then the held-out scores when it has them.
func (c *Comparison) WriteText(w io.Writer) error {
	evaluate := c.Observed != nil
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "method\tgroups\tbeta\tvalue est.\tno evidence\tdiffers from sitewise\t")
	if c.exact {
		fmt.Fprint(tw, "robust value\tsuboptimality\t")
	}
	if evaluate {
		fmt.Fprint(tw, "robust value (data)\tbounds\t")
	}
	fmt.Fprintln(tw)
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%s\t%s\t%.1f%%\t", r.Method, r.Groups, r.Beta, optNum(r.ValueEstimate), optShare(r.NoEvidenceShare), 100*r.Disagreement)
		if c.exact {
			fmt.Fprintf(tw, "%.4f\t%.4f\t", *r.PolicyValue, *r.Suboptimality)
		}
		if e := r.Evaluation; e != nil {
			b := "-"
			if e.HasBounds {
				b = fmt.Sprintf("[%s, %s]", textfmt.Num(e.Lower), textfmt.Num(e.Upper))
				if !e.Identified {
					b += " not identified"
				}
			}
			fmt.Fprintf(tw, "%.4g\t%s\t", e.PolicyValue, b)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if evaluate {
		fmt.Fprintln(w, "\nrobust value (data): every policy evaluated by eval's robust fitted-Q evaluation on these data, so the column ranks methods;")
		fmt.Fprintln(w, "value est. is each method's own estimate and is not comparable across methods.")
		fmt.Fprintln(w, "\nobserved care (mean realised return per trajectory):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "site\treturn\tci low\tci high\t")
		for _, o := range c.Observed {
			fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t\n", textfmt.Quote(o.Site), o.Value, textfmt.Num(o.CILow), textfmt.Num(o.CIHigh))
		}
		tw.Flush()
	}
	if c.Note != "" {
		fmt.Fprintf(w, "\nno shared evaluation: %s\n", c.Note)
	}
	if _, err := fmt.Fprintf(w, "\npolicies and compare.json in %s\n", c.dir); err != nil {
		return err
	}
	return c.writeHeldOut(w)
}

// optShare formats *x as a percentage, "-" for nil.
func optShare(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**x)
}

// WriteText prints the cross-fit's table: per site the held-out values and
// differences with their intervals, then the worst sites, each with the
// interval of the minimum over sites ([eval.WorstOf]).
func (v *Validation) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "cross-fitted %s (%d folds by trajectory within sites, seed %d): every value is held out, from policies learned without its trajectories\n",
		v.Method, v.Folds, v.Seed)
	level := ""
	if v.Bootstrap > 0 {
		level = fmt.Sprintf(", %g%% basic bootstrap intervals (%d replicates per fold)", 100*v.Level, v.Bootstrap)
	}
	fmt.Fprintf(w, "estimator: %s (policy and cloning)%s\n\n", v.Estimator, level)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "site\ttrajectories\tpolicy\tcloning\tobserved care\tpolicy - observed\tpolicy - cloning")
	for _, s := range v.Sites {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Site, s.Trajectories, s.Policy.cell(), s.Cloning.cell(), s.Observed.cell(),
			s.DiffObserved.cell(), s.DiffCloning.cell())
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, x := range []struct {
		what string
		v    WorstHeldOut
	}{{"policy", v.WorstSite}, {"cloning", v.WorstCloning}, {"observed care", v.WorstObserved}} {
		if _, err := fmt.Fprintf(w, "worst site (%s): %s %s\n", x.what, x.v.Site, x.v.worstCell()); err != nil {
			return err
		}
	}
	if v.Bootstrap == 0 {
		return nil
	}
	_, err := fmt.Fprintln(w, "a worst site's interval is that of the minimum over sites: [smallest ci low, smallest ci high] of every site's interval (its ends may be other sites')")
	return err
}

// worstCell formats a worst site's value with the interval of the
// minimum over sites.
func (v WorstHeldOut) worstCell() string {
	if math.IsNaN(v.CILow) || math.IsNaN(v.CIHigh) {
		return fmt.Sprintf("%.4g", v.Value)
	}
	return fmt.Sprintf("%.4g  minimum over sites [%.4g, %.4g]", v.Value, v.CILow, v.CIHigh)
}

// cell formats a held-out value with its interval.
func (v HeldOut) cell() string {
	if math.IsNaN(v.CILow) || math.IsNaN(v.CIHigh) {
		return fmt.Sprintf("%.4g", v.Value)
	}
	return fmt.Sprintf("%.4g [%.4g, %.4g]", v.Value, v.CILow, v.CIHigh)
}

// WriteText prints the inspection's tables: rows per site and step,
// episode lengths, actions taken, coverage and, for a binned map, rows per
// cell and site.
func (rep *Inspection) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d rows, %d sites, H = %d, A = %d, %s features (d = %d)\n", rep.Rows, len(rep.Sites), rep.H, rep.Actions, rep.Features, rep.D)
	if rep.FeatureNote != "" {
		fmt.Fprintln(w, rep.FeatureNote)
	}
	fmt.Fprintln(w)
	head := []string{"site", "trajectories"}
	for h := 1; h <= rep.H; h++ {
		head = append(head, fmt.Sprintf("h=%d", h))
	}
	siteTable(w, head, rep.Sites, func(s SiteSummary) []int { return append([]int{s.Trajectories}, s.RowsByStep...) })
	fmt.Fprintln(w, "\nepisode lengths (count of episodes ending at each step):")
	head = []string{"site"}
	for l := 1; l <= rep.H; l++ {
		head = append(head, fmt.Sprintf("length %d", l))
	}
	siteTable(w, head, rep.Sites, func(s SiteSummary) []int { return s.Lengths })
	fmt.Fprintln(w, "\nactions taken:")
	head = []string{"site"}
	for a := 0; a < rep.Actions; a++ {
		if len(rep.ActionLabels) > 0 {
			head = append(head, textfmt.Quote(rep.ActionLabels[a]))
		} else {
			head = append(head, strconv.Itoa(a))
		}
	}
	siteTable(w, head, rep.Sites, func(s SiteSummary) []int { return s.ActionCounts })
	fmt.Fprintln(w, "\ncoverage:")
	if len(rep.Uncovered) == 0 {
		fmt.Fprintln(w, "  every site observes every feature")
	}
	for _, u := range rep.Uncovered {
		fmt.Fprintf(w, "  site %s never observes %d of %d features (actions %v)\n", textfmt.Quote(u.Site), u.Features, u.Of, u.Actions)
	}
	for _, c := range rep.EmptyCells {
		fmt.Fprintf(w, "  site %s has no data at step %d\n", textfmt.Quote(c.Site), c.Step)
	}
	if rep.Cells == nil {
		return nil
	}
	fmt.Fprintln(w, "\nrows per cell (binned map):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "cell\t")
	for _, s := range rep.Sites {
		fmt.Fprintf(tw, "%s\t", s.Site)
	}
	fmt.Fprintln(tw)
	for cell, label := range rep.cellLabels {
		fmt.Fprintf(tw, "%d %s\t", cell, label)
		for k := range rep.Sites {
			fmt.Fprintf(tw, "%d\t", rep.Cells[k][cell])
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// siteTable prints a right-aligned table: head, then one row per site of
// its name and cells(site).
func siteTable(w io.Writer, head []string, sites []SiteSummary, cells func(SiteSummary) []int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t", textfmt.Quote(s.Site))
		for _, n := range cells(s) {
			fmt.Fprintf(tw, "%d\t", n)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// WriteText prints the file the annotated rows were written to and, when
// some scored rows are in state cells without rows in the policy's data,
// how many.
func (s *ApplySummary) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "wrote %s\n", s.Output); err != nil {
		return err
	}
	if s.UnseenCells == nil || *s.UnseenCells == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d scored rows are in state cells without rows at their step in the policy's data: they take the fallback\n", *s.UnseenCells)
	return err
}

// WriteText prints the path as a table, one row per c.
func (pts CPath) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\npenalty path (statistics reused):")
	fmt.Fprintln(tw, "c\tbeta\tno evidence\tvalue est.\trobust FQE\tpessimistic value\tagrees with behaviour\t")
	for _, p := range pts {
		fmt.Fprintf(tw, "%.3g\t%.4g\t%.1f%%\t%.4g\t%.4g\t%.4g\t%.1f%%\t\n", p.C, p.Beta, 100*p.NoEvidence, p.ValueEstimate, p.RobustValue, p.PessimisticValue, 100*p.Agreement)
	}
	return tw.Flush()
}

// PolicyView is a policy as `grmdp show` presents it: its JSON is the
// [solve.View], its text (WriteText) the policy's settings, the record of
// a cross-fitted choice of c, the per-step ranges of its coefficients,
// their tables and its decisions per state cell, for the steps viewed.
type PolicyView struct {
	*solve.View
	// More says, after a table cut at the rows asked for, how to see the
	// rest ("" for nothing).
	More string
	p    *solve.Policy
}

// ViewPolicy returns p's view, with the tables of the given steps (none:
// every step) at most maxRows rows each (0: all); a step outside 1..H is
// an [OptionError] on "Steps".
func ViewPolicy(p *solve.Policy, steps []int, maxRows int) (*PolicyView, error) {
	if len(steps) == 0 {
		for h := 1; h <= p.H; h++ {
			steps = append(steps, h)
		}
	}
	for _, h := range steps {
		if h < 1 || h > p.H {
			return nil, optionErr("Steps", strconv.Itoa(h), "the policy has steps 1..%d", p.H)
		}
	}
	return &PolicyView{View: p.View(steps, maxRows), p: p}, nil
}

// MarshalJSON writes the [solve.View].
func (v *PolicyView) MarshalJSON() ([]byte, error) { return json.Marshal(v.View) }

// WriteText prints the view as tables.
func (v *PolicyView) WriteText(w io.Writer) error {
	p := v.p
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\t%s\n", p.Method)
	fmt.Fprintf(tw, "features\t%s (d = %d, A = %d, H = %d)\n", p.Map.Kind, p.D, p.A, p.H)
	for _, b := range p.Map.Bins {
		fmt.Fprintf(tw, "bins %s\t%s\n", b.Column, b.Describe())
	}
	if p.ActionLabels != nil {
		fmt.Fprintf(tw, "actions\t%v\n", textfmt.QuoteAll(p.ActionLabels))
	}
	fmt.Fprintf(tw, "lambda\t%g\n", p.Lambda)
	if p.BetaGiven {
		fmt.Fprintf(tw, "beta\t%.6g (given)\n", p.Beta)
	} else {
		fmt.Fprintf(tw, "beta\t%.6g (c = %g, xi = %g)\n", p.Beta, p.C, p.Xi)
	}
	fmt.Fprintf(tw, "fallback\t%s\n", p.Fallback)
	for _, g := range p.Groups {
		fmt.Fprintf(tw, "group %s\t%d trajectories, sites %v\n", textfmt.Quote(g.Name), g.Trajectories, textfmt.QuoteAll(g.Sites))
	}
	if !math.IsNaN(p.ValueEstimate) {
		fmt.Fprintf(tw, "value estimate\t%.6g\n", p.ValueEstimate)
	}
	fmt.Fprintf(tw, "version\t%s\n", p.Version)
	for _, s := range p.Sources {
		fmt.Fprintf(tw, "source\t%s (%d rows, sha256 %s)\n", textfmt.Quote(s.Path), s.Rows, s.Fingerprint[:min(len(s.Fingerprint), 12)])
	}
	keys := make([]string, 0, len(p.Settings))
	for k := range p.Settings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(tw, "setting %s\t%s\n", k, textfmt.Quote(p.Settings[k]))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if p.Selection != nil {
		if err := writeSelection(w, p.Selection); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if err := writeStepRanges(w, p); err != nil {
		return err
	}
	v.writeCoefficients(w, len(p.Runs) > 1)
	v.writeDecisions(w)
	return nil
}

// writeStepRanges prints the per-step minimum, mean and maximum of the
// coefficients (nothing for behaviour cloning, which has none).
func writeStepRanges(w io.Writer, p *solve.Policy) error {
	rs := p.StepRanges()
	if rs == nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(p.Runs) == 1 && rs[0].HasM {
		fmt.Fprintf(tw, "step\tmin w\tmean w\tmax w\tmin m\tmax m\t\n")
	} else {
		fmt.Fprintf(tw, "step\tmin nu\tmean nu\tmax nu\t\t\t\n")
	}
	for _, r := range rs {
		if r.HasM {
			fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t\n", r.Step, r.MinW, r.MeanW, r.MaxW, r.MinM, r.MaxM)
		} else {
			fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t\t\t\n", r.Step, r.MinW, r.MeanW, r.MaxW)
		}
	}
	return tw.Flush()
}

// writeCoefficients prints the coefficient tables.
func (v *PolicyView) writeCoefficients(w io.Writer, multiRun bool) {
	for _, t := range v.Coefficients {
		run := ""
		if multiRun {
			run = " (site " + t.Run + "'s pass)"
		}
		v.writeMatrix(w, fmt.Sprintf("step %d%s: w, the coefficients of Qhat, by state feature and action:", t.Step, run), t.Features, t.Actions, t.W, t.Truncated)
		if t.M != nil {
			v.writeMatrix(w, fmt.Sprintf("step %d: m, the penalty (beta m is subtracted), by state feature and action:", t.Step), t.Features, t.Actions, t.M, t.Truncated)
		}
	}
}

func (v *PolicyView) writeMatrix(w io.Writer, title string, rows, cols []string, x [][]float64, truncated int) {
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "feature\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", textfmt.Quote(c))
	}
	fmt.Fprintln(tw)
	for r, name := range rows {
		fmt.Fprintf(tw, "%s\t", textfmt.Quote(name))
		for _, y := range x[r] {
			fmt.Fprintf(tw, "%.4g\t", y)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if truncated > 0 {
		fmt.Fprintf(w, "(%d more rows%s)\n", truncated, v.more())
	}
}

// writeDecisions prints the decision table, one block per step.
func (v *PolicyView) writeDecisions(w io.Writer) {
	ds, truncated := v.Decisions, v.DecisionsTruncated
	for i := 0; i < len(ds); {
		h := ds[i].Step
		fmt.Fprintf(w, "\nstep %d: recommended action per state cell:\n", h)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "state\taction\tQhat\tevidence\tcount\trows\t")
		for ; i < len(ds) && ds[i].Step == h; i++ {
			d := ds[i]
			ev := "yes"
			if !d.Evidence {
				ev = "no (fallback)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\t%s\t%s\t\n", d.State, d.Action, d.Q, ev, optCount(d.Count), optCount(d.Rows))
		}
		tw.Flush()
		if truncated > 0 {
			fmt.Fprintf(w, "(%d more cells%s)\n", truncated, v.more())
		}
	}
	if len(ds) > 0 {
		fmt.Fprintln(w, "count: rows (all sites) at the cell and step whose recorded action is the recommended one, the data behind its Qhat; rows: the cell's rows at that step with any action")
	}
}

// more is the More words after a cut table's count.
func (v *PolicyView) more() string {
	if v.More == "" {
		return ""
	}
	return "; " + v.More
}

func optCount(x *float64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'g', 6, 64)
}
