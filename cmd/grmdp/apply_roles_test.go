package main

import (
	"path/filepath"
	"testing"
)

// apply refuses a column named for two roles as solve does: a usage
// error naming both flags and the column, nothing written.
func TestApplyRefusesTwoRoles(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "-o", pol, bad("good.parquet"))
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"site is the action", []string{"--site-col", "action"}, []string{"--site-col", "--action-col", `"action"`}},
		{"step is a state column", []string{"--step-col", "s1"}, []string{"the policy's state column", "--step-col", `"s1"`}},
		{"action is the traj column", []string{"--nulls", "truncate", "--action-col", "traj"}, []string{"the policy's traj column", "--action-col", `"traj"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"apply", "--policy", pol, "-o", filepath.Join(out, "a.parquet")}, c.args...)
			code, stdout, stderr := grmdp(t, append(args, bad("good.parquet"))...)
			checkFailure(t, code, stderr, exitUsage, out, c.want...)
			if stdout != "" {
				t.Errorf("a usage error printed to stdout:\n%s", stdout)
			}
		})
	}
}
