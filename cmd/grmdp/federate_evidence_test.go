//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
)

// TestFederatedEvidenceCounts: a federated tabular policy stores the
// evidence counts of a central solve --min-count K policy, bit for bit
// (the released counts the sites send, summed over sites), and grmdp show
// prints the same decision table with the same count and rows columns,
// for K = 0 and K = 5; with K = 5 some count is withheld, so the counts
// differ from K = 0's.
func TestFederatedEvidenceCounts(t *testing.T) {
	dir := t.TempDir()
	_, names, dirs := simulateSplit(t, dir, "--scenario", "formulary", "--seed", "3", "--trajectories", "400,300,200", "--horizon", "3")
	settings := func(k, rows int) []string {
		return []string{"--features", "tabular", "--state", "state", "--num-states", "240", "--horizon", "3", "--actions", "8",
			"--method", "pooled", "--min-count", strconv.Itoa(k), "--min-rows", strconv.Itoa(rows)}
	}
	var byK [][][]float64
	for _, dc := range [][2]int{{0, 0}, {5, 10}} {
		job := filepath.Join(dir, fmt.Sprintf("job-%d", dc[0]))
		mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settings(dc[0], dc[1])...)...)
		for r := 0; r < 3+1; r++ { // H solve rounds and the value round
			var msgs []string
			for k := range names {
				out := filepath.Join(dir, fmt.Sprintf("k%d-r%d-%d.parquet", dc[0], r, k))
				mustRun(t, "federate", "site", "--job", job, "--site", names[k], "--min-count", strconv.Itoa(dc[0]), "--min-rows", strconv.Itoa(dc[1]),
					"-o", out, dirs[k])
				msgs = append(msgs, out)
			}
			mustRun(t, append([]string{"federate", "step", "--job", job}, msgs...)...)
		}
		central := filepath.Join(dir, fmt.Sprintf("central-%d.parquet", dc[0]))
		mustRun(t, append(append([]string{"solve", "-o", central}, settings(dc[0], dc[1])...), dirs...)...)
		fed := filepath.Join(job, federate.PolicyFile)
		want, got := readPolicyT(t, central), readPolicyT(t, fed)
		if want.EvidenceCounts == nil || len(got.EvidenceCounts) != len(want.EvidenceCounts) {
			t.Fatalf("K = %d: evidence counts for %d steps, want %d", dc[0], len(got.EvidenceCounts), len(want.EvidenceCounts))
		}
		for h := range want.EvidenceCounts {
			a, b := want.EvidenceCounts[h], got.EvidenceCounts[h]
			if !slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }) {
				for i := range a {
					if a[i] != b[i] {
						t.Logf("feature %d: %v want %v", i, b[i], a[i])
					}
				}
				t.Fatalf("K = %d, step %d: evidence counts differ from the central policy's", dc[0], h+1)
			}
		}
		byK = append(byK, want.EvidenceCounts)
		decisions := func(path string) string {
			var doc struct {
				Decisions json.RawMessage `json:"decisions"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", "--max-rows", "0", path)), &doc); err != nil {
				t.Fatal(err)
			}
			return string(doc.Decisions)
		}
		if w, g := decisions(central), decisions(fed); w != g || !strings.Contains(w, `"count"`) {
			t.Fatalf("K = %d: show's decisions differ:\n%.400s\nwant\n%.400s", dc[0], g, w)
		}
	}
	withheld := false
	for h := range byK[0] {
		for i, c := range byK[0][h] {
			if c > 0 && c < 5 && byK[1][h][i] != 0 {
				t.Fatalf("step %d feature %d: a count of %v released under K = 5", h+1, i, c)
			}
			withheld = withheld || c > 0 && byK[1][h][i] == 0
		}
	}
	if !withheld {
		t.Fatal("K = 5 withheld no count: the case tests nothing")
	}
}
