package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/grmdp/grmdp/internal/textfmt"
)

// WriteText prints the evaluation as tables: its headline, each site's
// values and estimators, the agreement with the recorded actions, the
// observed care, Delta_h and, for a federated evaluation, how it was
// computed.
func (r *Result) WriteText(w io.Writer) error {
	r.writeHead(w)
	censored := r.writeSites(w)
	writeEstimates(w, r.Sites, r.Worst)
	writeAgreement(w, r.Agreement)
	writeObserved(w, r.Observed, censored)
	writeDelta(w, r.Report)
	if f := r.Federated; f != nil {
		fmt.Fprintf(w, "\nfederated evaluation (job %s, %d rounds, %d bytes of messages); not computed from sums:\n", f.Job, f.Rounds, f.Bytes)
		for _, x := range f.LeftOut {
			fmt.Fprintf(w, "  - %s\n", x)
		}
		for _, x := range f.Notes {
			fmt.Fprintf(w, "note: %s\n", x)
		}
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "warning: %s\n", x)
		}
	}
	return nil
}

// writeHead prints the headline: the policy, the worst site (its value,
// with the interval of the minimum over sites, [WorstOf]), the robust
// value and what it means, the bounds, the pessimistic value and, under a
// model, the exact values.
func (r *Result) writeHead(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\t%s (%s)\n", r.Policy, r.Method)
	if r.EvaluationFeatures != "" {
		fmt.Fprintf(tw, "evaluated through\t%s (the policy's own map decides)\n", r.EvaluationFeatures)
	}
	if site, e, est := r.Headline(); site != "" {
		if est != "" {
			est = " (" + est + ")"
		}
		ci := ""
		if isFinite(e.CILow) && isFinite(e.CIHigh) {
			ci = fmt.Sprintf("  minimum over sites [%s, %s]", textfmt.Num(e.CILow), textfmt.Num(e.CIHigh))
		}
		fmt.Fprintf(tw, "worst site\t%s: %s%s%s\n", site, textfmt.Num(e.Value), est, ci)
	}
	ci := ""
	if isFinite(r.ValueCILow) && isFinite(r.ValueCIHigh) {
		ci = fmt.Sprintf("  [%.4g, %.4g] (%d bootstrap replicates)", r.ValueCILow, r.ValueCIHigh, r.Bootstrap)
	}
	if isFinite(r.ValueBias) {
		ci += fmt.Sprintf(", bootstrap bias %.4g", r.ValueBias)
	}
	fmt.Fprintf(tw, "robust value (data)\t%.4g%s\n", r.PolicyValue, ci)
	fmt.Fprintf(tw, "\t%s\n", RobustMeaning)
	if r.Sample != "" {
		fmt.Fprintf(tw, "sample\t%s\n", r.Sample)
	}
	if r.HasBounds {
		fmt.Fprintf(tw, "identification bounds\t[%s, %s]%s; %s\n", textfmt.Num(r.Lower), textfmt.Num(r.Upper), boundsCI(r.BoundsCILow, r.BoundsCIHigh), identifiedWords(r.Identified))
	}
	if isFinite(r.Support) {
		fmt.Fprintf(tw, "support (every site)\t%.3g of visits\n", r.Support)
	}
	fmt.Fprintf(tw, "pessimistic value\t%.4g (beta = %.4g; the robust value with the policy's lambda, minus its penalty)\n", r.PessimisticValue, r.Beta)
	if x := r.Exact; x != nil {
		fmt.Fprintf(tw, "optimal value V*_1 (model)\t%.4g\n", x.OptimalValue)
		fmt.Fprintf(tw, "robust value V^pi_1 (model)\t%.4g\n", x.PolicyValue)
		fmt.Fprintf(tw, "suboptimality (model)\t%.4g\n", x.Suboptimality)
		if isFinite(x.ValueGap) {
			fmt.Fprintf(tw, "value gap (model)\t%.4g\n", x.ValueGap)
		}
	}
	tw.Flush()
}

// writeSites prints each site's own values (with the exact value, bounds,
// support and censored episodes where there are any) and the captions
// that explain them; it returns whether any episode was censored.
func (r *Result) writeSites(w io.Writer) bool {
	fmt.Fprintln(w, "\nper-site values (each site's own fitted-Q evaluation):")
	exact, bounds := r.Exact != nil, r.HasBounds
	censored := slices.ContainsFunc(r.Sites, func(s SiteValue) bool { return s.Censored > 0 })
	site := func(i int) *SiteValue { return &r.Sites[i] }
	writeColumns(w, len(r.Sites), []column{
		{"site", true, func(i int) string { return textfmt.Quote(site(i).Site) }},
		{"value", true, func(i int) string { return fmt.Sprintf("%.4g", site(i).Value) }},
		{"ci low", true, func(i int) string { return textfmt.Num(site(i).CILow) }},
		{"ci high", true, func(i int) string { return textfmt.Num(site(i).CIHigh) }},
		{"bias", true, func(i int) string { return textfmt.Num(site(i).Bias) }},
		{"exact (model)", exact, func(i int) string { return textfmt.Num(site(i).Exact) }},
		{"lower", bounds, func(i int) string { return textfmt.Num(site(i).Lower) }},
		{"upper", bounds, func(i int) string { return textfmt.Num(site(i).Upper) }},
		{"support", len(r.Sites) > 0 && isFinite(r.Sites[0].Support), func(i int) string { return textfmt.Num(site(i).Support) }},
		{"identified", bounds, func(i int) string { return map[bool]string{true: "yes", false: "NO"}[site(i).Identified] }},
		{"censored", censored, func(i int) string { return strconv.Itoa(site(i).Censored) }},
	})
	if censored {
		cut := r.CensoredBy
		if cut == "" {
			cut = "the truncate rule for NULL states"
		}
		fmt.Fprintf(w, "censored: episodes cut by %s, whose returns are unknown; observed care, PDWIS and WDR leave them out and weight the others by the inverse probability of not being censored (Kaplan-Meier by step, per site), "+
			"fitted-Q learns from their rows before the cut (each row whose successor was observed); consistent when censoring depends on nothing but the step\n", cut)
	}
	if exact {
		fmt.Fprintln(w, "exact (model): the site's own value under the model, averaged over the site's own initial states (its case-mix), as its estimate is")
	}
	if bounds {
		fmt.Fprintf(w, "intervals: basic bootstrap (bias-corrected); bounds count cells a site never observed as 0 (lower) and as the remaining horizon, at most the return range's upper end (upper), "+
			"the robust upper bound takes sites' 95%% upper confidence limits;\n"+
			"a value whose bounds are wider than %g%% of the return range [%.4g, %.4g] is not identified: its estimate rests on cells without data\n", 100*IdentifiedShare, r.ReturnLo, r.ReturnHi)
	}
	return censored
}

// writeEstimates prints each site's estimators side by side (fitted-Q,
// PDWIS, WDR, each with its interval) with the importance weights'
// effective sample size, then the worst site by each estimator with the
// interval of the minimum over sites ([WorstOf]) and a line that says so;
// nothing when the report has no estimates.
func writeEstimates(w io.Writer, sites []SiteValue, worst *WorstSite) {
	if len(sites) == 0 || sites[0].Estimates == nil {
		return
	}
	fmt.Fprintln(w, "\nper-site estimators (fitted-Q trusts the linear model; PDWIS and WDR weight the data's returns by estimated behaviour propensities):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "site\t"
	for _, e := range Estimators {
		head += e + "\t[ci low, ci high]\t"
	}
	fmt.Fprintln(tw, head+"ess\t")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t", textfmt.Quote(s.Site))
		for _, e := range Estimators {
			x := s.Estimates[e]
			fmt.Fprintf(tw, "%s\t[%s, %s]\t", textfmt.Num(x.Value), textfmt.Num(x.CILow), textfmt.Num(x.CIHigh))
		}
		fmt.Fprintf(tw, "%s\t\n", textfmt.Num(s.ESS))
	}
	if worst != nil {
		fmt.Fprintf(tw, "worst\t")
		for _, e := range Estimators {
			x := worst.Estimates[e]
			fmt.Fprintf(tw, "%s (%s)\t[%s, %s]\t", textfmt.Num(x.Value), textfmt.Quote(x.Site), textfmt.Num(x.CILow), textfmt.Num(x.CIHigh))
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
	if worst != nil && slices.ContainsFunc(Estimators, func(e string) bool { return isFinite(worst.Estimates[e].CILow) }) {
		fmt.Fprintln(w, "worst: the smallest site value by each estimator, with the interval of the minimum over sites, [smallest ci low, smallest ci high] of every site's interval (its ends may be other sites')")
	}
	fmt.Fprintf(w, "the headline value is %s's; ess: effective number of trajectories behind PDWIS and WDR (below %d, their intervals are not to be trusted)\n",
		sites[0].Estimator, LowESS)
}

// writeAgreement prints the agreement table (nothing for nil).
func writeAgreement(w io.Writer, a *Agreement) {
	if a == nil {
		return
	}
	fmt.Fprintln(w, "\nagreement with the recorded actions (share of rows whose recommended action was the one recorded):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "site\trows\tagreement\tno evidence\t")
	for _, s := range a.Sites {
		fmt.Fprintf(tw, "%s\t%g\t%s\t%s\t\n", textfmt.Quote(s.Site), s.Rows, share(s.Share), share(s.NoEvidence))
	}
	fmt.Fprintf(tw, "all\t%g\t%s\t%s\t\n", a.Rows, share(a.Share), share(a.NoEvidence))
	tw.Flush()
}

// writeObserved prints the observed care per site.
func writeObserved(w io.Writer, obs []ObservedValue, censored bool) {
	if len(obs) > 0 {
		fmt.Fprintln(w, "\nobserved care (mean realised return per trajectory at each site):")
		writeColumns(w, len(obs), []column{
			{"site", true, func(i int) string { return textfmt.Quote(obs[i].Site) }},
			{"return", true, func(i int) string { return fmt.Sprintf("%.4g", obs[i].Value) }},
			{"ci low", true, func(i int) string { return textfmt.Num(obs[i].CILow) }},
			{"ci high", true, func(i int) string { return textfmt.Num(obs[i].CIHigh) }},
			{"censored", censored, func(i int) string { return strconv.Itoa(obs[i].Censored) }},
		})
	}
}

// writeDelta prints Delta_h per step and cluster, with its sum and the
// yardstick.
func writeDelta(w io.Writer, d *Report) {
	if len(d.Delta) > 0 {
		fmt.Fprintln(w, "\nDelta_h (distance of each site's regression from its cluster's):")
		cells := d.Delta
		writeColumns(w, len(cells), []column{
			{"step", true, func(i int) string { return strconv.Itoa(cells[i].Step) }},
			{"cluster", true, func(i int) string { return cells[i].Cluster }},
			{"delta", true, func(i int) string { return fmt.Sprintf("%.4g", cells[i].Delta) }},
			{"adjusted p", true, func(i int) string { return textfmt.Num(cells[i].PValue) }},
		})
		if isFinite(d.DeltaSum) && isFinite(d.Yardstick) {
			fmt.Fprintf(w, "sum of Delta_h = %.4g; yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool) = %.4g\n", d.DeltaSum, d.Yardstick)
		}
	}
}

func boundsCI(lo, hi float64) string {
	if !isFinite(lo) || !isFinite(hi) {
		return ""
	}
	return fmt.Sprintf(" (with bootstrap: [%.4g, %.4g])", lo, hi)
}

func identifiedWords(ok bool) string {
	if ok {
		return "identified"
	}
	return "NOT identified: the estimate rests on cells without data"
}

func share(x float64) string {
	if !isFinite(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// column is a column of a table: its head, whether the table shows it,
// and its cell in row i.
type column struct {
	head string
	show bool
	cell func(i int) string
}

// writeColumns prints the head and n rows of the shown columns, aligned
// right.
func writeColumns(w io.Writer, n int, cols []column) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i := -1; i < n; i++ {
		for _, c := range cols {
			switch {
			case !c.show:
			case i < 0:
				fmt.Fprintf(tw, "%s\t", c.head)
			default:
				fmt.Fprintf(tw, "%s\t", c.cell(i))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
