package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// solve --c auto: the JSON's selection has the documented keys, the policy
// records it and show prints its table; auto is refused where nothing can
// be chosen.
func TestSolveCAuto(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50", "--horizon", "3")
	pol := filepath.Join(dir, "p.parquet")
	out := mustRun(t, "solve", "--c", "auto", "--c-path", "1e-5:5e-4:2", "--folds", "3", "--json", "-o", pol, data)
	var doc struct {
		Selection map[string]json.RawMessage `json:"selection"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range doc.Selection {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if want := []string{"candidates", "chosen", "folds", "level", "seed"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("selection keys %v, want %v", keys, want)
	}
	var cands []map[string]any
	if err := json.Unmarshal(doc.Selection["candidates"], &cands); err != nil {
		t.Fatal(err)
	}
	if len(cands) != 3 {
		t.Fatalf("%d candidates, want the fallback and 2 values of c", len(cands))
	}
	shown := mustRun(t, "show", pol)
	if !strings.Contains(shown, "c chosen by cross-fitting (3 folds") || !strings.Contains(shown, "behaviour fallback") {
		t.Errorf("show does not print the selection:\n%s", shown)
	}
	for _, args := range [][]string{
		{"validate", "--c", "auto", "--method", "behaviour", data},
		{"solve", "--c", "auto", "--beta", "0.1", "-o", pol, data},
		{"solve", "--lambda", "auto", "-o", pol, data},
		{"solve", "--c", "auto", "--method", "behaviour", "-o", pol, data},
	} {
		if code, _, errOut := grmdp(t, args...); code == 0 || !strings.Contains(errOut, "auto") {
			t.Errorf("grmdp %s: exit %d, stderr %q; want a refusal naming auto", strings.Join(args, " "), code, errOut)
		}
	}
}
