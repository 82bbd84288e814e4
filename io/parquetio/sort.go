package parquetio

import (
	"cmp"
	"slices"
)

// sortRows returns the row indices ordered by (step, site, traj), ties in
// insertion order: the order Build links rows in. Sites must already be
// ranked (b.site holds canonical site indices below nsites).
//
// Steps and sites are small integers, so the rows are first bucketed by
// (step, site) with a stable counting sort, in O(n); only buckets whose
// trajectories are out of order are then sorted by traj. Input in (site,
// traj, step) or (step, site, traj) order, as grmdp and most exporters
// write it, needs no comparison sort at all. When there are more buckets
// than rows (very many sites), a comparison sort of all rows is used.
func (b *Builder) sortRows(nsites int) []int32 {
	n := len(b.step)
	perm := make([]int32, n)
	nb := b.maxStep * nsites
	if nb <= 0 || nb > 4*n+1024 {
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortFunc(perm, func(x, y int32) int {
			if c := b.less(int(x), int(y)); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		return perm
	}
	start := make([]int32, nb+1)
	for i := range n {
		start[int(b.step[i]-1)*nsites+int(b.site[i])+1]++
	}
	for k := range nb {
		start[k+1] += start[k]
	}
	next := slices.Clone(start[:nb])
	for i := range n {
		k := int(b.step[i]-1)*nsites + int(b.site[i])
		perm[next[k]] = int32(i)
		next[k]++
	}
	traj := b.traj
	for k := range nb {
		bucket := perm[start[k]:start[k+1]]
		sorted := true
		for j := 1; j < len(bucket); j++ {
			if traj[bucket[j-1]] > traj[bucket[j]] {
				sorted = false
				break
			}
		}
		if !sorted {
			slices.SortFunc(bucket, func(x, y int32) int {
				if c := cmp.Compare(traj[x], traj[y]); c != 0 {
					return c
				}
				return cmp.Compare(x, y)
			})
		}
	}
	return perm
}

// reserve grows the Builder's row arrays for rows more rows, so that adding
// chunks does not reallocate and copy them over and over. It is only a
// hint: Add still grows the arrays as needed.
func (b *Builder) reserve(rows int) {
	if rows <= 0 {
		return
	}
	b.site = slices.Grow(b.site, rows)
	b.traj = slices.Grow(b.traj, rows)
	b.step = slices.Grow(b.step, rows)
	b.action = slices.Grow(b.action, rows)
	b.reward = slices.Grow(b.reward, rows)
	if b.w > 0 {
		b.state = slices.Grow(b.state, rows*b.w)
	}
}
