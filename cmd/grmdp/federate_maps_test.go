//go:build unix

package main

// The feature maps and settings of a federated job beyond tabular,
// indicator and action-block, through the commands: federate run over
// the sites' folders equals solve --min-count K for the binned and
// soft-binned maps with explicit cut points, the precomputed map and
// --stationary; quantile cut points are refused at federate init with the
// reason and the remedy.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// fedMapSites writes three sites' rows (H = 4, A = 3) to DIR/<site>/part.parquet
// with the state columns lactate and sofa (list = false) or one list
// column phi of 3 x 4 values on the simplex (list = true), whose supports
// differ by site so that only all sites together show the blocks
// {0, 1} and {2, 3}. It returns the site names and folders.
func fedMapSites(t *testing.T, dir string, list bool) ([]string, []string) {
	t.Helper()
	const H, A, D = 4, 3, 4
	rng := rand.New(rand.NewPCG(11, 3))
	patterns := [][][]int{{{0, 1}, {2}, {3}}, {{2, 3}, {0}, {1}}, {{0}, {1}, {2}, {3}}}
	var names, dirs []string
	for k, name := range fedSiteNames {
		c := &traj.Chunk{Src: traj.Origin{File: name}, W: 2}
		cols := []string{"lactate", "sofa"}
		if list {
			c.W, cols = A*D, []string{"phi"}
		}
		for tr := 0; tr < []int{220, 160, 90}[k]; tr++ {
			for h := 1; h <= H; h++ {
				addRow(c, name, tr, h, min(rng.IntN(A+1), A-1), rng.Float64())
				if !list {
					c.State = append(c.State, 5*rng.Float64()*rng.Float64(), float64(rng.IntN(10)))
					continue
				}
				for a := 0; a < A; a++ {
					phi := make([]float64, D)
					pat := patterns[k][rng.IntN(len(patterns[k])-1)]
					if rng.IntN(30) == 0 {
						pat = patterns[k][len(patterns[k])-1]
					}
					for _, i := range pat {
						phi[i] = 1 / float64(len(pat))
					}
					c.State = append(c.State, phi...)
				}
			}
		}
		d, file := siteFile(t, dir, name)
		writeSiteTable(t, file, c, cols, list, A, H)
		names, dirs = append(names, name), append(dirs, d)
	}
	return names, dirs
}

// TestFederateRunMapsEqualSolve: federate run (each part a separate
// process) equals solve --min-count K on all the rows, bit for bit in w,
// m, Lambda^{-1}, the behaviour table and every decision, for the binned
// and soft-binned maps with explicit cut points, the precomputed map
// (whose blocks no one site's rows show) and --stationary, each with a
// featurewise method with K = 5 and a PEVI method with K = 0. (Every
// method of every map, K = 0 and 5, is checked at the library level:
// federate.TestFederatedMapsEqualCentral.)
func TestFederateRunMapsEqualSolve(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedMapSites(t, filepath.Join(dir, "binned"), false)
	pnames, pdirs := fedMapSites(t, filepath.Join(dir, "phi"), true)
	bnames, bdirs := fedSetup(t, filepath.Join(dir, "bench"))
	bins := []string{"--bins", "lactate:1,2.5,4", "--bins", "sofa:2,6"}
	common := []string{"--horizon", "4", "--actions", "3"}
	cases := []struct {
		name        string
		names, dirs []string
		central     []string // the data flags of solve
		init        []string // federate init's extra flags
		methods     []string
	}{
		{"binned", names, dirs, append(append([]string{"--features", "binned"}, bins...), common...), nil, []string{"sitewise", "pevi-min"}},
		{"soft-binned", names, dirs, append(append([]string{"--features", "soft-binned"}, bins...), common...), nil, []string{"pooled", "pevi-avg"}},
		{"precomputed", pnames, pdirs, append([]string{"--features", "precomputed"}, common...), []string{"--dim", "4"}, []string{"cluster", "pevi-pooled"}},
		{"stationary", bnames, bdirs, []string{"--features", "action-block", "--state", strings.Join(benchCols, ","), "--horizon", "7", "--actions", "10", "--stationary"},
			nil, []string{"sitewise", "pevi-pooled"}},
	}
	for _, tc := range cases {
		clusters := filepath.Join(dir, tc.name+"-clusters.csv")
		os.WriteFile(clusters, []byte("site,cluster\n"+tc.names[0]+",a\n"+tc.names[2]+",a\n"+tc.names[1]+",b\n"), 0o644)
		tb, err := readTable(tc.central, tc.dirs)
		if err != nil {
			t.Fatal(err)
		}
		// The first method with K = 5, the second with K = 0.
		for i, method := range tc.methods {
			K := 5 * (1 - i)
			name := fmt.Sprintf("%s-%s-K%d", tc.name, method, K)
			settings := append(append([]string{}, tc.central...), "--method", method, "--min-count", strconv.Itoa(K), "--min-rows", strconv.Itoa(2*K))
			if method == "cluster" {
				settings = append(settings, "--clusters", clusters)
			}
			job := filepath.Join(dir, "job-"+name)
			mustRun(t, append(append([]string{"federate", "init", "--sites", strings.Join(tc.names, ","), "-o", job}, settings...), tc.init...)...)
			fedRun(t, bin, job, tc.names, tc.dirs, "--workers", "1")
			// The steward's view says what a stationary or precomputed
			// message holds beyond one step's Gram.
			if want := map[string]string{"stationary": "each of the 7 steps", "precomputed": "blocks of the precomputed map"}[tc.name]; want != "" {
				out := mustRun(t, "federate", "show", filepath.Join(job, "messages", "round-000", "site-000.parquet"))
				if !strings.Contains(out, want) {
					t.Fatalf("%s: federate show lacks %q:\n%s", name, want, out)
				}
			}
			if K > 0 {
				// The case must withhold something to test disclosure.
				files, _ := filepath.Glob(filepath.Join(job, "messages", "round-*", "*.parquet"))
				withheld := 0
				for _, f := range files {
					inc, err := readMessage(f)
					if err != nil {
						t.Fatal(err)
					}
					withheld += inc.Msg.Suppressed
				}
				if withheld == 0 {
					t.Fatalf("%s: no feature withheld: the case does not test disclosure control", name)
				}
			}
			central := filepath.Join(dir, "central-"+name+".parquet")
			mustRun(t, append(append([]string{"solve", "-o", central}, settings...), tc.dirs...)...)
			want, got := readPolicyT(t, central), readPolicyT(t, filepath.Join(job, federate.PolicyFile))
			samePolicies(t, name, want, got)
			sameDecisions(t, name, tb, want, got)
			if fmt.Sprint(want.BlockLabels) != fmt.Sprint(got.BlockLabels) {
				t.Fatalf("%s: block labels %v, want %v", name, got.BlockLabels, want.BlockLabels)
			}
			if tc.name == "precomputed" && fmt.Sprint(got.BlockLabels) != "[0 0 1 1]" {
				t.Fatalf("%s: blocks %v: the case does not test the join of the sites' blocks", name, got.BlockLabels)
			}
		}
	}
}

// readTable reads the sites' folders as solve reads them under the data
// flags args (the map's state columns), for the decisions' comparison.
func readTable(args []string, dirs []string) (*traj.Table, error) {
	spec := traj.StateSpec{Columns: []string{"lactate", "sofa"}}
	switch args[1] {
	case "precomputed":
		spec = traj.StateSpec{Columns: []string{"phi"}, List: true}
	case "action-block":
		spec = traj.StateSpec{Columns: benchCols, NonzeroSum: true}
	}
	return parquetio.Read(context.Background(), dirs, traj.Options{State: spec})
}

// TestFederateInitMapRefusals: federate init refuses, with one line saying
// why and what to use instead, the settings that no site's sums give:
// quantile cut points (type-7 quantiles over every site's rows), and a
// precomputed map without its size.
func TestFederateInitMapRefusals(t *testing.T) {
	dir := t.TempDir()
	base := []string{"federate", "init", "--sites", "a,b,c", "--horizon", "4", "--actions", "3", "-o", filepath.Join(dir, "job")}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--features", "binned", "--bins", "lactate:q4"}, []string{"quantile", "every site's rows", "explicit cut points", "COL:c1,c2"}},
		{[]string{"--features", "soft-binned", "--bins", "lactate:1,2", "--bins", "sofa:q3"}, []string{"quantile", "explicit cut points"}},
		{[]string{"--features", "precomputed"}, []string{"--dim"}},
		{[]string{"--features", "tabular", "--num-states", "3", "--dim", "2"}, []string{"--dim: for the precomputed map only"}},
	} {
		code, _, errOut := grmdp(t, append(base, tc.args...)...)
		if code != exitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Fatalf("%v: exit %d, want %d with one line: %q", tc.args, code, exitUsage, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Fatalf("%v: %q lacks %q", tc.args, errOut, w)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "job", federate.JobFile)); err == nil {
			t.Fatalf("%v: a job was written", tc.args)
		}
	}
	// A job with explicit cut points carries them, and its sites read them.
	job := filepath.Join(dir, "binned")
	mustRun(t, "federate", "init", "--sites", "a,b,c", "--horizon", "4", "--actions", "3", "--features", "binned", "--bins", "lactate:1,2.5", "-o", job)
	j, _, err := federate.Load(job)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Map.Bins) != 1 || fmt.Sprint(j.Map.Bins[0].Cuts) != "[1 2.5]" || j.Map.Dim() != 9 {
		t.Fatalf("job map %+v", j.Map)
	}
}
