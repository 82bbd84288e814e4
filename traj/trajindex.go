package traj

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/grmdp/grmdp/internal/workers"
)

// trajIndex is what a window ([NewWindowBuilder]) needs to number
// trajectories as Build does: per site, in canonical order, the keys of the trajectories (of
// their rows at step 1: every trajectory starts there), sorted as Build
// ranks them. Build numbers trajectories 0.. in (site, key) order, so a
// trajectory's ordinal is first[k] plus the index of its key among site
// k's.
type trajIndex struct {
	// first[k] is the ordinal of site k's first trajectory; len K+1.
	first []int
	// ints holds each site's integer keys, ascending; nil for string ids.
	ints [][]int64
	// strs holds each site's string keys in lexical (byte) order, as
	// canonicalOrder ranks them; nil for integer ids.
	strs []strKeys
}

// strKeys is a list of strings held compactly: key i is
// data[ends[i-1]:ends[i]], with ends[-1] = 0.
type strKeys struct {
	data string
	ends []int
}

func (s *strKeys) len() int { return len(s.ends) }

func (s *strKeys) at(i int) string {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.data[start:s.ends[i]]
}

// keyBuf collects one site's trajectory keys during a survey, in the order
// of the rows: integers, or strings appended to data with their ends.
type keyBuf struct {
	ints []int64
	data []byte
	ends []int
}

// collectKeys records the keys of the rows of c at step 1 (step and site
// are the rows' validated steps and interned site ids), per site.
func (sv *surveyState) collectKeys(c *Chunk, site, step []int32) {
	for i, h := range step {
		if h != 1 {
			continue
		}
		id := int(site[i])
		for id >= len(sv.keys) {
			sv.keys = append(sv.keys, keyBuf{})
		}
		kb := &sv.keys[id]
		if c.TrajStr != nil {
			kb.data = append(kb.data, c.TrajStr[i]...)
			kb.ends = append(kb.ends, len(kb.data))
		} else {
			kb.ints = append(kb.ints, c.TrajInt[i])
		}
	}
}

// index sorts the collected keys of each site (in parallel, at most workers
// at a time) and returns them by canonical site: siteRank maps interned site
// ids to canonical indices, of which there are K. The buffers are released
// as they are sorted.
func (sv *surveyState) index(siteRank []int32, K int, str bool, nworkers int) *trajIndex {
	x := &trajIndex{first: make([]int, K+1)}
	if str {
		x.strs = make([]strKeys, K)
	} else {
		x.ints = make([][]int64, K)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers.Or(nworkers))
	for id := range sv.keys {
		k := siteRank[id]
		kb := &sv.keys[id]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if str {
				x.strs[k] = sortStrKeys(kb.data, kb.ends)
			} else {
				slices.Sort(kb.ints)
				// An exact copy: the Summary keeps it for its lifetime.
				x.ints[k] = make([]int64, len(kb.ints))
				copy(x.ints[k], kb.ints)
			}
			*kb = keyBuf{}
		}()
	}
	wg.Wait()
	sv.keys = nil
	for k := range K {
		n := 0
		if str {
			n = x.strs[k].len()
		} else {
			n = len(x.ints[k])
		}
		x.first[k+1] = x.first[k] + n
	}
	return x
}

// sortStrKeys returns the keys data[ends[i-1]:ends[i]] in lexical order.
func sortStrKeys(data []byte, ends []int) strKeys {
	in := strKeys{data: string(data), ends: ends}
	order := make([]int32, len(ends))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(in.at(int(a)), in.at(int(b))) })
	var sb strings.Builder
	sb.Grow(len(in.data))
	out := strKeys{ends: make([]int, len(ends))}
	for j, i := range order {
		sb.WriteString(in.at(int(i)))
		out.ends[j] = sb.Len()
	}
	out.data = sb.String()
	return out
}

// number sets the trajectory ordinals of the rows of st, a window's first
// step, from the index: the ordinal of a row is its trajectory's in the
// whole input, or -1 when the survey saw no row of that trajectory at step
// 1 (a gap, which a window holding the trajectory's first row reports).
// rows are the rows' indices in the Builder, in the step's order (by site,
// then key); label(r) returns row r's string key. Sites are numbered in
// parallel.
func (x *trajIndex) number(b *Builder, st *Step, rows []int32, label func(r int32) string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers.Or(b.opts.Workers))
	for k := range len(st.SiteStart) - 1 {
		lo, hi := int(st.SiteStart[k]), int(st.SiteStart[k+1])
		if lo == hi {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			base := x.first[k]
			// The rows' keys ascend: each search starts where the last
			// ended.
			i := 0
			if x.strs != nil {
				keys := &x.strs[k]
				n := keys.len()
				for j := lo; j < hi; j++ {
					key := label(rows[j])
					i = gallop(i, n, func(m int) bool { return keys.at(m) < key })
					st.Traj[j] = -1
					if i < n && keys.at(i) == key {
						st.Traj[j] = int32(base + i)
					}
				}
				return
			}
			keys := x.ints[k]
			n := len(keys)
			for j := lo; j < hi; j++ {
				key := b.traj[rows[j]]
				i = gallop(i, n, func(m int) bool { return keys[m] < key })
				st.Traj[j] = -1
				if i < n && keys[i] == key {
					st.Traj[j] = int32(base + i)
				}
			}
		}()
	}
	wg.Wait()
}

// gallop returns the smallest m in i..n-1 for which less(m) is false, or n;
// less must be true then false over i..n-1. It probes i, i+1, i+3, i+7, ...
// before a binary search, so a sweep of ascending keys through a sorted
// list costs O(log d) per key, d being how far the key moved.
func gallop(i, n int, less func(int) bool) int {
	bound := 1
	for i+bound <= n && less(i+bound-1) {
		i += bound
		bound *= 2
	}
	hi := min(i+bound, n)
	return i + sort.Search(hi-i, func(j int) bool { return !less(i + j) })
}
