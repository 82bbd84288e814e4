package solve

// Tests of the behaviour fallback's last level: a step where no action has
// any count (no rows, only rows of weight 0, or every count withheld by
// disclosure control) takes the most frequent action over all steps.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// osRows is the hand-worked data: sites a and b, each with
//
//	step 1: 11 rows in state 0 (actions 0 x5, 2 x6) and 10 in state 1
//	        (actions 1 x5, 2 x5: a tie);
//	step 2: 2 rows in state 0, both action 1;
//	steps 3 and 4: no rows (H = 4 is declared).
//
// Step 1's table is [2 1] (cell 1's tie to the lowest); step 2's [1 1]
// (state 1 unseen: the step's action 1). Over the steps the actions are
// counted 10, 14, 22 times: steps 3 and 4 take action 2. Under disclosure
// control with min count 5, step 2 (2 rows per site) is silent at both
// sites: it has no count either and takes action 2, the most frequent over
// the released counts (10, 10, 22).
func osRows() []grRow {
	var rows []grRow
	for _, site := range []string{"a", "b"} {
		add := func(tr, h, s, a int) {
			rows = append(rows, grRow{site: site, traj: tr, step: h, action: a, reward: 0.5, state: []float64{float64(s)}})
		}
		tr := 0
		for _, c := range []struct{ s, a, n int }{{0, 0, 5}, {0, 2, 6}, {1, 1, 5}, {1, 2, 5}} {
			for range c.n {
				add(tr, 1, c.s, c.a)
				tr++
			}
		}
		add(0, 2, 0, 1)
		add(1, 2, 0, 1)
	}
	return rows
}

// osTable builds a table of H steps from rows for map m, whose state
// column holds the cell (an action-block map gets the cell's indicator).
func osTable(t testing.TB, m features.Map, H int, rows []grRow) *traj.Table {
	t.Helper()
	spec := traj.StateSpec{Columns: m.StateColumns}
	if m.Kind == features.ActionBlock {
		spec.NonzeroSum = true
	} else {
		spec.Integer, spec.Max = true, m.S
	}
	b := traj.NewBuilder(traj.Options{State: spec, Actions: m.A, Horizon: H})
	c := &traj.Chunk{Src: traj.Origin{File: "hand"}, W: m.Width()}
	for _, r := range rows {
		c.SiteStr = append(c.SiteStr, r.site)
		c.TrajInt = append(c.TrajInt, int64(r.traj))
		c.Step = append(c.Step, int64(r.step))
		c.ActionInt = append(c.ActionInt, int64(r.action))
		c.Reward = append(c.Reward, r.reward)
		if m.Kind == features.ActionBlock {
			s := make([]float64, m.P)
			s[int(r.state[0])] = 1
			c.State = append(c.State, s...)
		} else {
			c.State = append(c.State, r.state...)
		}
	}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// osMaps are a map whose features are indicators of cells (one table
// entry per cell) and one whose are not (one entry per step).
func osMaps() []features.Map {
	return []features.Map{
		{Kind: features.Tabular, A: 3, S: 2, StateColumns: []string{"state"}},
		{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}},
	}
}

func TestBehaviourOverSteps(t *testing.T) {
	ctx := context.Background()
	for _, m := range osMaps() {
		cells := map[bool][][]int32{
			// By disclosure control: off, on.
			false: {{2, 1}, {1, 1}, {2, 2}, {2, 2}},
			true:  {{2, 1}, {2, 2}, {2, 2}, {2, 2}},
		}
		steps := map[bool][][]int32{false: {{2}, {1}, {2}, {2}}, true: {{2}, {2}, {2}, {2}}}
		want := cells
		if m.Kind == features.ActionBlock {
			want = steps
		}
		tb := osTable(t, m, 4, osRows())
		if tb.Steps[2].Len() != 0 || tb.Steps[3].Len() != 0 {
			t.Fatalf("fixture: steps 3 and 4 hold rows")
		}
		for _, disclosed := range []bool{false, true} {
			dc := Disclosure{}
			if disclosed {
				dc.MinCount = 5
			}
			st, err := NewStatsDisclosed(ctx, tb, m, BlocksFor(tb, &m), 2, dc)
			if err != nil {
				t.Fatal(err)
			}
			if disclosed {
				if silent, _ := st.Suppressed(2, 0); !silent {
					t.Fatalf("fixture: site a is not silent at step 2")
				}
			}
			name := m.Kind.String()
			if disclosed {
				name += " min count 5"
			}
			for _, method := range []Method{Sitewise, Behaviour} {
				// A penalty so large that no decision has evidence: every
				// decision is the fallback's.
				p, err := NewSolver(st, withBeta(1e6)).Solve(ctx, Problem{Method: method})
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(p.BehaviourAction, want[disclosed], slices.Equal) {
					t.Fatalf("%s %s: behaviour tables %v, want %v", name, method, p.BehaviourAction, want[disclosed])
				}
				// The policy artifact keeps them: apply and show decide
				// at the empty steps as the solve did.
				back := grRoundTrip(t, p)
				q := make([]float64, m.A)
				for h := 3; h <= 4; h++ {
					for s := 0; s < 2; s++ {
						state := []float64{float64(s)}
						if m.Kind == features.ActionBlock {
							state = []float64{1 - float64(s), float64(s)}
						}
						for _, pol := range []*Policy{p, back} {
							a, _, ev := pol.Act(h, state, q)
							if a != 2 || ev != (method == Behaviour) {
								t.Errorf("%s %s: step %d state %d: action %d (evidence %v), want 2, the most frequent over steps", name, method, h, s, a, ev)
							}
						}
					}
				}
			}
		}
	}
}

// TestCompleteBehaviourTies checks the last level's rule on counts per
// action given by hand: the steps' counts summed, ties to the lowest
// action, action 0 when no step has a count; the steps with counts keep
// their tables, and the input is not changed.
func TestCompleteBehaviourTies(t *testing.T) {
	for _, c := range []struct {
		name string
		acts [][]float64
		want int32
	}{
		{"tie between 1 and 2", [][]float64{{0, 2, 3}, {0, 3, 2}, {0, 0, 0}}, 1},
		{"2 most frequent", [][]float64{{4, 2, 3}, {0, 0, 3}, {0, 0, 0}}, 2},
		{"three-way tie", [][]float64{{1, 0, 0}, {0, 1, 1}, {0, 0, 0}}, 0},
		{"no counts at all", [][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, 0},
	} {
		tabs := [][]int32{{7, 8}, {9, 9}, {0, 0}}
		in := slices.Clone(tabs)
		got := CompleteBehaviour(tabs, c.acts)
		for h := range got {
			want := tabs[h]
			if !slices.ContainsFunc(c.acts[h], func(v float64) bool { return v != 0 }) {
				want = []int32{c.want, c.want}
			}
			if !slices.Equal(got[h], want) {
				t.Errorf("%s: step %d's table %v, want %v", c.name, h+1, got[h], want)
			}
		}
		if !reflect.DeepEqual(tabs, in) {
			t.Errorf("%s: the input tables changed to %v", c.name, tabs)
		}
	}
}

// TestBehaviourOverStepsStreamed checks that out of core the tables, and
// the sample's decisions, are those of the in-memory solve: with steps
// without rows, and with a step whose only rows weigh 0 (rows the
// builder keeps for censored episodes), whose decisions the sample makes
// before the over-steps action is known.
func TestBehaviourOverStepsStreamed(t *testing.T) {
	ctx := context.Background()
	for _, m := range osMaps() {
		for _, weightless := range []bool{false, true} {
			rows := osRows()
			if weightless {
				// Site a's trajectories 0 and 1 reach step 3 in state 1,
				// with action 0, rows of weight 0.
				for tr := range 2 {
					rows = append(rows, grRow{site: "a", traj: tr, step: 3, action: 0, reward: 0.5, state: []float64{1}})
				}
			}
			tb := osTable(t, m, 4, rows)
			if weightless {
				tb.Steps[2].Weight = make([]float64, tb.Steps[2].Len())
			}
			blocks := BlocksFor(tb, &m)
			st, err := NewStats(ctx, tb, m, blocks, 2)
			if err != nil {
				t.Fatal(err)
			}
			cellRows := make([][]int, tb.H)
			for h := range cellRows {
				cellRows[h] = make([]int, len(tb.Sites))
				for k := range cellRows[h] {
					cellRows[h][k] = int(tb.Steps[h].SiteStart[k+1] - tb.Steps[h].SiteStart[k])
				}
			}
			for _, s := range []Settings{withBeta(1e6), DefaultSettings} {
				probs := everyProblem()
				probs[0].Groups = [][]int{{0}, {1}}
				got, err := SolveStreamed(ctx, &windowReader{t: tb}, m, blocks, s, probs, cellRows, tb.Rows)
				if err != nil {
					t.Fatal(err)
				}
				for i, prob := range probs {
					name := m.Kind.String() + "/" + string(prob.Method)
					want, err := NewSolver(st, s).Solve(ctx, prob)
					if err != nil {
						t.Fatal(err)
					}
					if want.BehaviourAction[2][0] != 2 || want.BehaviourAction[3][0] != 2 {
						t.Fatalf("%s: in memory, steps 3 and 4 take %v and %v, want 2", name, want.BehaviourAction[2], want.BehaviourAction[3])
					}
					p := got.Policies[i]
					if !reflect.DeepEqual(p.BehaviourAction, want.BehaviourAction) {
						t.Fatalf("%s weightless=%v: streamed tables %v, in memory %v", name, weightless, p.BehaviourAction, want.BehaviourAction)
					}
					acts, evs, err := ActAll(ctx, want, tb, 0, s.Tuning.stride(tb.Rows))
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got.Actions[i], acts) || !reflect.DeepEqual(got.Evidence[i], evs) {
						t.Fatalf("%s weightless=%v beta %v: sampled actions %v, ActAll's %v", name, weightless, s.Beta, got.Actions[i], acts)
					}
				}
			}
		}
	}
}

// TestBehaviourOverStepsLockstep checks the last level in a lockstep run
// that leaves out the only trajectories reaching step 2: its step 2 has
// no counts and takes the most frequent action over the other folds'
// steps (10, 10, 22 at step 1: action 2), as the separate solve on the
// reweighted table does.
func TestBehaviourOverStepsLockstep(t *testing.T) {
	ctx := context.Background()
	for _, m := range osMaps() {
		tb := osTable(t, m, 4, osRows())
		of := make([]int32, ntrajOf(tb))
		for i := range of {
			of[i] = 1
		}
		for _, tr := range tb.Steps[1].Traj {
			of[tr] = 0
		}
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
		if err != nil {
			t.Fatal(err)
		}
		var runs []RunSpec
		for _, method := range []Method{Sitewise, Behaviour} {
			for _, hold := range []int{-1, 0} {
				runs = append(runs, RunSpec{Holdout: hold, Problem: Problem{Method: method}, Settings: withBeta(1e6)})
			}
		}
		got, err := SolveLockstep(ctx, st, Folds{Of: of, K: 2}, runs, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range runs {
			sst, err := NewStats(ctx, trainingTable(tb, of, int32(r.Holdout)), m, BlocksFor(tb, &m), 0)
			if err != nil {
				t.Fatal(err)
			}
			want, err := NewSolver(sst, r.Settings).Solve(ctx, r.Problem)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%v %s fold %d", m.Kind, r.Problem.Method, r.Holdout)
			sameLockstepPolicy(t, name, want, got[i])
			if step2 := got[i].BehaviourAction[1]; r.Holdout == 0 && step2[0] != 2 {
				t.Errorf("%s: step 2 takes %v, want 2 (the most frequent over steps)", name, step2)
			}
		}
	}
}
