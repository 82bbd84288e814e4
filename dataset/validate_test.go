package dataset_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// benchmarkData writes the benchmark scenario's sample (three sites of
// unequal size) and opens it with the action-block map.
func benchmarkData(t *testing.T, workers int) (*dataset.Data, string) {
	t.Helper()
	m, err := sim.New(sim.ScenarioBenchmark, sim.Params{Trajectories: []int{120, 80, 203}, Horizon: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data.parquet")
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{StateColumns: m.Map().StateColumns, IntSites: true}); err != nil {
		t.Fatal(err)
	}
	return open(t, path, workers), path
}

func open(t *testing.T, path string, workers int) *dataset.Data {
	t.Helper()
	d, err := dataset.Open(context.Background(), []string{path}, dataset.Options{Map: features.Spec{Kind: features.ActionBlock}, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFolds checks that the folds partition each site's trajectories
// into parts whose sizes differ by at most one, and depend on the seed
// and the trajectories alone.
func TestFolds(t *testing.T) {
	d, _ := benchmarkData(t, 2)
	tb := d.Table()
	const K = 5
	fold := dataset.Folds(tb, K, 7)
	if len(fold) != tb.Rows-rowsAfterFirst(tb) {
		t.Fatalf("%d folds for %d trajectories", len(fold), tb.Rows-rowsAfterFirst(tb))
	}
	off := 0
	for k, n := range tb.Trajectories {
		size := make([]int, K)
		for _, f := range fold[off : off+n] {
			if f < 0 || f >= K {
				t.Fatalf("fold %d", f)
			}
			size[f]++
		}
		sort.Ints(size)
		if size[K-1]-size[0] > 1 {
			t.Errorf("site %s: fold sizes %v", tb.Sites[k], size)
		}
		off += n
	}
	if again := dataset.Folds(tb, K, 7); !reflect.DeepEqual(again, fold) {
		t.Error("the folds differ between two calls")
	}
	if other := dataset.Folds(tb, K, 8); reflect.DeepEqual(other, fold) {
		t.Error("seeds 7 and 8 give the same folds")
	}
	// Every fold's held-out table and training weights together hold
	// every row exactly once.
	held := 0
	for f := int32(0); f < K; f++ {
		held += dataset.HeldOutTable(tb, fold, f).Rows
		w := dataset.TrainingTable(tb, fold, f)
		for h := range w.Steps {
			for j, x := range w.Steps[h].Weight {
				if want := fold[w.Steps[h].Traj[j]] != f; (x == 1) != want {
					t.Fatalf("fold %d, step %d, row %d: training weight %g", f, h+1, j, x)
				}
			}
		}
	}
	if held != tb.Rows {
		t.Errorf("the held-out tables hold %d rows of %d", held, tb.Rows)
	}
}

// rowsAfterFirst counts the rows after step 1 (every trajectory has one
// row at step 1).
func rowsAfterFirst(tb *traj.Table) int {
	n := 0
	for h := 1; h < len(tb.Steps); h++ {
		n += tb.Steps[h].Len()
	}
	return n
}

// TestValidateWorkers checks that the cross-fit's JSON is the same bits
// for 1 and 3 workers.
func TestValidateWorkers(t *testing.T) {
	var out [][]byte
	for _, w := range []int{1, 3} {
		d, _ := benchmarkData(t, w)
		s := solve.DefaultSettings
		s.Workers = w
		v, err := d.Validate(context.Background(), dataset.ValidateOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Seed: 3, Bootstrap: 20})
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, js)
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("workers 1 and 3 differ:\n%s\n%s", out[0], out[1])
	}
}

// TestValidateFolds checks each fold against separate runs on files of
// its rows: the policy learned with the fold weighted 0 equals the
// policy solved from a file of the other folds' trajectories, and the
// held-out evaluations equal Data.Evaluate on a file of the fold's
// trajectories with the fold's seed.
func TestValidateFolds(t *testing.T) {
	ctx := context.Background()
	d, _ := benchmarkData(t, 2)
	tb := d.Table()
	s := solve.DefaultSettings
	s.Workers = 2
	const K, seed, B = 3, 11, 30
	v, err := d.Validate(ctx, dataset.ValidateOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Folds: K, Seed: seed, Bootstrap: B})
	if err != nil {
		t.Fatal(err)
	}
	// Each site's ESS is the folds' combined, and validate warns where it
	// is low and where FQE and WDR disagree, in eval's words.
	for k, site := range v.Sites {
		sum, inv := 0.0, 0.0
		for f, n := range site.FoldSizes {
			sum += float64(n)
			inv += float64(n*n) / v.Fits[f].PolicyReport.Sites[k].ESS
		}
		if want := sum * sum / inv; math.Abs(site.ESS-want) > 1e-9*want {
			t.Errorf("site %s: ESS %v, want %v", site.Site, site.ESS, want)
		}
		low := slices.Contains(v.Warnings, eval.LowESSWarning(site.Site, site.ESS))
		if low != (site.ESS < eval.LowESS) {
			t.Errorf("site %s: ESS %v, low-ESS warning %v", site.Site, site.ESS, low)
		}
		disagree := eval.DisagreementWarning(site.Site, site.Policy.Estimates[eval.FQE], site.Policy.Estimates[eval.WDR], site.ESS)
		for _, w := range v.Warnings {
			if strings.HasPrefix(w, "site "+site.Site+": fitted-Q") && w != disagree {
				t.Errorf("site %s: warning %q, want %q", site.Site, w, disagree)
			}
		}
	}
	// The worst sites' intervals are formed from the sites' intervals.
	for _, c := range []struct {
		name  string
		worst dataset.WorstHeldOut
		site  func(dataset.ValidatedSite) dataset.HeldOut
	}{
		{"policy", v.WorstSite, func(s dataset.ValidatedSite) dataset.HeldOut { return s.Policy }},
		{"cloning", v.WorstCloning, func(s dataset.ValidatedSite) dataset.HeldOut { return s.Cloning }},
		{"observed", v.WorstObserved, func(s dataset.ValidatedSite) dataset.HeldOut { return s.Observed }},
	} {
		ests := make([]eval.Estimate, len(v.Sites))
		for k, site := range v.Sites {
			h := c.site(site)
			ests[k] = eval.Estimate{Value: h.Value, CILow: h.CILow, CIHigh: h.CIHigh}
		}
		want, at := eval.WorstOf(ests)
		got := eval.Estimate{Value: c.worst.Value, CILow: c.worst.CILow, CIHigh: c.worst.CIHigh}
		if at < 0 || got != want || c.worst.Site != v.Sites[at].Site || math.IsNaN(got.CILow) {
			t.Errorf("worst %s: %s %+v, want %+v at site %d", c.name, c.worst.Site, got, want, at)
		}
	}
	fold := dataset.Folds(tb, K, seed)
	dir := t.TempDir()
	for f := int32(0); f < K; f++ {
		// The other folds' trajectories, as a file.
		other := make([]int32, len(fold))
		for i, g := range fold {
			if g == f {
				other[i] = 1
			}
		}
		write := func(name string, part *traj.Table) *dataset.Data {
			path := filepath.Join(dir, name)
			if err := parquetio.WriteTrajectories(path, part, parquetio.WriteOptions{StateColumns: []string{"s1", "s2", "s3"}, IntSites: true}); err != nil {
				t.Fatal(err)
			}
			return open(t, path, 2)
		}
		train := write("train.parquet", dataset.HeldOutTable(tb, other, 0))
		fit := v.Fits[f]
		for _, c := range []struct {
			method solve.Method
			got    *solve.Policy
		}{{solve.Sitewise, fit.Policy}, {solve.Behaviour, fit.Cloning}} {
			res, err := train.Solve(ctx, s, solve.Problem{Method: c.method})
			if err != nil {
				t.Fatal(err)
			}
			samePolicy(t, f, res.Policy, c.got)
		}
		test := write("test.parquet", dataset.HeldOutTable(tb, fold, f))
		opts := eval.Options{Bootstrap: B, Seed: dataset.FoldSeed(seed, int(f)), Workers: 2, EstimatesOnly: true}
		for _, c := range []struct {
			p   *solve.Policy
			rep *eval.Report
		}{{fit.Policy, fit.PolicyReport}, {fit.Cloning, fit.CloningReport}} {
			want, err := test.Evaluate(ctx, c.p, dataset.EvalSettings(c.p, 2), opts)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(c.rep)
			if !bytes.Equal(a, b) {
				t.Errorf("fold %d, %s: the held-out report differs from eval on the fold's rows:\n%s\n%s", f, c.p.Method, a, b)
			}
			// Every figure validation reads is the full evaluation's.
			full := opts
			full.EstimatesOnly = false
			want, err = test.Evaluate(ctx, c.p, dataset.EvalSettings(c.p, 2), full)
			if err != nil {
				t.Fatal(err)
			}
			sameEstimates(t, fmt.Sprintf("fold %d, %s", f, c.p.Method), want, c.rep)
		}
	}
}

// samePolicy checks that two policies' vectors agree to 1e-12 and their
// fallback tables exactly.
func samePolicy(t *testing.T, f int32, want, got *solve.Policy) {
	t.Helper()
	if !reflect.DeepEqual(want.BehaviourAction, got.BehaviourAction) {
		t.Errorf("fold %d, %s: fallback tables differ", f, want.Method)
	}
	if len(want.Runs) != len(got.Runs) {
		t.Fatalf("fold %d, %s: %d runs, want %d", f, want.Method, len(got.Runs), len(want.Runs))
	}
	worst := 0.0
	for r := range want.Runs {
		for h := range want.Runs[r].Steps {
			a, b := want.Runs[r].Steps[h], got.Runs[r].Steps[h]
			for i := range a.W {
				worst = math.Max(worst, math.Abs(a.W[i]-b.W[i]))
				worst = math.Max(worst, math.Abs(a.M[i]-b.M[i]))
			}
		}
	}
	if worst > 1e-12 {
		t.Errorf("fold %d, %s: the vectors differ by up to %g", f, want.Method, worst)
	}
}

// TestValidateClinical checks on the clinical scenario that the held-out
// intervals of behaviour cloning hold its true per-hospital value (Monte
// Carlo, averaged over the folds' cloning policies) at most hospitals.
func TestValidateClinical(t *testing.T) {
	if testing.Short() {
		t.Skip("clinical scenario")
	}
	spec := sim.DefaultClinicalSpec()
	spec.NullRate = 0
	spec.Trajectories = []int{1000, 1000, 1000, 1000, 1000}
	m, err := sim.NewClinical(sim.Params{Seed: 3, Clinical: &spec})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(11)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "clinical.parquet")
	sp := m.Map()
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{StateColumns: sp.StateColumns}); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), []string{path}, dataset.Options{Map: features.Spec{Kind: sp.Kind, StateColumns: sp.StateColumns, Bins: sp.Bins}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := solve.DefaultSettings
	s.Workers = 2
	v, err := d.Validate(context.Background(), dataset.ValidateOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Seed: 1, Bootstrap: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The cross-fit's estimand: each fold's cloning policy's true value,
	// weighted by the trajectories the fold holds out.
	truth := make([]float64, len(v.Sites))
	for f, fit := range v.Fits {
		q := make([]float64, fit.Cloning.A)
		val := m.Value(func(_, h int, x []float64) int { a, _, _ := fit.Cloning.Act(h, x, q); return a }, 20000, 9)
		for k := range truth {
			truth[k] += val[k].Value * float64(v.Sites[k].FoldSizes[f]) / float64(v.Sites[k].Trajectories)
		}
	}
	covered := map[string]int{}
	for k, site := range v.Sites {
		c := site.Cloning
		t.Logf("site %s: truth %.3f  %s %.3f [%.3f, %.3f]  wdr %.3f [%.3f, %.3f]  observed %.3f [%.3f, %.3f]", site.Site, truth[k], c.Estimator, c.Value, c.CILow, c.CIHigh,
			c.Estimates[eval.WDR].Value, c.Estimates[eval.WDR].CILow, c.Estimates[eval.WDR].CIHigh, site.Observed.Value, site.Observed.CILow, site.Observed.CIHigh)
		for e, est := range c.Estimates {
			if est.CILow <= truth[k] && truth[k] <= est.CIHigh {
				covered[e]++
			}
		}
	}
	t.Logf("covered: %v of %d", covered, len(v.Sites))
	if covered[eval.WDR] < len(v.Sites)-1 {
		t.Errorf("cloning's held-out WDR interval holds the truth at %d of %d sites", covered[eval.WDR], len(v.Sites))
	}
}

// sameEstimates checks that got carries want's per-site estimates, observed
// returns and their replicates, bit for bit: what validation reads.
func sameEstimates(t *testing.T, what string, want, got *eval.Report) {
	t.Helper()
	same := func(name string, a, b []float64) {
		if len(a) != len(b) {
			t.Errorf("%s: %s: %d values, want %d", what, name, len(b), len(a))
			return
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
				t.Errorf("%s: %s[%d] = %v, want %v", what, name, i, b[i], a[i])
				return
			}
		}
	}
	if want.Estimator != got.Estimator || len(want.Sites) != len(got.Sites) || len(want.Observed) != len(got.Observed) {
		t.Fatalf("%s: estimator %q, %d sites, %d observed; want %q, %d, %d", what, got.Estimator, len(got.Sites), len(got.Observed), want.Estimator, len(want.Sites), len(want.Observed))
	}
	for k := range want.Sites {
		for _, e := range eval.Estimators {
			a, b := want.Sites[k].Estimates[e], got.Sites[k].Estimates[e]
			same(fmt.Sprintf("site %d %s", k, e), []float64{a.Value, a.CILow, a.CIHigh}, []float64{b.Value, b.CILow, b.CIHigh})
		}
		a, b := want.Observed[k], got.Observed[k]
		same(fmt.Sprintf("observed %d", k), []float64{a.Value, a.CILow, a.CIHigh}, []float64{b.Value, b.CILow, b.CIHigh})
	}
	flat := func(x [][]float64) []float64 {
		var out []float64
		for _, r := range x {
			out = append(out, r...)
		}
		return out
	}
	for _, e := range eval.Estimators {
		same(e+" replicates", flat(want.Replicates(e)), flat(got.Replicates(e)))
	}
	same("observed replicates", flat(want.ObservedReplicates()), flat(got.ObservedReplicates()))
}
