package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// jsonKeys returns the sorted keys of a JSON object.
func jsonKeys(t *testing.T, js json.RawMessage) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	var k []string
	for name := range m {
		k = append(k, name)
	}
	slices.Sort(k)
	return strings.Join(k, ",")
}

// compare --heldout scores every method held out: compare.json's heldout
// and methods[].heldout have the pinned keys, every method but sitewise
// has a paired difference from sitewise, the best method has the highest
// score and the table names it; with --c auto each policy records its
// selection and the scores carry a note.
func TestCompareHeldOut(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50", "--horizon", "3")
	for _, auto := range []bool{false, true} {
		out := filepath.Join(dir, "cmp")
		args := []string{"compare", "--heldout", "--folds", "3", "--evaluate=false", "-o", out, data}
		if auto {
			args = append([]string{"compare", "--c", "auto"}, args[1:]...)
		}
		text := mustRun(t, args...)
		b, err := os.ReadFile(filepath.Join(out, "compare.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			HeldOut json.RawMessage `json:"heldout"`
			Methods []struct {
				Method  string          `json:"method"`
				Policy  string          `json:"policy"`
				HeldOut json.RawMessage `json:"heldout"`
			} `json:"methods"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		want := "best,bootstrap,estimator,folds,level,seed"
		if auto {
			want = "best,bootstrap,estimator,folds,level,note,seed"
		}
		if got := jsonKeys(t, doc.HeldOut); got != want {
			t.Errorf("auto %v: heldout keys %s, want %s", auto, got, want)
		}
		var top struct {
			Best string `json:"best"`
		}
		json.Unmarshal(doc.HeldOut, &top)
		bestScore, bestMethod := -1e300, ""
		for _, m := range doc.Methods {
			if got := jsonKeys(t, m.HeldOut); got != "method,no_evidence_share,score,sites,vs_sitewise,worst_site" {
				t.Errorf("auto %v, %s: heldout keys %s", auto, m.Method, got)
			}
			var h struct {
				Method     string            `json:"method"`
				Score      *float64          `json:"score"`
				Sites      []json.RawMessage `json:"sites"`
				VsSitewise json.RawMessage   `json:"vs_sitewise"`
			}
			if err := json.Unmarshal(m.HeldOut, &h); err != nil {
				t.Fatal(err)
			}
			if h.Method != m.Method || len(h.Sites) != 3 {
				t.Errorf("auto %v, %s: heldout method %q, %d sites", auto, m.Method, h.Method, len(h.Sites))
			}
			if got := jsonKeys(t, h.Sites[0]); got != "ci_high,ci_low,site,value" {
				t.Errorf("auto %v, %s: site keys %s", auto, m.Method, got)
			}
			if m.Method == "sitewise" {
				if string(h.VsSitewise) != "null" {
					t.Errorf("sitewise's vs_sitewise %s, want null", h.VsSitewise)
				}
			} else if got := jsonKeys(t, h.VsSitewise); got != "ci_high,ci_low,sites,value" {
				t.Errorf("auto %v, %s: vs_sitewise keys %s", auto, m.Method, got)
			}
			if h.Score != nil && *h.Score > bestScore {
				bestScore, bestMethod = *h.Score, m.Method
			}
			if auto && m.Method != "behaviour" {
				shown := mustRun(t, "show", "--json", m.Policy)
				if !strings.Contains(shown, `"selection"`) {
					t.Errorf("%s: the policy does not record its selection", m.Method)
				}
			}
		}
		if top.Best != bestMethod || !strings.Contains(text, "best held out: "+bestMethod) {
			t.Errorf("auto %v: best %q, table:\n%s\nwant %q", auto, top.Best, text, bestMethod)
		}
	}
}

// --stationary=auto adds step pooling to the candidates of --c auto (the
// candidates record stationary) and the c-path plot shows their held-out
// scores; a bare --stationary before auto, and
// --stationary=auto without --c auto, are refused.
func TestStationaryAuto(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50", "--horizon", "3")
	pol := filepath.Join(dir, "p.parquet")
	out := mustRun(t, "solve", "--c", "auto", "--c-path", "1e-5:5e-4:2", "--stationary=auto", "--folds", "3", "--json", "-o", pol, data)
	var doc struct {
		Selection struct {
			Candidates []struct {
				Stationary *bool `json:"stationary"`
			} `json:"candidates"`
		} `json:"selection"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	pooled := 0
	for _, c := range doc.Selection.Candidates[1:] {
		if c.Stationary == nil {
			t.Fatal("a candidate without stationary under --stationary=auto")
		}
		if *c.Stationary {
			pooled++
		}
	}
	if len(doc.Selection.Candidates) != 5 || pooled != 2 {
		t.Errorf("%d candidates, %d pooled; want the fallback and 2 values of c with and without pooling", len(doc.Selection.Candidates), pooled)
	}
	// --c-path with --c auto: the plot shows the held-out scores.
	if svg, err := os.ReadFile(filepath.Join(dir, "p.cpath.svg")); err != nil || !strings.Contains(string(svg), "behaviour fallback: score") {
		t.Errorf("the c-path plot of --c auto lacks the held-out panel (%v)", err)
	}
	for _, args := range [][]string{
		{"solve", "--c", "auto", "--stationary", "auto", "-o", pol, data},
		{"solve", "--stationary=auto", "-o", pol, data},
		{"eval", "--stationary=auto", "--policy", pol, data},
	} {
		if code, _, errOut := grmdp(t, args...); code != 2 || !strings.Contains(errOut, "stationary") {
			t.Errorf("grmdp %s: exit %d, stderr %q; want a usage error naming --stationary", strings.Join(args, " "), code, errOut)
		}
	}
}

// validate --c auto nests the choice in the cross-fit: one selection per
// fold, with solve --json's keys; without --c auto there is no
// selections key.
func TestValidateCAuto(t *testing.T) {
	data, _ := simulated(t, t.TempDir(), "benchmark", "--trajectories", "40,30,50", "--horizon", "3")
	out := mustRun(t, "validate", "--c", "auto", "--stationary=auto", "--folds", "3", "--bootstrap", "5", "--json", data)
	var doc struct {
		Selections []json.RawMessage `json:"selections"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Selections) != 3 {
		t.Fatalf("%d selections, want one per fold (3)", len(doc.Selections))
	}
	for _, s := range doc.Selections {
		if got := jsonKeys(t, s); got != "candidates,chosen,folds,level,seed" {
			t.Errorf("selection keys %s", got)
		}
	}
	plain := mustRun(t, "validate", "--folds", "3", "--bootstrap", "5", "--json", data)
	if strings.Contains(plain, `"selections"`) {
		t.Error("validate without --c auto prints selections")
	}
}
