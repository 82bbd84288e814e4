package federate

import (
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// censorChunk marks the last row of every episode of c that ends before
// step H and whose trajectory id is a multiple of every as censored, as
// the reader marks an episode NULLs truncate, and returns the number
// marked.
func censorChunk(c *traj.Chunk, H, every int) int {
	c.Censored = make([]bool, len(c.Step))
	n := 0
	for i := range c.Step {
		last := i+1 == len(c.Step) || c.TrajInt[i+1] != c.TrajInt[i]
		if last && c.Step[i] < int64(H) && c.TrajInt[i]%int64(every) == 0 {
			c.Censored[i] = true
			n++
		}
	}
	return n
}

// TestEvalCensoredEqualsCentral: on sites whose episodes are censored
// (cut by NULLs under --nulls truncate), the federated evaluation counts
// each site's censored episodes as the central evaluation does, and each
// site's value and observed care, which leave them out, are the central
// ones bit for bit. Under disclosure control a site with fewer censored
// episodes than min count withholds the count, and a note says so.
func TestEvalCensoredEqualsCentral(t *testing.T) {
	const H = 4
	for _, m := range maps()[:2] {
		names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 30}, false, 31)
		var marked []int
		for k, c := range chunks {
			marked = append(marked, censorChunk(c, H, []int{2, 3, 2, 9}[k]))
		}
		for _, dc := range []solve.Disclosure{{}, {MinCount: 5}} {
			central := buildTable(t, m, H, chunks...)
			cst := centralStats(t, central, m, dc)
			sites := siteInputs(t, m, H, names, chunks, dc)
			j := testJob(solve.Sitewise, m, H, names, dc)
			_, _, want, res := playEvalCentral(t, j, sites, cst)
			got := res.Report
			what := m.Kind.String()
			if dc.Active() {
				what += " under min count 5"
			}
			withheld := false
			for k, w := range want.Sites {
				g, wo, gobs := got.Sites[k], want.Observed[k], got.Observed[k]
				t.Logf("%s: site %s: censored %d (central %d, marked %d), value %v (central %v), observed %v (central %v)", what, g.Site, g.Censored, w.Censored, marked[k], g.Value, w.Value, gobs.Value, wo.Value)
				if w.Censored != marked[k] {
					t.Fatalf("%s: site %s: the central evaluation counts %d censored episodes, %d were marked", what, w.Site, w.Censored, marked[k])
				}
				if dc.Active() && w.Censored > 0 && w.Censored < dc.MinCount {
					withheld = true
					if g.Censored != 0 || gobs.Censored != 0 || len(res.Notes) == 0 || !strings.Contains(strings.Join(res.Notes, "\n"), g.Site) {
						t.Errorf("%s: site %s's %d censored episodes: federated %d, notes %v; want withheld (0) and a note", what, g.Site, w.Censored, g.Censored, res.Notes)
					}
				} else if g.Censored != w.Censored || gobs.Censored != wo.Censored {
					t.Errorf("%s: site %s: %d censored episodes (observed %d), central %d (%d)", what, g.Site, g.Censored, gobs.Censored, w.Censored, wo.Censored)
				}
				if g.Site != w.Site || !sameBits(g.Value, w.Value) || !sameBits(gobs.Value, wo.Value) || !sameBits(g.Lower, w.Lower) || !sameBits(g.Upper, w.Upper) {
					t.Errorf("%s: site %s: value %v observed %v bounds [%v, %v], central %v %v [%v, %v]", what, g.Site, g.Value, gobs.Value, g.Lower, g.Upper, w.Value, wo.Value, w.Lower, w.Upper)
				}
			}
			if !relClose(got.PolicyValue, want.PolicyValue, 1e-12) || !relClose(got.Lower, want.Lower, 1e-12) || !relClose(got.Upper, want.Upper, 1e-12) {
				t.Errorf("%s: robust value %v [%v, %v], central %v [%v, %v]", what, got.PolicyValue, got.Lower, got.Upper, want.PolicyValue, want.Lower, want.Upper)
			}
			if dc.Active() && !withheld {
				t.Errorf("%s: no site has from 1 to 4 censored episodes: the case tests nothing", what)
			}
			if !slices.ContainsFunc(want.Sites, func(v eval.SiteValue) bool { return v.Censored >= 5 }) {
				t.Errorf("%s: no site has 5 censored episodes or more", what)
			}
		}
	}
}
