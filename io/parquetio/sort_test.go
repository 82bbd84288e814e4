package parquetio

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRows checks the bucketed sort against a plain comparison sort by
// (step, site, traj, insertion index), with duplicates, presorted input and
// more buckets than rows.
func TestSortRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 300 {
		n := rng.IntN(300)
		nsites := 1 + rng.IntN(5)
		if trial%10 == 0 {
			nsites = 500 // more buckets than rows: the fallback path
		}
		H := 1 + rng.IntN(6)
		b := &Builder{}
		for range n {
			h := int32(1 + rng.IntN(H))
			b.step = append(b.step, h)
			b.site = append(b.site, int32(rng.IntN(nsites)))
			b.traj = append(b.traj, int64(rng.IntN(20)))
			b.maxStep = max(b.maxStep, int(h))
		}
		if trial%3 == 0 {
			// Presorted by (site, traj, step), as WriteTrajectories writes.
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			slices.SortFunc(idx, func(x, y int) int {
				return cmp.Or(cmp.Compare(b.site[x], b.site[y]), cmp.Compare(b.traj[x], b.traj[y]), cmp.Compare(b.step[x], b.step[y]))
			})
			st, si, tr := slices.Clone(b.step), slices.Clone(b.site), slices.Clone(b.traj)
			for i, j := range idx {
				b.step[i], b.site[i], b.traj[i] = st[j], si[j], tr[j]
			}
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortFunc(want, func(x, y int32) int {
			return cmp.Or(b.less(int(x), int(y)), cmp.Compare(x, y))
		})
		got := b.sortRows(nsites)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d, sites=%d, H=%d): got %v, want %v", trial, n, nsites, H, got, want)
		}
	}
}
