package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// goldenPolicies is the file that pins every method's policy on the test
// data sets: its vectors (w, m and what a baseline's penalty needs), beta,
// the groups and a digest of every row's decision. It was written by the
// code before the core was rewritten; any refactoring must reproduce it
// bit for bit (encoding/json prints each float64 in the shortest form that
// reads back to the same bits). go test -run TestGoldenPolicies -update
// rewrites it, which only a change of results should ever do.
const goldenPolicies = "testdata/golden-policies.json"

// goldenCase is one solve: a data set, a method and extra flags.
type goldenCase struct {
	data, features, method string
	extra                  []string
}

func (c goldenCase) name() string {
	return strings.Join(append([]string{c.data, c.features, c.method}, c.extra...), " ")
}

func TestGoldenPolicies(t *testing.T) {
	if testing.Short() {
		t.Skip("solves every method on every map")
	}
	dir := t.TempDir()
	sets := map[string]string{}
	sets["benchmark"], _ = simulated(t, dir, "benchmark", "--trajectories", "60,40,90")
	sets["formulary"], _ = simulated(t, dir, "formulary", "--min-trajectories", "20")
	sets["convergence"], _ = simulated(t, dir, "convergence", "--trajectories", "30,50")
	sets["trap"], _ = simulated(t, dir, "trap")
	sets["precomputed"] = bad("good-precomputed.parquet")
	maps := map[string]string{"benchmark": "action-block", "formulary": "tabular", "convergence": "indicator",
		"trap": "action-block", "precomputed": "precomputed"}
	methods := []string{"sitewise", "cluster", "pooled", "pevi-pooled", "pevi-avg", "pevi-min", "behaviour"}

	var cases []goldenCase
	for _, set := range []string{"benchmark", "formulary", "convergence", "trap", "precomputed"} {
		for _, m := range methods {
			cases = append(cases, goldenCase{data: set, features: maps[set], method: m})
			if set != "precomputed" {
				cases = append(cases, goldenCase{data: set, features: maps[set], method: m, extra: []string{"--out-of-core"}})
			}
		}
	}
	for _, set := range []string{"benchmark", "formulary"} {
		cases = append(cases,
			goldenCase{data: set, features: maps[set], method: "sitewise", extra: []string{"--stationary"}},
			goldenCase{data: set, features: maps[set], method: "cluster", extra: []string{"--stationary"}},
			goldenCase{data: set, features: maps[set], method: "sitewise", extra: []string{"--c-path", "1e-5:1e-2:4"}},
			goldenCase{data: set, features: maps[set], method: "pevi-min", extra: []string{"--c-path", "1e-5:1e-2:3"}},
			goldenCase{data: set, features: maps[set], method: "sitewise", extra: []string{"--fallback", "lowest"}},
			goldenCase{data: set, features: maps[set], method: "pooled", extra: []string{"--beta", "0.3", "--lambda", "0.5"}},
		)
	}

	clusters := map[string]string{}
	got := map[string]any{}
	for i, c := range cases {
		data := sets[c.data]
		args := []string{"solve", "--features", c.features, "--method", c.method}
		if c.method == "cluster" {
			if clusters[c.data] == "" {
				clusters[c.data] = writeHalfClusters(t, dir, c.data, c.features, data)
			}
			args = append(args, "--clusters", clusters[c.data])
		}
		pol := filepath.Join(dir, fmt.Sprintf("p%d.parquet", i))
		args = append(append(args, c.extra...), "-o", pol, data)
		out := mustRun(t, args...)
		entry := policyVectors(t, pol)
		if strings.HasPrefix(strings.Join(c.extra, " "), "--c-path") {
			entry["c_path_table"] = strings.ReplaceAll(out, dir, "DIR")
		}
		applied := filepath.Join(dir, fmt.Sprintf("a%d.parquet", i))
		mustRun(t, "apply", "--policy", pol, "-o", applied, data)
		entry["decisions"] = decisionDigest(t, applied)
		got[c.name()] = entry
	}

	js, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(goldenPolicies, append(js, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(goldenPolicies)
	if err != nil {
		t.Fatalf("%v (go test -run TestGoldenPolicies -update writes it)", err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	var gotDoc map[string]any
	if err := json.Unmarshal(js, &gotDoc); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		g, ok := gotDoc[k]
		if !ok {
			t.Errorf("%s: no longer solved", k)
			continue
		}
		for field, wv := range want[k].(map[string]any) {
			gv := g.(map[string]any)[field]
			wj, _ := json.Marshal(wv)
			gj, _ := json.Marshal(gv)
			if string(wj) != string(gj) {
				t.Errorf("%s: %s differs from the golden file:\n got %.400s\nwant %.400s", k, field, gj, wj)
			}
		}
	}
}

// policyVectors returns the parts of show --json that the result consists
// of: the per-step vectors (as a digest), beta, the groups and the
// policy's shape.
func policyVectors(t *testing.T, pol string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &doc); err != nil {
		t.Fatal(err)
	}
	keep := map[string]any{}
	for _, k := range []string{"H", "d", "actions", "action_labels", "beta", "method", "features", "groups", "value_estimate", "fallback", "lambda"} {
		keep[k] = doc[k]
	}
	// The vectors go in as a digest of their exact JSON (the file would
	// otherwise hold tens of megabytes of tabular coefficients), with the
	// first step's first values to see what changed.
	steps, _ := json.Marshal(doc["steps"])
	keep["steps_sha256"] = fmt.Sprintf("%x", sha256.Sum256(steps))
	if s, ok := doc["steps"].([]any); ok && len(s) > 0 {
		first := s[0].(map[string]any)
		for _, k := range []string{"w", "m"} {
			if v, ok := first[k].([]any); ok {
				keep["step1_"+k+"_head"] = v[:min(4, len(v))]
			}
		}
	}
	return keep
}

// writeHalfClusters writes a site,cluster file that puts the first half of
// the data's sites (in the policy's order) in cluster a, the rest in b.
func writeHalfClusters(t *testing.T, dir, set, features, data string) string {
	t.Helper()
	pol := filepath.Join(dir, set+"-sites.parquet")
	mustRun(t, "solve", "--features", features, "-o", pol, data)
	var doc struct {
		Groups []struct{ Name string } `json:"groups"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &doc); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("site,cluster\n")
	for i, g := range doc.Groups {
		c := "a"
		if i >= (len(doc.Groups)+1)/2 {
			c = "b"
		}
		fmt.Fprintf(&b, "%s,%s\n", g.Name, c)
	}
	path := filepath.Join(dir, set+"-clusters.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// decisionDigest reads apply's recommended_action, recommended_q and
// evidence columns and returns the SHA-256 of their exact values in row
// order, with the count of each recommended action.
func decisionDigest(t *testing.T, path string) map[string]any {
	t.Helper()
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := ar.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	h := sha256.New()
	counts := map[string]int{}
	for _, name := range []string{"recommended_action", "recommended_q", "evidence"} {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("%s: no column %s", path, name)
		}
		for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				v := chunk.ValueStr(i)
				if f, ok := chunk.(*array.Float64); ok {
					v = fmt.Sprintf("%x", f.Value(i))
				}
				fmt.Fprintf(h, "%s\n", v)
				if name == "recommended_action" {
					counts[v]++
				}
			}
		}
	}
	return map[string]any{"sha256": fmt.Sprintf("%x", h.Sum(nil)), "actions": counts}
}
