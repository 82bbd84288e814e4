//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
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
	common := []string{"--horizon", "4", "--actions", "3", "--method", "cluster", "--min-count", "0", "--min-rows", "0"}
	for _, tc := range []struct {
		name        string
		names, dirs []string
		settings    []string
	}{
		{"binned", names, dirs, append([]string{"--features", "binned", "--bins", "lactate:1,2.5,4", "--bins", "sofa:2,6"}, common...)},
		{"precomputed", pnames, pdirs, append([]string{"--features", "precomputed", "--dim", "4"}, common...)},
	} {
		clusters := filepath.Join(dir, tc.name+"-clusters.csv")
		os.WriteFile(clusters, []byte("site,cluster\n"+tc.names[0]+",a\n"+tc.names[2]+",a\n"+tc.names[1]+",b\n"), 0o644)
		job := filepath.Join(dir, "job-"+tc.name)
		mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(tc.names, ","), "-o", job, "--clusters", clusters}, tc.settings...)...)
		policy := filepath.Join(job, federate.PolicyFile)
		run := []string{"federate", "run", "--job", job, "--workers", "1", "--eval", policy}
		for i, n := range tc.names {
			run = append(run, "--site", n+"="+tc.dirs[i])
		}
		mustBin(t, bin, run...)
		central := mustRun(t, append([]string{"eval", "--policy", policy, "--bootstrap", "0", "--permutations", "0", "--json"}, tc.dirs...)...)
		got := mustBin(t, bin, "federate", "eval", "--job", job, "--json")
		sameEvalJSON(t, tc.name, central, got)
		if bounds := strings.Contains(got, `"lower": null`); bounds == (tc.name == "binned") {
			t.Fatalf("%s: identification bounds null %v:\n%s", tc.name, bounds, got)
		}
	}
}
