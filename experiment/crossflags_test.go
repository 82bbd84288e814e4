package experiment

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// validate's interval warnings flag the values they are about: on these
// data (grmdp simulate --scenario benchmark --trajectories 200,300 --seed
// 8, validated through action-block) site 1's held-out policy value lies
// outside its interval, and so does the worst site's, which inherits it.
// The headline estimator's cell and the worst site's carry FlagInterval;
// the other estimators' cells at the site do not.
func TestCrossSiteFlagsInterval(t *testing.T) {
	m, err := sim.New(sim.ScenarioBenchmark, sim.Params{Trajectories: []int{200, 300}, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(8)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.parquet")
	sp := m.Map()
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{StateColumns: sp.StateColumns}); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), []string{path}, dataset.Options{Map: features.Spec{Kind: features.ActionBlock, StateColumns: sp.StateColumns}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := solve.DefaultSettings
	s.Workers = 2
	v, err := d.Validate(context.Background(), dataset.ValidateOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Seed: 1, Bootstrap: 100})
	if err != nil {
		t.Fatal(err)
	}
	k := slices.IndexFunc(v.Sites, func(s dataset.ValidatedSite) bool { return s.Site == "1" })
	if k < 0 {
		t.Fatalf("no site 1 in %+v", v.Sites)
	}
	p := v.Sites[k].Policy
	if p.Value >= p.CILow && p.Value <= p.CIHigh {
		t.Fatalf("site 1's held-out policy value %g lies inside [%g, %g]: the data no longer reproduce the miss", p.Value, p.CILow, p.CIHigh)
	}
	for _, e := range eval.Estimators {
		if got := slices.Contains(crossSiteFlags(v, k, e), FlagInterval); got != (e == p.Estimator) {
			t.Errorf("%s at site 1: interval flag %v, want %v (warnings %q)", e, got, e == p.Estimator, v.Warnings)
		}
	}
	var cells []CoverageCell
	folds := make([][]sim.ClinicalValue, v.Folds)
	for f := range folds {
		folds[f] = make([]sim.ClinicalValue, len(v.Sites))
	}
	crossFittedCells(func(c CoverageCell) { cells = append(cells, c) }, 0, v, folds, make([]sim.ClinicalValue, len(v.Sites)))
	i := slices.IndexFunc(cells, func(c CoverageCell) bool { return c.Quantity == QuantityWorst })
	if i < 0 {
		t.Fatal("no worst site's cell")
	}
	if cells[i].Site != "1" || !slices.Contains(cells[i].Flags, FlagInterval) {
		t.Errorf("the worst site's cell is not flagged by its interval warning: %+v", cells[i])
	}
}
