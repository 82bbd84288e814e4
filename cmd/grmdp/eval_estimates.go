package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/grmdp/grmdp/eval"
)

// printEstimates prints each site's estimators side by side (fitted-Q,
// PDWIS, WDR, each with its interval) with the importance weights'
// effective sample size, then the worst site by each estimator; nothing
// when the report has no estimates.
func printEstimates(w io.Writer, sites []eval.SiteValue, worst *eval.WorstSite) {
	if len(sites) == 0 || sites[0].Estimates == nil {
		return
	}
	fmt.Fprintln(w, "\nper-site estimators (fitted-Q trusts the linear model; PDWIS and WDR weight the data's returns by estimated behaviour propensities):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "site\t"
	for _, e := range eval.Estimators {
		head += e + "\t[ci low, ci high]\t"
	}
	fmt.Fprintln(tw, head+"ess\t")
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t", quoteName(s.Site))
		for _, e := range eval.Estimators {
			x := s.Estimates[e]
			fmt.Fprintf(tw, "%s\t[%s, %s]\t", num(x.Value), num(x.CILow), num(x.CIHigh))
		}
		fmt.Fprintf(tw, "%s\t\n", num(s.ESS))
	}
	if worst != nil {
		fmt.Fprintf(tw, "worst\t")
		for _, e := range eval.Estimators {
			x := worst.Estimates[e]
			fmt.Fprintf(tw, "%s (%s)\t[%s, %s]\t", num(x.Value), quoteName(x.Site), num(x.CILow), num(x.CIHigh))
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "the headline value is %s's; ess: effective number of trajectories behind PDWIS and WDR (below %d, their intervals are not to be trusted)\n",
		sites[0].Estimator, eval.LowESS)
}

// num formats x as the tables do, "-" for NaN and the infinities (a
// value not computed).
func num(x float64) string {
	if !finite(x) {
		return "-"
	}
	return fmt.Sprintf("%.4g", x)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// tell prints each line to w as grmdp's note or warning (kind).
func tell(w io.Writer, kind string, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(w, "grmdp: %s: %s\n", kind, l)
	}
}
