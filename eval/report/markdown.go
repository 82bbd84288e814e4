package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/eval"
)

// listLimit is how many names a table cell or sentence lists before it
// says "and N more".
const listLimit = 12

// num formats x with %.4g; NaN is "n/a".
func num(x float64) string {
	switch {
	case math.IsNaN(x):
		return "n/a"
	case x == 0:
		return "0" // also -0
	}
	return fmt.Sprintf("%.4g", x)
}

// interval formats [lo, hi], or "n/a" when an end is missing.
func interval(lo, hi float64) string {
	if !finite(lo) || !finite(hi) {
		return "n/a"
	}
	return "[" + num(lo) + ", " + num(hi) + "]"
}

// cell escapes s for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// list joins up to limit names with ", " and says how many it left out.
func list(names []string, limit int) string {
	if len(names) <= limit {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:limit], ", ") + fmt.Sprintf(", and %d more", len(names)-limit)
}

// steps formats step numbers as "step 3" or "steps 1, 2, 5".
func steps(hs []int) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = strconv.Itoa(h)
	}
	if len(hs) == 1 {
		return "step " + s[0]
	}
	return "steps " + list(s, listLimit)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// markdown renders the report.
func markdown(in Input, made plots) string {
	var b strings.Builder
	title := in.Title
	if title == "" {
		title = "grmdp evaluation report"
	}
	fmt.Fprintf(&b, "# %s\n", oneLine(title))
	if len(in.Notes) > 0 {
		b.WriteString("\n## Warnings\n\n")
		for _, n := range in.Notes {
			fmt.Fprintf(&b, "- %s\n", oneLine(n))
		}
	}
	writeSettings(&b, in)
	if in.Eval != nil {
		writeValues(&b, in.Eval, made.sites, in.Model != nil)
		writeDelta(&b, in.Eval, made.delta)
	}
	if in.Agreement != nil {
		writeAgreement(&b, in.Agreement)
	}
	if in.Coverage != nil {
		writeCoverage(&b, in.Coverage, made.coverage)
	}
	if in.Model != nil {
		writeModel(&b, in.Model)
	}
	if len(in.Commands) > 0 {
		b.WriteString("\n## Commands\n\nThe commands that produced this report:\n\n")
		fence := "```"
		for _, c := range in.Commands {
			for strings.Contains(c, fence) {
				fence += "`"
			}
		}
		b.WriteString(fence + "sh\n")
		for _, c := range in.Commands {
			b.WriteString(c + "\n")
		}
		b.WriteString(fence + "\n")
	}
	return b.String()
}

func embedImage(b *strings.Builder, alt, base string) {
	fmt.Fprintf(b, "\n![%s](%s.png)\n\n(Vector version: [%s.svg](%s.svg).)\n", alt, base, base, base)
}

func writeSettings(b *strings.Builder, in Input) {
	p := in.Policy
	var rows [][2]string
	add := func(k, v string) { rows = append(rows, [2]string{k, v}) }
	if !p.empty() {
		if p.Method != "" {
			add("method", p.Method)
		}
		if p.Features != "" {
			add("feature map", p.Features)
		}
		if p.H > 0 {
			add("horizon H", strconv.Itoa(p.H))
		}
		if p.D > 0 {
			add("feature dimension d", strconv.Itoa(p.D))
		}
		if p.A > 0 {
			add("actions A", strconv.Itoa(p.A))
		}
		add("ridge lambda", num(p.Lambda))
		add("pessimism beta", num(p.Beta))
		if len(p.Groups) > 0 {
			add("groups", fmt.Sprintf("%d: %s", len(p.Groups), list(p.Groups, listLimit)))
		}
		if p.Fallback != "" {
			add("fallback for decisions without evidence", p.Fallback)
		}
	}
	if e := in.Eval; e != nil {
		if e.EvaluationFeatures != "" {
			add("evaluated through the feature map", e.EvaluationFeatures+" (the policy's own map makes its decisions)")
		}
		if e.Clustering != "" {
			add("clustering for Delta_h", e.Clustering)
		}
		if e.Bootstrap > 0 {
			add("bootstrap replicates", strconv.Itoa(e.Bootstrap))
			add("interval level", num(100*e.Level)+"%")
		} else {
			add("bootstrap replicates", "0 (no intervals)")
		}
		add("seed", strconv.FormatUint(e.Seed, 10))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Settings\n\n| setting | value |\n|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s |\n", r[0], cell(r[1]))
	}
}

func writeValues(b *strings.Builder, e *eval.Report, plotted, model bool) {
	if len(e.Sites) == 0 && !finite(e.PolicyValue) && !finite(e.PessimisticValue) {
		return
	}
	level := "bootstrap interval"
	if e.Bootstrap > 0 {
		level = num(100*e.Level) + "% bootstrap interval"
	}
	writeValueSummary(b, e, level)
	if len(e.Sites) == 0 {
		return
	}
	writeSiteTable(b, e, level, model)
	writeSiteNotes(b, e)
	writeObservedCare(b, e, level)
	if len(e.Warnings) > 0 {
		b.WriteString("\n### Warnings about these values\n\n")
		for _, w := range e.Warnings {
			fmt.Fprintf(b, "- %s\n", oneLine(w))
		}
	}
	if model {
		b.WriteString("\nThe exact value is the policy's value under the site's own transitions and " +
			"rewards in the known model, averaged over the site's own initial-state law (its case-mix), " +
			"the quantity the estimate estimates: the estimate averages over the site's own initial " +
			"states in the data. The robust value under the model averages over the model's " +
			"evaluation states.\n")
	}
	if plotted {
		embedImage(b, "Value of the policy per site", SiteValuesPlot)
		b.WriteString("\n" + siteCaption(e, model) + "\n")
	}
}

// writeValueSummary writes the table of the headline (the worst site's
// value and name, with the interval of the minimum over sites), the robust value, its interval, bounds,
// support and the pessimistic value, and what they mean.
func writeValueSummary(b *strings.Builder, e *eval.Report, level string) {
	b.WriteString("\n## Policy value\n\n| quantity | value |\n|---|---|\n")
	if site, w, est := e.Headline(); site != "" {
		if est != "" {
			est = " (" + est + ")"
		}
		ci := " " + interval(w.CILow, w.CIHigh)
		if finite(w.CILow) && finite(w.CIHigh) {
			ci = ", minimum over sites" + ci
		}
		fmt.Fprintf(b, "| worst site: %s%s | %s%s |\n", cell(site), est, num(w.Value), ci)
	}
	fmt.Fprintf(b, "| robust policy value | %s |\n", num(e.PolicyValue))
	fmt.Fprintf(b, "| %s | %s |\n", level, interval(e.ValueCILow, e.ValueCIHigh))
	if finite(e.ValueBias) {
		fmt.Fprintf(b, "| bootstrap bias | %s |\n", num(e.ValueBias))
	}
	if e.HasBounds {
		fmt.Fprintf(b, "| identification bounds | %s (%s) |\n", interval(e.Lower, e.Upper), identifiedWords(e.Identified))
		if finite(e.BoundsCILow) {
			fmt.Fprintf(b, "| bounds with their bootstrap interval | %s |\n", interval(e.BoundsCILow, e.BoundsCIHigh))
		}
	}
	if finite(e.Support) {
		fmt.Fprintf(b, "| support (share of visits where every site has evidence for the policy's action) | %s |\n", num(e.Support))
	}
	fmt.Fprintf(b, "| pessimistic value (beta = %s) | %s |\n", num(e.Beta), num(e.PessimisticValue))
	b.WriteString("\nThe headline is the worst site's value and the site it belongs to. Its interval is that of the minimum " +
		"over sites, [smallest low end, smallest high end] of every site's interval, whose ends may be other sites': " +
		"it covers the smallest true value whenever every site's interval covers its own. " +
		"The robust value is " + eval.RobustMeaning + ". It is the backward recursion of Algorithm 1 with the policy's " +
		"actions: at each step it keeps, for each feature, the smallest of the sites' regression " +
		"coefficients, so no single site's data can make the policy look better than the others " +
		"support. The pessimistic value (the paper's) is the same recursion with the policy's own lambda, minus the " +
		"pessimism penalty `beta * phi^T m`: an estimate shrunk toward 0, not a bound. A " +
		"site's own value is the same recursion on that site's data alone.\n")
}

// writeSiteTable writes one row per site: its value and interval, and the
// bias, exact value, bounds and support columns the report has.
func writeSiteTable(b *strings.Builder, e *eval.Report, level string, model bool) {
	exact := model
	bias := e.Bootstrap > 0
	head, rule := "\n| site | value | "+level+" |", "\n|---|---|---|"
	if bias {
		head, rule = head+" bootstrap bias |", rule+"---|"
	}
	if exact {
		head, rule = head+" exact value (model) |", rule+"---|"
	}
	support := len(e.Sites) > 0 && finite(e.Sites[0].Support) && !e.HasBounds
	if e.HasBounds {
		head, rule = head+" identification bounds | support | identified |", rule+"---|---|---|"
	}
	if support {
		head, rule = head+" support |", rule+"---|"
	}
	b.WriteString(head + rule + "\n")
	for _, s := range e.Sites {
		name := cell(s.Site)
		if s.Site == e.WorstSite {
			name = "**" + name + "** (worst)"
		}
		fmt.Fprintf(b, "| %s | %s | %s |", name, num(s.Value), interval(s.CILow, s.CIHigh))
		if bias {
			fmt.Fprintf(b, " %s |", num(s.Bias))
		}
		if exact {
			fmt.Fprintf(b, " %s |", num(s.Exact))
		}
		if e.HasBounds {
			word := "yes"
			if !s.Identified {
				word = "**no**"
			}
			fmt.Fprintf(b, " %s | %s | %s |", interval(s.Lower, s.Upper), num(s.Support), word)
		}
		if support {
			fmt.Fprintf(b, " %s |", num(s.Support))
		}
		b.WriteString("\n")
	}
}

// writeSiteNotes explains the site table's bootstrap intervals and
// identification bounds, where the report has them.
func writeSiteNotes(b *strings.Builder, e *eval.Report) {
	if e.Bootstrap > 0 {
		b.WriteString("\nIntervals are basic bootstrap intervals `[2 theta - q_hi, 2 theta - q_lo]` over " +
			"trajectories resampled within each site (each counted a Poisson(1) number of times): they correct for the bootstrap's bias " +
			"(the mean of the replicates minus the estimate, shown beside each value). An interval " +
			"that misses its estimate, or a bias above half the interval's width, is listed below.\n")
	}
	if e.HasBounds {
		lo, hi := e.ReturnLo, e.ReturnHi
		if hi <= lo {
			lo, hi = 0, float64(e.H)*eval.RewardMax
		}
		fmt.Fprintf(b, "\nThe identification bounds count every cell (state, action, step) that a site never "+
			"observed as 0 (lower) and as the remaining horizon times the reward's maximum 1, at most the return range's upper end (upper); "+
			"observed cells use their empirical means. For the robust value the upper bound takes the "+
			"minimum only over the sites that observed the cell. A value whose bounds are wider than "+
			"%s%% of the return range [%s, %s] is **not identified**: the data cannot tell it "+
			"apart from values across that range, whatever the interval says. Support is the share of "+
			"the site's visits at which the policy's action was observed at that site and step.\n",
			num(100*eval.IdentifiedShare), num(lo), num(hi))
	}
}

// writeObservedCare writes each site's mean realised return, if the report
// has them.
func writeObservedCare(b *strings.Builder, e *eval.Report, level string) {
	if len(e.Observed) > 0 {
		censored := false
		for _, o := range e.Observed {
			censored = censored || o.Censored > 0
		}
		b.WriteString("\n### Observed care\n\nEach site's mean realised return (the sum of rewards " +
			"per trajectory, averaged over the site's trajectories): an estimate of the " +
			"value of the care actually given, the first baseline to compare the policy with.")
		if censored {
			b.WriteString(" Censored episodes (cut before a NULL by --nulls truncate: their return is unknown) " +
				"are left out, as they are by PDWIS and WDR, and the others weighted by the inverse probability of not being censored (Kaplan-Meier by step, per site): " +
				"the estimate is consistent when censoring depends on nothing but the step.")
		}
		b.WriteString("\n\n| site | observed return | " + level + " |")
		if censored {
			b.WriteString(" censored episodes |\n|---|---|---|---|\n")
		} else {
			b.WriteString("\n|---|---|---|\n")
		}
		for _, o := range e.Observed {
			fmt.Fprintf(b, "| %s | %s | %s |", cell(o.Site), num(o.Value), interval(o.CILow, o.CIHigh))
			if censored {
				fmt.Fprintf(b, " %d |", o.Censored)
			}
			b.WriteString("\n")
		}
	}
}

// siteCaption is the caption under the site-value plot: what its marks
// are, in which units, why the robust value can lie below every site's
// own value, and which values are not identified, in words.
func siteCaption(e *eval.Report, model bool) string {
	var s strings.Builder
	s.WriteString("*Figure: value of the policy at each site*, in expected total reward")
	if e.H > 0 {
		fmt.Fprintf(&s, " over H = %d steps", e.H)
	}
	s.WriteString(". Dots are the estimates from data with their bootstrap intervals (the worst site in red); " +
		"the black line is the robust value and the grey band its interval; the first column repeats the robust value.")
	if model {
		s.WriteString(" Crosses are the exact values under the known model.")
	}
	if e.HasBounds {
		s.WriteString(" Grey bars are the identification bounds.")
	}
	if len(e.Observed) > 0 {
		s.WriteString(" Triangles are the observed care, each site's mean realised return.")
	}
	s.WriteString(" " + RobustCaption)
	if e.HasBounds {
		var not []string
		if !e.Identified {
			not = append(not, "the robust value")
		}
		for _, st := range e.Sites {
			if !st.Identified {
				not = append(not, "site "+st.Site)
			}
		}
		if len(not) > 0 {
			fmt.Fprintf(&s, " Not identified (bounds wider than %s%% of the value range, so the data cannot pin the value down): %s.",
				num(100*eval.IdentifiedShare), list(not, listLimit))
		} else {
			s.WriteString(" Every value shown is identified: its bounds are narrower than " + num(100*eval.IdentifiedShare) + "% of the value range.")
		}
	}
	return s.String()
}

func identifiedWords(ok bool) string {
	if ok {
		return "identified"
	}
	return "**not identified**: the estimate rests on cells without data"
}

func writeDelta(b *strings.Builder, e *eval.Report, plotted bool) {
	if len(e.Delta) == 0 {
		return
	}
	b.WriteString("\n## Heterogeneity within clusters (Delta_h)\n\n")
	b.WriteString("Delta_h,m is how far the regression of the most different site in cluster m " +
		"lies from the cluster's pooled regression at step h; Delta_h is the largest over " +
		"clusters (paper, section 3.3).\n\n")
	b.WriteString(deltaReading(e) + "\n\n")
	if s := pValueReading(e); s != "" {
		b.WriteString(s + "\n\n")
	}
	b.WriteString("| step | cluster | Delta | adjusted p-value |\n|---|---|---|---|\n")
	for _, c := range e.Delta {
		pv := num(c.PValue)
		if c.PValue < significance {
			pv = "**" + pv + "**"
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s |\n", c.Step, cell(c.Cluster), num(c.Delta), pv)
	}
	if plotted {
		embedImage(b, "Delta_h,m by step", DeltaPlot)
		b.WriteString("\n*Figure: Delta_h,m by step.* " + deltaCaption(e) + "\n")
	}
}

// deltaReading is the plain-language reading of sum_h Delta_h against the
// yardstick.
func deltaReading(e *eval.Report) string {
	// Delta_h per step, in step order.
	byStep := map[int]float64{}
	for _, c := range e.Delta {
		if d, ok := byStep[c.Step]; !ok || c.Delta > d || math.IsNaN(d) {
			byStep[c.Step] = c.Delta
		}
	}
	hs := make([]int, 0, len(byStep))
	for h := range byStep {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	maxD, maxH := math.Inf(-1), 0
	for _, h := range hs {
		if byStep[h] > maxD {
			maxD, maxH = byStep[h], h
		}
	}
	y := e.Yardstick
	var s strings.Builder
	if !finite(y) {
		fmt.Fprintf(&s, "The sum of Delta_h over the %s is %s (largest Delta_h: %s, at step %d). "+
			"No yardstick is known, so the paper's criterion cannot be applied.",
			plural(len(hs), "step", "steps"), num(e.DeltaSum), num(maxD), maxH)
		return s.String()
	}
	fmt.Fprintf(&s, "The sum of Delta_h over the %s is %s, against the yardstick "+
		"`1/sqrt(N_min) - 1/sqrt(N_min^pool)` = %s; the largest Delta_h is %s, at step %d. ",
		plural(len(hs), "step", "steps"), num(e.DeltaSum), num(y), num(maxD), maxH)
	var above []int
	for _, h := range hs {
		if byStep[h] > y {
			above = append(above, h)
		}
	}
	switch {
	case y <= 0 && maxD <= 0:
		s.WriteString("The yardstick is zero: the smallest cluster is no larger than the smallest " +
			"site, so pooling gains no precision; and Delta_h is zero at every step, so pooling " +
			"changes nothing either.")
	case y <= 0:
		s.WriteString("The yardstick is zero: the smallest cluster is no larger than the smallest " +
			"site, so by the paper's bound pooling gains no precision and, with sites that " +
			"differ, pooling is not justified by the paper's criterion.")
	case e.DeltaSum <= y:
		fmt.Fprintf(&s, "Pooling is justified by the paper's criterion: even summed over all %s, "+
			"the sites' distance from their cluster stays below the precision pooling gains.",
			plural(len(hs), "step", "steps"))
	case len(above) == 0:
		s.WriteString("Each Delta_h is below the yardstick, as the paper's criterion " +
			"(Delta_h much smaller than `1/sqrt(N_min) - 1/sqrt(N_min^pool)`) asks, but their sum " +
			"is not: pooling is only borderline justified by the paper's criterion.")
	default:
		fmt.Fprintf(&s, "Pooling is not justified by the paper's criterion: Delta_h exceeds the "+
			"yardstick at %d of %s (%s).", len(above), plural(len(hs), "step", "steps"), steps(above))
	}
	s.WriteString(" The criterion compares the orders of two terms of an upper bound whose " +
		"constants are unknown: read it as a guide, not as a test.")
	return s.String()
}

// pValueReading says which clusters show heterogeneity beyond noise, or ""
// when no p-values were computed.
func pValueReading(e *eval.Report) string {
	names, byCluster := clusterSeries(e.Delta)
	tests := 0
	var signif, alike, untested []string
	for i, cells := range byCluster {
		var low []int
		tested := false
		for _, c := range cells {
			if math.IsNaN(c.PValue) {
				continue
			}
			tested = true
			tests++
			if c.PValue < significance {
				low = append(low, c.Step)
			}
		}
		switch {
		case !tested:
			untested = append(untested, names[i])
		case len(low) > 0:
			signif = append(signif, fmt.Sprintf("%s (%s)", names[i], steps(low)))
		default:
			alike = append(alike, names[i])
		}
	}
	if tests == 0 {
		return "No permutation p-values were computed, so this report cannot say whether the " +
			"differences within clusters exceed noise."
	}
	var s strings.Builder
	s.WriteString("The p-values come from a max-statistic permutation test: each permutation " +
		"reassigns every cluster's trajectories to its sites at random (keeping the sites' sizes) " +
		"and recomputes Delta at every step; each step's statistic is standardised by its " +
		"permutation mean and spread, and a cell's p-value is the share of permutations whose " +
		"largest standardised statistic over all steps and clusters reaches the cell's own. ")
	fmt.Fprintf(&s, "So the p-values are adjusted for the %s at once: a p-value below 0.05 anywhere "+
		"says, with family-wise error 0.05, that the sites of that cluster differ at that step more "+
		"than reshuffling makes them differ. ", plural(tests, "test", "tests"))
	if e.Permutations > 0 {
		floor := 1 / float64(e.Permutations+1)
		fmt.Fprintf(&s, "With %d permutations the smallest attainable p-value is 1/%d = %s. ", e.Permutations, e.Permutations+1, num(floor))
		if floor >= significance {
			return s.String() + "That is not below 0.05, so these settings cannot find a " +
				"difference at the 0.05 level whatever the data: rerun with --permutations 199 or more."
		}
	}
	if len(signif) > 0 {
		fmt.Fprintf(&s, "Clusters whose sites differ beyond noise (adjusted p < 0.05): %s. ", list(signif, listLimit))
	} else {
		s.WriteString("No cluster shows heterogeneity beyond noise at the 0.05 family-wise level. ")
	}
	if len(alike) > 0 {
		fmt.Fprintf(&s, "The sites of cluster %s differ no more than reshuffling makes them. ", list(alike, listLimit))
	}
	if len(untested) > 0 {
		fmt.Fprintf(&s, "Cluster %s has no p-values (a single site, or not tested). ", list(untested, listLimit))
	}
	return strings.TrimSpace(s.String())
}

func writeCoverage(b *strings.Builder, c *Coverage, plotted bool) {
	if len(c.Sites) == 0 || len(c.Features) == 0 {
		return
	}
	b.WriteString("\n## Coverage\n\n")
	fmt.Fprintf(b, "Features that a site never observes (count 0), out of %d features. "+
		"The estimates for such a feature at that site rest on the ridge penalty alone.\n\n",
		len(c.Features))
	b.WriteString("| site | never observed | features |\n|---|---|---|\n")
	seen := make([]bool, len(c.Features))
	for k, site := range c.Sites {
		var missing []string
		for j, v := range c.Counts[k] {
			if v > 0 {
				seen[j] = true
			} else {
				missing = append(missing, c.Features[j])
			}
		}
		which := "none"
		if len(missing) > 0 {
			which = list(missing, listLimit)
		}
		fmt.Fprintf(b, "| %s | %d | %s |\n", cell(site), len(missing), cell(which))
	}
	var nowhere []string
	for j, ok := range seen {
		if !ok {
			nowhere = append(nowhere, c.Features[j])
		}
	}
	if len(nowhere) > 0 {
		fmt.Fprintf(b, "\nNever observed at any site (%d): %s.\n", len(nowhere), list(nowhere, listLimit))
	}
	if plotted {
		embedImage(b, "Coverage per site and feature", CoveragePlot)
		_, _, _, groups := coverageLayout(c)
		b.WriteString("\n*Figure: observations per site and feature.* " + coverageCaption(len(groups) > 1) + "\n")
	}
}

func writeModel(b *strings.Builder, m *eval.ExactValues) {
	b.WriteString("\n## Under the known model\n\nMeans over the evaluation's initial states.\n\n")
	b.WriteString("| quantity | value |\n|---|---|\n")
	fmt.Fprintf(b, "| robust optimal value `V*_1` | %s |\n", num(m.OptimalValue))
	fmt.Fprintf(b, "| policy's robust value `V^pi_1` | %s |\n", num(m.PolicyValue))
	fmt.Fprintf(b, "| suboptimality `V*_1 - V^pi_1` | %s |\n", num(m.Suboptimality))
	fmt.Fprintf(b, "| value gap `V*_1 - Vhat_1` | %s |\n", num(m.ValueGap))
}
