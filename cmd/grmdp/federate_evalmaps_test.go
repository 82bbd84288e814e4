//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFederateEvalMapsEqualsEval: federate run --eval (each part a
// separate process) of a cluster policy on a binned job (an indicator map:
// identification bounds and the count-based support) and on a precomputed
// job (whose blocks only all sites' rows show) gives grmdp eval
// --bootstrap 0 --permutations 0 on all the rows, as sameEvalJSON checks
// (no disclosure control). Every map and setting is checked at the library
// level: federate.TestEvalMapsEqualCentral.
func TestFederateEvalMapsEqualsEval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedMapSites(t, filepath.Join(dir, "binned"), false)
	pnames, pdirs := fedMapSites(t, filepath.Join(dir, "phi"), true)
	common := []string{"--method", "cluster", "--min-count", "0", "--min-rows", "0"}
	for _, tc := range []struct {
		name        string
		names, dirs []string
		settings    []string
	}{
		{"binned", names, dirs, append(binnedJobFlags, common...)},
		{"precomputed", pnames, pdirs, append([]string{"--features", "precomputed", "--dim", "4", "--horizon", "4", "--actions", "3"}, common...)},
	} {
		clusters := filepath.Join(dir, tc.name+"-clusters.csv")
		os.WriteFile(clusters, []byte("site,cluster\n"+tc.names[0]+",a\n"+tc.names[2]+",a\n"+tc.names[1]+",b\n"), 0o644)
		job := filepath.Join(dir, "job-"+tc.name)
		mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(tc.names, ","), "-o", job, "--clusters", clusters}, tc.settings...)...)
		policy, _ := fedRunEval(t, bin, job, tc.names, tc.dirs)
		central, got := evalBoth(t, bin, job, policy, tc.dirs)
		sameEvalJSON(t, tc.name, central, got)
		if bounds := strings.Contains(got, `"lower": null`); bounds == (tc.name == "binned") {
			t.Fatalf("%s: identification bounds null %v:\n%s", tc.name, bounds, got)
		}
	}
}
