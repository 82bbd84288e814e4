package federate

// TestNoDifferencing enumerates every count a site releases over a whole
// job and an evaluation (every round's feature, action and bounds' cell
// counts, its step rows, its totals, its coverage, its no-evidence and
// agreement counts) as the set of the site's rows it counts, and checks
// that none, no difference of two of them one of whose rows hold the
// other's, and no released count less the released counts of disjoint sets
// inside it, is a number from 1 to K-1; and that where a family of counts
// (features, behaviour cells) partitions a released count, the counts it
// withholds total 0 or at least 2K-1.

import (
	"context"
	"fmt"
	"math/bits"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// rowSet is a set of a site's rows, numbered over every step.
type rowSet []uint64

func (a rowSet) len() int {
	n := 0
	for _, w := range a {
		n += bits.OnesCount64(w)
	}
	return n
}

func (a rowSet) within(b rowSet) bool {
	for i := range a {
		if a[i]&^b[i] != 0 {
			return false
		}
	}
	return true
}

func (a rowSet) meets(b rowSet) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// released is one released count: its value, the rows it counts (nil
// when only its value and whole are known), its family (counts of one
// kind released together, for the margin check) and the rows of every
// count of its family, released or withheld (nil outside the families of
// features and behaviour cells).
type released struct {
	what   string
	value  float64
	rows   rowSet
	family string
	parts  []rowSet
}

// siteRows numbers a one-site table's rows over every step.
type siteRows struct {
	t     *traj.Table
	m     *features.Map
	start []int
	n     int
}

func newSiteRows(t *traj.Table, m *features.Map) *siteRows {
	r := &siteRows{t: t, m: m}
	for h := range t.Steps {
		r.start = append(r.start, r.n)
		r.n += t.Steps[h].Len()
	}
	return r
}

// set returns the rows of step h (0: every step) for which keep holds.
func (r *siteRows) set(h int, keep func(s *traj.Step, j int) bool) rowSet {
	out := make(rowSet, (r.n+63)/64)
	for hh := 1; hh <= r.t.H; hh++ {
		if h != 0 && hh != h {
			continue
		}
		s := &r.t.Steps[hh-1]
		for j := 0; j < s.Len(); j++ {
			if keep(s, j) {
				x := r.start[hh-1] + j
				out[x/64] |= 1 << (x % 64)
			}
		}
	}
	return out
}

// feature returns the rows of step h (0: every step) with phi_i > 0.
func (r *siteRows) feature(h, i int) rowSet {
	idx := make([]int32, r.m.MaxNonzeros())
	val := make([]float64, r.m.MaxNonzeros())
	W := r.t.W
	return r.set(h, func(s *traj.Step, j int) bool {
		n := r.m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		for x := 0; x < n; x++ {
			if int(idx[x]) == i && val[x] > 0 {
				return true
			}
		}
		return false
	})
}

// leaf returns the rows of step h in behaviour cell c.
func (r *siteRows) leaf(h, c int) rowSet {
	_, discrete := solve.BehaviourCells(r.m)
	return r.set(h, func(s *traj.Step, j int) bool {
		x := int(s.Action[j])
		switch {
		case discrete && r.m.Kind == features.Binned:
			x += r.m.Cell(s.State[j*r.t.W:(j+1)*r.t.W]) * r.t.A
		case discrete:
			x += int(s.State[j*r.t.W]) * r.t.A
		}
		return x == c
	})
}

// collect returns what message m of the site releases, as counts of rows.
func (r *siteRows) collect(m *Message) []released {
	var out []released
	tag := fmt.Sprintf("%s round %d", kindName(m.Kind), m.Round)
	out = append(out, released{tag + " trajectories", float64(m.Trajectories), r.set(1, func(*traj.Step, int) bool { return true }), "", nil})
	all := r.set(0, func(*traj.Step, int) bool { return true })
	if m.Rows != r.t.Rows {
		// The rows of the released steps only.
		all = r.set(0, func(s *traj.Step, j int) bool { return s.Len() >= max(m.Disclosure.MinRows, m.Disclosure.MinCount) })
	}
	out = append(out, released{tag + " rows", float64(m.Rows), all, "", nil})
	h := m.Step
	if h >= 1 {
		var feats, leaves []rowSet
		for i := range r.m.Dim() {
			feats = append(feats, r.feature(h, i))
		}
		for c := range len(m.Behaviour) {
			leaves = append(leaves, r.leaf(h, c))
		}
		if m.StepRows > 0 {
			out = append(out, released{tag + " step rows", m.StepRows, r.set(h, func(*traj.Step, int) bool { return true }), "steps", nil})
		}
		for i, c := range m.Counts {
			if c > 0 {
				out = append(out, released{fmt.Sprintf("%s count %d", tag, i), c, feats[i], tag + " counts", feats})
			}
		}
		for c, x := range m.Behaviour {
			if x > 0 {
				out = append(out, released{fmt.Sprintf("%s action count %d", tag, c), x, leaves[c], tag + " actions", leaves})
			}
		}
		if n := m.vector("bound_n", 0); n != nil {
			for i, c := range n {
				if c > 0 {
					out = append(out, released{fmt.Sprintf("%s bound cell %d", tag, i), c, feats[i], tag + " bounds", feats})
				}
			}
		}
		return out
	}
	if cov := m.vector("coverage", 0); cov != nil {
		for i, c := range cov {
			if c > 0 {
				out = append(out, released{fmt.Sprintf("%s coverage %d", tag, i), c, nil, "coverage", nil})
			}
		}
	}
	if x := m.vector("no_evidence", 0); x != nil {
		out = append(out, released{tag + " no evidence", x[0], nil, "", nil}, released{tag + " rows with evidence", float64(m.Rows) - x[0], nil, "", nil})
	}
	if x := m.vector("agreement", 0); x != nil {
		out = append(out, released{tag + " agreeing", x[1], nil, "", nil}, released{tag + " not agreeing", x[0] - x[1], nil, "", nil},
			released{tag + " agreement's no evidence", x[2], nil, "", nil}, released{tag + " agreement's evidence", x[0] - x[2], nil, "", nil})
	}
	if x := m.vector("support", 0); x != nil {
		out = append(out, released{tag + " visits", x[1], nil, "", nil})
	}
	return out
}

func belowK(x float64, K int) bool { return x > 0 && x < float64(K) }

// partitions reports whether the nonempty sets of parts inside whole are
// pairwise disjoint and cover it (false for nil parts).
func partitions(parts []rowSet, whole rowSet) bool {
	if parts == nil {
		return false
	}
	union := make(rowSet, len(whole))
	for _, q := range parts {
		if q.len() == 0 || !q.within(whole) {
			continue
		}
		if q.meets(union) {
			return false
		}
		for i := range union {
			union[i] |= q[i]
		}
	}
	return whole.within(union)
}

// checkDifferencing checks one site's released counts.
func checkDifferencing(t *testing.T, what string, K int, rel []released) {
	t.Helper()
	for _, p := range rel {
		if belowK(p.value, K) {
			t.Fatalf("%s: %s is %v", what, p.what, p.value)
		}
		if p.rows != nil && float64(p.rows.len()) != p.value {
			t.Fatalf("%s: %s is %v, its rows number %d", what, p.what, p.value, p.rows.len())
		}
	}
	for _, p := range rel {
		if p.rows == nil {
			continue
		}
		inside := map[string][]released{}
		for _, q := range rel {
			if q.rows == nil || &q == &p || !q.rows.within(p.rows) {
				continue
			}
			if d := p.value - q.value; belowK(d, K) {
				t.Fatalf("%s: %s (%v) less %s (%v) inside it is %v", what, p.what, p.value, q.what, q.value, d)
			}
			if q.family != "" {
				inside[q.family] = append(inside[q.family], q)
			}
		}
		for fam, qs := range inside {
			disjoint := true
			sum := 0.0
			for a := range qs {
				sum += qs[a].value
				for b := a + 1; b < len(qs) && disjoint; b++ {
					disjoint = !qs[a].rows.meets(qs[b].rows)
				}
			}
			if disjoint && belowK(p.value-sum, K) {
				t.Fatalf("%s: %s (%v) less its released %s (%d of them, %v) is %v", what, p.what, p.value, fam, len(qs), sum, p.value-sum)
			}
			// Where the family's counts partition p (a margin), what they
			// withhold totals 0 or at least 2K-1: a total T in K..2K-2
			// would bound a withheld count below K by T-K.
			if disjoint && partitions(qs[0].parts, p.rows) {
				if T := p.value - sum; T > 0 && T < float64(2*K-1) {
					t.Fatalf("%s: %s (%v) less its released %s (%d of them, %v) withholds %v, in 1..2K-2", what, p.what, p.value, fam, len(qs), sum, T)
				}
			}
		}
	}
}

func TestNoDifferencing(t *testing.T) {
	ctx := context.Background()
	const H, K = 3, 5
	dc := solve.Disclosure{MinCount: K, MinRows: 10}
	lactate := features.Bins{Column: "lactate", Cuts: []float64{1, 2.5, 4}}
	for _, m := range []features.Map{
		{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}},
		{Kind: features.Binned, A: 3, StateColumns: []string{"lactate"}, Bins: []features.Bins{lactate}},
		{Kind: features.ActionBlock, A: 3, P: 3, StateColumns: []string{"s1", "s2", "s3"}},
	} {
		for seed := uint64(1); seed <= 4; seed++ {
			names, chunks := mapChunks(m, 3, H, []int{14, 25, 40}, seed)
			// Site 0 takes action 1 exactly twice at step 2.
			c := chunks[0]
			seen := 0
			for j := range c.Step {
				if c.Step[j] != 2 {
					continue
				}
				if c.ActionInt[j] == 1 || seen < 2 {
					c.ActionInt[j] = 0
					if seen < 2 {
						c.ActionInt[j] = 1
					}
					seen++
				}
			}
			var sites []SiteInput
			var rows []*siteRows
			for k, c := range chunks {
				tb := mapTable(t, m, H, c)
				st, err := solve.NewStatsDisclosed(ctx, tb, m, m.Blocks(), 1, dc)
				if err != nil {
					t.Fatal(err)
				}
				sites = append(sites, SiteInput{Stats: st, Site: names[k]})
				rows = append(rows, newSiteRows(tb, &sites[k].Stats.Map))
			}
			if got := rows[0].leaf(2, 1).len(); m.Kind == features.ActionBlock && got != 2 {
				t.Fatalf("site 0 has action 1 %d times at step 2", got)
			}
			j := &Job{FormatVersion: FormatVersion, ID: "diff", Method: solve.Sitewise, Map: m, H: H, Lambda: 1, C: 5e-4, Xi: 0.05,
				Fallback: solve.FallbackBehaviour, Sites: names, Disclosure: dc, MinSites: 3}
			rel := make([][]released, len(sites))
			s := NewState(j)
			for !s.Done(j) {
				var in []Incoming
				for k, site := range sites {
					msg, err := SiteMessage(ctx, j, s, site)
					if err != nil {
						t.Fatal(err)
					}
					rel[k] = append(rel[k], rows[k].collect(msg)...)
					in = append(in, Incoming{File: site.Site, Msg: msg})
				}
				next, err := Fold(ctx, j, s, in)
				if err != nil {
					t.Fatal(err)
				}
				s = next
			}
			p, err := Policy(j, s)
			if err != nil {
				t.Fatal(err)
			}
			playEvalSeen(t, j, s, p, sites, func(site SiteInput, e *EvalState, msg *Message) {
				k := slicesIndex(names, site.Site)
				rel[k] = append(rel[k], rows[k].collect(msg)...)
			})
			for k := range sites {
				checkDifferencing(t, fmt.Sprintf("%s seed %d site %s", m.Kind, seed, names[k]), K, rel[k])
			}
		}
	}
}
