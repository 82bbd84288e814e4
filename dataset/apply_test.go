package dataset_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// TestApplyRefusesTwoRoles: a column named for two roles among those
// apply reads is refused before anything is read or written, naming both
// roles as Open does.
func TestApplyRefusesTwoRoles(t *testing.T) {
	ctx := context.Background()
	d, path := benchmarkData(t, 2)
	s := solve.DefaultSettings
	s.Workers = 2
	solved, err := d.Solve(ctx, s, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	p := solved.Policy
	cases := []struct {
		name   string
		o      dataset.ApplyOptions
		column string
		roles  [2]string
	}{
		{"site is the action", dataset.ApplyOptions{Site: "action"}, "action", [2]string{"site", "action"}},
		{"step is a state column", dataset.ApplyOptions{Site: "site", Step: "s2"}, "s2", [2]string{"step", "state"}},
		{"site is the episode under a null policy", dataset.ApplyOptions{Site: "traj", Traj: "traj", Nulls: traj.NullsTruncate}, "traj", [2]string{"site", "traj"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.parquet")
			_, err := dataset.Apply(ctx, []string{path}, p, out, c.o)
			var re *traj.RoleError
			if !errors.As(err, &re) || re.Column != c.column || re.Roles != c.roles {
				t.Fatalf("Apply: %v, want a RoleError for %q as %v", err, c.column, c.roles)
			}
		})
	}
	// The episode column is read only under a null policy.
	if _, err := dataset.Apply(ctx, []string{path}, p, filepath.Join(t.TempDir(), "out.parquet"), dataset.ApplyOptions{Site: "site", Traj: "site"}); err != nil {
		t.Errorf("Apply with the episode column unread: %v", err)
	}
}
