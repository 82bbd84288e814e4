//go:build unix

package main

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// nullSites writes three sites' folders of a binned data set in which
// some rows' lactate is NULL, so that --nulls truncate censors their
// episodes.
func nullSites(t *testing.T, dir string) (names, dirs []string) {
	t.Helper()
	const H, A = 4, 3
	rng := rand.New(rand.NewPCG(5, 11))
	for k, name := range fedSiteNames {
		c := &traj.Chunk{Src: traj.Origin{File: name}, W: 2}
		for tr := 0; tr < []int{150, 110, 90}[k]; tr++ {
			for h := 1; h <= H; h++ {
				lac := 5 * rng.Float64() * rng.Float64()
				if h > 1 && rng.IntN(9) == 0 {
					lac = math.NaN()
				}
				addRow(c, name, tr, h, rng.IntN(A), rng.Float64(), lac, float64(rng.IntN(10)))
			}
		}
		d, file := siteFile(t, dir, name)
		if err := parquetio.WriteChunks(file, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: []string{"lactate", "sofa"}, NullNaN: true}); err != nil {
			t.Fatal(err)
		}
		names, dirs = append(names, name), append(dirs, d)
	}
	return names, dirs
}

// censoredJSON is what the test reads of eval --json.
type censoredJSON struct {
	PolicyValue float64  `json:"policy_value"`
	Lower       *float64 `json:"lower"`
	Upper       *float64 `json:"upper"`
	Sites       []struct {
		Site     string  `json:"site"`
		Value    float64 `json:"value"`
		Censored int     `json:"censored"`
	} `json:"sites"`
	Observed []struct {
		Value    float64 `json:"value"`
		Censored int     `json:"censored"`
	} `json:"observed"`
}

// TestFederateEvalCensoredEqualsEval: a binned federated job whose rows
// NULLs truncate (nulls: truncate), evaluated with federate run --eval,
// gives grmdp eval --nulls truncate on all the rows bit for bit: each
// site's number of censored episodes, its value and observed care (which
// leave the censored episodes out), the robust value and its bounds.
func TestFederateEvalCensoredEqualsEval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := nullSites(t, filepath.Join(dir, "data"))
	job := filepath.Join(dir, "job")
	fedInit(t, bin, job, names, append([]string{"--method", "sitewise", "--c", "1e-4", "--nulls", "truncate", "--min-count", "0", "--min-rows", "0"}, binnedJobFlags...)...)
	policy, _ := fedRunEval(t, bin, job, names, dirs)
	central, fed := evalBoth(t, bin, job, policy, dirs, "--nulls", "truncate")
	var want, got censoredJSON
	decodeBoth(t, central, fed, &want, &got)
	same := func(name string, w, g float64) {
		t.Helper()
		if math.Float64bits(w) != math.Float64bits(g) {
			t.Errorf("%s: federated %v, central %v", name, g, w)
		}
	}
	same("robust value", want.PolicyValue, got.PolicyValue)
	if want.Lower == nil || got.Lower == nil || want.Upper == nil || got.Upper == nil {
		t.Fatalf("bounds: federated [%v, %v], central [%v, %v]", deref(got.Lower), deref(got.Upper), deref(want.Lower), deref(want.Upper))
	}
	same("robust lower", *want.Lower, *got.Lower)
	same("robust upper", *want.Upper, *got.Upper)
	if len(want.Sites) != len(names) || len(got.Sites) != len(names) || len(got.Observed) != len(names) {
		t.Fatalf("sites: federated %d, central %d", len(got.Sites), len(want.Sites))
	}
	for k, w := range want.Sites {
		g := got.Sites[k]
		t.Logf("site %s: %d censored (central %d), value %v, observed %v", g.Site, g.Censored, w.Censored, g.Value, got.Observed[k].Value)
		if w.Censored == 0 {
			t.Errorf("site %s: no censored episode: the case tests nothing", w.Site)
		}
		if g.Censored != w.Censored || got.Observed[k].Censored != want.Observed[k].Censored {
			t.Errorf("site %s: %d censored episodes (observed care %d), central %d (%d)", w.Site, g.Censored, got.Observed[k].Censored, w.Censored, want.Observed[k].Censored)
		}
		same("site "+w.Site+" value", w.Value, g.Value)
		same("site "+w.Site+" observed care", want.Observed[k].Value, got.Observed[k].Value)
	}
}
