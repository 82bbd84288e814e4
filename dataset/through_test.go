package dataset_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// TestUsePolicyThrough reads the benchmark scenario for an action-block
// policy through a binned map of two of its three columns: the
// statistics read the binned map's columns, the policy decides on its
// own three, and the report names the evaluation's map. Naming the
// policy's own map reads the data as UsePolicy does, and out of core is
// refused.
func TestUsePolicyThrough(t *testing.T) {
	ctx := context.Background()
	d, path := benchmarkData(t, 2)
	s := solve.DefaultSettings
	s.Workers = 2
	solved, err := d.Solve(ctx, s, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	p := solved.Policy
	binned := features.Spec{Kind: features.Binned, StateColumns: []string{"s2", "s1"},
		Bins: []features.Bins{{Column: "s2", Cuts: []float64{0.3, 0.6}}, {Column: "s1", Cuts: []float64{0.5}}}}
	var o dataset.Options
	o.Workers = 2
	o.UsePolicyThrough(p, binned)
	dt, err := dataset.Open(ctx, []string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := dt.CheckPolicy(p, "p"); err != nil {
		t.Fatal(err)
	}
	if dt.Table().W != 2 || dt.PolicyRows().W != 3 || dt.Map().Kind != features.Binned {
		t.Fatalf("read %d state columns for a %s map and %d for the policy, want 2 binned and 3", dt.Table().W, dt.Map().Kind, dt.PolicyRows().W)
	}
	if got, want := dt.PolicyRows().Steps[0].State[:3], d.Table().Steps[0].State[:3]; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("the policy's first state %v, want %v", got, want)
	}
	if got, want := dt.Table().Steps[0].State[:2], d.Table().Steps[0].State[:3]; got[0] != want[1] || got[1] != want[0] {
		t.Errorf("the evaluation's first state %v (s2, s1), want from %v", got, want)
	}
	rep, err := dt.Evaluate(ctx, p, s, eval.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m := dt.Map(); rep.EvaluationFeatures != m.Describe() || !rep.HasBounds || !rep.CellsPoolStates {
		t.Errorf("evaluation_features %q, bounds %v, cells pool states %v; want %q, binned bounds that pool states", rep.EvaluationFeatures, rep.HasBounds, rep.CellsPoolStates, m.Describe())
	}

	// Through its own map: UsePolicy's data and report.
	var own, plain dataset.Options
	own.Workers, plain.Workers = 2, 2
	own.UsePolicyThrough(p, features.Spec{Kind: features.ActionBlock, StateColumns: p.Map.StateColumns})
	plain.UsePolicy(p)
	var docs []string
	for _, o := range []dataset.Options{own, plain} {
		d, err := dataset.Open(ctx, []string{path}, o)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := d.Evaluate(ctx, p, s, eval.Options{Workers: 2, Bootstrap: 10, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		if d.PolicyRows() != d.Table() {
			t.Error("through the policy's own map, the policy's rows are not the table")
		}
		docs = append(docs, string(b))
	}
	if docs[0] != docs[1] {
		t.Errorf("through its own map:\n%s\nwith UsePolicy:\n%s", docs[0], docs[1])
	}

	o.OutOfCore = true
	var oe *dataset.OptionError
	if _, err := dataset.Open(ctx, []string{path}, o); !errors.As(err, &oe) || oe.Option != "OutOfCore" {
		t.Errorf("out of core through another map: %v, want an OptionError on OutOfCore", err)
	}
}

// TestOpenRefusesTwoRoles: a column named for two roles (as a policy's
// recorded columns and a flag can combine) is refused when the data are
// opened, naming both roles.
func TestOpenRefusesTwoRoles(t *testing.T) {
	_, path := benchmarkData(t, 2)
	var o dataset.Options
	o.Map = features.Spec{Kind: features.ActionBlock}
	o.Columns.Reward = "step"
	_, err := dataset.Open(context.Background(), []string{path}, o)
	var re *traj.RoleError
	if !errors.As(err, &re) || re.Column != "step" || re.Roles != [2]string{"step", "reward"} {
		t.Fatalf("Open with the reward column %q: %v, want a RoleError for step and reward", "step", err)
	}
}

// TestDeclaredCheckEval: a map named to evaluate a policy through is not
// checked against the policy's own, its horizon still is; without one,
// CheckEval is Check.
func TestDeclaredCheckEval(t *testing.T) {
	p := &solve.Policy{H: 3, A: 2, Map: features.Map{Kind: features.ActionBlock, StateColumns: []string{"s1", "s2"}}}
	through := dataset.Declared{Features: "binned", State: "s1", Bins: []string{"s1:0.5"}}
	if err := through.CheckEval(p); err != nil {
		t.Errorf("through a binned map: %v", err)
	}
	if err := through.Check(p); err == nil {
		t.Error("Check of a binned map against an action-block policy: no error")
	}
	var oe *dataset.OptionError
	through.Horizon = 4
	if err := through.CheckEval(p); !errors.As(err, &oe) || oe.Option != "Declared.Horizon" {
		t.Errorf("through, another horizon: got %v, want an OptionError on Declared.Horizon", err)
	}
	if err := (dataset.Declared{State: "s2"}).CheckEval(p); !errors.As(err, &oe) || oe.Option != "Declared.State" {
		t.Errorf("no map named, other state columns: got %v, want an OptionError on Declared.State", err)
	}
}

// TestViewPolicySteps: a step outside 1..H is an OptionError on Steps.
func TestViewPolicySteps(t *testing.T) {
	p := &solve.Policy{H: 3, A: 2, Map: features.Map{Kind: features.ActionBlock, StateColumns: []string{"s1"}}}
	var oe *dataset.OptionError
	if _, err := dataset.ViewPolicy(p, []int{2, 4}, 0); !errors.As(err, &oe) || oe.Option != "Steps" || oe.Value != "4" {
		t.Errorf("step 4 of 3: got %v, want an OptionError on Steps 4", err)
	}
}
