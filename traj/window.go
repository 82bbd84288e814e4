package traj

import "fmt"

// Window returns a table with t's header (sites, trajectory counts,
// actions, A, H, W, sources, rows) and the rows of steps lo..hi only;
// every other step is empty (no rows, each site starting at 0). The rows
// are t's own slices, not copies. Every per-(site, step) statistic of a
// step in lo..hi, and a right-hand side at lo from the values at lo+1, is
// the same on the window as on t: a step's rows and their Next links into
// the following step are kept as they are (so the links of step hi point
// at rows the window does not hold, when hi < H). Window panics unless
// 1 <= lo <= hi <= t.H.
func (t *Table) Window(lo, hi int) *Table {
	if lo < 1 || hi < lo || hi > t.H {
		panic(fmt.Sprintf("traj: window %d..%d of a table of %d steps", lo, hi, t.H))
	}
	w := *t
	w.Steps = make([]Step, t.H)
	empty := make([]int32, len(t.Sites)+1)
	for h := 1; h <= t.H; h++ {
		if h >= lo && h <= hi {
			w.Steps[h-1] = t.Steps[h-1]
			continue
		}
		w.Steps[h-1] = Step{SiteStart: empty}
	}
	return &w
}
