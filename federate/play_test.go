package federate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// fakeParts records the parts Play asks for; its step folds nothing, and
// its site part fails when fail is set.
type fakeParts struct {
	dir   string
	calls []string
	fail  bool
}

func (f *fakeParts) Site(_ context.Context, j *Job, i int, out string) error {
	if f.fail {
		return errors.New("no data")
	}
	f.calls = append(f.calls, fmt.Sprintf("site %s %s", j.Sites[i], filepath.Base(filepath.Dir(out))))
	return nil
}

func (f *fakeParts) Step(_ context.Context, _ *Job, msgs []string) error {
	f.calls = append(f.calls, fmt.Sprintf("step %d", len(msgs)))
	return nil
}

// TestPlay checks that Play asks every site, then the step, with the
// round's messages in a directory of its own, that a step that leaves the
// job where it was stops it, and that an error names the part and the
// round.
func TestPlay(t *testing.T) {
	dir := t.TempDir()
	j, err := New(Job{Method: solve.Sitewise, H: 2, Map: features.Map{Kind: features.Tabular, A: 2, S: 2}, Lambda: 1, Xi: 0.05, Fallback: solve.FallbackBehaviour,
		Sites: []string{"a", "b"}, MinSites: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := Create(dir, j); err != nil {
		t.Fatal(err)
	}
	f := &fakeParts{}
	err = Play(context.Background(), dir, t.TempDir(), f)
	if want := "federate: the step of round 1 left the job at round 0"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
	if want := []string{"site a round-000", "site b round-000", "step 2"}; !slices.Equal(f.calls, want) {
		t.Errorf("parts played %q, want %q", f.calls, want)
	}
	err = Play(context.Background(), dir, t.TempDir(), &fakeParts{fail: true})
	if want := "site a, round 1: no data"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

// TestLocalDataNamesTheSites checks that Local.Run refuses data that do
// not name the job's sites one for one, before any part runs.
func TestLocalDataNamesTheSites(t *testing.T) {
	dir := t.TempDir()
	j, err := New(Job{Method: solve.Sitewise, H: 2, Map: features.Map{Kind: features.Tabular, A: 2, S: 2}, Lambda: 1, Xi: 0.05, Fallback: solve.FallbackBehaviour,
		Sites: []string{"a", "b"}, MinSites: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := Create(dir, j); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		data    map[string]string
		site    string
		unknown bool
	}{
		{map[string]string{"a": "x", "b": "y", "d": "z", "c": "z"}, "c", true},
		{map[string]string{"a": "x"}, "b", false},
	} {
		err := (&Local{Dir: dir, Data: tc.data}).Run(context.Background())
		var de *DataError
		if !errors.As(err, &de) || de.Site != tc.site || de.Unknown != tc.unknown {
			t.Errorf("data %v: error %v, want a DataError on site %s (unknown %v)", tc.data, err, tc.site, tc.unknown)
		}
	}
}
