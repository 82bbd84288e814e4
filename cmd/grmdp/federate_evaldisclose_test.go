//go:build unix

package main

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// thinLateSites writes three sites' folders of a binned data set whose
// episodes end early at random, so that the late steps are thin: every
// site has cells counted 1..4 there (withheld under --min-count 5).
func thinLateSites(t *testing.T, dir string) (names, dirs []string) {
	t.Helper()
	const H, A = 4, 3
	rng := rand.New(rand.NewPCG(24, 7))
	for k, name := range fedSiteNames {
		c := &traj.Chunk{Src: traj.Origin{File: name}, W: 2}
		for tr := 0; tr < []int{200, 120, 80}[k]; tr++ {
			for h := 1; h <= H; h++ {
				addRow(c, name, tr, h, min(rng.IntN(A+1), A-1), rng.Float64(), 5*rng.Float64()*rng.Float64(), float64(rng.IntN(10)))
				if rng.IntN(5) < 2 {
					break
				}
			}
		}
		d, file := siteFile(t, dir, name)
		writeSiteTable(t, file, c, []string{"lactate", "sofa"}, false, A, H)
		names, dirs = append(names, name), append(dirs, d)
	}
	return names, dirs
}

// TestFederateEvalDisclosedEqualsEval: a binned federated job at the
// default disclosure control (--min-count 5, --min-rows 10) with thin late
// steps, evaluated with federate run --eval (each part a separate
// process), gives grmdp eval --min-count 5 --min-rows 10 on all the rows:
// each site's value, bounds, support and observed care, the robust value,
// the pessimistic value and the robust bounds bit for bit (sums
// over the sites' initial states added site by site in both); and every
// value, central or
// federated, per site or robust, lies inside its own identification
// bounds. Both evaluations treat the cells disclosure control withholds
// as never observed, in the values and in the bounds alike.
func TestFederateEvalDisclosedEqualsEval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := thinLateSites(t, filepath.Join(dir, "data"))
	job := filepath.Join(dir, "job")
	fedInit(t, bin, job, names, append([]string{"--method", "sitewise", "--c", "1e-4", "--min-count", "5", "--min-rows", "10"}, binnedJobFlags...)...)
	policy, _ := fedRunEval(t, bin, job, names, dirs)
	central, fed := evalBoth(t, bin, job, policy, dirs, "--min-count", "5", "--min-rows", "10")
	var want, got evalJSON
	decodeBoth(t, central, fed, &want, &got)
	same := func(name string, w, g *float64) {
		t.Helper()
		if w == nil || g == nil || math.Float64bits(*w) != math.Float64bits(*g) {
			t.Errorf("%s: federated %v, central %v", name, deref(g), deref(w))
		}
	}
	same("robust value", &want.PolicyValue, &got.PolicyValue)
	same("pessimistic value", &want.PessimisticValue, &got.PessimisticValue)
	same("robust lower", want.Lower, got.Lower)
	same("robust upper", want.Upper, got.Upper)
	if len(want.Sites) != len(names) || len(got.Sites) != len(names) {
		t.Fatalf("sites: federated %d, central %d", len(got.Sites), len(want.Sites))
	}
	for k, w := range want.Sites {
		g := got.Sites[k]
		same("site "+w.Site+" value", &w.Value, &g.Value)
		same("site "+w.Site+" lower", w.Lower, g.Lower)
		same("site "+w.Site+" upper", w.Upper, g.Upper)
		same("site "+w.Site+" support", w.Support, g.Support)
		same("site "+w.Site+" observed care", &want.Observed[k].Value, &got.Observed[k].Value)
	}
	for _, doc := range []struct {
		what string
		d    *evalJSON
	}{{"central", &want}, {"federated", &got}} {
		d := doc.d
		if d.Lower == nil || d.Upper == nil || !(*d.Lower <= d.PolicyValue && d.PolicyValue <= *d.Upper) {
			t.Errorf("%s: the robust value %v outside its bounds [%v, %v]", doc.what, d.PolicyValue, deref(d.Lower), deref(d.Upper))
		}
		for _, s := range d.Sites {
			if s.Lower == nil || s.Upper == nil || !(*s.Lower <= s.Value && s.Value <= *s.Upper) {
				t.Errorf("%s: site %s's value %v outside its bounds [%v, %v]", doc.what, s.Site, s.Value, deref(s.Lower), deref(s.Upper))
			}
		}
	}
	// The case tests something: the disclosure control withheld cells,
	// so the bounds differ from those of the same job without it.
	open := centralEval(t, policy, dirs)
	var all evalJSON
	if err := json.Unmarshal([]byte(open), &all); err != nil {
		t.Fatal(err)
	}
	differ := false
	for k := range all.Sites {
		differ = differ || *all.Sites[k].Lower != *want.Sites[k].Lower || *all.Sites[k].Upper != *want.Sites[k].Upper
	}
	if !differ {
		t.Errorf("the disclosure control withheld nothing that the bounds use: the test data are not thin enough")
	}
}

// deref prints a JSON number that may be null.
func deref(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}
