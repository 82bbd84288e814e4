package main

import (
	"encoding/json"
	"github.com/grmdp/grmdp/dataset"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/io/policyio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// showTables is the part of show --json this file checks.
type showTables struct {
	Coefficients []solve.CoefficientTable `json:"coefficients"`
	Decisions    []solve.Decision         `json:"decisions"`
	Steps        []struct {
		Step int `json:"step"`
	} `json:"steps"`
}

func fp(x float64) *float64 { return &x }

// writeHandPolicy writes p (its runs' vectors given by hand) as a policy
// file.
func writeHandPolicy(t *testing.T, p *solve.Policy) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hand.parquet")
	if err := policyio.Write(path, p); err != nil {
		t.Fatal(err)
	}
	return path
}

func showTablesOf(t *testing.T, args ...string) showTables {
	t.Helper()
	var doc showTables
	if err := json.Unmarshal([]byte(mustRun(t, append([]string{"show", "--json"}, args...)...)), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestShowTabularHandWorked: a tabular policy with 2 states x 2 actions and
// 2 steps whose w, m, beta, behaviour table and evidence counts are given
// by hand. The coefficient tables are w and m rearranged as
// w[s*A+a] at row s, column a; the decisions are worked out by hand from
// Qhat_h(s, a) = clip(w - beta m, [0, H-h+1]): the largest positive Qhat,
// or the behaviour action when none is positive; the count is the evidence
// count at the recommended action, rows the cell's total.
func TestShowTabularHandWorked(t *testing.T) {
	p := &solve.Policy{
		Method: solve.Sitewise, Map: features.Map{Kind: features.Tabular, A: 2, S: 2, StateColumns: []string{"ward"}},
		H: 2, D: 4, A: 2, ActionLabels: []string{"fluids", "pressors"}, Lambda: 1, Beta: 0.5, C: 0.001, Xi: 0.05,
		Fallback: solve.FallbackBehaviour, BehaviourAction: [][]int32{{1, 1}, {0, 1}},
		EvidenceCounts: [][]float64{{3, 0, 1, 5}, {2, 2, 0, 4}},
		ValueEstimate:  math.NaN(), Version: "test",
		Runs: []solve.PolicyRun{{Group: "all", Beta: 0.5, Steps: []solve.StepCoef{
			{W: []float64{1.5, 0.25, 0.125, 0.5}, M: []float64{0.5, 0.25, 0.5, 2}},
			{W: []float64{0.25, 0.75, 3, 0.5}, M: []float64{0.5, 0.5, 0.25, 0.25}},
		}}},
	}
	pol := writeHandPolicy(t, p)
	doc := showTablesOf(t, pol)
	acts := []string{"fluids", "pressors"}
	wantCoef := []solve.CoefficientTable{
		{Step: 1, Run: "all", Features: []string{"s0", "s1"}, Actions: acts, W: [][]float64{{1.5, 0.25}, {0.125, 0.5}}, M: [][]float64{{0.5, 0.25}, {0.5, 2}}},
		{Step: 2, Run: "all", Features: []string{"s0", "s1"}, Actions: acts, W: [][]float64{{0.25, 0.75}, {3, 0.5}}, M: [][]float64{{0.5, 0.5}, {0.25, 0.25}}},
	}
	if !reflect.DeepEqual(doc.Coefficients, wantCoef) {
		t.Errorf("coefficients:\n got %+v\nwant %+v", doc.Coefficients, wantCoef)
	}
	wantDec := []solve.Decision{
		// Step 1: s0: Qhat = (1.5-0.25, 0.25-0.125) = (1.25, 0.125).
		{Step: 1, Cell: 0, State: "s0", Action: "fluids", Q: 1.25, Evidence: true, Count: fp(3), Rows: fp(3)},
		// s1: (0.125-0.25, 0.5-1) clip to (0, 0): the behaviour action 1.
		{Step: 1, Cell: 1, State: "s1", Action: "pressors", Q: 0, Evidence: false, Count: fp(5), Rows: fp(6)},
		// Step 2 (Qhat at most 1): s0: (0, 0.5).
		{Step: 2, Cell: 0, State: "s0", Action: "pressors", Q: 0.5, Evidence: true, Count: fp(2), Rows: fp(4)},
		// s1: (2.875 clipped to 1, 0.375); no row had fluids there.
		{Step: 2, Cell: 1, State: "s1", Action: "fluids", Q: 1, Evidence: true, Count: fp(0), Rows: fp(4)},
	}
	if !reflect.DeepEqual(doc.Decisions, wantDec) {
		t.Errorf("decisions:\n got %s\nwant %s", mustJSON(doc.Decisions), mustJSON(wantDec))
	}
	// --step picks the steps of the tables, not the steps key's.
	two := showTablesOf(t, "--step", "2", pol)
	if len(two.Coefficients) != 1 || two.Coefficients[0].Step != 2 || !reflect.DeepEqual(two.Decisions, wantDec[2:]) || len(two.Steps) != 2 {
		t.Errorf("--step 2: %+v", two)
	}
	// --max-rows 1 keeps the first row of each table and says how many
	// are left out.
	one := showTablesOf(t, "--max-rows", "1", pol)
	if len(one.Coefficients[0].Features) != 1 || one.Coefficients[0].Truncated != 1 || len(one.Decisions) != 2 || one.Decisions[1].Step != 2 {
		t.Errorf("--max-rows 1: %+v", one)
	}
	// The text has the same tables, rows by state and columns by action.
	text := mustRun(t, "show", pol)
	for _, want := range [][]string{
		{"feature", "fluids", "pressors"},
		{"s1", "0.125", "0.5"},
		{"s1", "pressors", "0", "no", "(fallback)", "5", "6"},
		{"s1", "fluids", "1", "yes", "0", "4"},
	} {
		if !hasFieldsLine(text, want) {
			t.Errorf("show's text has no line %q:\n%s", want, text)
		}
	}
	for _, bad := range [][]string{{"--step", "3"}, {"--max-rows", "-1"}} {
		if code, _, errOut := grmdp(t, append(append([]string{"show"}, bad...), pol)...); code == 0 || !strings.Contains(errOut, bad[0]) {
			t.Errorf("show %v: exit %d, %s", bad, code, errOut)
		}
	}
}

func hasFieldsLine(text string, want []string) bool {
	for _, line := range strings.Split(text, "\n") {
		if slices.Equal(strings.Fields(line), want) {
			return true
		}
	}
	return false
}

// TestShowBinnedHandWorked: a binned policy on one column (lactate cut at
// 2 and 4: three cells) with integer actions. Each cell's decision is
// worked out by hand; a cell's state is a value inside it (the upper
// cell's just above 4). Without stored counts (policies written before
// them) count and rows are null.
func TestShowBinnedHandWorked(t *testing.T) {
	p := &solve.Policy{
		Method: solve.Pooled, Map: features.Map{Kind: features.Binned, A: 2, StateColumns: []string{"lactate"},
			Bins: []features.Bins{{Column: "lactate", Cuts: []float64{2, 4}}}},
		H: 1, D: 6, A: 2, Lambda: 1, Beta: 1, Fallback: solve.FallbackBehaviour, BehaviourAction: [][]int32{{1}},
		EvidenceCounts: [][]float64{{4, 1, 0, 0, 2, 7}}, ValueEstimate: math.NaN(),
		Runs: []solve.PolicyRun{{Group: "all", Beta: 1, Steps: []solve.StepCoef{
			{W: []float64{0.75, 0.25, 0, 0, 0.5, 1}, M: []float64{0.25, 0.5, 1, 1, 0.5, 0.5}},
		}}},
	}
	doc := showTablesOf(t, writeHandPolicy(t, p))
	cells := []string{"lactate<=2", "2<lactate<=4", "lactate>4"}
	wantCoef := []solve.CoefficientTable{{Step: 1, Run: "all", Features: cells, Actions: []string{"0", "1"},
		W: [][]float64{{0.75, 0.25}, {0, 0}, {0.5, 1}}, M: [][]float64{{0.25, 0.5}, {1, 1}, {0.5, 0.5}}}}
	if !reflect.DeepEqual(doc.Coefficients, wantCoef) {
		t.Errorf("coefficients:\n got %+v\nwant %+v", doc.Coefficients, wantCoef)
	}
	wantDec := []solve.Decision{
		{Step: 1, Cell: 0, State: cells[0], Action: "0", Q: 0.5, Evidence: true, Count: fp(4), Rows: fp(5)}, // (0.5, 0)
		{Step: 1, Cell: 1, State: cells[1], Action: "1", Q: 0, Evidence: false, Count: fp(0), Rows: fp(0)},  // (0, 0): behaviour
		{Step: 1, Cell: 2, State: cells[2], Action: "1", Q: 0.5, Evidence: true, Count: fp(7), Rows: fp(9)}, // (0, 0.5)
	}
	if !reflect.DeepEqual(doc.Decisions, wantDec) {
		t.Errorf("decisions:\n got %s\nwant %s", mustJSON(doc.Decisions), mustJSON(wantDec))
	}
	p.EvidenceCounts = nil
	old := showTablesOf(t, writeHandPolicy(t, p))
	for i := range wantDec {
		wantDec[i].Count, wantDec[i].Rows = nil, nil
	}
	if !reflect.DeepEqual(old.Decisions, wantDec) {
		t.Errorf("without counts:\n got %s\nwant %s", mustJSON(old.Decisions), mustJSON(wantDec))
	}
	// Soft-binned and action-block maps have coefficient tables, by
	// centre and by column, but no decision table.
	p.Map.Kind, p.EvidenceCounts, p.D = features.SoftBinned, nil, 4
	p.BehaviourAction = [][]int32{{1}}
	p.Runs[0].Steps[0] = solve.StepCoef{W: []float64{1, 2, 3, 4}, M: []float64{0, 0, 0, 0}}
	soft := showTablesOf(t, writeHandPolicy(t, p))
	if soft.Decisions != nil || !reflect.DeepEqual(soft.Coefficients[0].Features, []string{"lactate~2", "lactate~4"}) ||
		!reflect.DeepEqual(soft.Coefficients[0].W, [][]float64{{1, 3}, {2, 4}}) {
		t.Errorf("soft-binned: %+v", soft)
	}
}

// clinicChunk is a small data set with string sites and actions, a
// two-state column "ward" and steps 1..3, drawn from a fixed
// linear-congruential sequence.
func clinicChunk() *traj.Chunk {
	c := &traj.Chunk{W: 1}
	x := uint32(12345)
	next := func(n int) int {
		x = x*1664525 + 1013904223
		return int(x>>16) % n
	}
	acts := []string{"fluids", "pressors"}
	for k, site := range []string{"north", "south"} {
		for tr := 0; tr < 30; tr++ {
			for h := 1; h <= 3; h++ {
				s := next(2)
				a := next(2)
				if k == 1 && s == 1 && next(4) > 0 {
					a = 1 // the south treats ward 1 mostly with pressors
				}
				c.SiteStr = append(c.SiteStr, site)
				c.TrajInt = append(c.TrajInt, int64(100*k+tr))
				c.Step = append(c.Step, int64(h))
				c.ActionStr = append(c.ActionStr, acts[a])
				c.Reward = append(c.Reward, float64(next(3))/2)
				c.State = append(c.State, float64(s))
			}
		}
	}
	return c
}

// TestReadableOnData solves a tabular policy on a small data set and
// checks, against counts made here from the rows: show's evidence counts
// (rows per step, state and recorded action), apply --json's summary
// (each row's decision from the policy read back) and eval's agreement
// per site, which apply's must equal.
func TestReadableOnData(t *testing.T) {
	dir := t.TempDir()
	c := clinicChunk()
	data := filepath.Join(dir, "clinic.parquet")
	if err := parquetio.WriteChunks(data, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: []string{"ward"}}); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "pol.parquet")
	mustRun(t, "solve", "--features", "tabular", "--state", "ward", "--method", "pooled", "-o", pol, data)

	// Evidence counts: rows per (step, ward, action) across sites.
	n := map[[3]string]float64{}
	for i := 0; i < c.Len(); i++ {
		n[[3]string{strconv.Itoa(int(c.Step[i])), strconv.Itoa(int(c.State[i])), c.ActionStr[i]}]++
	}
	doc := showTablesOf(t, pol)
	if len(doc.Decisions) != 3*2 {
		t.Fatalf("%d decisions, want 6", len(doc.Decisions))
	}
	for _, d := range doc.Decisions {
		h, s := strconv.Itoa(d.Step), strconv.Itoa(d.Cell)
		rows := n[[3]string{h, s, "fluids"}] + n[[3]string{h, s, "pressors"}]
		if d.Count == nil || *d.Count != n[[3]string{h, s, d.Action}] || *d.Rows != rows {
			t.Errorf("step %s, ward %s: count %v rows %v, want %v and %v", h, s, mustJSON(d.Count), mustJSON(d.Rows), n[[3]string{h, s, d.Action}], rows)
		}
	}

	// Solved one pair of steps at a time, the counts (and decisions) are
	// the same.
	ooc := filepath.Join(dir, "ooc.parquet")
	mustRun(t, "solve", "--features", "tabular", "--state", "ward", "--method", "pooled", "--out-of-core", "-o", ooc, data)
	if got := showTablesOf(t, ooc); !reflect.DeepEqual(got.Decisions, doc.Decisions) {
		t.Errorf("out of core:\n got %s\nwant %s", mustJSON(got.Decisions), mustJSON(doc.Decisions))
	}
	// Under disclosure control (--min-count 5) a (site, step, ward, action)
	// counted at fewer than 5 rows is not counted, nor, while the cells
	// withheld at its (site, step) hold 1 to 8 rows (below 2K-1 = 9), the
	// smallest other cell (complementary suppression; ties to the lowest
	// ward, then action).
	perSite := map[[4]string]float64{}
	for i := 0; i < c.Len(); i++ {
		perSite[[4]string{c.SiteStr[i], strconv.Itoa(int(c.Step[i])), strconv.Itoa(int(c.State[i])), c.ActionStr[i]}]++
	}
	cells := map[[2]string][][4]string{}
	for k := range perSite {
		cells[[2]string{k[0], k[1]}] = append(cells[[2]string{k[0], k[1]}], k)
	}
	withheld := map[[4]string]bool{}
	small := 0
	for _, ks := range cells {
		slices.SortFunc(ks, func(a, b [4]string) int { return strings.Compare(a[2]+"/"+a[3], b[2]+"/"+b[3]) })
		held := 0.0
		for _, k := range ks {
			if perSite[k] < 5 {
				withheld[k] = true
				held += perSite[k]
				small++
			}
		}
		for held > 0 && held < 2*5-1 {
			best := -1
			for i, k := range ks {
				if !withheld[k] && (best < 0 || perSite[k] < perSite[ks[best]]) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			withheld[ks[best]] = true
			held += perSite[ks[best]]
		}
	}
	masked := map[[3]string]float64{}
	for k, v := range perSite {
		if !withheld[k] {
			masked[[3]string{k[1], k[2], k[3]}] += v
		}
	}
	if small == 0 {
		t.Fatal("the data set has no count below 5: the --min-count check would test nothing")
	}
	mc := filepath.Join(dir, "mc.parquet")
	mustRun(t, "solve", "--features", "tabular", "--state", "ward", "--method", "pooled", "--min-count", "5", "-o", mc, data)
	for _, d := range showTablesOf(t, mc).Decisions {
		h, s := strconv.Itoa(d.Step), strconv.Itoa(d.Cell)
		rows := masked[[3]string{h, s, "fluids"}] + masked[[3]string{h, s, "pressors"}]
		if d.Count == nil || *d.Count != masked[[3]string{h, s, d.Action}] || *d.Rows != rows {
			t.Errorf("--min-count 5: step %s, ward %s: count %v rows %v, want %v and %v", h, s, mustJSON(d.Count), mustJSON(d.Rows), masked[[3]string{h, s, d.Action}], rows)
		}
	}

	// apply --json against each row's decision made here.
	p, err := readPolicy(pol)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ rows, agree, noev int64 }
	var all tally
	bySite := map[string]*tally{}
	rec := map[string]map[string]int64{"": {}}
	q := make([]float64, p.A)
	for i := 0; i < c.Len(); i++ {
		a, _, ev := p.Act(int(c.Step[i]), c.State[i:i+1], q)
		label := p.ActionLabel(a)
		site := c.SiteStr[i]
		if bySite[site] == nil {
			bySite[site], rec[site] = &tally{}, map[string]int64{}
		}
		for _, tl := range []*tally{&all, bySite[site]} {
			tl.rows++
			if label == c.ActionStr[i] {
				tl.agree++
			}
			if !ev {
				tl.noev++
			}
		}
		rec[""][label]++
		rec[site][label]++
	}
	var sum struct {
		Rows        int64                 `json:"rows"`
		Recommended []dataset.ActionCount `json:"recommended"`
		Agreement   *float64              `json:"agreement"`
		NoEvidence  float64               `json:"no_evidence"`
		Sites       []struct {
			Site        string                `json:"site"`
			Rows        int64                 `json:"rows"`
			Recommended []dataset.ActionCount `json:"recommended"`
			Agreement   *float64              `json:"agreement"`
			NoEvidence  float64               `json:"no_evidence"`
		} `json:"sites"`
	}
	out := mustRun(t, "apply", "--json", "--policy", pol, "-o", filepath.Join(dir, "applied.parquet"), data)
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	recList := func(site string) []dataset.ActionCount {
		return []dataset.ActionCount{{Action: "fluids", Rows: rec[site]["fluids"]}, {Action: "pressors", Rows: rec[site]["pressors"]}}
	}
	check := func(what string, rows int64, recd []dataset.ActionCount, agreement *float64, noev float64, want tally, wantRec []dataset.ActionCount) {
		if rows != want.rows || !reflect.DeepEqual(recd, wantRec) || agreement == nil ||
			*agreement != float64(want.agree)/float64(want.rows) || noev != float64(want.noev)/float64(want.rows) {
			t.Errorf("apply --json %s: rows %d, recommended %v, agreement %v, no evidence %v; want %+v, %v", what, rows, recd, mustJSON(agreement), noev, want, wantRec)
		}
	}
	check("overall", sum.Rows, sum.Recommended, sum.Agreement, sum.NoEvidence, all, recList(""))
	if len(sum.Sites) != 2 || sum.Sites[0].Site != "north" || sum.Sites[1].Site != "south" {
		t.Fatalf("apply --json sites: %+v", sum.Sites)
	}
	for _, s := range sum.Sites {
		check(s.Site, s.Rows, s.Recommended, s.Agreement, s.NoEvidence, *bySite[s.Site], recList(s.Site))
	}

	// eval's agreement per site is apply's.
	var ev struct {
		Agreement agreementJSON `json:"agreement"`
	}
	rep := filepath.Join(dir, "report")
	if err := json.Unmarshal([]byte(mustRun(t, "eval", "--json", "--bootstrap", "0", "--permutations", "0", "--report", rep, "--policy", pol, data)), &ev); err != nil {
		t.Fatal(err)
	}
	a := ev.Agreement
	if a.Rows != float64(all.rows) || *a.Agreement != *sum.Agreement || len(a.Sites) != 2 {
		t.Fatalf("eval agreement %+v, apply's %v", a, *sum.Agreement)
	}
	md, err := os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil || !strings.Contains(string(md), "## Agreement with the recorded actions") || !strings.Contains(string(md), "| north | 90 |") {
		t.Errorf("the report has no agreement table (%v):\n%s", err, md)
	}
	for i, s := range a.Sites {
		if s.Site != sum.Sites[i].Site || *s.Agreement != *sum.Sites[i].Agreement || *s.NoEvidence != sum.Sites[i].NoEvidence {
			t.Errorf("eval agreement at %s: %v, apply's %v", s.Site, *s.Agreement, *sum.Sites[i].Agreement)
		}
	}
}
