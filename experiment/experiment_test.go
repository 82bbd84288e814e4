package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// tiny returns a small configuration of each experiment: R = 2 and small
// samples, so that a run takes well under a second.
func tiny(name string, workers int) Config {
	c := Config{Experiment: name, Reps: 2, Seed: 7, Workers: workers, Command: "grmdp experiment " + name + " (test)"}
	switch name {
	case Benchmark:
		c.Trajectories = []int{60, 40, 100}
		c.States = 10
		c.evalSamples = 32
	case Convergence:
		c.NMin = []int{20, 50, 200}
	case Pessimism:
		c.NMin = []int{20, 200, 2000, 20000}
		c.States = 15
	}
	return c
}

// runTiny runs a tiny experiment and writes it to a fresh directory.
func runTiny(t *testing.T, name string, workers int) (string, *Summary) {
	t.Helper()
	s, err := Run(context.Background(), tiny(name, workers))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	dir := t.TempDir()
	if err := s.Write(dir); err != nil {
		t.Fatalf("%s: write: %v", name, err)
	}
	return dir, s
}

func TestTinyRuns(t *testing.T) {
	files := map[string][]string{
		Benchmark:   {"suboptimality-box", "suboptimality-mean"},
		Convergence: {"suboptimality", "value-gap"},
		Pessimism:   {"suboptimality"},
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			dir1, _ := runTiny(t, name, 1)
			dir4, _ := runTiny(t, name, 4)
			var want []string
			for _, f := range files[name] {
				want = append(want, f+".png", f+".svg")
			}
			for _, f := range append(want, "summary.json", "table.md", "table.csv") {
				st, err := os.Stat(filepath.Join(dir1, f))
				if err != nil || st.Size() == 0 {
					t.Errorf("%s missing or empty (%v)", f, err)
				}
			}
			// The same seed gives the same bytes with 1 and 4 workers.
			for _, f := range []string{"summary.json", "table.md", "table.csv"} {
				a, _ := os.ReadFile(filepath.Join(dir1, f))
				b, _ := os.ReadFile(filepath.Join(dir4, f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs between 1 and 4 workers", f)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir1, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			checkKeys(t, name, b)
		})
	}
}

// checkKeys checks that summary.json has the keys scripts rely on.
func checkKeys(t *testing.T, name string, b []byte) {
	t.Helper()
	var js map[string]any
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, k := range []string{"experiment", "command", "settings", "seed", "reps", "seeds", "notes"} {
		if _, ok := js[k]; !ok {
			t.Errorf("summary.json has no %q", k)
		}
	}
	if js["reps"] != 2.0 || js["seed"] != 7.0 || js["experiment"] != name {
		t.Errorf("reps %v, seed %v, experiment %v: want 2, 7, %s", js["reps"], js["seed"], js["experiment"], name)
	}
	list, keys := "fits", []string{"metric", "c", "slope", "ci_low", "ci_high", "r2"}
	if name == Benchmark {
		list, keys = "methods", []string{"method", "mean", "ci_low", "ci_high"}
	} else if _, ok := js["points"]; !ok {
		t.Error("summary.json has no points")
	}
	items, ok := js[list].([]any)
	if !ok || len(items) == 0 {
		t.Fatalf("summary.json: %q is not a nonempty list", list)
	}
	var names []string
	for _, it := range items {
		m := it.(map[string]any)
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s entry %v has no %q", list, m, k)
			}
		}
		if n, ok := m["method"].(string); ok {
			names = append(names, n)
		}
		if n, ok := m["metric"].(string); ok {
			names = append(names, n)
		}
	}
	want := map[string][]string{
		Benchmark:   {"sitewise", "pevi-pooled", "pevi-avg", "pevi-min"},
		Convergence: {MetricSuboptimality, MetricValueGap},
		Pessimism:   {MetricSuboptimality, MetricSuboptimality, MetricSuboptimality},
	}[name]
	if len(names) != len(want) {
		t.Fatalf("%s names %v, want %v", list, names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("%s names %v, want %v", list, names, want)
		}
	}
}

func TestSummaryValues(t *testing.T) {
	_, s := runTiny(t, Pessimism, 2)
	if len(s.Points) != 3*4 || len(s.Fits) != 3 || len(s.RangeFits) != 3 {
		t.Fatalf("%d points, %d fits, %d range fits: want 12, 3, 3", len(s.Points), len(s.Fits), len(s.RangeFits))
	}
	for _, p := range s.Points {
		if len(p.Suboptimality.Values) != 2 {
			t.Fatalf("point %+v has %d values, want 2", p, len(p.Suboptimality.Values))
		}
		for _, v := range p.Suboptimality.Values {
			if v < -1e-12 || v > 0.05*7+1e-12 {
				t.Errorf("c = %g, N_min = %d: suboptimality %g outside [0, 0.35]", float64(p.C), p.NMin, float64(v))
			}
		}
		want := MeanCI([]float64{float64(p.Suboptimality.Values[0]), float64(p.Suboptimality.Values[1])}, Level)
		if float64(p.Suboptimality.Mean) != want.Mean || float64(p.Suboptimality.CIHigh) != want.High {
			t.Errorf("point mean %g [.., %g], want %g [.., %g]", float64(p.Suboptimality.Mean), float64(p.Suboptimality.CIHigh), want.Mean, want.High)
		}
	}
	if len(s.Seeds) != 2 || len(s.Seeds[1].Data) != 4 || s.Seeds[1].Data[2] != Derive(7, 1, tagData, 2) {
		t.Errorf("seeds %+v do not follow Derive", s.Seeds)
	}
}

// The closed-form suboptimality of the hard instance agrees with exact
// policy evaluation, and the value gap is V* minus the policy's max Qhat.
func TestConvergenceClosedForm(t *testing.T) {
	cfg, err := tiny(Convergence, 1).resolve()
	if err != nil {
		t.Fatal(err)
	}
	for r := uint64(0); r < 6; r++ {
		m, err := sim.NewHard(sim.Params{Seed: r, MinTrajectories: 30})
		if err != nil {
			t.Fatal(err)
		}
		c, err := convergenceRun(context.Background(), cfg, r, 100+r, 30)
		if err != nil {
			t.Fatal(err)
		}
		tab, _ := m.SampleCompressed(100 + r)
		fm := m.Map()
		st, _ := solve.NewStats(context.Background(), tab, fm, fm.Blocks(), 1)
		p, _ := solve.NewSolver(st, cfg.settings(cfg.C[0])).Solve(context.Background(), solve.Problem{Method: solve.Sitewise})
		s0 := [][]float64{{0}}
		exact := m.OptimalValue(s0)[0] - m.PolicyValue(policyOf(p), s0)[0]
		if math.Abs(exact-c.subopt) > 1e-9 {
			t.Errorf("seed %d: closed-form suboptimality %g, exact evaluation %g", r, c.subopt, exact)
		}
		q := make([]float64, p.A)
		p.QValues(1, s0[0], q)
		vhat := 0.0
		for _, v := range q {
			vhat = max(vhat, v)
		}
		if gap := m.OptimalValue(s0)[0] - vhat; math.Abs(gap-c.gap) > 1e-9 {
			t.Errorf("seed %d: value gap %g, want V* - max_a Qhat = %g", r, c.gap, gap)
		}
	}
}

// Freezing beta at the first N_min changes nothing there, and changes the
// other points' penalties only.
func TestBetaNMin(t *testing.T) {
	base, err := Run(context.Background(), tiny(Pessimism, 2))
	if err != nil {
		t.Fatal(err)
	}
	cfg := tiny(Pessimism, 2)
	cfg.BetaNMin = cfg.NMin[0]
	frozen, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range frozen.Points {
		b := base.Points[i]
		same := p.Suboptimality.Mean == b.Suboptimality.Mean
		if (p.NMin == cfg.NMin[0] || p.C == 0) && !same {
			t.Errorf("c = %g, N_min = %d: frozen beta gives %g, want %g", float64(p.C), p.NMin, float64(p.Suboptimality.Mean), float64(b.Suboptimality.Mean))
		}
	}
}

func TestScaleRewards(t *testing.T) {
	m, err := sim.NewTrap(sim.Params{Seed: 3, MinTrajectories: 500})
	if err != nil {
		t.Fatal(err)
	}
	tab, _ := m.SampleCompressed(4)
	orig, _ := m.SampleCompressed(4)
	mean := []float64{0.7, 0.65}
	scaleRewards(tab, mean, 0.5)
	for h := range tab.Steps {
		for j, r := range tab.Steps[h].Reward {
			a := tab.Steps[h].Action[j]
			want := mean[a] + 0.5*(orig.Steps[h].Reward[j]-mean[a])
			if math.Abs(r-want) > 1e-15 || r < 0 || r > 1 {
				t.Fatalf("step %d row %d: reward %g, want %g in [0,1]", h+1, j, r, want)
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Experiment: "nope"},
		{Experiment: Benchmark, Reps: 1},
		{Experiment: Benchmark, Workers: -1},
		{Experiment: Benchmark, C: []float64{1e-3, 2e-3}},
		{Experiment: Benchmark, NMin: []int{10}},
		{Experiment: Convergence, Trajectories: []int{10}},
		{Experiment: Convergence, FixedModel: true},
		{Experiment: Convergence, TrapCount: 3},
		{Experiment: Benchmark, BetaNMin: 100},
		{Experiment: Pessimism, BetaNMin: -1},
		{Experiment: Pessimism, C: []float64{-1}},
		{Experiment: Pessimism, NMin: []int{0}},
		{Experiment: Pessimism, RewardScale: 2},
		{Experiment: Pessimism, Xi: 1},
		{Experiment: Pessimism, Lambda: -1},
	} {
		if _, err := Run(context.Background(), c); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: error %v, want ErrConfig", c, err)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, tiny(Pessimism, 2)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: error %v, want context.Canceled", err)
	}
}
