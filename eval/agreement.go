package eval

import (
	"context"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Agreement is how often a policy recommends the action the data record,
// overall and per site.
type Agreement struct {
	// Rows is the number of rows (weighted, every step), Share the share
	// of them whose recommended action equals the recorded one, NoEvidence
	// the share whose decision has no evidence and follows the fallback.
	// A share is NaN for no rows.
	Rows, Share, NoEvidence float64
	// Sites holds the same per site, in the data's site order.
	Sites []SiteAgreement
}

// SiteAgreement is [Agreement] at one site.
type SiteAgreement struct {
	Site                    string
	Rows, Share, NoEvidence float64
}

// AgreementCounts are the sums behind one site's [Agreement]: its rows
// (weighted, every step), those whose recommended action is the recorded
// one and those whose decision has no evidence; Count holds the same three
// without weights (what disclosure control counts).
type AgreementCounts struct {
	Rows, Agree, NoEvidence float64
	Count                   [3]float64
}

// CountAgreement returns p's agreement counts with t's recorded actions
// per site, in t's site order. The decisions are [solve.ActAll]'s (those
// apply makes); each site's sums run in row order, step by step, so the
// result does not depend on workers.
func CountAgreement(ctx context.Context, p *solve.Policy, t *traj.Table, workers int) ([]AgreementCounts, error) {
	acts, evs, err := solve.ActAll(ctx, p, t, workers, 1)
	if err != nil {
		return nil, err
	}
	out := make([]AgreementCounts, len(t.Sites))
	i := 0
	for h := range t.Steps {
		s := &t.Steps[h]
		for k := range out {
			c := &out[k]
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				wt := 1.0
				if s.Weight != nil {
					wt = s.Weight[j]
				}
				if wt == 0 && s.Next[j] < 0 && t.IsCensored(s.Traj[j]) {
					// The last row of a censored episode enters no
					// regression (its successor is unknown), but it is
					// a decision like any other.
					wt = 1
				}
				c.Rows += wt
				c.Count[0]++
				if acts[i] == s.Action[j] {
					c.Agree += wt
					c.Count[1]++
				}
				if !evs[i] {
					c.NoEvidence += wt
					c.Count[2]++
				}
				i++
			}
		}
	}
	return out, nil
}

// NewAgreement returns the agreement of the sites' counts: each site's
// shares, and the overall ones from the counts summed in site order.
func NewAgreement(sites []string, counts []AgreementCounts) *Agreement {
	a := &Agreement{}
	var agree, noev float64
	for k, site := range sites {
		c := &counts[k]
		a.Sites = append(a.Sites, SiteAgreement{Site: site, Rows: c.Rows, Share: c.Agree / c.Rows, NoEvidence: c.NoEvidence / c.Rows})
		a.Rows += c.Rows
		agree += c.Agree
		noev += c.NoEvidence
	}
	a.Share, a.NoEvidence = agree/a.Rows, noev/a.Rows
	return a
}

// AgreementOf returns p's agreement with t's recorded actions:
// [NewAgreement] of [CountAgreement].
func AgreementOf(ctx context.Context, p *solve.Policy, t *traj.Table, workers int) (*Agreement, error) {
	counts, err := CountAgreement(ctx, p, t, workers)
	if err != nil {
		return nil, err
	}
	return NewAgreement(t.Sites, counts), nil
}
