package federate

// The behaviour fallback's last level in a federated job: a step where no
// action has any released count takes the most frequent action over all
// steps, which the coordinator knows once every step is folded; the
// policy equals the central solve's bit for bit.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// osChunks returns the hand-worked rows of sites a, b and c for map m
// (the state is a cell, 0 or 1; an action-block map gets its indicator):
//
//	step 1, every site: 11 rows in state 0 (actions 0 x5, 2 x6) and 10 in
//	        state 1 (actions 1 x5, 2 x5);
//	step 2, every site: 3 rows in state 0 taking action 1 and 3 in state 1
//	        taking action 0;
//	steps 3 and 4: with oneSite, 6 rows of site a taking action 1, 3 in
//	        each state; none otherwise (H = 4).
//
// Under min count 5 every count per (cell, action) of steps 2, 3 and 4 is
// below 5 and withheld, though no site is silent (each has at least 5 rows
// there).
func osChunks(m features.Map, oneSite bool) ([]string, []*traj.Chunk) {
	names := []string{"a", "b", "c"}
	var chunks []*traj.Chunk
	for _, site := range names {
		c := &traj.Chunk{Src: traj.Origin{File: site}, W: m.Width()}
		add := func(tr, h, s, a int) {
			c.SiteStr = append(c.SiteStr, site)
			c.TrajInt = append(c.TrajInt, int64(tr))
			c.Step = append(c.Step, int64(h))
			c.ActionInt = append(c.ActionInt, int64(a))
			c.Reward = append(c.Reward, 0.5)
			if m.Kind == features.ActionBlock {
				st := make([]float64, m.P)
				st[s] = 1
				c.State = append(c.State, st...)
			} else {
				c.State = append(c.State, float64(s))
			}
		}
		tr := 0
		for _, x := range []struct{ s, a, n int }{{0, 0, 5}, {0, 2, 6}, {1, 1, 5}, {1, 2, 5}} {
			for range x.n {
				add(tr, 1, x.s, x.a)
				tr++
			}
		}
		for tr := range 6 {
			add(tr, 2, tr/3, 1-tr/3)
			if oneSite && site == "a" {
				add(tr, 3, tr%2, 1)
				add(tr, 4, tr%2, 1)
			}
		}
		chunks = append(chunks, c)
	}
	return names, chunks
}

// TestFederatedBehaviourOverSteps checks the tables by hand and against the
// central solve, bit for bit, for a map with cells and one without, steps
// without rows at every site or at all but one, with and without
// disclosure control (min count 5 withholds every count of step 2 and
// the tabular map's of steps 3 and 4).
//
// Counts per action: 15, 15, 33 at step 1; 9, 9, 0 at step 2 (the cells'
// modes 1 and 0, the step's 0 by the tie); with oneSite 0, 6, 0 at steps
// 3 and 4. Without disclosure control and oneSite false the most frequent
// over the steps is 2 (24, 24, 33), for steps 3 and 4; under it only step
// 1 is released, and steps 2, 3 and 4 take its action 2. The action-block
// map's counts are per action, not per (cell, action): site a's 6 rows of
// action 1 at steps 3 and 4 are released, and those steps take action 1.
func TestFederatedBehaviourOverSteps(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, m := range []features.Map{
		{Kind: features.Tabular, A: 3, S: 2, StateColumns: []string{"state"}},
		{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}},
	} {
		for _, oneSite := range []bool{false, true} {
			for _, dc := range []solve.Disclosure{{}, {MinCount: 5}} {
				// The steps' tables, for the map with cells (one action per
				// cell) and without (one per step).
				want := [][]int32{{2, 1}, {1, 0}, {2, 2}, {2, 2}}
				if m.Kind == features.ActionBlock {
					want = [][]int32{{2}, {0}, {2}, {2}}
				}
				if dc.Active() {
					want[1] = want[2] // the most frequent over steps
				}
				if oneSite && (!dc.Active() || m.Kind == features.ActionBlock) {
					want[2] = []int32{1, 1}[:len(want[2])]
					want[3] = want[2]
				}
				names, chunks := osChunks(m, oneSite)
				central := buildTable(t, m, H, chunks...)
				cst := centralStats(t, central, m, dc)
				sites := siteInputs(t, m, H, names, chunks, dc)
				for _, method := range solve.Methods {
					what := fmt.Sprintf("%s %s oneSite=%v %+v", m.Kind, method, oneSite, dc)
					j := testJob(method, m, H, names, dc)
					prob := jobProblem(t, j, central, []Cluster{{Name: "north", Sites: []string{"a", "c"}}, {Name: "south", Sites: []string{"b"}}})
					cen, err := solve.NewSolver(cst, solve.DefaultSettings).Solve(ctx, prob)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.EqualFunc(cen.BehaviourAction, want, slices.Equal) {
						t.Fatalf("%s: central tables %v, want %v", what, cen.BehaviourAction, want)
					}
					got := runJob(t, j, sites)
					samePolicy(t, what, cen, got)
					if len(got.BehaviourAction) != H {
						t.Fatalf("%s: federated tables for %d steps, want %d", what, len(got.BehaviourAction), H)
					}
				}
			}
		}
	}
}

// TestBehaviourOverStepsOldState checks that a job whose state was written
// before the state kept the steps' counts per action (no
// behaviour_action_counts) still folds to its end, its tables as folded:
// a step without counts keeps action 0.
func TestBehaviourOverStepsOldState(t *testing.T) {
	ctx := context.Background()
	const H = 4
	m := features.Map{Kind: features.Tabular, A: 3, S: 2, StateColumns: []string{"state"}}
	names, chunks := osChunks(m, false)
	sites := siteInputs(t, m, H, names, chunks, solve.Disclosure{})
	j := testJob(solve.Sitewise, m, H, names, solve.Disclosure{})
	s := NewState(j)
	for !s.Done(j) {
		var in []Incoming
		for _, site := range sites {
			msg, err := SiteMessage(ctx, j, s, site)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, Incoming{File: site.Site, Msg: msg})
		}
		next, err := Fold(ctx, j, s, in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(next)
		if err != nil {
			t.Fatal(err)
		}
		if next.Round == 1 {
			// The state as an older coordinator wrote it after round 0.
			var raw map[string]any
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw["behaviour_action_counts"]; !ok {
				t.Fatalf("the state lacks behaviour_action_counts: %s", b)
			}
			delete(raw, "behaviour_action_counts")
			if b, err = json.Marshal(raw); err != nil {
				t.Fatal(err)
			}
		}
		s = &State{}
		if err := json.Unmarshal(b, s); err != nil {
			t.Fatal(err)
		}
		if err := s.check(j); err != nil {
			t.Fatalf("round %d: %v", s.Round, err)
		}
	}
	p, err := Policy(j, s)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{{2, 1}, {1, 0}, {0, 0}, {0, 0}}
	if !slices.EqualFunc(p.BehaviourAction, want, slices.Equal) {
		t.Fatalf("tables %v, want %v (as folded)", p.BehaviourAction, want)
	}
}
