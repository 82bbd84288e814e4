package federate

// Evaluation rounds on the maps and settings beyond tabular, indicator
// and action-block (those of TestFederatedMapsEqualCentral: binned and
// soft-binned maps with explicit cut points, the precomputed map with the
// blocks found in round 0, a job solved with --stationary, weighted rows)
// against the central evaluation on all the rows, with no disclosure
// control: bit for bit and to 1e-12 relative as TestEvalRoundsEqualCentral
// says, and the agreement with the recorded actions as grmdp eval forms it
// (weighted shares) bit for bit.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// sameEval fails unless the federated report got is the central want:
// beta, each site's own value, support, bounds and observed care bit for
// bit; the robust value, the lower bound, the robust bounds and (indicator
// maps) the robust support to 1e-12 relative; the robust support of other
// maps null (a leverage under every site's Gram is no sum).
func sameEval(t *testing.T, what string, m *features.Map, want, got *eval.Report) {
	t.Helper()
	for _, x := range []struct {
		name      string
		want, got float64
		exact     bool
	}{
		{"robust value", want.PolicyValue, got.PolicyValue, false},
		{"pessimistic value", want.PessimisticValue, got.PessimisticValue, false},
		{"beta", want.Beta, got.Beta, true},
		{"lower", want.Lower, got.Lower, false},
		{"upper", want.Upper, got.Upper, false},
	} {
		if x.exact && !sameBits(x.want, x.got) || !x.exact && !relClose(x.want, x.got, 1e-12) {
			t.Fatalf("%s: %s %v, central %v", what, x.name, x.got, x.want)
		}
	}
	if want.HasBounds != got.HasBounds || want.HasBounds != eval.IndicatorMap(m) {
		t.Fatalf("%s: bounds %v, central %v, indicator map %v", what, got.HasBounds, want.HasBounds, eval.IndicatorMap(m))
	}
	if eval.IndicatorMap(m) {
		if math.IsNaN(want.Lower) || math.IsNaN(want.Support) || !relClose(want.Support, got.Support, 1e-12) {
			t.Fatalf("%s: support %v bounds [%v, %v], central %v [%v, %v]", what, got.Support, got.Lower, got.Upper, want.Support, want.Lower, want.Upper)
		}
	} else if !math.IsNaN(got.Support) || !math.IsNaN(got.Lower) {
		t.Fatalf("%s: a robust leverage support %v or bounds %v from sums", what, got.Support, got.Lower)
	}
	if want.WorstSite != got.WorstSite || want.Identified != got.Identified || len(want.Sites) != len(got.Sites) {
		t.Fatalf("%s: worst %s identified %v, central %s %v", what, got.WorstSite, got.Identified, want.WorstSite, want.Identified)
	}
	for k := range want.Sites {
		w, g := want.Sites[k], got.Sites[k]
		if w.Site != g.Site || !sameBits(w.Value, g.Value) || !sameBits(w.Support, g.Support) || !sameBits(w.Lower, g.Lower) || !sameBits(w.Upper, g.Upper) || w.Identified != g.Identified {
			t.Fatalf("%s: site %+v, central %+v", what, g, w)
		}
		if math.IsNaN(g.Value) || math.IsNaN(g.Support) || eval.IndicatorMap(m) == math.IsNaN(g.Lower) {
			t.Fatalf("%s: site %+v: a value, support or bounds missing", what, g)
		}
		if !sameBits(want.Observed[k].Value, got.Observed[k].Value) {
			t.Fatalf("%s: site %s observed care %v, central %v", what, w.Site, got.Observed[k].Value, want.Observed[k].Value)
		}
	}
}

// sameDelta fails unless the report's Delta_{h,m}, their sum and the
// yardstick are eval.Delta's for prob bit for bit, and Delta is not 0.
func sameDelta(t *testing.T, what string, sv *solve.Solver, prob solve.Problem, got *eval.Report) {
	t.Helper()
	cells, sum, yard, err := eval.Delta(context.Background(), sv, prob, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != len(got.Delta) || !sameBits(sum, got.DeltaSum) || !sameBits(yard, got.Yardstick) {
		t.Fatalf("%s: Delta %v (sum %v, yardstick %v), central %v (%v, %v)", what, got.Delta, got.DeltaSum, got.Yardstick, cells, sum, yard)
	}
	for i := range cells {
		if cells[i].Step != got.Delta[i].Step || cells[i].Cluster != got.Delta[i].Cluster || !sameBits(cells[i].Delta, got.Delta[i].Delta) {
			t.Fatalf("%s: Delta cell %d %+v, central %+v", what, i, got.Delta[i], cells[i])
		}
	}
	if sum == 0 {
		t.Fatalf("%s: Delta is 0: the case tests nothing", what)
	}
}

// centralAgreement is the agreement of grmdp eval.
func centralAgreement(t *testing.T, p *solve.Policy, tb *traj.Table) *eval.Agreement {
	t.Helper()
	a, err := eval.AgreementOf(context.Background(), p, tb, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sameAgreement fails unless got is want bit for bit: each site's rows and
// shares, and the totals (both add the sites' sums in site order).
func sameAgreement(t *testing.T, what string, want, got *eval.Agreement) {
	t.Helper()
	if got == nil || len(got.Sites) != len(want.Sites) {
		t.Fatalf("%s: agreement %+v, central %+v", what, got, want)
	}
	for k := range want.Sites {
		w, g := want.Sites[k], got.Sites[k]
		if w.Site != g.Site || !sameBits(w.Rows, g.Rows) || !sameBits(w.Share, g.Share) || !sameBits(w.NoEvidence, g.NoEvidence) {
			t.Fatalf("%s: agreement at site %+v, central %+v", what, g, w)
		}
	}
	if !sameBits(want.Rows, got.Rows) || !sameBits(want.Share, got.Share) || !sameBits(want.NoEvidence, got.NoEvidence) {
		t.Fatalf("%s: agreement %+v, central %+v", what, got, want)
	}
}

// TestEvalMapsEqualCentral: for each map and setting of mapCases and the
// methods sitewise, cluster, pooled and PEVI pooled, with no disclosure
// control, the evaluation rounds (EvalMessage, FoldEval) of the job's own
// policy give eval.FromData's report on all the rows (the central
// grmdp eval --bootstrap 0 --permutations 0, which evaluates a policy
// solved with --stationary step by step like any other): see sameEval;
// Delta_{h,m} over the policy's groups for cluster and pooled policies bit
// for bit (eval.Delta); and the agreement with the recorded actions as
// grmdp eval forms it (weighted rows weigh).
func TestEvalMapsEqualCentral(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, tc := range mapCases() {
		m := tc.m
		perSite := []int{200, 150, 260, 120}
		if m.Kind == features.ActionBlock || m.Kind == features.Tabular {
			perSite = []int{60, 45, 80, 30}
		}
		names, chunks := mapChunks(m, 4, H, perSite, 23)
		central := mapTable(t, m, H, chunks...)
		if tc.weighted {
			weigh(central)
		}
		cst, err := solve.NewStats(ctx, central, m, solve.BlocksFor(central, &m), 2)
		if err != nil {
			t.Fatal(err)
		}
		var sites []SiteInput
		for k, c := range chunks {
			tb := mapTable(t, m, H, c)
			if tc.weighted {
				weigh(tb)
			}
			st, err := solve.NewStats(ctx, tb, m, solve.BlocksFor(tb, &m), 1)
			if err != nil {
				t.Fatal(err)
			}
			sites = append(sites, SiteInput{Stats: st, Site: names[k]})
		}
		for _, method := range []solve.Method{solve.Sitewise, solve.Cluster, solve.Pooled, solve.PEVIPooled} {
			what := fmt.Sprintf("%s %s", tc.name, method)
			j := testJob(method, m, H, names, solve.Disclosure{})
			j.Stationary = tc.stationary
			if method == solve.Cluster {
				j.Clusters = fourClusters(names)
			}
			if err := j.Check(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			p, sv, want, res := playEvalCentral(t, j, sites, cst)
			got := res.Report
			t.Logf("%s: value %v (central %v), lower %v, bounds [%v, %v], support %v (central %v), delta %d cells", what, got.PolicyValue, want.PolicyValue, got.PessimisticValue, got.Lower, got.Upper, got.Support, want.Support, len(got.Delta))
			if len(res.Notes) > 0 {
				t.Fatalf("%s: notes %v", what, res.Notes)
			}
			sameEval(t, what, &m, want, got)
			if m.Kind == features.Binned && (!got.HasBounds || math.IsNaN(got.Sites[0].Lower)) {
				t.Fatalf("%s: a binned map (an indicator map) without identification bounds", what)
			}
			sameAgreement(t, what, centralAgreement(t, p, central), res.Agreement)
			switch method {
			case solve.Cluster, solve.Pooled:
				prob := solve.Problem{Method: solve.Cluster}
				for _, g := range p.Groups {
					var members []int
					for _, site := range g.Sites {
						members = append(members, slicesIndex(central.Sites, site))
					}
					prob.Groups = append(prob.Groups, members)
					prob.GroupNames = append(prob.GroupNames, g.Name)
				}
				sameDelta(t, what, sv, prob, got)
			default:
				if len(got.Delta) != 0 {
					t.Fatalf("%s: Delta %v for a policy that does not pool sites", what, got.Delta)
				}
			}
		}
	}
}

func slicesIndex(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// TestEvalMapsDisclose: with K = 5 and min rows 10, the evaluation of a
// cluster policy (robust, lower and Delta_h passes) runs on every map and
// setting of mapCases, and every message obeys disclosure control counted
// in rows, not weights (as solve.Disclosure counts them), checked against
// the site's rows directly: every count is 0 or at least 5; a cell of the
// bounds' sums is released only when at least 5 of the step's rows fall in
// it; the agreement and the supported visits are sent only when their row
// counts, and the rows without them, are 0 or at least 5. On weighted rows
// some cell has fewer than 5 rows but a weight of 5 or more: a rule on
// weights would release it.
func TestEvalMapsDisclose(t *testing.T) {
	ctx := context.Background()
	const H = 4
	dc := solve.Disclosure{MinCount: 5, MinRows: 10}
	heavy := 0
	for _, tc := range mapCases() {
		m := tc.m
		perSite := []int{200, 150, 260, 120}
		if m.Kind == features.ActionBlock || m.Kind == features.Tabular {
			perSite = []int{60, 45, 80, 30}
		}
		names, chunks := mapChunks(m, 4, H, perSite, 23)
		var sites []SiteInput
		for k, c := range chunks {
			tb := mapTable(t, m, H, c)
			if tc.weighted {
				weigh(tb)
			}
			st, err := solve.NewStatsDisclosed(ctx, tb, m, solve.BlocksFor(tb, &m), 1, dc)
			if err != nil {
				t.Fatal(err)
			}
			sites = append(sites, SiteInput{Stats: st, Site: names[k]})
		}
		j := &Job{FormatVersion: FormatVersion, ID: "d", Method: solve.Cluster, Map: m, H: H, Lambda: 1, C: 5e-4, Xi: 0.05,
			Fallback: solve.FallbackBehaviour, Stationary: tc.stationary, Sites: names, Disclosure: dc, MinSites: 3,
			Clusters: []Cluster{{Name: "north", Sites: []string{names[3], names[0]}}, {Name: "south", Sites: []string{names[1], names[2]}}}}
		s := playJob(t, j, sites)
		p, err := Policy(j, s)
		if err != nil {
			t.Fatal(err)
		}
		small := func(c, total float64) bool { return c > 0 && c < 5 || total-c > 0 && total-c < 5 }
		idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
		q := make([]float64, m.A)
		released := 0
		res := playEvalSeen(t, j, s, p, sites, func(site SiteInput, e *EvalState, msg *Message) {
			tb := site.Stats.Table
			what := fmt.Sprintf("%s site %s step %d", tc.name, site.Site, msg.Step)
			for i, c := range msg.Counts {
				if c != 0 && c < 5 {
					t.Fatalf("%s: count %d is %v", what, i, c)
				}
			}
			if h := msg.Step; h > 0 && e.Bounds {
				// rows[i], weight[i]: the step's rows in cell i, their weight.
				rows, weight := make([]float64, m.Dim()), make([]float64, m.Dim())
				st := &tb.Steps[h-1]
				for r := 0; r < st.Len(); r++ {
					m.Phi(st.State[r*tb.W:(r+1)*tb.W], int(st.Action[r]), idx, val)
					rows[idx[0]]++
					weight[idx[0]] += weightOf(st, r)
				}
				n := msg.vector("bound_n", 0)
				for i := range n {
					if rows[i] > 0 && rows[i] < 5 && weight[i] >= 5 {
						heavy++
					}
					if (n[i] != 0 || msg.vector("bound_lo", 0)[i] != 0 || msg.vector("bound_hi", 0)[i] != 0) && rows[i] < 5 {
						t.Fatalf("%s: cell %d's sums sent from %v rows", what, i, rows[i])
					}
					if n[i] != 0 {
						released++
					}
				}
			}
			if msg.Step > 0 || slices.Contains(msg.Withheld, "value") {
				return
			}
			acts, evs, err := solve.ActAll(ctx, p, tb, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			var rows, agree, noev, sup float64
			x := 0
			for h := 1; h <= H; h++ {
				st := &tb.Steps[h-1]
				for r := 0; r < st.Len(); r++ {
					rows++
					if acts[x] == st.Action[r] {
						agree++
					}
					if !evs[x] {
						noev++
					}
					x++
					if e.Bounds {
						state := st.State[r*tb.W : (r+1)*tb.W]
						a, _, _ := p.Act(h, state, q)
						m.Phi(state, a, idx, val)
						if e.Everywhere[h-1][idx[0]] {
							sup++
						}
					}
				}
			}
			sent := len(msg.vector("agreement", 0)) > 0
			if sent == (small(agree, rows) || small(noev, rows)) {
				t.Fatalf("%s: agreement sent %v from %v agreeing and %v without evidence of %v rows", what, sent, agree, noev, rows)
			}
			if sent := len(msg.vector("support", 0)) > 0; e.Bounds && sent == small(sup, rows) {
				t.Fatalf("%s: support sent %v from %v supported of %v visits", what, sent, sup, rows)
			}
		})
		if math.IsNaN(res.Report.PolicyValue) || len(res.Report.Delta) == 0 {
			t.Fatalf("%s: value %v, %d Delta cells", tc.name, res.Report.PolicyValue, len(res.Report.Delta))
		}
		if eval.IndicatorMap(&m) && released == 0 {
			t.Fatalf("%s: no cell of the bounds released", tc.name)
		}
	}
	if heavy == 0 {
		t.Fatal("no cell of fewer than 5 rows weighs 5 or more: the weighted cases test nothing")
	}
}

// weightOf is row r's weight (1 without weights).
func weightOf(s *traj.Step, r int) float64 {
	if s.Weight == nil {
		return 1
	}
	return s.Weight[r]
}
