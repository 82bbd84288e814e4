package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A solve whose Lambda is singular at several (step, group) cells reports
// the cell a single worker reaches first: the same message with --workers 1
// and with several workers, run after run, in memory, out of core and in
// the lockstep sweep of --c auto.
func TestSolveErrorAnyWorkers(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "5,5,5")
	out := filepath.Join(dir, "policy.parquet")
	for _, extra := range [][]string{nil, {"--method", "pooled"}, {"--out-of-core"}, {"-c", "auto"}} {
		want := ""
		for _, w := range []string{"1", "4"} {
			for run := 0; run < 20; run++ {
				args := append([]string{"solve", "--lambda", "1e-300", "--workers", w, "-o", out}, extra...)
				code, _, stderr := grmdp(t, append(args, data)...)
				got := lastLine(stderr)
				if code == 0 || !strings.Contains(got, "not positive definite") {
					t.Fatalf("%v, workers %s: exit %d, stderr %q; want a singular Lambda", extra, w, code, stderr)
				}
				if want == "" {
					want = got
				} else if got != want {
					t.Fatalf("%v, workers %s, run %d: %q, want %q", extra, w, run, got, want)
				}
			}
		}
	}
}
