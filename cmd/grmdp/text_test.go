package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextGolden: the text every result prints (WriteText) on a small
// simulated data set, against golden files testdata/text/CASE.stdout
// (go test -run TestTextGolden -update writes them). The temporary
// directory is written DIR, the version VERSION, and show's lines of
// recorded settings are left out.
func TestTextGolden(t *testing.T) {
	dir := t.TempDir()
	data, model := simulated(t, dir, "benchmark", "--sites", "3", "--trajectories", "40,30,20", "--horizon", "4")
	sim := filepath.Join(dir, "sim.csv")
	if err := os.WriteFile(sim, []byte("site_a,site_b,similarity\n1,2,0.9\n2,3,0.1\n1,3,0.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	binned := []string{"--features", "binned", "--bins", "s1:q3", "--bins", "s2:q2"}
	_, nulls := nullSites(t, at("nulls"))
	truncated := []string{"--features", "binned", "--bins", "lactate:1,2.5,4", "--bins", "sofa:2,6", "--nulls", "truncate", "-o", at("pn.parquet")}
	cases := []struct {
		name string
		args []string
	}{
		{"cluster", []string{"cluster", "--similarity", sim, "--threshold", "0.5", "-o", at("cl.json"), data}},
		{"solve-cluster", []string{"solve", "--method", "cluster", "--clusters", at("cl.json"), "-o", at("pcl.parquet"), data}},
		{"solve-pevi-avg-cpath", []string{"solve", "--method", "pevi-avg", "--c-path", "1e-4:1e-2:3", "-o", at("pa.parquet"), data}},
		{"solve-binned", append(append([]string{"solve"}, binned...), "-o", at("pb.parquet"), data)},
		{"show-cluster", []string{"show", "--max-rows", "3", at("pcl.parquet")}},
		{"show-binned", []string{"show", "--max-rows", "2", at("pb.parquet")}},
		{"inspect-binned", append(append([]string{"inspect"}, binned...), data)},
		{"eval-cluster", []string{"eval", "--policy", at("pcl.parquet"), "--model", model, "--bootstrap", "10", "--permutations", "9", data}},
		{"compare", []string{"compare", "-o", at("cmp"), "--clusters", at("cl.json"), "--model", model, data}},
		{"compare-no-evaluation", []string{"compare", "-o", at("cmp2"), "--evaluate=false", data}},
		{"validate", []string{"validate", "--folds", "2", "--bootstrap", "10", data}},
		{"apply", []string{"apply", "--policy", at("pcl.parquet"), "-o", at("a.parquet"), data}},
		{"solve-censored", append(append([]string{"solve"}, truncated...), nulls...)},
		{"eval-censored", append([]string{"eval", "--policy", at("pn.parquet"), "--bootstrap", "0", "--permutations", "0", "--nulls", "truncate"}, nulls...)},
	}
	for _, c := range cases {
		got := strings.ReplaceAll(mustRun(t, c.args...), dir, "DIR")
		got = strings.ReplaceAll(got, "\t"+version+"\n", "\tVERSION\n")
		got = strings.ReplaceAll(got, "  "+version+"\n", "  VERSION\n")
		if c.args[0] == "show" {
			got = showWithoutSettings(got)
		}
		golden := filepath.Join("testdata", "text", c.name+".stdout")
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run TestTextGolden -update writes it)", err)
		}
		if got != string(want) {
			os.WriteFile(golden+".got", []byte(got), 0o644)
			t.Errorf("%s: stdout differs from %s; see %s.got", c.name, golden, golden)
		}
	}
}

// showWithoutSettings drops the settings a policy records from show's text
// (they follow the command's flags, which TestTextGolden does not pin),
// and the padding they set in the table they end.
func showWithoutSettings(text string) string {
	head, rest, _ := strings.Cut(text, "\n\n")
	var kept []string
	for _, l := range strings.Split(head, "\n") {
		if !strings.HasPrefix(l, "setting ") {
			kept = append(kept, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(kept, "\n") + "\n\n" + rest
}
