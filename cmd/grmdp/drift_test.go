package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// Results never drift: the policy, the evaluation, the comparison and the
// applied recommendations are bitwise identical for any number of workers,
// for the same rows shuffled within a file or split across several files
// given in any order, and across reruns. (TestSolveDeterministic checks the
// policy's bytes on one file; this test covers the other reports and the
// row order.)
func TestResultsDoNotDrift(t *testing.T) {
	dir := t.TempDir()
	data, model := simulated(t, dir, "benchmark", "--trajectories", "120,80,200")
	variants := rowVariants(t, dir, data)
	clusters := filepath.Join(dir, "clusters.csv")
	if err := os.WriteFile(clusters, []byte("site,cluster\n1,a\n2,a\n3,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// strip parses a JSON document and drops the keys that name paths or
	// record the command line or the input files (eval's in_sample tells
	// the policy's own files from copies of their rows), which differ
	// between runs by design.
	strip := func(js []byte, keys ...string) string {
		t.Helper()
		var doc map[string]any
		if err := json.Unmarshal(js, &doc); err != nil {
			t.Fatalf("%v in %s", err, js)
		}
		for _, k := range keys {
			delete(doc, k)
		}
		if ms, ok := doc["methods"].([]any); ok { // compare.json
			for _, m := range ms {
				delete(m.(map[string]any), "policy")
			}
		}
		out, _ := json.Marshal(doc)
		return string(out)
	}
	type run struct {
		variant string
		workers string
	}
	// Every worker count on the original file (1 twice: a rerun), and the
	// other row orders at 1 and 8 workers.
	var runs []run
	for _, w := range []string{"1", "2", "8", "1"} {
		runs = append(runs, run{"original", w})
	}
	for _, v := range []string{"shuffled", "split"} {
		for _, w := range []string{"1", "8"} {
			runs = append(runs, run{v, w})
		}
	}
	want := map[string]string{}
	check := func(what string, r run, got string) {
		t.Helper()
		if w, ok := want[what]; !ok {
			want[what] = got
		} else if got != w {
			t.Errorf("%s differs for %s rows with --workers %s:\n got %.300s\nwant %.300s", what, r.variant, r.workers, got, w)
		}
	}
	refPolicy := filepath.Join(dir, "ref.parquet")
	mustRun(t, "solve", "-o", refPolicy, data)
	var applied []byte
	for i, r := range runs {
		in := variants[r.variant]
		sub := filepath.Join(dir, fmt.Sprintf("run%d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		// The policy, through show --json.
		pol := filepath.Join(sub, "policy.parquet")
		mustRun(t, append([]string{"solve", "--workers", r.workers, "-o", pol}, in...)...)
		check("policy", r, strip([]byte(mustRun(t, "show", "--json", pol)), "settings", "sources"))
		// The evaluation of one policy, with Delta_h and its p-values.
		js := mustRun(t, append([]string{"eval", "--json", "--workers", r.workers, "--bootstrap", "20", "--permutations", "20",
			"--model", model, "--clusters", clusters, "--policy", refPolicy}, in...)...)
		check("eval --json", r, strip([]byte(js), "settings", "in_sample"))
		// Every method side by side.
		cmpDir := filepath.Join(sub, "compare")
		mustRun(t, append([]string{"compare", "--workers", r.workers, "--clusters", clusters, "-o", cmpDir}, in...)...)
		cj, err := os.ReadFile(filepath.Join(cmpDir, "compare.json"))
		if err != nil {
			t.Fatal(err)
		}
		check("compare.json", r, strip(cj))
		// The recommendations, read back in canonical row order; on the
		// original file the output's bytes must not depend on the workers.
		out := filepath.Join(sub, "applied.parquet")
		mustRun(t, append([]string{"apply", "--workers", r.workers, "--policy", refPolicy, "-o", out}, in...)...)
		check("apply output", r, appliedTable(t, out))
		if r.variant == "original" {
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if applied == nil {
				applied = b
			} else if !bytes.Equal(b, applied) {
				t.Errorf("apply --workers %s writes different bytes", r.workers)
			}
		}
	}
}

// rowVariants writes data's rows shuffled into one file, and shuffled and
// split across three files (whose names sort in another order than the
// rows), and returns the DATA arguments of each variant.
func rowVariants(t *testing.T, dir, data string) map[string][]string {
	t.Helper()
	all := readChunk(t, data)
	opts := parquetio.WriteOptions{StateColumns: []string{"s1", "s2", "s3"}, RowGroupRows: 500}
	rng := rand.New(rand.NewPCG(3, 4))
	perm := rng.Perm(all.Len())
	shuffled := filepath.Join(dir, "shuffled.parquet")
	if err := parquetio.WriteChunks(shuffled, []*traj.Chunk{all.Select(perm)}, opts); err != nil {
		t.Fatal(err)
	}
	perm = rng.Perm(all.Len())
	n := len(perm)
	splitDir := filepath.Join(dir, "split")
	if err := os.Mkdir(splitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for i, cut := range [][2]int{{0, n / 5}, {n / 5, n / 2}, {n / 2, n}} {
		p := filepath.Join(splitDir, []string{"c.parquet", "a.parquet", "b.parquet"}[i])
		// Two chunks, so two row groups, per file.
		lo, hi := cut[0], cut[1]
		mid := (lo + hi) / 2
		if err := parquetio.WriteChunks(p, []*traj.Chunk{all.Select(perm[lo:mid]), all.Select(perm[mid:hi])}, opts); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	return map[string][]string{
		"original": {data},
		"shuffled": {shuffled},
		"split":    {parts[1], parts[2], parts[0]},
	}
}

// appliedTable reads an apply output back as a table in canonical order,
// with recommended_action as the action and recommended_q as a state
// column, and returns it printed exactly (%#v prints every float64 in the
// shortest form that reads back to the same bits). The canonical order
// makes outputs of the same rows in different orders comparable.
func appliedTable(t *testing.T, path string) string {
	t.Helper()
	tb, err := parquetio.Read(context.Background(), []string{path}, traj.Options{
		Columns: traj.Columns{Action: parquetio.ColRecommendedAction},
		State:   traj.StateSpec{Columns: []string{"s1", "s2", "s3", parquetio.ColRecommendedQ}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tb.Sources = nil
	return fmt.Sprintf("%#v", *tb)
}
