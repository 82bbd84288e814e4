package traj

import "fmt"

// Site returns a table of site k's rows only: its one site (label and
// trajectory count), t's actions, A, H, W and sources, and at each step
// the site's rows with their trajectory ordinals as they are in t (so that
// writing each site's table gives the rows, trajectory ids included, of
// t's file cut by site). Those ordinals need not start at 0, so a site's
// trajectory ordinal is not its row's index at step 1 as in a table read
// from files: the table is for writing and for per-site counts. The step
// slices are sub-slices of t's, except SiteStart and Next, which are new.
// Site panics unless 0 <= k < len(t.Sites).
func (t *Table) Site(k int) *Table {
	if k < 0 || k >= len(t.Sites) {
		panic(fmt.Sprintf("traj: site %d of a table of %d sites", k, len(t.Sites)))
	}
	s := *t
	s.Sites = []string{t.Sites[k]}
	s.Trajectories = []int{t.Trajectories[k]}
	s.Steps = make([]Step, len(t.Steps))
	s.Rows = 0
	s.Nulls = nil
	for _, n := range t.Nulls {
		if n.Site == t.Sites[k] {
			s.Nulls = append(s.Nulls, n)
		}
	}
	for h := range t.Steps {
		st := &t.Steps[h]
		if st.Len() == 0 {
			s.Steps[h] = Step{SiteStart: []int32{0, 0}}
			continue
		}
		lo, hi := st.SiteStart[k], st.SiteStart[k+1]
		// The site's rows at step h+2 start at next0: a link into them
		// becomes an index into the site's own rows.
		var next0 int32
		if h+1 < len(t.Steps) && t.Steps[h+1].Len() > 0 {
			next0 = t.Steps[h+1].SiteStart[k]
		}
		sub := Step{
			SiteStart: []int32{0, hi - lo},
			Traj:      st.Traj[lo:hi],
			Action:    st.Action[lo:hi],
			Reward:    st.Reward[lo:hi],
			State:     st.State[int(lo)*t.W : int(hi)*t.W],
			Next:      make([]int32, hi-lo),
		}
		for i, n := range st.Next[lo:hi] {
			if n >= 0 {
				n -= next0
			}
			sub.Next[i] = n
		}
		if st.Weight != nil {
			sub.Weight = st.Weight[lo:hi]
		}
		s.Steps[h] = sub
		s.Rows += int(hi - lo)
	}
	return &s
}
