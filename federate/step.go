package federate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/textfmt"
	"github.com/grmdp/grmdp/traj"
)

// SolveFile is the finished job's solve summary, written beside its
// policy.
const SolveFile = "solve.json"

// New returns the job j describes, ready for [Create]: a fresh ID, this
// package's format version, the action labels sorted (the central
// solve's order) and A set to their number when the rules list them, and
// Ask listing the sizes j leaves to the sites' shape round (H; A; S for
// the tabular map: each when not positive). It refuses settings a job
// cannot run with: a [*solve.SettingError] on the solve settings or the
// disclosure thresholds, a [*SettingError] on MinSites, Sites (an empty
// name, a site listed twice), Rules.ActionLabels (none, an empty one, one listed
// twice) or Map.A (other than the number of labels), a
// [*features.SpecError] on a map that rounds cannot compute.
func New(j Job) (*Job, error) {
	if err := j.checkNew(); err != nil {
		return nil, err
	}
	j.FormatVersion, j.ID = FormatVersion, newID()
	if j.Rules.ActionLabels != nil {
		j.Rules.ActionLabels = slices.Sorted(slices.Values(j.Rules.ActionLabels))
		j.Map.A = len(j.Rules.ActionLabels)
	}
	j.Ask = nil
	if j.H < 1 {
		j.Ask = append(j.Ask, AskH)
	}
	if j.Map.A < 1 {
		j.Ask = append(j.Ask, AskA)
	}
	if j.Map.Kind == features.Tabular && j.Map.S < 1 {
		j.Ask = append(j.Ask, AskS)
	}
	return &j, nil
}

// A SettingError is a field of a [Job] that [New] refuses ([Job.Check]
// refuses its Sites alike).
type SettingError struct {
	Field string
	Err   error
}

func (e *SettingError) Error() string { return "federate: " + e.Field + " " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// checkNew checks what [New] refuses, in the terms of the field to change.
func (j *Job) checkNew() error {
	if err := settingsOf(j).Check(); err != nil {
		return err
	}
	if err := j.Disclosure.Check(); err != nil {
		return err
	}
	if err := checkSites(j.Sites); err != nil {
		return err
	}
	switch {
	case j.MinSites < 1:
		return &SettingError{"MinSites", fmt.Errorf("must be at least 1, got %d", j.MinSites)}
	case len(j.Sites) < j.MinSites:
		return &SettingError{"MinSites", fmt.Errorf("%d is more than the job's %d sites", j.MinSites, len(j.Sites))}
	}
	if l := j.Rules.ActionLabels; l != nil {
		x, twice := repeated(l)
		switch {
		case len(l) == 0:
			return &SettingError{"Rules.ActionLabels", errors.New("lists no label")}
		case slices.Contains(l, ""):
			return &SettingError{"Rules.ActionLabels", errors.New("has an empty label")}
		case twice:
			return &SettingError{"Rules.ActionLabels", fmt.Errorf("lists %q twice", x)}
		case j.Map.A > 0 && j.Map.A != len(l):
			return &SettingError{"Map.A", fmt.Errorf("%d with %d action labels: the labels are the actions; leave it out", j.Map.A, len(l))}
		}
	}
	m := j.Map
	spec := func(field, format string, args ...any) error {
		return &features.SpecError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case m.Kind == features.ActionBlock && m.StateColumns == nil:
		return spec("StateColumns", "the action-block map of a federated job needs its state columns")
	case m.Kind == features.Precomputed && m.D < 1:
		return spec("D", "the precomputed map of a federated job needs the number of features per action")
	case m.D != 0 && m.Kind != features.Precomputed:
		return spec("D", "for the precomputed map only, not %s", m.Kind)
	case features.Unresolved(m.Bins):
		return spec("Bins", "quantile cut points (COL:qK) are type-7 quantiles over every site's rows, which no sum of one site's rows gives: a federated job needs explicit cut points, COL:c1,c2,...")
	case m.S > 0 && m.Kind != features.Tabular:
		return spec("S", "for the tabular map only, not %s", m.Kind)
	}
	return nil
}

// checkSites refuses an empty site name and a site listed twice.
func checkSites(sites []string) error {
	if slices.Contains(sites, "") {
		return &SettingError{"Sites", errors.New("has an empty site name")}
	}
	if x, ok := repeated(sites); ok {
		return &SettingError{"Sites", fmt.Errorf("lists site %s twice", textfmt.Quote(x))}
	}
	return nil
}

// repeated returns the first item of xs that an earlier item repeats.
func repeated(xs []string) (string, bool) {
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if seen[x] {
			return x, true
		}
		seen[x] = true
	}
	return "", false
}

// RulesOf returns the rules of a job whose sites number their steps as
// fs says, treat a NULL as nulls says and have the action labels labels
// (nil: integer actions; [New] sorts them).
func RulesOf(fs traj.FirstStep, nulls traj.NullPolicy, labels []string) Rules {
	first := "detect"
	switch fs {
	case traj.StepsFrom0:
		first = "0"
	case traj.StepsFrom1:
		first = "1"
	}
	return Rules{FirstStep: first, Nulls: nulls.String(), ActionLabels: labels}
}

// ClustersOf returns the clusters of the cluster method that the groups
// of sites in the cluster file path (cut as o says) make (with
// singletons when allowSingletons).
func ClustersOf(path string, o cluster.Options, sites []string, allowSingletons bool) ([]Cluster, error) {
	a, err := cluster.Load(path, o)
	if err != nil {
		return nil, err
	}
	groups, names, _, err := a.Groups(sites, allowSingletons)
	if err != nil {
		return nil, err
	}
	return NamedClusters(groups, names, sites), nil
}

// stepFiles are the files a step writes, by folder of the job: the job's
// state and, after the last round, its policy and solve summary; an
// evaluation's state and result.
var stepFiles = map[string][]string{
	"":      {StateFile, PolicyFile, SolveFile},
	EvalDir: {EvalStateFile, EvalResultFile},
}

// BeginStep takes the step lock of the job in dir ([LockFile]), removes the
// temporary files a step stopped by SIGKILL left beside the files steps
// write (fileio's .NAME.tmp-*: no other step is writing them while the
// lock is held) and loads the job. The returned function releases the
// lock.
func BeginStep(dir string) (j *Job, s *State, unlock func(), err error) {
	unlock, err = lock(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	for sub, names := range stepFiles {
		for _, name := range names {
			m, _ := filepath.Glob(filepath.Join(dir, sub, "."+name+".tmp-*"))
			for _, p := range m {
				os.Remove(p)
			}
		}
	}
	if j, s, err = Load(dir); err != nil {
		unlock()
		return nil, nil, nil, err
	}
	return j, s, unlock, nil
}

// OutputsMissing reports whether the job in dir is done by its state s
// while its policy was never written: a step stopped after saving the
// final state, which is saved first ([Advance]). The state holds the
// result, so the policy is written from it.
func OutputsMissing(dir string, j *Job, s *State) bool {
	if !s.Done(j) {
		return false
	}
	return !slices.ContainsFunc([]string{filepath.Join(dir, PolicyFile), filepath.Join(dir, EvalDir)}, func(p string) bool {
		_, err := os.Lstat(p)
		return err == nil
	})
}

// Advance folds the messages of the job's current round, a shape round
// or a round of the job's steps and value, into the job in dir and saves
// what it decides: after the shape round, the job with its sizes set
// and its state before round 0; after another round, the next state
// ([Fold], [SaveState]). It returns the job and
// its state as saved. The state is the job's commit point: after the
// value round it is saved before the policy is written, so that the
// policy never exists while the state says the value round is open, and
// a step stopped between the two writes the policy from the state when
// run again ([OutputsMissing]).
func Advance(ctx context.Context, dir string, j *Job, s *State, in []Incoming) (*Job, *State, error) {
	if j.ShapeOpen() {
		nj, err := foldShape(j, s, in)
		if err != nil {
			return nil, nil, err
		}
		if err := setShape(dir, j, nj); err != nil {
			return nil, nil, err
		}
		return nj, NewState(nj), nil
	}
	next, err := Fold(ctx, j, s, in)
	if err != nil {
		return nil, nil, err
	}
	if err := SaveState(dir, next); err != nil {
		return nil, nil, err
	}
	return j, next, nil
}

// Defaults of a job's settings: the disclosure thresholds a site applies
// unless the job or the site asks for stricter ones, and the fewest sites
// a job may have.
const (
	DefaultMinCount = 5
	DefaultMinRows  = 10
	DefaultMinSites = 3
)
