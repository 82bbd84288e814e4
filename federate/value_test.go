package federate

// The value round against the central solve: the federated value estimate
// is the central one to 1e-12 relative (not bit for bit: the central mean
// adds every step-1 row in one serial sum, the coordinator adds the sites'
// serial sums, and float addition is not associative), and the
// diagnostics made of counts (decisions without evidence, uncovered
// features, condition numbers) are the central ones exactly.

import (
	"context"
	"fmt"
	stdmaps "maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/solve"
)

// playJob plays every round in memory and returns the finished state.
func playJob(t testing.TB, j *Job, sites []SiteInput) *State {
	t.Helper()
	ctx := context.Background()
	s := NewState(j)
	for !s.Done(j) {
		var in []Incoming
		for _, site := range sites {
			m, err := SiteMessage(ctx, j, s, site)
			if err != nil {
				t.Fatal(err)
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
		next, err := Fold(ctx, j, s, in)
		if err != nil {
			t.Fatal(err)
		}
		s = roundTripState(t, next)
	}
	return s
}

func relClose(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol*max(math.Abs(a), math.Abs(b), 1e-300)
}

func TestValueRoundEqualsCentral(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, m := range maps() {
		names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 30}, false, 23)
		central := buildTable(t, m, H, chunks...)
		for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
			cst := centralStats(t, central, m, dc)
			sites := siteInputs(t, m, H, names, chunks, dc)
			for _, method := range solve.Methods {
				what := fmt.Sprintf("%s %s %+v", m.Kind, method, dc)
				j := testJob(method, m, H, names, dc)
				prob := jobProblem(t, j, central, fourClusters(names))
				want, err := solve.NewSolver(cst, solve.DefaultSettings).Solve(ctx, prob)
				if err != nil {
					t.Fatal(err)
				}
				wantDiag := solve.Diagnose(cst, want)
				s := playJob(t, j, sites)
				got, err := Policy(j, s)
				if err != nil {
					t.Fatal(err)
				}
				samePolicy(t, what, want, got)
				hasValue := method != solve.Behaviour && method != solve.PEVIAvg && method != solve.PEVIMin
				if hasValue == math.IsNaN(want.ValueEstimate) {
					t.Fatalf("%s: central value %v", what, want.ValueEstimate)
				}
				if !relClose(want.ValueEstimate, got.ValueEstimate, 1e-12) {
					t.Fatalf("%s: value %v, central %v", what, got.ValueEstimate, want.ValueEstimate)
				}
				_, dg, notes := Diagnose(j, s, got)
				if len(notes) > 0 {
					// Only a no-evidence count below K is withheld here
					// (every site has at least 30 step-1 rows): the
					// released sites' shares are still the central ones.
					if !dc.Active() || len(notes) != 1 {
						t.Fatalf("%s: notes %v", what, notes)
					}
					for site, x := range dg.NoEvidenceBySite {
						if x != wantDiag.NoEvidenceBySite[site] {
							t.Fatalf("%s: site %s no evidence %v, central %v", what, site, x, wantDiag.NoEvidenceBySite[site])
						}
					}
				} else if dg.NoEvidenceShare != wantDiag.NoEvidenceShare || !stdmaps.Equal(dg.NoEvidenceBySite, wantDiag.NoEvidenceBySite) {
					t.Fatalf("%s: no evidence %v %v, central %v %v", what, dg.NoEvidenceShare, dg.NoEvidenceBySite, wantDiag.NoEvidenceShare, wantDiag.NoEvidenceBySite)
				}
				if fmt.Sprint(dg.Uncovered) != fmt.Sprint(wantDiag.Uncovered) {
					t.Fatalf("%s: uncovered %v, central %v", what, dg.Uncovered, wantDiag.Uncovered)
				}
				if fmt.Sprint(dg.Condition) != fmt.Sprint(wantDiag.Condition) || fmt.Sprint(dg.Cond) != fmt.Sprint(wantDiag.Cond) {
					t.Fatalf("%s: condition %v, central %v", what, dg.Cond, wantDiag.Cond)
				}
				if !dc.Active() && fmt.Sprint(dg.EmptyCells) != fmt.Sprint(wantDiag.EmptyCells) {
					t.Fatalf("%s: empty cells %v, central %v", what, dg.EmptyCells, wantDiag.EmptyCells)
				}
				if !slices.Equal(dg.Warnings(), wantDiag.Warnings()) && !dc.Active() {
					t.Fatalf("%s: warnings %q, central %q", what, dg.Warnings(), wantDiag.Warnings())
				}
			}
		}
	}
}

// TestValueRoundWithholds: a site with fewer step-1 rows than min rows
// sends no value sums (its message says so, and holds no count below min
// count); the coordinator's value is then the mean of Vhat_1 over the
// other sites' initial states, checked against the central solver's
// per-site sums (solve.Solver.SiteValues over all the rows), with a note.
func TestValueRoundWithholds(t *testing.T) {
	ctx := context.Background()
	const H = 4
	m := maps()[0]
	names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 8}, false, 31)
	dc := solve.Disclosure{MinCount: 3, MinRows: 10}
	sites := siteInputs(t, m, H, names, chunks, dc)
	j := testJob(solve.Sitewise, m, H, names, dc)
	s := playJob(t, j, sites)
	// The last round's message of the small site.
	prev := cloneState(s)
	prev.Round = j.H
	msg, err := SiteMessage(ctx, j, prev, sites[3])
	if err != nil {
		t.Fatal(err)
	}
	if msg.vector("value", 0) != nil || !slices.Contains(msg.Withheld, "value all") {
		t.Fatalf("the small site sent its value sums: %+v", msg.Extra)
	}
	for _, v := range msg.Extra {
		for _, x := range v.Values {
			if x != 0 && x < float64(dc.MinCount) {
				t.Fatalf("%s holds %v < %d", v.Name, x, dc.MinCount)
			}
		}
	}
	p, err := Policy(j, s)
	if err != nil {
		t.Fatal(err)
	}
	value, _, notes := Diagnose(j, s, p)
	if len(notes) == 0 || !strings.Contains(notes[0], names[3]) {
		t.Fatalf("notes %v", notes)
	}
	central := buildTable(t, m, H, chunks...)
	cst, err := solve.NewStatsDisclosed(ctx, central, m, m.Blocks(), 1, dc)
	if err != nil {
		t.Fatal(err)
	}
	run := s.run("all")
	all := [][]int{}
	for k := range central.Sites {
		all = append(all, []int{k})
	}
	sums, err := solve.NewSolver(cst, settingsOf(j)).SiteValues(ctx, []solve.Pass{{Name: "all", Groups: all, Beta: run.Beta}}, [][]*solve.StepCoef{run.Steps}, false)
	if err != nil {
		t.Fatal(err)
	}
	sum, n := 0.0, 0.0
	for k, site := range central.Sites {
		if site != names[3] {
			sum += sums[0].V1[k]
			n += sums[0].Rows[k]
		}
	}
	if !relClose(value, sum/n, 1e-12) || math.IsNaN(value) {
		t.Fatalf("value %v, want %v over the released sites", value, sum/n)
	}
}
