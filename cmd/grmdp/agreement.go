package main

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/grmdp/grmdp/eval"
)

// evalAgreement is eval's agreement of the policy with the data's actions:
// the share of rows (weighted, every step) whose recommended action is the
// recorded one, and the share of decisions without evidence, overall and
// per site in the data's site order. A share is null for no rows.
type evalAgreement struct {
	Rows       float64             `json:"rows"`
	Agreement  *float64            `json:"agreement"`
	NoEvidence *float64            `json:"no_evidence"`
	Sites      []evalSiteAgreement `json:"sites"`
}

type evalSiteAgreement struct {
	Site       string   `json:"site"`
	Rows       float64  `json:"rows"`
	Agreement  *float64 `json:"agreement"`
	NoEvidence *float64 `json:"no_evidence"`
}

// agreementDoc is the JSON form of a.
func agreementDoc(a *eval.Agreement) *evalAgreement {
	d := &evalAgreement{Rows: a.Rows, Agreement: fptr(a.Share), NoEvidence: fptr(a.NoEvidence), Sites: []evalSiteAgreement{}}
	for _, s := range a.Sites {
		d.Sites = append(d.Sites, evalSiteAgreement{Site: s.Site, Rows: s.Rows, Agreement: fptr(s.Share), NoEvidence: fptr(s.NoEvidence)})
	}
	return d
}

// printAgreement prints the agreement table.
func printAgreement(w io.Writer, a *evalAgreement) {
	if a == nil {
		return
	}
	fmt.Fprintln(w, "\nagreement with the recorded actions (share of rows whose recommended action was the one recorded):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "site\trows\tagreement\tno evidence\t")
	for _, s := range a.Sites {
		fmt.Fprintf(tw, "%s\t%g\t%s\t%s\t\n", quoteName(s.Site), s.Rows, share(s.Agreement), share(s.NoEvidence))
	}
	fmt.Fprintf(tw, "all\t%g\t%s\t%s\t\n", a.Rows, share(a.Agreement), share(a.NoEvidence))
	tw.Flush()
}

func share(x *float64) string {
	if x == nil || math.IsNaN(*x) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**x)
}
