package federate

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// TestNewAsksWhatIsMissing checks that New leaves to the shape round
// exactly the sizes the settings do not give, and takes A from the
// action labels.
func TestNewAsksWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		j    Job
		want []string
	}{
		{"every size", Job{H: 3, Map: features.Map{Kind: features.Tabular, A: 2, S: 4}}, nil},
		{"tabular without sizes", Job{Map: features.Map{Kind: features.Tabular}}, []string{AskH, AskA, AskS}},
		{"labels give A", Job{Map: features.Map{Kind: features.ActionBlock, P: 2, StateColumns: []string{"s1", "s2"}}, Rules: Rules{ActionLabels: []string{"b", "a"}}}, []string{AskH}},
	} {
		tc.j.Lambda, tc.j.Xi, tc.j.Fallback, tc.j.Sites, tc.j.MinSites = 1, 0.05, solve.FallbackBehaviour, []string{"a"}, 1
		j, err := New(tc.j)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(j.Ask, tc.want) || j.ID == "" || j.FormatVersion != FormatVersion {
			t.Errorf("%s: Ask %v, ID %q, version %d; want Ask %v, an ID, version %d", tc.name, j.Ask, j.ID, j.FormatVersion, tc.want, FormatVersion)
		}
		if tc.j.Rules.ActionLabels != nil && (j.Map.A != len(tc.j.Rules.ActionLabels) || !slices.IsSorted(j.Rules.ActionLabels)) {
			t.Errorf("%s: A = %d, labels %q; want the %d labels, sorted", tc.name, j.Map.A, j.Rules.ActionLabels, len(tc.j.Rules.ActionLabels))
		}
	}
}

// TestBeginStepCleansAndLocks checks that a step's beginning removes the
// temporary files a killed step left, holds the lock until released, and
// that a finished job without its policy is reported.
func TestBeginStepCleansAndLocks(t *testing.T) {
	dir := t.TempDir()
	j, err := New(Job{Method: solve.Sitewise, H: 2, Map: features.Map{Kind: features.Tabular, A: 2, S: 2}, Lambda: 1, Xi: 0.05, Fallback: solve.FallbackBehaviour,
		Sites: []string{"a", "b", "c"}, MinSites: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := Create(dir, j); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "."+StateFile+".tmp-123")
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, s, unlock, err := BeginStep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale temporary file is still there (%v)", err)
	}
	if _, _, _, err := BeginStep(dir); !errors.Is(err, ErrRefused) {
		t.Errorf("a second step began while the first held the lock: %v", err)
	}
	unlock()
	if OutputsMissing(dir, j, s) {
		t.Errorf("a job at round 0 reported as finished without its policy")
	}
	s.Round = j.Rounds()
	if !OutputsMissing(dir, j, s) {
		t.Errorf("a finished job without its policy not reported")
	}
}

// TestParseTask checks the refusals of a vantage6 task's input.
func TestParseTask(t *testing.T) {
	for _, in := range []string{`{`, `{"method": "central", "job": {}, "state": {}, "site": "a"}`, `{"method": "site", "job": {}, "site": "a"}`} {
		if _, err := ParseTask([]byte(in)); !errors.Is(err, ErrBadTask) {
			t.Errorf("%s: got %v, want ErrBadTask", in, err)
		}
	}
	task, err := ParseTask([]byte(`{"method": "site", "job": {}, "state": {}, "site": "a", "eval": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Unpack(t.TempDir()); !errors.Is(err, ErrBadTask) {
		t.Errorf("an evaluation round without the policy's bytes: got %v, want ErrBadTask", err)
	}
}

// TestNewRefuses checks that New refuses, in the terms of the field to
// change, the settings a job cannot run with.
func TestNewRefuses(t *testing.T) {
	ok := Job{Method: solve.Sitewise, Map: features.Map{Kind: features.Tabular}, Lambda: 1, Xi: 0.05, Fallback: solve.FallbackBehaviour,
		Sites: []string{"a", "b", "c"}, MinSites: 3}
	for _, tc := range []struct {
		name  string
		edit  func(j *Job)
		field string
	}{
		{"lambda", func(j *Job) { j.Lambda = 0 }, "Lambda"},
		{"min count", func(j *Job) { j.Disclosure.MinCount = -1 }, "Disclosure.MinCount"},
		{"min sites", func(j *Job) { j.MinSites = 0 }, "MinSites"},
		{"too few sites", func(j *Job) { j.MinSites = 4 }, "MinSites"},
		{"action-block columns", func(j *Job) { j.Map.Kind = features.ActionBlock }, "StateColumns"},
		{"precomputed D", func(j *Job) { j.Map.Kind = features.Precomputed }, "D"},
		{"D of another map", func(j *Job) { j.Map.D = 2 }, "D"},
		{"quantile bins", func(j *Job) {
			j.Map = features.Map{Kind: features.Binned, StateColumns: []string{"x"}, Bins: []features.Bins{{Column: "x", Quantiles: 4}}}
		}, "Bins"},
		{"S of another map", func(j *Job) { j.Map = features.Map{Kind: features.Indicator, S: 3} }, "S"},
		{"a site twice", func(j *Job) { j.Sites = []string{"a", "b", "a"} }, "Sites"},
		{"an empty site", func(j *Job) { j.Sites = []string{"a", "", "b"} }, "Sites"},
		{"no labels", func(j *Job) { j.Rules.ActionLabels = []string{} }, "Rules.ActionLabels"},
		{"an empty label", func(j *Job) { j.Rules.ActionLabels = []string{"x", ""} }, "Rules.ActionLabels"},
		{"a label twice", func(j *Job) { j.Rules.ActionLabels = []string{"x", "y", "x"} }, "Rules.ActionLabels"},
		{"A and labels", func(j *Job) { j.Map.A, j.Rules.ActionLabels = 3, []string{"x", "y"} }, "Map.A"},
	} {
		j := ok
		tc.edit(&j)
		_, err := New(j)
		var se *solve.SettingError
		var fe *features.SpecError
		var je *SettingError
		field := ""
		switch {
		case errors.As(err, &se):
			field = se.Setting
		case errors.As(err, &fe):
			field = fe.Field
		case errors.As(err, &je):
			field = je.Field
		}
		if field != tc.field {
			t.Errorf("%s: error %v, want one on %s", tc.name, err, tc.field)
		}
	}
	if _, err := New(ok); err != nil {
		t.Errorf("a job it can run: %v", err)
	}
}

// A job without a Fallback is one under behaviour, as the solve takes it.
func TestNewWithoutFallback(t *testing.T) {
	_, err := New(Job{Method: solve.Sitewise, H: 2, Map: features.Map{Kind: features.Tabular, A: 2, S: 2}, Lambda: 1, Xi: 0.05,
		Sites: []string{"a", "b"}, MinSites: 2})
	if err != nil {
		t.Fatalf("New without a Fallback: %v", err)
	}
}
