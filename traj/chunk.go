package traj

import (
	"fmt"
	"strconv"
)

// Chunk returns t's rows as one Chunk, in the Table's order (by step, then
// site, then trajectory): sites as labels (SiteStr), or as integers
// (SiteInt) when intSites is set and every label is a decimal integer;
// trajectories as their global ordinal (TrajInt); actions as labels when
// t.Actions is not nil, integers otherwise. With [WriteChunks] it writes a
// table's rows in any order or split across files, which must read back as
// the same Table. It fails on tables with row weights, which have no
// one-row-per-transition form, except the weights 0 and 1 of a table with
// censored trajectories (Table.Censored): those rows are written as they
// are, and the censoring is not (the file does not mark it).
func (t *Table) Chunk(intSites bool) (*Chunk, error) {
	return t.chunk(1, len(t.Steps), intSites)
}

// StepChunk returns the rows of step h (1..len(t.Steps)) as one Chunk, in
// the Table's order, with the columns [Table.Chunk] gives them: the rows of
// Chunk's result at step h, as their own Chunk. `grmdp prepare` writes one
// such chunk per step, in memory from a whole Table and out of core from a
// window ([NewWindowBuilder]), whose Traj are the whole Table's.
func (t *Table) StepChunk(h int, intSites bool) (*Chunk, error) {
	if h < 1 || h > len(t.Steps) {
		return nil, fmt.Errorf("traj: no step %d: the table has steps 1..%d", h, len(t.Steps))
	}
	return t.chunk(h, h, intSites)
}

// chunk returns the rows of steps lo..hi as one Chunk (see Table.Chunk).
func (t *Table) chunk(lo, hi int, intSites bool) (*Chunk, error) {
	n := 0
	for h := lo; h <= hi; h++ {
		st := &t.Steps[h-1]
		if st.Weight != nil && !t.censoringWeights(st) {
			return nil, fmt.Errorf("traj: step %d has row weights, which have no one-row-per-transition form", h)
		}
		n += st.Len()
	}
	c := &Chunk{W: t.W, Step: make([]int64, 0, n), Reward: make([]float64, 0, n), State: make([]float64, 0, n*t.W), TrajInt: make([]int64, 0, n)}
	var siteInts []int64
	if intSites {
		siteInts = make([]int64, len(t.Sites))
		for k, s := range t.Sites {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("traj: site %q is not an integer", s)
			}
			siteInts[k] = v
		}
		c.SiteInt = make([]int64, 0, n)
	} else {
		c.SiteStr = make([]string, 0, n)
	}
	if t.Actions != nil {
		c.ActionStr = make([]string, 0, n)
	} else {
		c.ActionInt = make([]int64, 0, n)
	}
	for h := lo; h <= hi; h++ {
		st := &t.Steps[h-1]
		for k := range len(st.SiteStart) - 1 {
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				if intSites {
					c.SiteInt = append(c.SiteInt, siteInts[k])
				} else {
					c.SiteStr = append(c.SiteStr, t.Sites[k])
				}
				c.TrajInt = append(c.TrajInt, int64(st.Traj[j]))
				c.Step = append(c.Step, int64(h))
				if t.Actions != nil {
					c.ActionStr = append(c.ActionStr, t.Actions[st.Action[j]])
				} else {
					c.ActionInt = append(c.ActionInt, int64(st.Action[j]))
				}
				c.Reward = append(c.Reward, st.Reward[j])
				c.State = append(c.State, st.State[j*t.W:(j+1)*t.W]...)
			}
		}
	}
	return c, nil
}

// censoringWeights reports whether st's weights are those the Builder
// gives a table with censored trajectories: every weight 0 or 1.
func (t *Table) censoringWeights(st *Step) bool {
	if t.Censored == nil {
		return false
	}
	for _, w := range st.Weight {
		if w != 0 && w != 1 {
			return false
		}
	}
	return true
}

// Select returns a new Chunk holding the rows of c at idx, in that order.
func (c *Chunk) Select(idx []int) *Chunk {
	out := &Chunk{Src: c.Src, W: c.W, Step: make([]int64, 0, len(idx)), Reward: make([]float64, 0, len(idx)), State: make([]float64, 0, len(idx)*c.W)}
	pickS := func(src []string) []string {
		if src == nil {
			return nil
		}
		dst := make([]string, 0, len(idx))
		for _, i := range idx {
			dst = append(dst, src[i])
		}
		return dst
	}
	pickI := func(src []int64) []int64 {
		if src == nil {
			return nil
		}
		dst := make([]int64, 0, len(idx))
		for _, i := range idx {
			dst = append(dst, src[i])
		}
		return dst
	}
	out.SiteStr, out.SiteInt = pickS(c.SiteStr), pickI(c.SiteInt)
	out.TrajStr, out.TrajInt = pickS(c.TrajStr), pickI(c.TrajInt)
	out.ActionStr, out.ActionInt = pickS(c.ActionStr), pickI(c.ActionInt)
	out.Step = pickI(c.Step)
	for _, i := range idx {
		out.Reward = append(out.Reward, c.Reward[i])
		out.State = append(out.State, c.State[i*c.W:(i+1)*c.W]...)
	}
	return out
}
