package solve

// Tests of disclosure control (--min-count, --min-rows): a hand-worked
// case, a dense reference for every map, and bit-for-bit identity when the
// rule suppresses nothing.

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// TestDisclosureHandWorked checks the suppressed Gram, right-hand side,
// released counts and solution of a small action-block case worked by
// hand. Map: A = 2, p = 2 (d = 4, blocks {0,1} and {2,3}); H = 1.
//
//	site a: (1,0) a0 r.2 -> e0;  (1,1) a0 r.4 -> (.5,.5,0,0);
//	        (1,0) a0 r.6 -> e0;  (0,2) a1 r.8 -> e3;  (0,2) a1 r.9 -> e3
//	site b: (1,0) a1 r.5 -> e2   (one row)
//
// Counts at a: feature 0: 3 rows, feature 1: 1, feature 3: 2; actions 0
// and 1: 3 and 2 rows. With MinCount 2 feature 1 is suppressed: the Gram
// is 2.25 at (0,0), 2 at (3,3) and 0 elsewhere, the right-hand side
// (1, 0, 0, 1.7). With MinRows 2 site b is silent: Gram, rows and
// right-hand side 0. With lambda = 1 site a's nu is (1/3.25, 0, 0, 1.7/3)
// and site b's is 0.
func TestDisclosureHandWorked(t *testing.T) {
	m := features.Map{Kind: features.ActionBlock, A: 2, P: 2, StateColumns: []string{"s1", "s2"}}
	rows := []grRow{
		{site: "a", traj: 1, step: 1, action: 0, reward: .2, state: []float64{1, 0}},
		{site: "a", traj: 2, step: 1, action: 0, reward: .4, state: []float64{1, 1}},
		{site: "a", traj: 3, step: 1, action: 0, reward: .6, state: []float64{1, 0}},
		{site: "a", traj: 4, step: 1, action: 1, reward: .8, state: []float64{0, 2}},
		{site: "a", traj: 5, step: 1, action: 1, reward: .9, state: []float64{0, 2}},
		{site: "b", traj: 1, step: 1, action: 1, reward: .5, state: []float64{1, 0}},
	}
	tb := grTable(t, m, rows)
	ctx := context.Background()
	st, err := NewStatsDisclosed(ctx, tb, m, m.Blocks(), 1, Disclosure{MinCount: 2, MinRows: 2})
	if err != nil {
		t.Fatal(err)
	}
	grams, err := st.StepGrams(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Packed layout: block 0 = (0,0), (1,0), (1,1); block 1 = (2,2), (3,2), (3,3).
	if want := []float64{2.25, 0, 0, 0, 0, 2}; !slices.Equal(grams[0].Packed, want) || grams[0].N != 5 {
		t.Errorf("site a: Gram %v, N %v; want %v, N 5", grams[0].Packed, grams[0].N, want)
	}
	if want := make([]float64, 6); !slices.Equal(grams[1].Packed, want) || grams[1].N != 0 {
		t.Errorf("site b (silent): Gram %v, N %v; want zeros", grams[1].Packed, grams[1].N)
	}
	s := &tb.Steps[0]
	all := func(k int) []int {
		var r []int
		for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
			r = append(r, j)
		}
		return r
	}
	r4, r5 := .8, .9 // summed at run time, as the rows are
	if got, want := st.rhsSeq(1, slices.Values(all(0)), nil), []float64{.2 + .5*.4 + .6, 0, 0, r4 + r5}; !slices.Equal(got, want) {
		t.Errorf("site a: rhs %v, want %v", got, want)
	}
	if got := st.rhsSeq(1, slices.Values(all(1)), nil); !slices.Equal(got, make([]float64, 4)) {
		t.Errorf("site b (silent): rhs %v, want zeros", got)
	}
	if got, want := st.Counts(1, 0), []int64{3, 0, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("site a: released counts %v, want %v", got, want)
	}
	if silent, n := st.Suppressed(1, 0); silent || n != 1 {
		t.Errorf("site a: silent %v, %d suppressed; want false, 1", silent, n)
	}
	if silent, _ := st.Suppressed(1, 1); !silent {
		t.Errorf("site b: not silent")
	}
	p, err := NewSolver(st, withBeta(0)).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	// Row-min over sites a (1/3.25, 0, 0, 1.7/3) and b (0, ...).
	if got := p.Runs[0].Steps[0].W; !slices.Equal(got, []float64{0, 0, 0, 0}) {
		t.Errorf("sitewise W = %v, want zeros", got)
	}
	p, err = NewSolver(st, withBeta(0)).Solve(ctx, Problem{Method: Pooled})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Runs[0].Steps[0].W; !near(got[0], 1/3.25, 1e-15) || got[1] != 0 || got[2] != 0 || !near(got[3], 1.7/3, 1e-15) {
		t.Errorf("pooled W = %v, want (1/3.25, 0, 0, 1.7/3)", got)
	}
	// Behaviour counts: actions 0 and 1 three and two rows at a; nothing
	// at b.
	if got := st.BehaviourCounts(1, 0); !slices.Equal(got, []float64{3, 2}) {
		t.Errorf("site a behaviour counts %v, want [3 2]", got)
	}
	if got := st.BehaviourCounts(1, 1); !slices.Equal(got, []float64{0, 0}) {
		t.Errorf("site b behaviour counts %v, want [0 0]", got)
	}
}

// TestDisclosureMatchesDense builds every (site, step) Gram and right-hand
// side by hand from dense phi, zeroing the features the rule withholds
// (released as 0 though counted) and the cells with fewer than R or K
// rows, and compares.
func TestDisclosureMatchesDense(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 3, 3, []int{12, 30, 4}, 5)
		dc := Disclosure{MinCount: 4, MinRows: 6}
		st, err := NewStatsDisclosed(ctx, tb, m, BlocksFor(tb, &m), 2, dc)
		if err != nil {
			t.Fatal(err)
		}
		d := m.Dim()
		for h := 1; h <= tb.H; h++ {
			s := &tb.Steps[h-1]
			grams, err := st.StepGrams(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			vnext := make([]float64, 0)
			if h < tb.H {
				for j := 0; j < tb.Steps[h].Len(); j++ {
					vnext = append(vnext, float64(j%3)/3)
				}
			} else {
				vnext = nil
			}
			for k := range tb.Sites {
				lo, hi := int(s.SiteStart[k]), int(s.SiteStart[k+1])
				count := make([]int, d)
				for j := lo; j < hi; j++ {
					for i, v := range densePhi(&m, s.State[j*tb.W:(j+1)*tb.W], int(s.Action[j])) {
						if v > 0 {
							count[i]++
						}
					}
				}
				G := make([][]float64, d)
				for i := range G {
					G[i] = make([]float64, d)
				}
				b := make([]float64, d)
				n := 0.0
				released := st.Counts(h, k)
				if hi-lo >= max(dc.MinRows, dc.MinCount) {
					for j := lo; j < hi; j++ {
						phi := densePhi(&m, s.State[j*tb.W:(j+1)*tb.W], int(s.Action[j]))
						for i := range phi {
							if count[i] < dc.MinCount || released[i] == 0 {
								phi[i] = 0
							}
						}
						y := s.Reward[j]
						if s.Next[j] >= 0 && vnext != nil {
							y += vnext[s.Next[j]]
						}
						n++
						for x := range phi {
							b[x] += phi[x] * y
							for z := range phi {
								G[x][z] += phi[x] * phi[z]
							}
						}
					}
				}
				if grams[k].N != n {
					t.Fatalf("%s h=%d site %d: N %v, want %v", m.Kind, h, k, grams[k].N, n)
				}
				bl := &st.Layout.Blocks
				for x := 0; x < d; x++ {
					for z := 0; z < d; z++ {
						got := 0.0
						if bl.Of[x] == bl.Of[z] {
							px, pz := int(bl.Pos[x]), int(bl.Pos[z])
							if pz > px {
								px, pz = pz, px
							}
							got = grams[k].Packed[st.Layout.Off[bl.Of[x]]+tri(px, pz)]
						}
						if !near(got, G[x][z], 1e-12) {
							t.Fatalf("%s h=%d site %d: Gram[%d,%d] = %v, want %v", m.Kind, h, k, x, z, got, G[x][z])
						}
					}
				}
				var rows []int
				for j := lo; j < hi; j++ {
					rows = append(rows, j)
				}
				rhs := st.rhsSeq(h, slices.Values(rows), vnext)
				for x := range b {
					if !near(rhs[x], b[x], 1e-12) {
						t.Fatalf("%s h=%d site %d: rhs[%d] = %v, want %v", m.Kind, h, k, x, rhs[x], b[x])
					}
				}
				for i, c := range st.Counts(h, k) {
					if c != 0 && c < int64(dc.MinCount) {
						t.Fatalf("%s h=%d site %d: released count %d of feature %d is below %d", m.Kind, h, k, c, i, dc.MinCount)
					}
				}
			}
		}
	}
}

// TestDisclosureNothingSuppressedIsBitwise checks that the masked path
// with a rule that suppresses nothing (MinCount 1: only features never
// observed; MinRows 1: only empty cells) gives every method's policy bit
// for bit as without disclosure control: w, m, Lambda^{-1} and the
// behaviour table.
func TestDisclosureNothingSuppressedIsBitwise(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 3, 4, []int{20, 35, 15}, 11)
		blocks := BlocksFor(tb, &m)
		plain, err := NewStats(ctx, tb, m, blocks, 2)
		if err != nil {
			t.Fatal(err)
		}
		masked, err := NewStatsDisclosed(ctx, tb, m, blocks, 2, Disclosure{MinCount: 1, MinRows: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range Methods {
			prob := Problem{Method: method}
			if method == Cluster {
				prob.Groups = [][]int{{0, 2}, {1}}
			}
			p0, err := NewSolver(plain, DefaultSettings).Solve(ctx, prob)
			if err != nil {
				t.Fatal(err)
			}
			p1, err := NewSolver(masked, DefaultSettings).Solve(ctx, prob)
			if err != nil {
				t.Fatal(err)
			}
			samePolicy(t, m.Kind.String()+" "+string(method), p0, p1)
		}
	}
}

// samePolicy fails unless p and q have the same coefficients and behaviour
// table, bit for bit.
func samePolicy(t *testing.T, what string, p, q *Policy) {
	t.Helper()
	bits := func(x []float64) []uint64 {
		out := make([]uint64, len(x))
		for i, v := range x {
			out[i] = math.Float64bits(v)
		}
		return out
	}
	if len(p.Runs) != len(q.Runs) || math.Float64bits(p.Beta) != math.Float64bits(q.Beta) {
		t.Fatalf("%s: runs or beta differ", what)
	}
	for r := range p.Runs {
		for h := range p.Runs[r].Steps {
			a, b := &p.Runs[r].Steps[h], &q.Runs[r].Steps[h]
			if !slices.Equal(bits(a.W), bits(b.W)) || !slices.Equal(bits(a.M), bits(b.M)) || !slices.Equal(bits(a.Linv), bits(b.Linv)) {
				t.Fatalf("%s: run %d step %d differs", what, r, h+1)
			}
		}
	}
	for h := range p.BehaviourAction {
		if !slices.Equal(p.BehaviourAction[h], q.BehaviourAction[h]) {
			t.Fatalf("%s: behaviour table at step %d differs: %v vs %v", what, h+1, p.BehaviourAction[h], q.BehaviourAction[h])
		}
	}
}
