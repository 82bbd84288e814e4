package traj

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestSortRows checks the bucketed sort against a plain comparison sort by
// (step, site, traj, insertion index), with duplicates, presorted input and
// more buckets than rows, and the trajectory ids it leaves in the sorted
// order against the rows': as int32 offsets when the ids span less than
// 2^31 (also ids near the ends of int64), as int64 ids when they span more.
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
		id := func() int64 { return int64(rng.IntN(20)) }
		switch {
		case trial%4 == 1:
			id = func() int64 {
				return []int64{math.MinInt64, 0, math.MaxInt32, math.MaxInt32 + 1, math.MaxInt64}[rng.IntN(5)]
			}
		case trial%4 == 2:
			id = func() int64 { return math.MaxInt64 - int64(rng.IntN(3))*math.MaxInt32/2 }
		case trial%4 == 3:
			id = func() int64 { return math.MinInt64 + int64(rng.IntN(20)) }
		}
		for range n {
			h := int32(1 + rng.IntN(H))
			b.step = append(b.step, h)
			b.site = append(b.site, int32(rng.IntN(nsites)))
			b.traj = append(b.traj, id())
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
		got, buckets := b.sortRows(nsites, make([]int32, n))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d, sites=%d, H=%d): got %v, want %v", trial, n, nsites, H, got, want)
		}
		if buckets == nil {
			continue
		}
		span := uint64(slices.Max(b.traj)) - uint64(slices.Min(b.traj))
		if narrow := b.sorted.narrow != nil; narrow != (span <= math.MaxInt32) {
			t.Errorf("trial %d: ids spanning %d held as int32 offsets: %v", trial, span, narrow)
		}
		for j, r := range got {
			if b.sorted.at(j) != b.traj[r] {
				t.Fatalf("trial %d: sorted id %d is %d, row %d's is %d", trial, j, b.sorted.at(j), r, b.traj[r])
			}
		}
	}
}

// sortByTraj is a stable sort of row indices by trajectory: it must agree
// with a comparison sort that breaks ties by index, for dense ids
// (counting sort), sparse and extreme ids (radix sort) and duplicates.
func TestSortByTraj(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gens := map[string]func() int64{
		"dense":    func() int64 { return rng.Int64N(50) },
		"offset":   func() int64 { return 1_000_000_000 + rng.Int64N(3000) },
		"sparse":   func() int64 { return rng.Int64N(1 << 40) },
		"negative": func() int64 { return rng.Int64N(1<<33) - 1<<32 },
		"extremes": func() int64 {
			return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1, math.MinInt64 + 1}[rng.IntN(6)]
		},
		"wide": func() int64 { return int64(rng.Uint64()) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 17, 1000, 5000} {
			traj := make([]int64, 2*n)
			for i := range traj {
				traj[i] = gen()
			}
			// A bucket: increasing row indices, every other row.
			bucket := make([]int32, n)
			for i := range bucket {
				bucket[i] = int32(2*i + rng.IntN(2))
			}
			want := slices.Clone(bucket)
			slices.SortFunc(want, func(x, y int32) int {
				return cmp.Or(cmp.Compare(traj[x], traj[y]), cmp.Compare(x, y))
			})
			keys := make([]int64, n)
			for j, r := range bucket {
				keys[j] = traj[r]
			}
			ranked := slices.Sorted(slices.Values(traj))
			narrow := make([]int32, n) // the ids' ranks, as int32 keys
			for j, r := range bucket {
				k, _ := slices.BinarySearch(ranked, traj[r])
				narrow[j] = int32(k)
			}
			bucket32 := slices.Clone(bucket)
			sortByTraj(bucket, keys)
			if !slices.Equal(bucket, want) {
				t.Fatalf("%s n=%d: sortByTraj differs from the comparison sort", name, n)
			}
			if sortByTraj(bucket32, narrow); !slices.Equal(bucket32, want) {
				t.Fatalf("%s n=%d: sortByTraj on int32 keys differs from the comparison sort", name, n)
			}
			for j, r := range bucket {
				if keys[j] != traj[r] {
					t.Fatalf("%s n=%d: key %d is %d, row %d's id is %d", name, n, j, keys[j], r, traj[r])
				}
			}
		}
	}
}

// visitByBlocks visits every position once with its row, for permutations
// whose steps are each in row order (as Build's order is for input sorted
// by site, traj, step), and declines the others.
func TestVisitByBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, blockRows - 1, blockRows, 3*blockRows + 5, 200_000} {
		for _, H := range []int{1, 3, 20} {
			// Rows in (traj, step) order, trajectories of random length.
			var step []int
			for len(step) < n {
				for h := 1; h <= 1+rng.IntN(H) && len(step) < n; h++ {
					step = append(step, h)
				}
			}
			perm := make([]int32, 0, n)
			bounds := make([]int, H+1)
			for h := 1; h <= H; h++ {
				for r, s := range step {
					if s == h {
						perm = append(perm, int32(r))
					}
				}
				bounds[h] = len(perm)
			}
			for _, w := range []int{1, 2, 3} {
				seen := make([]int32, n)
				for i := range seen {
					seen[i] = -1
				}
				// fn runs on the workers' goroutines: it records, and the
				// test goroutine judges.
				var mu sync.Mutex
				bad := -1
				ok := visitByBlocks(perm, bounds, w, func(j int, r int32) {
					mu.Lock()
					defer mu.Unlock()
					if (seen[j] >= 0 || r != perm[j]) && bad < 0 {
						bad = j
					}
					seen[j] = r
				})
				if bad >= 0 {
					t.Fatalf("n=%d H=%d w=%d: position %d visited twice or with another row than perm's", n, H, w, bad)
				}
				if !ok {
					t.Fatalf("n=%d H=%d: declined a permutation in row order", n, H)
				}
				if !slices.Equal(seen, perm) {
					t.Fatalf("n=%d H=%d w=%d: not every position was visited", n, H, w)
				}
			}
			if n > 1 && bounds[1] > 1 {
				swapped := slices.Clone(perm)
				swapped[0], swapped[1] = swapped[1], swapped[0]
				visited := false
				if visitByBlocks(swapped, bounds, 2, func(int, int32) { visited = true }) || visited {
					t.Fatalf("n=%d H=%d: accepted a step out of row order", n, H)
				}
			}
		}
	}
}
