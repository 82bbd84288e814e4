package traj

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// prepChunk is a chunk of two integer sites' episodes: site s, traj t has
// steps 1..len; rewards are 0.1 * step.
func prepChunk(file string) *Chunk {
	c := &Chunk{Src: Origin{File: file}, W: 0}
	for _, e := range []struct{ site, traj, n int64 }{{1, 1, 3}, {1, 2, 2}, {2, 1, 4}, {2, 5, 1}} {
		for h := int64(1); h <= e.n; h++ {
			c.SiteInt = append(c.SiteInt, e.site)
			c.TrajInt = append(c.TrajInt, e.traj)
			c.Step = append(c.Step, h)
			c.ActionInt = append(c.ActionInt, h%2)
			c.Reward = append(c.Reward, float64(h)/10)
		}
	}
	c.Missing = make([]bool, c.Len())
	return c
}

// split cuts c into chunks of rows [0,k) and [k,n), as two row groups.
func split(c *Chunk, k int) []*Chunk {
	all := make([]int, c.Len())
	for i := range all {
		all[i] = i
	}
	a, b := c.selectRows(all[:k]), c.selectRows(all[k:])
	a.Missing, b.Missing = c.Missing[:k], c.Missing[k:]
	return []*Chunk{a, b}
}

// keys lists the (site, traj, step) of the chunks' rows in order.
func keys(cs []*Chunk) [][3]int64 {
	var out [][3]int64
	for _, c := range cs {
		for i := range c.Len() {
			out = append(out, [3]int64{c.SiteInt[i], c.TrajInt[i], c.Step[i]})
		}
	}
	return out
}

// TestDropMissing checks the rows each policy keeps on a hand-worked case
// (NULLs at a middle step, the first step, twice in one episode with the
// later one first in the input), the counts per site, that splitting the
// rows into chunks differently changes nothing, and that an error in a
// kept row still names its row of the file.
func TestDropMissing(t *testing.T) {
	mark := func(c *Chunk) *Chunk {
		// rows: 0-2 site1 traj1 steps1-3; 3-4 site1 traj2; 5-8 site2 traj1; 9 site2 traj5
		c.Missing[1] = true // site 1 traj 1 step 2: truncate keeps step 1
		c.Missing[8] = true // site 2 traj 1 step 4 ...
		c.Missing[6] = true // ... and step 2: the earlier counts
		c.Missing[9] = true // site 2 traj 5 step 1: dropped whole
		return c
	}
	want := map[NullPolicy][][3]int64{
		NullsTruncate:    {{1, 1, 1}, {1, 2, 1}, {1, 2, 2}, {2, 1, 1}},
		NullsDropEpisode: {{1, 2, 1}, {1, 2, 2}},
	}
	wantCounts := map[NullPolicy][]NullCount{
		NullsTruncate:    {{Site: "1", Rows: 2, Episodes: 1, Truncated: 1}, {Site: "2", Rows: 4, Episodes: 2, Truncated: 1}},
		NullsDropEpisode: {{Site: "1", Rows: 3, Episodes: 1}, {Site: "2", Rows: 5, Episodes: 2}},
	}
	for p, w := range want {
		for _, k := range []int{0, 2, 7, 10} {
			cs := split(mark(prepChunk("f")), k)
			kept, counts := DropMissing(cs, p)
			if got := keys(kept); !reflect.DeepEqual(got, w) {
				t.Errorf("%v, split at %d: kept %v, want %v", p, k, got, w)
			}
			if !reflect.DeepEqual(counts, wantCounts[p]) {
				t.Errorf("%v, split at %d: counts %+v, want %+v", p, k, counts, wantCounts[p])
			}
		}
	}
	// A bad reward in a kept row after dropped ones: the error names the
	// row of the file (row 4), not of the chunk left.
	c := mark(prepChunk("f.parquet"))
	c.Reward[4] = 2
	kept, _ := DropMissing([]*Chunk{c}, NullsTruncate)
	b := NewBuilder(Options{})
	var err error
	for _, k := range kept {
		if err = b.Add(k); err != nil {
			break
		}
	}
	var re *RowError
	if !errors.As(err, &re) || re.Row != 4 || !strings.Contains(err.Error(), "row 4") {
		t.Errorf("error %v, want one naming row 4", err)
	}
}

// TestTruncateCensors checks, on TestDropMissing's case, that the episodes
// NullsTruncate cuts and keeps rows of are censored (site 1 traj 1, site 2
// traj 1), that their last kept rows get weight 0 and every other row
// weight 1, that the counts per site say so, and that drop-episode
// censors nothing.
func TestTruncateCensors(t *testing.T) {
	for _, k := range []int{0, 1, 2, 7} {
		c := prepChunk("f")
		c.Missing[1], c.Missing[6], c.Missing[8], c.Missing[9] = true, true, true, true
		kept, _ := DropMissing(split(c, k), NullsTruncate)
		b := NewBuilder(Options{})
		for _, ch := range kept {
			if err := b.Add(ch); err != nil {
				t.Fatal(err)
			}
		}
		tb, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		// Trajectories: 0 = site 1 traj 1 (step 1 only), 1 = site 1 traj 2,
		// 2 = site 2 traj 1 (step 1 only).
		if want := []bool{true, false, true}; !reflect.DeepEqual(tb.Censored, want) {
			t.Errorf("split at %d: censored %v, want %v", k, tb.Censored, want)
		}
		if got, want := tb.CensoredCount(), []int{1, 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("split at %d: censored per site %v, want %v", k, got, want)
		}
		if got, want := tb.Steps[0].Weight, []float64{0, 1, 0}; !reflect.DeepEqual(got, want) {
			t.Errorf("split at %d: step 1 weights %v, want %v", k, got, want)
		}
		if tb.Steps[1].Weight != nil {
			t.Errorf("split at %d: step 2 weights %v, want none", k, tb.Steps[1].Weight)
		}
		// The censoring's weights do not stop a write: every row is kept.
		if c, err := tb.Chunk(true); err != nil {
			t.Errorf("split at %d: Chunk: %v", k, err)
		} else if c.Len() != tb.Rows {
			t.Errorf("split at %d: Chunk has %d rows, want %d", k, c.Len(), tb.Rows)
		}
	}
	c := prepChunk("f")
	c.Missing[1] = true
	kept, _ := DropMissing([]*Chunk{c}, NullsDropEpisode)
	b := NewBuilder(Options{})
	for _, ch := range kept {
		if err := b.Add(ch); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if tb.Censored != nil || tb.CensoredCount() != nil {
		t.Errorf("drop-episode: censored %v, want none", tb.Censored)
	}
}
