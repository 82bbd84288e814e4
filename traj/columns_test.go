package traj_test

import (
	"errors"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

func TestColumnsCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     traj.Columns
		state []string
		want  *traj.RoleError
	}{
		{"defaults", traj.Columns{}, []string{"s1", "s2"}, nil},
		{"two roles", traj.Columns{Traj: "site"}, nil, &traj.RoleError{Column: "site", Roles: [2]string{"site", "traj"}}},
		{"state and a role", traj.Columns{}, []string{"reward"}, &traj.RoleError{Column: "reward", Roles: [2]string{"reward", "state"}}},
		{"state twice", traj.Columns{}, []string{"x", "x"}, &traj.RoleError{Column: "x", Roles: [2]string{"state", "state"}}},
	} {
		err := tc.c.Check(tc.state)
		var got *traj.RoleError
		if !errors.As(err, &got) && tc.want != nil || err != nil && tc.want == nil {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			continue
		}
		if tc.want != nil && *got != *tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, *got, *tc.want)
		}
	}
}
