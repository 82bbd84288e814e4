package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/grmdp/grmdp/eval"
)

// printAgreement prints the agreement table (nothing for nil).
func printAgreement(w io.Writer, a *eval.Agreement) {
	if a == nil {
		return
	}
	fmt.Fprintln(w, "\nagreement with the recorded actions (share of rows whose recommended action was the one recorded):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "site\trows\tagreement\tno evidence\t")
	for _, s := range a.Sites {
		fmt.Fprintf(tw, "%s\t%g\t%s\t%s\t\n", quoteName(s.Site), s.Rows, share(s.Share), share(s.NoEvidence))
	}
	fmt.Fprintf(tw, "all\t%g\t%s\t%s\t\n", a.Rows, share(a.Share), share(a.NoEvidence))
	tw.Flush()
}

func share(x float64) string {
	if !finite(x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}
