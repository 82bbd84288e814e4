package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/sim"
)

func tinyCoverage(scenario string, workers int) Config {
	c := Config{Experiment: Coverage, Scenario: scenario, Reps: 2, Seed: 3, Workers: workers, Bootstrap: 5, Command: "grmdp experiment coverage (test)"}
	switch scenario {
	case sim.ScenarioBenchmark:
		c.Trajectories = []int{40, 30, 50}
		c.evalSamples = 32
	default:
		c.Trajectories = []int{40, 30, 20, 30, 20}
	}
	return c
}

// The calibration study on tiny R: every (policy, quantity) row counts
// site x replicate cells (replicates for the robust value), each cell is
// covered, a flagged miss or a silent miss and nothing else, the counts
// agree with the cells listed, mean_bias is the mean of estimate minus
// exact, and the files are the same bytes with 1 and 3 workers.
func TestCoverageTiny(t *testing.T) {
	for _, scenario := range []string{sim.ScenarioFormulary, sim.ScenarioBenchmark} {
		t.Run(scenario, func(t *testing.T) {
			var dirs []string
			var sums []*Summary
			for _, w := range []int{1, 3} {
				s, err := Run(context.Background(), tinyCoverage(scenario, w))
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
					t.Errorf("%s differs between 1 and 3 workers", f)
				}
			}
			s := sums[0]
			K := len(tinyCoverage(scenario, 1).Trajectories)
			if len(s.Coverage) != 4 {
				t.Fatalf("%d coverage rows, want 4 (2 policies x 2 quantities)", len(s.Coverage))
			}
			for _, r := range s.Coverage {
				want := s.Reps
				if r.Quantity == QuantitySite {
					want *= K
				}
				if r.Cells != want {
					t.Errorf("%s %s: %d cells, want %d", r.Policy, r.Quantity, r.Cells, want)
				}
				if r.Covered+r.Flagged+r.SilentMisses != r.Cells {
					t.Errorf("%s %s: covered %d + flagged %d + silent %d != cells %d", r.Policy, r.Quantity, r.Covered, r.Flagged, r.SilentMisses, r.Cells)
				}
				covered, flagged, silent, bias := 0, 0, 0, 0.0
				for _, c := range s.Cells {
					if c.Policy != r.Policy || c.Quantity != r.Quantity {
						continue
					}
					bias += float64(c.Estimate - c.Exact)
					in := float64(c.CILow) <= float64(c.Exact) && float64(c.Exact) <= float64(c.CIHigh)
					if in != c.Covered {
						t.Errorf("cell %+v: covered %v, interval says %v", c, c.Covered, in)
					}
					switch {
					case in:
						covered++
					case c.Warned || !c.Identified:
						flagged++
					default:
						silent++
					}
				}
				if covered != r.Covered || flagged != r.Flagged || silent != r.SilentMisses {
					t.Errorf("%s %s: counts %d/%d/%d, cells say %d/%d/%d", r.Policy, r.Quantity, r.Covered, r.Flagged, r.SilentMisses, covered, flagged, silent)
				}
				if got := bias / float64(r.Cells); math.Abs(got-float64(r.MeanBias)) > 1e-9 {
					t.Errorf("%s %s: mean bias %v, cells give %v", r.Policy, r.Quantity, r.MeanBias, got)
				}
			}
			b, _ := os.ReadFile(filepath.Join(dirs[0], "summary.json"))
			var js map[string]any
			if err := json.Unmarshal(b, &js); err != nil {
				t.Fatal(err)
			}
			row := js["coverage"].([]any)[0].(map[string]any)
			for _, k := range []string{"scenario", "policy", "quantity", "cells", "covered", "flagged", "silent_misses", "mean_bias"} {
				if _, ok := row[k]; !ok {
					t.Errorf("summary.json coverage rows have no %q", k)
				}
			}
		})
	}
}

// cellOf's rule by hand: an identified value is covered by its bootstrap
// interval; a value that is not identified by its bounds' interval; a
// miss is flagged by an interval warning (here the interval misses its
// estimate, or the identification bounds are wider than the interval) or
// by identified: false, and is otherwise silent.
func TestCellOfRule(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name                              string
		exact, est, lo, hi, bias          float64
		blo, bhi, lower, upper            float64
		identified, covered, warned, flag bool
	}{
		{"identified, inside", 5, 5.1, 4.8, 5.4, 0, nan, nan, nan, nan, true, true, false, false},
		{"identified, outside, silent", 6, 5.1, 4.8, 5.4, 0, nan, nan, nan, nan, true, false, false, false},
		{"identified, outside, warned", 6, 5.5, 4.8, 5.4, 0, nan, nan, nan, nan, true, false, true, true},
		{"identified, bias over half the width", 6, 5.1, 4.8, 5.4, -0.4, nan, nan, nan, nan, true, false, true, true},
		{"not identified, inside the bounds", 9, 5.1, 4.8, 5.4, 0, 3, 12, nan, nan, false, true, false, true},
		{"not identified, outside the bounds", 13, 5.1, 4.8, 5.4, 0, 3, 12, nan, nan, false, false, false, true},
		{"identified, bounds narrower than the interval", 6, 5.1, 4.8, 5.4, 0, nan, nan, 5.1, 5.3, true, false, false, false},
		{"identified, bounds wider than the interval", 6, 5.1, 4.8, 5.4, 0, nan, nan, 5.1, 6.9, true, false, true, true},
	} {
		got := cellOf(0, "p", QuantitySite, "1", c.exact, c.est, c.lo, c.hi, c.bias, c.lower, c.upper, c.blo, c.bhi, c.identified)
		if got.Covered != c.covered || got.Warned != c.warned || (got.Warned || !got.Identified) != c.flag {
			t.Errorf("%s: covered %v warned %v flagged %v, want %v %v %v", c.name, got.Covered, got.Warned, got.Warned || !got.Identified, c.covered, c.warned, c.flag)
		}
	}
}

func TestCoverageConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Experiment: Coverage},
		{Experiment: Coverage, Scenario: "trap"},
		{Experiment: Coverage, Scenario: sim.ScenarioFormulary, Bootstrap: 1},
		{Experiment: Coverage, Scenario: sim.ScenarioFormulary, NMin: []int{3}},
		{Experiment: Benchmark, Scenario: sim.ScenarioFormulary},
		{Experiment: Benchmark, Bootstrap: 10},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
