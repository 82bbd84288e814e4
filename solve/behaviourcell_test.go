package solve

import (
	"context"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// A binned map's behaviour fallback is its cell's most frequent action, not
// the step's: here action 1 is the step's most frequent action, yet in the
// low cell (lactate <= 2) action 0 is. Under disclosure control the table
// comes from the released counts per (cell, action).
func TestBehaviourPerBinnedCell(t *testing.T) {
	m := features.Map{Kind: features.Binned, A: 3, StateColumns: []string{"lactate"},
		Bins: []features.Bins{{Column: "lactate", Cuts: []float64{2}}}}
	var rows []grRow
	tr := 0
	add := func(n, action int, lactate float64) {
		for range n {
			for _, site := range []string{"a", "b"} {
				rows = append(rows, grRow{site: site, traj: tr, step: 1, action: action, reward: 0.5, state: []float64{lactate}})
			}
			tr++
		}
	}
	add(6, 0, 1)   // low cell: action 0 six times
	add(5, 1, 1.5) // low cell: action 1 five times
	add(9, 1, 3)   // high cell: action 1 nine times
	add(5, 2, 4)   // high cell: action 2 five times
	tb := grTable(t, m, rows)
	_, _, p := grSolve(t, tb, m, withBeta(1e6), Sitewise)
	if want := [][]int32{{0, 1}}; !slices.EqualFunc(p.BehaviourAction, want, slices.Equal) {
		t.Fatalf("behaviour table %v, want %v (cell modes, not the step's action 1)", p.BehaviourAction, want)
	}
	for _, c := range []struct {
		lactate float64
		want    int
	}{{0.5, 0}, {2, 0}, {2.1, 1}, {9, 1}} {
		q := make([]float64, m.A)
		a, _, ev := p.Act(1, []float64{c.lactate}, q)
		if ev || a != c.want {
			t.Errorf("lactate %v: action %d (evidence %v), want the cell's fallback %d", c.lactate, a, ev, c.want)
		}
	}
	// Disclosure control at K = 5 withholds nothing: the table is the same,
	// from the sites' released counts per (cell, action).
	ctx := context.Background()
	st, err := NewStatsDisclosed(ctx, tb, m, BlocksFor(tb, &m), 1, Disclosure{MinCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	pd, err := NewSolver(st, withBeta(1e6)).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int32{{0, 1}}; !slices.EqualFunc(pd.BehaviourAction, want, slices.Equal) {
		t.Fatalf("disclosed behaviour table %v, want %v", pd.BehaviourAction, want)
	}
	if got := st.BehaviourCounts(1, 0); !slices.Equal(got, []float64{6, 5, 0, 0, 9, 5}) {
		t.Errorf("site a's released counts per (cell, action) %v, want [6 5 0 0 9 5]", got)
	}
}
