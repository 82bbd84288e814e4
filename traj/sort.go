package traj

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/grmdp/grmdp/internal/hugepage"
	"github.com/grmdp/grmdp/internal/workers"
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
//
// The second result, from the counting sort, holds the buckets' bounds in
// perm: bucket (step h, site k) is start[i]..start[i+1]-1 with i = (h-1) *
// nsites + k, for h up to the largest step. It is nil after a comparison
// sort. The counting sort also leaves the rows' trajectory ids in perm's
// order in b.sorted, in keyMem when they fit (see sortedIDs): keyMem is
// an array of len(b.step) int32s that holds nothing yet.
func (b *Builder) sortRows(nsites int, keyMem []int32) (perm, start []int32) {
	n := len(b.step)
	perm = hugepage.Make[int32](n)
	nb := b.maxStep * nsites
	if nb <= 0 || nb > 4*n+1024 || b.opts.ComparisonSort {
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortFunc(perm, func(x, y int32) int {
			if c := b.less(int(x), int(y)); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		return perm, nil
	}
	// A stable counting sort, in parallel over contiguous ranges of rows:
	// each range counts its rows per bucket, and then writes them from its
	// own offset in each bucket, after the earlier ranges' rows. The order
	// is the stable one whatever the number of ranges.
	// Each range has a count per bucket: ranges in parallel only while
	// their counts take at most 4 bytes per row.
	w := max(1, min(workers.Or(b.opts.Workers), n/nb))
	counts := make([][]int32, w)                      // per range, then its next offset per bucket
	lows, highs := make([]int64, w), make([]int64, w) // per range, its ids' least and greatest
	for r := range w {
		lows[r], highs[r] = math.MaxInt64, math.MinInt64 // a range f is not called for has none
	}
	parallelRanges(n, w, func(r, lo, hi int) {
		c := make([]int32, nb)
		low, high := lows[r], highs[r]
		for i := lo; i < hi; i++ {
			c[int(b.step[i]-1)*nsites+int(b.site[i])]++
			low, high = min(low, b.traj[i]), max(high, b.traj[i])
		}
		counts[r], lows[r], highs[r] = c, low, high
	})
	start = make([]int32, nb+1)
	for k := range nb {
		at := start[k]
		for _, c := range counts {
			if c != nil {
				at, c[k] = at+c[k], at
			}
		}
		start[k+1] = at
	}
	low, high := slices.Min(lows), slices.Max(highs)
	if uint64(high)-uint64(low) <= math.MaxInt32 && len(keyMem) == n {
		b.sorted = sortedIDs{base: low, narrow: keyMem}
		bucketRows(b, perm, b.sorted.narrow, low, start, counts, nsites, w)
	} else {
		b.sorted = sortedIDs{wide: hugepage.Make[int64](n)}
		bucketRows(b, perm, b.sorted.wide, 0, start, counts, nsites, w)
	}
	return perm, start
}

// sortedIDs holds, after a counting sort, the trajectory ids of the rows
// in sortRows' order, which Build's sweeps read in sequence: as int32
// offsets from base when the ids span less than 2^31 (4 bytes a row, in
// memory Build lends: the Table's actions, written only after the
// sweeps), as the ids themselves otherwise.
type sortedIDs struct {
	base   int64
	narrow []int32 // id - base, when not nil
	wide   []int64 // the ids, when narrow is nil
}

// at returns the trajectory id at position j of sortRows' order.
func (s *sortedIDs) at(j int) int64 {
	if s.narrow != nil {
		return s.base + int64(s.narrow[j])
	}
	return s.wide[j]
}

// bucketRows is the counting sort's scatter and the sort of each bucket by
// trajectory: it writes each row's index to perm and its trajectory id,
// less base, beside it in keys, from the offsets counts holds per range
// and bucket (start gives the buckets' bounds), and then sorts each bucket
// by keys.
func bucketRows[K int32 | int64](b *Builder, perm []int32, keys []K, base int64, start []int32, counts [][]int32, nsites, w int) {
	// The ids are written in the scatter, read in row order, where
	// gathering them afterwards through perm would touch a cache line per
	// row.
	n := len(perm)
	parallelRanges(n, w, func(r, lo, hi int) {
		next := counts[r]
		for i := lo; i < hi; i++ {
			k := int(b.step[i]-1)*nsites + int(b.site[i])
			perm[next[k]] = int32(i)
			keys[next[k]] = K(b.traj[i] - base)
			next[k]++
		}
	})
	// Buckets are independent: sort them in parallel, each the same way
	// whatever the workers.
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers.Or(b.opts.Workers))
	for k := range len(start) - 1 {
		lo, hi := start[k], start[k+1]
		if hi-lo < 2 {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sortByTraj(perm[lo:hi], keys[lo:hi])
		}()
	}
	wg.Wait()
}

// Reserve grows the Builder's row arrays for rows more rows, so that adding
// chunks does not reallocate and copy them over and over. It is only a
// hint: Add still grows the arrays as needed.
func (b *Builder) Reserve(rows int) {
	if rows <= 0 {
		return
	}
	b.site = reserve(b.site, rows)
	b.traj = reserve(b.traj, rows)
	b.step = reserve(b.step, rows)
	b.action = reserve(b.action, rows)
	b.reward = reserve(b.reward, rows)
	if b.w > 0 {
		b.state = reserve(b.state, rows*b.w)
	}
}

// reserve is slices.Grow without its up-front zeroing: slices.Grow clears
// the whole new capacity in one call that the garbage collector cannot
// preempt, touching every page of arrays of hundreds of megabytes at once
// (and stalling a collection meanwhile), while make hands out fresh pages
// that are already zero and touched only as rows are appended.
// Growing a non-empty slice at least doubles its capacity, as append does.
func reserve[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	t := hugepage.MakeCap[T](len(s), max(len(s)+n, 2*cap(s)))
	copy(t, s)
	return t
}

// sortByTraj sorts a bucket of row indices (in increasing order) by
// trajectory, stably: rows of the same trajectory keep their order, as a
// comparison sort breaking ties by index would. Integer keys allow a
// counting sort when their range is small, a radix sort otherwise, both
// O(n); a bucket already in order is left as it is. keys holds the
// bucket's rows' trajectory ids (or the ids less a common base), in the
// bucket's order, and is sorted with the rows.
func sortByTraj[K int32 | int64](bucket []int32, keys []K) {
	lo, hi := keys[0], keys[0]
	sorted := true
	for j := 1; j < len(keys); j++ {
		t := keys[j]
		if t < keys[j-1] {
			sorted = false
		}
		lo, hi = min(lo, t), max(hi, t)
	}
	if sorted {
		return
	}
	n := len(bucket)
	span := uint64(hi) - uint64(lo) // the range, also when it overflows int64
	tmp := make([]int32, n)
	tmpKeys := make([]K, n)
	if span < uint64(4*n+1024) {
		count := make([]int32, span+2)
		for _, t := range keys {
			count[uint64(t)-uint64(lo)+1]++
		}
		for k := 1; k < len(count); k++ {
			count[k] += count[k-1]
		}
		for j, i := range bucket {
			key := uint64(keys[j]) - uint64(lo)
			tmp[count[key]], tmpKeys[count[key]] = i, keys[j]
			count[key]++
		}
		copy(bucket, tmp)
		copy(keys, tmpKeys)
		return
	}
	// LSD radix sort on 11-bit digits of traj - lo.
	const digit = 11
	src, dst := bucket, tmp
	srcK, dstK := keys, tmpKeys
	var count [1<<digit + 1]int32
	for shift := 0; shift < bits.Len64(span); shift += digit {
		clear(count[:])
		for _, t := range srcK {
			count[(uint64(t)-uint64(lo))>>shift&(1<<digit-1)+1]++
		}
		for k := 1; k < len(count); k++ {
			count[k] += count[k-1]
		}
		for j, i := range src {
			d := (uint64(srcK[j]) - uint64(lo)) >> shift & (1<<digit - 1)
			dst[count[d]], dstK[count[d]] = i, srcK[j]
			count[d]++
		}
		src, dst = dst, src
		srcK, dstK = dstK, srcK
	}
	if &src[0] != &bucket[0] {
		copy(bucket, src)
		copy(keys, srcK)
	}
}

// blockRows is the number of input rows [visitByBlocks] visits at a time:
// their actions, rewards and positions stay in the core's cache while
// every step takes its rows among them.
const blockRows = 1 << 14

// visitByBlocks calls fn(j, perm[j]) once for every position j of perm, a
// permutation of the input rows sorted by step, whose step h holds
// positions bounds[h-1]..bounds[h]. Visiting j in order reads the rows
// with the stride of a trajectory, a cache line per row for every step;
// visitByBlocks instead takes the rows block by block of the input, each
// step's positions whose rows fall in the block, so that each input row is
// read from memory once. It needs every step's rows in input order (the
// input sorted by site, traj, step, or step-major); otherwise, or for very
// many steps, it visits nothing and returns false. Ranges of blocks run in
// parallel on up to w workers; each position is visited by one of them.
func visitByBlocks(perm []int32, bounds []int, w int, fn func(j int, r int32)) bool {
	n, H := len(perm), len(bounds)-1
	if n == 0 || H > blockRows/16 {
		return false
	}
	for h := 1; h <= H; h++ {
		seg := perm[bounds[h-1]:bounds[h]]
		for j := 1; j < len(seg); j++ {
			if seg[j] <= seg[j-1] {
				return false
			}
		}
	}
	parallelRanges(n, w, func(_, lo, hi int) {
		// Each step's first position whose row is at or after lo.
		cur := make([]int, H)
		for h := range H {
			seg := perm[bounds[h]:bounds[h+1]]
			cur[h] = bounds[h] + sort.Search(len(seg), func(i int) bool { return int(seg[i]) >= lo })
		}
		for r0 := lo; r0 < hi; r0 += blockRows {
			r1 := int32(min(hi, r0+blockRows))
			for h := range H {
				j, end := cur[h], bounds[h+1]
				for ; j < end && perm[j] < r1; j++ {
					fn(j, perm[j])
				}
				cur[h] = j
			}
		}
	})
	return true
}

// parallelRanges calls f(k, lo, hi) for k < w on contiguous ranges lo..hi-1
// that cover 0..n-1 in order, in parallel (fewer ranges than w when n is
// small: f is not called for the others).
func parallelRanges(n, w int, f func(k, lo, hi int)) {
	w = max(1, min(w, n/65536+1))
	var wg sync.WaitGroup
	for k := range w {
		lo, hi := n*k/w, n*(k+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k, lo, hi)
		}()
	}
	wg.Wait()
}
