package federate

// Evaluation rounds against the central evaluation (eval.FromData with no
// bootstrap, eval.Delta with no permutations) on the same rows, with no
// disclosure control: each site's own value, support, identification
// bounds and observed care, the robust bounds' cells and Delta_{h,m} are
// the central ones bit for bit (each is the same computation on the same
// rows in the same order); the robust value, the lower bound, the robust
// bounds and support (means over every site's initial states or visits)
// agree to 1e-12 relative (the coordinator adds the sites' serial sums,
// the central evaluation all rows in one serial sum).

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/solve"
)

// playEval plays every round of the evaluation of p in memory.
func playEval(t testing.TB, j *Job, s *State, p *solve.Policy, sites []SiteInput) *EvalResult {
	t.Helper()
	return playEvalSeen(t, j, s, p, sites, nil)
}

// playEvalSeen is playEval, showing seen (when not nil) every message a
// site sends with the evaluation's state it answers.
func playEvalSeen(t testing.TB, j *Job, s *State, p *solve.Policy, sites []SiteInput, seen func(site SiteInput, e *EvalState, m *Message)) *EvalResult {
	t.Helper()
	ctx := context.Background()
	e, err := NewEval(j, s, p, "p.parquet", "sha", nil)
	if err != nil {
		t.Fatal(err)
	}
	for !e.Done(j) {
		var in []Incoming
		for _, site := range sites {
			m, err := EvalMessage(ctx, j, s, e, p, site)
			if err != nil {
				t.Fatal(err)
			}
			if seen != nil {
				seen(site, e, m)
			}
			meta, vecs, err := m.Encode()
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(site.Site, meta, vecs)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, Incoming{File: site.Site, Msg: back})
		}
		next, res, err := FoldEval(ctx, j, s, e, in)
		if err != nil {
			t.Fatal(err)
		}
		if res != nil {
			return res
		}
		b, err := json.Marshal(next)
		if err != nil {
			t.Fatal(err)
		}
		e = &EvalState{}
		if err := json.Unmarshal(b, e); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no result after the last round")
	return nil
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

func TestEvalRoundsEqualCentral(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, m := range maps() {
		names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 30}, false, 29)
		central := buildTable(t, m, H, chunks...)
		cst := centralStats(t, central, m, solve.Disclosure{})
		sites := siteInputs(t, m, H, names, chunks, solve.Disclosure{})
		for _, method := range []solve.Method{solve.Sitewise, solve.Cluster, solve.PEVIPooled} {
			what := fmt.Sprintf("%s %s", m.Kind, method)
			j := testJob(method, m, H, names, solve.Disclosure{})
			prob := jobProblem(t, j, central, fourClusters(names))
			_, sv, want, res := playEvalCentral(t, j, sites, cst)
			got := res.Report
			t.Logf("%s: value %v (central %v), lower %v, bounds [%v, %v], support %v, site 0 %+v, delta %d cells", what, got.PolicyValue, want.PolicyValue, got.PessimisticValue, got.Lower, got.Upper, got.Support, got.Sites[0], len(got.Delta))
			if len(res.Notes) > 0 {
				t.Fatalf("%s: notes %v", what, res.Notes)
			}
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
			if eval.IndicatorMap(&m) {
				if math.IsNaN(want.Lower) || !relClose(want.Support, got.Support, 1e-12) {
					t.Fatalf("%s: support %v bounds [%v, %v], central %v [%v, %v]", what, got.Support, got.Lower, got.Upper, want.Support, want.Lower, want.Upper)
				}
			} else if !math.IsNaN(got.Support) {
				t.Fatalf("%s: a robust leverage support %v from sums", what, got.Support)
			}
			if want.WorstSite != got.WorstSite || want.Identified != got.Identified || len(want.Sites) != len(got.Sites) {
				t.Fatalf("%s: worst %s identified %v, central %s %v", what, got.WorstSite, got.Identified, want.WorstSite, want.Identified)
			}
			for k := range want.Sites {
				w, g := want.Sites[k], got.Sites[k]
				if w.Site != g.Site || !sameBits(w.Value, g.Value) || !sameBits(w.Support, g.Support) || !sameBits(w.Lower, g.Lower) || !sameBits(w.Upper, g.Upper) || w.Identified != g.Identified {
					t.Fatalf("%s: site %+v, central %+v", what, g, w)
				}
				if !sameBits(want.Observed[k].Value, got.Observed[k].Value) {
					t.Fatalf("%s: site %s observed care %v, central %v", what, w.Site, got.Observed[k].Value, want.Observed[k].Value)
				}
			}
			if method != solve.Cluster {
				if len(got.Delta) != 0 {
					t.Fatalf("%s: Delta %v for a policy that does not pool sites", what, got.Delta)
				}
				continue
			}
			cells, sum, yard, err := eval.Delta(ctx, sv, prob, eval.Options{})
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
	}
}

// TestEvalWithholds: a site with fewer initial states than min rows
// withholds its sums in the last evaluation round; its own results are
// null (NaN) without a warning about them, the values are over the other
// sites' initial states, and a note says so.
func TestEvalWithholds(t *testing.T) {
	const H = 4
	m := maps()[0]
	names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 8}, false, 37)
	dc := solve.Disclosure{MinCount: 3, MinRows: 10}
	sites := siteInputs(t, m, H, names, chunks, dc)
	j := testJob(solve.Sitewise, m, H, names, dc)
	s := playJob(t, j, sites)
	p, err := Policy(j, s)
	if err != nil {
		t.Fatal(err)
	}
	res := playEval(t, j, s, p, sites)
	rep := res.Report
	small := rep.Sites[slices.IndexFunc(rep.Sites, func(v eval.SiteValue) bool { return v.Site == names[3] })]
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], names[3]) || !math.IsNaN(small.Value) || math.IsNaN(rep.PolicyValue) || math.IsNaN(rep.Lower) {
		t.Fatalf("notes %v, small site %+v, value %v, bounds %v", res.Notes, small, rep.PolicyValue, rep.Lower)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "site "+names[3]+"'s") {
			t.Fatalf("a warning about the withheld site: %s", w)
		}
	}
}
