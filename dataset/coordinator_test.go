package dataset_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/policyio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// TestStepJob plays a federated job through the library alone (each
// site's message with SiteMessage, each round folded with StepJob, the
// shape round first) and checks that the job's policy is the central
// solve's under the same disclosure control, bit for bit, and that its
// evaluation opens and folds.
func TestStepJob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := sim.New(sim.ScenarioBenchmark, sim.Params{Trajectories: []int{60, 40, 80}, Horizon: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	data, prefix := filepath.Join(dir, "data.parquet"), filepath.Join(dir, "site-")
	simd, err := dataset.WriteSimulation(ctx, m, 1, dataset.SimulationFiles{Data: data, SplitPrefix: prefix,
		Prepare: func(path string) error { return os.MkdirAll(filepath.Dir(path), 0o755) }})
	if err != nil {
		t.Fatal(err)
	}
	dc := solve.Disclosure{MinCount: 5, MinRows: 10}
	cols := m.Map().StateColumns
	s := solve.DefaultSettings
	jobDir := filepath.Join(dir, "job")
	j, err := federate.New(federate.Job{Method: solve.Sitewise, Map: features.Map{Kind: features.ActionBlock, StateColumns: cols, P: len(cols)},
		Lambda: s.Lambda, C: s.C, Xi: s.Xi, Fallback: s.Fallback, Columns: federate.Columns{Site: "site", Traj: "traj", Step: "step", Action: "action", Reward: "reward"},
		Sites: simd.Sites, Disclosure: dc, MinSites: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := federate.Create(jobDir, j); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.StepJob(ctx, jobDir, nil, dataset.CoordinatorOptions{}); !errors.Is(err, dataset.ErrNoMessages) {
		t.Fatalf("a step without messages: %v, want ErrNoMessages", err)
	}
	round := func(r int) *dataset.JobStep {
		t.Helper()
		var msgs []string
		for _, site := range simd.Sites {
			st, err := dataset.OpenSite(jobDir, site, "")
			if err != nil {
				t.Fatal(err)
			}
			msg, err := dataset.SiteMessage(ctx, []string{dataset.SplitPath(prefix, site)}, dataset.Options{Disclosure: dc}, st)
			if err != nil {
				t.Fatalf("round %d, site %s: %v", r, site, err)
			}
			out := filepath.Join(dir, fmt.Sprintf("msg-%d-%s.parquet", r, site))
			if _, err := dataset.WriteMessage(out, msg); err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, out)
		}
		step, err := dataset.StepJob(ctx, jobDir, msgs, dataset.CoordinatorOptions{Version: "test"})
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		var text bytes.Buffer
		if err := step.WriteText(&text); err != nil || text.Len() == 0 {
			t.Fatalf("round %d: WriteText: %q, %v", r, text.String(), err)
		}
		return step
	}
	var last *dataset.JobStep
	for r := 0; last == nil || last.Policy == nil; r++ {
		if r > 10 {
			t.Fatal("the job did not finish")
		}
		last = round(r)
	}

	d, err := dataset.Open(ctx, []string{data}, dataset.Options{Map: features.Spec{Kind: features.ActionBlock, StateColumns: cols}, Disclosure: dc})
	if err != nil {
		t.Fatal(err)
	}
	central, err := d.Solve(ctx, s, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	got, err := policyio.Read(filepath.Join(jobDir, federate.PolicyFile))
	if err != nil {
		t.Fatal(err)
	}
	want := central.Policy
	if len(got.Runs) != len(want.Runs) || math.Float64bits(got.Beta) != math.Float64bits(want.Beta) {
		t.Fatalf("job policy: %d runs, beta %v; central: %d runs, beta %v", len(got.Runs), got.Beta, len(want.Runs), want.Beta)
	}
	for r := range want.Runs {
		for h := range want.Runs[r].Steps {
			a, b := want.Runs[r].Steps[h], got.Runs[r].Steps[h]
			if !slices.Equal(bitsOf(a.W), bitsOf(b.W)) || !slices.Equal(bitsOf(a.M), bitsOf(b.M)) {
				t.Fatalf("run %d step %d: w %v, want %v", r, h+1, b.W, a.W)
			}
		}
	}

	if ev, err := dataset.ReadEvaluation(jobDir); err != nil || ev.State != nil {
		t.Fatalf("a job without an evaluation: %+v, %v", ev, err)
	}
	ev, err := dataset.OpenEvaluation(jobDir, filepath.Join(jobDir, federate.PolicyFile), dataset.EvalClusters{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.OpenEvaluation(jobDir, filepath.Join(jobDir, federate.PolicyFile), dataset.EvalClusters{}); !errors.Is(err, dataset.ErrEvalOpen) {
		t.Fatalf("a second evaluation: %v, want ErrEvalOpen", err)
	}
	for r := 0; r < ev.State.Rounds(ev.Job); r++ {
		last = round(100 + r)
	}
	if last.Evaluation == nil {
		t.Fatal("the evaluation's last round gave no result")
	}
	ev, err = dataset.ReadEvaluation(jobDir)
	if err != nil || ev.Text == nil || !strings.Contains(string(ev.JSON), `"federated"`) {
		t.Fatalf("the finished evaluation: %v; text %q", err, ev.Text)
	}
}

func bitsOf(x []float64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(v)
	}
	return out
}

// TestSiteDisclosure: a site's thresholds are raised to the job's unless
// stated, and a stated one below the job's is refused.
func TestSiteDisclosure(t *testing.T) {
	s := dataset.Site{Job: &federate.Job{Disclosure: solve.Disclosure{MinCount: 5, MinRows: 10}}}
	for _, c := range []struct {
		dc          solve.Disclosure
		count, rows bool
		want        solve.Disclosure
		wantOption  string
	}{
		{solve.Disclosure{MinCount: 3, MinRows: 20}, false, true, solve.Disclosure{MinCount: 5, MinRows: 20}, ""},
		{solve.Disclosure{MinCount: 7, MinRows: 1}, true, false, solve.Disclosure{MinCount: 7, MinRows: 10}, ""},
		{solve.Disclosure{MinCount: 3, MinRows: 20}, true, true, solve.Disclosure{}, "Disclosure.MinCount"},
		{solve.Disclosure{MinCount: 5, MinRows: 9}, true, true, solve.Disclosure{}, "Disclosure.MinRows"},
	} {
		got, err := s.Disclosure(c.dc, c.count, c.rows)
		var oe *dataset.OptionError
		switch {
		case c.wantOption != "" && (!errors.As(err, &oe) || oe.Option != c.wantOption):
			t.Errorf("%+v: got error %v, want an OptionError on %s", c.dc, err, c.wantOption)
		case c.wantOption == "" && (err != nil || got != c.want):
			t.Errorf("%+v: got %+v, %v, want %+v", c.dc, got, err, c.want)
		}
	}
}
