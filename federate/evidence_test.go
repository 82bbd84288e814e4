package federate

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/solve"
)

// TestEvidenceCountsEqualCentral: the federated policy's evidence counts
// (the sites' released counts summed over sites) are the central
// policy's bit for bit, for every map (nil for the maps without them) and
// with and without disclosure control.
func TestEvidenceCountsEqualCentral(t *testing.T) {
	ctx := context.Background()
	const H = 3
	for _, m := range maps() {
		names, chunks := siteChunks(m, 4, H, []int{60, 45, 80, 30}, true, 29)
		central := buildTable(t, m, H, chunks...)
		for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
			cst := centralStats(t, central, m, dc)
			sites := siteInputs(t, m, H, names, chunks, dc)
			for i := range sites {
				sites[i].Numeric = true
			}
			j := testJob(solve.Pooled, m, H, names, dc)
			want, err := solve.NewSolver(cst, solve.DefaultSettings).Solve(ctx, solve.Problem{Method: solve.Pooled})
			if err != nil {
				t.Fatal(err)
			}
			got := runJob(t, j, sites)
			if (want.EvidenceCounts == nil) != (got.EvidenceCounts == nil) || len(want.EvidenceCounts) != len(got.EvidenceCounts) {
				t.Fatalf("%s %+v: evidence counts for %d steps, want %d", m.Kind, dc, len(got.EvidenceCounts), len(want.EvidenceCounts))
			}
			for h := range want.EvidenceCounts {
				if !slices.EqualFunc(want.EvidenceCounts[h], got.EvidenceCounts[h], func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }) {
					t.Fatalf("%s %+v step %d: evidence counts %v, want %v", m.Kind, dc, h+1, got.EvidenceCounts[h], want.EvidenceCounts[h])
				}
			}
		}
	}
}
