package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/grmdp/grmdp/eval/report"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
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

// agreementOf computes p's agreement with t's recorded actions. The
// decisions are [solve.ActAll]'s (the same as apply's); the sums run in
// row order, so the result does not depend on workers.
func agreementOf(ctx context.Context, p *solve.Policy, t *traj.Table, workers int) (*report.Agreement, error) {
	acts, evs, err := solve.ActAll(ctx, p, t, workers, 1)
	if err != nil {
		return nil, err
	}
	K := len(t.Sites)
	rows, agree, noev := make([]float64, K), make([]float64, K), make([]float64, K)
	i := 0
	for h := range t.Steps {
		s := &t.Steps[h]
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				wt := 1.0
				if s.Weight != nil {
					wt = s.Weight[j]
				}
				rows[k] += wt
				if acts[i] == s.Action[j] {
					agree[k] += wt
				}
				if !evs[i] {
					noev[k] += wt
				}
				i++
			}
		}
	}
	a := &report.Agreement{}
	var ta, tn float64
	for k, site := range t.Sites {
		a.Sites = append(a.Sites, report.SiteAgreement{Site: site, Rows: rows[k], Share: agree[k] / rows[k], NoEvidence: noev[k] / rows[k]})
		a.Rows += rows[k]
		ta += agree[k]
		tn += noev[k]
	}
	a.Share, a.NoEvidence = ta/a.Rows, tn/a.Rows
	return a, nil
}

// agreementDoc is the JSON form of a.
func agreementDoc(a *report.Agreement) *evalAgreement {
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
		fmt.Fprintf(tw, "%s\t%g\t%s\t%s\t\n", s.Site, s.Rows, share(s.Agreement), share(s.NoEvidence))
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
