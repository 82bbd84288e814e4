package experiment

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/sim"
)

// The clinical calibration study on tiny R: an entry per (estimator,
// sample, quantity) with the counts of its cells, the headline entries
// fitted-Q's and the observed care's, every cell covered, a flagged miss
// or a silent miss, and the same files with 1 and 2 workers.
func TestCoverageClinicalTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("clinical scenario")
	}
	cfg := Config{Experiment: Coverage, Scenario: sim.ScenarioClinical, Reps: 2, Seed: 3, Bootstrap: 5, Command: "grmdp experiment coverage (test)",
		Trajectories: []int{60, 40, 50, 40, 50}, evalSamples: 500}
	var dirs []string
	var sums []*Summary
	for _, w := range []int{1, 2} {
		cfg.Workers = w
		s, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := s.Write(dir); err != nil {
			t.Fatal(err)
		}
		dirs, sums = append(dirs, dir), append(sums, s)
	}
	for _, f := range []string{"summary.json", "table.md", "table.csv"} {
		a, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil || len(a) == 0 {
			t.Fatalf("%s missing or empty (%v)", f, err)
		}
		b, _ := os.ReadFile(filepath.Join(dirs[1], f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between 1 and 2 workers", f)
		}
	}
	s := sums[0]
	K := len(cfg.Trajectories)
	// In sample: 3 estimators x (sites, worst) + observed; cross: the
	// same but the worst site for the headline estimator only.
	if len(s.Coverage) != 7+5 {
		t.Fatalf("%d coverage entries, want 12", len(s.Coverage))
	}
	for _, r := range s.Coverage {
		want := cfg.Reps * K
		if r.Quantity == QuantityWorst {
			want = cfg.Reps
		}
		if r.Cells != want {
			t.Errorf("%s %s %s: %d cells, want %d", r.Estimator, r.Sample, r.Quantity, r.Cells, want)
		}
		if r.Covered+r.Flagged+r.SilentMisses != r.Cells {
			t.Errorf("%s %s %s: covered %d + flagged %d + silent %d != cells %d", r.Estimator, r.Sample, r.Quantity, r.Covered, r.Flagged, r.SilentMisses, r.Cells)
		}
		head := r.Estimator == eval.FQE || r.Estimator == EstimatorObserved
		if r.Headline != head {
			t.Errorf("%s %s %s: headline %v, want %v", r.Estimator, r.Sample, r.Quantity, r.Headline, head)
		}
		if r.Sample != SampleIn && r.Sample != SampleCross {
			t.Errorf("sample %q", r.Sample)
		}
	}
	for _, c := range s.Cells {
		if !(c.ExactSE > 0) {
			t.Errorf("cell %+v: no Monte Carlo standard error", c)
			break
		}
	}
}
