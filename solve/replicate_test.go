package solve

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// Replicates split into batches (a memory bound that holds two replicates'
// sums) evaluate to the same bits as in one sweep, the values beside them
// are EvaluatePolicy's bits, and OnRound counts B replicates at each of
// the H rounds in both cases. OnReplicateStep hands every replicate's
// site coefficients once per step, the same bits in batches, and step 1's
// give each replicate's site values.
func TestReplicateBatches(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{20, 30, 10}, 5)
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	const B = 7
	counts := make([]uint8, 60*B)
	for i := range counts {
		counts[i] = uint8((i * 7919) % 3)
	}
	plain, err := NewSolver(st, DefaultSettings).EvaluatePolicy(ctx, p, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	var got [2]*Evaluation
	// coefs[i][(u-1)*B*K+b*K+k]: site k's coefficients of replicate b at
	// step u, handed in run i.
	var coefs [2][][]float64
	var act1 []int32
	for i, bound := range []int64{0, 1} {
		s := DefaultSettings
		sv := NewSolver(st, s)
		// A bound of 2 replicates' sums: 4 batches of 2, 2, 2, 1.
		sv.settings.Tuning.RepBatchBytes = bound * 2 * 8 * (2*3*int64(st.Layout.Size()+2*m.Dim()) + 4*int64(m.Dim()))
		if n := len(sv.repBatches(&Replicates{B: B, Counts: counts}, 60)); (bound == 0) != (n == 1) || (bound == 1 && n != 4) {
			t.Fatalf("bound %d: %d batches", bound, n)
		}
		rounds := 0
		K := len(tb.Sites)
		coefs[i] = make([][]float64, tb.H*B*K)
		onRep := func(u, b0 int, sites [][]float64) error {
			for x, c := range sites {
				at := (u-1)*B*K + b0*K + x
				if coefs[i][at] != nil {
					t.Errorf("bound %d: step %d, replicate %d, site %d handed twice", bound, u, b0+x/K, x%K)
				}
				coefs[i][at] = c
			}
			return nil
		}
		onStep := func(u int, act []int32, _ []float64) error {
			if u == 1 {
				act1 = act
			}
			return nil
		}
		ev, err := sv.Evaluate(ctx, p, 0.3, EvaluateOptions{Replicates: &Replicates{B: B, Counts: counts}, OnRound: func(n int) { rounds += n },
			OnStep: onStep, OnReplicateStep: onRep})
		if err != nil {
			t.Fatal(err)
		}
		if rounds != B*tb.H || len(ev.Replicates) != B {
			t.Errorf("bound %d: OnRound counted %d, %d replicates; want %d, %d", bound, rounds, len(ev.Replicates), B*tb.H, B)
		}
		if math.Float64bits(ev.Value) != math.Float64bits(plain.Value) || math.Float64bits(ev.LowerBound) != math.Float64bits(plain.LowerBound) {
			t.Errorf("bound %d: values %v, %v; EvaluatePolicy %v, %v", bound, ev.Value, ev.LowerBound, plain.Value, plain.LowerBound)
		}
		got[i] = ev
	}
	for b := 0; b < B; b++ {
		x, y := got[0].Replicates[b], got[1].Replicates[b]
		same := math.Float64bits(x.Value) == math.Float64bits(y.Value)
		for k := range x.Sites {
			same = same && math.Float64bits(x.Sites[k]) == math.Float64bits(y.Sites[k])
		}
		if !same {
			t.Errorf("replicate %d: one sweep %+v, batches %+v", b, x, y)
		}
	}
	for at := range coefs[0] {
		if !slices.EqualFunc(coefs[0][at], coefs[1][at], func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }) || coefs[0][at] == nil {
			t.Fatalf("coefficients %d: one sweep %v, batches %v", at, coefs[0][at], coefs[1][at])
		}
	}
	// Step 1's coefficients: each replicate's site value is the mean of
	// the clipped Qhat_1 at the policy's actions over its step-1 rows.
	K, s1 := len(tb.Sites), &tb.Steps[0]
	idx, val := make([]int32, m.MaxNonzeros()), make([]float64, m.MaxNonzeros())
	for b := 0; b < B; b++ {
		for k := 0; k < K; k++ {
			sum, n := 0.0, 0.0
			for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
				c := float64(counts[int(s1.Traj[j])*B+b])
				nz := m.Phi(s1.State[j*tb.W:(j+1)*tb.W], int(act1[j]), idx, val)
				q := 0.0
				for x := 0; x < nz; x++ {
					q += val[x] * coefs[0][b*K+k][idx[x]]
				}
				sum += c * clip(q, float64(tb.H))
				n += c
			}
			if want := got[0].Replicates[b].Sites[k]; math.Abs(sum/n-want) > 1e-12*max(1, math.Abs(want)) {
				t.Errorf("replicate %d, site %d: step 1's coefficients give %v, its value %v", b, k, sum/n, want)
			}
		}
	}
}

// Replicates with SitesOnly give each site's value the bits of the full
// replicates (in one sweep and in batches, with the Grams' factors shared
// or not) and a NaN robust value.
func TestReplicateSitesOnly(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{20, 30, 10}, 5)
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	const B = 7
	counts := make([]uint8, 60*B)
	for i := range counts {
		counts[i] = uint8((i * 7919) % 3)
	}
	full, err := NewSolver(st, DefaultSettings).Evaluate(ctx, p, 0.3, EvaluateOptions{Replicates: &Replicates{B: B, Counts: counts}})
	if err != nil {
		t.Fatal(err)
	}
	for _, bound := range []int64{0, 1} {
		sv := NewSolver(st, DefaultSettings)
		sv.settings.Tuning.RepBatchBytes = bound * 2 * 8 * (2*3*int64(st.Layout.Size()+2*m.Dim()) + 4*int64(m.Dim()))
		ev, err := sv.Evaluate(ctx, p, 0.3, EvaluateOptions{Replicates: &Replicates{B: B, Counts: counts, SitesOnly: true}})
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < B; b++ {
			x, y := full.Replicates[b], ev.Replicates[b]
			if !math.IsNaN(y.Value) {
				t.Errorf("bound %d, replicate %d: robust value %v, want NaN", bound, b, y.Value)
			}
			for k := range x.Sites {
				if math.Float64bits(x.Sites[k]) != math.Float64bits(y.Sites[k]) {
					t.Errorf("bound %d, replicate %d, site %d: %v, want %v", bound, b, k, y.Sites[k], x.Sites[k])
				}
			}
		}
	}
	// The Grams' factors shared with an earlier evaluation.
	st.ShareReplicateFactors()
	for i := 0; i < 2; i++ {
		ev, err := NewSolver(st, DefaultSettings).Evaluate(ctx, p, 0.3, EvaluateOptions{Replicates: &Replicates{B: B, Counts: counts, SitesOnly: i == 1}})
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < B; b++ {
			for k, v := range full.Replicates[b].Sites {
				if math.Float64bits(v) != math.Float64bits(ev.Replicates[b].Sites[k]) {
					t.Errorf("shared, pass %d, replicate %d, site %d: %v, want %v", i, b, k, ev.Replicates[b].Sites[k], v)
				}
			}
		}
	}
}

// An evaluation handed its policy's decisions (EvaluateOptions.Decisions,
// from ActAll) gives the bits of one that decides itself: the values,
// the lower bound, the replicates and the actions OnStep sees. Decisions
// of the wrong length are refused.
func TestEvaluateGivenDecisions(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{20, 30, 10}, 5)
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	const B = 5
	counts := make([]uint8, 60*B)
	for i := range counts {
		counts[i] = uint8((i * 7919) % 3)
	}
	for _, method := range []Method{Sitewise, PEVIMin, Behaviour} {
		p, err := sv.Solve(ctx, Problem{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		acts, evs, err := ActAll(ctx, p, tb, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got [2]*Evaluation
		var seen [2][]int32
		for i, o := range []EvaluateOptions{{}, {Decisions: acts, Evidence: evs}} {
			o.Replicates = &Replicates{B: B, Counts: counts}
			o.OnStep = func(u int, act []int32, _ []float64) error {
				seen[i] = append(seen[i], act...)
				return nil
			}
			if got[i], err = sv.Evaluate(ctx, p, 0.3, o); err != nil {
				t.Fatal(err)
			}
		}
		a, b := got[0], got[1]
		same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
		ok := same(a.Value, b.Value) && same(a.LowerBound, b.LowerBound) && len(a.Replicates) == len(b.Replicates)
		for k := range a.Sites {
			ok = ok && same(a.Sites[k], b.Sites[k])
		}
		for r := range a.Replicates {
			ok = ok && same(a.Replicates[r].Value, b.Replicates[r].Value)
			for k := range a.Replicates[r].Sites {
				ok = ok && same(a.Replicates[r].Sites[k], b.Replicates[r].Sites[k])
			}
		}
		if !ok {
			t.Errorf("%s: deciding %+v, given the decisions %+v", method, a, b)
		}
		if len(seen[0]) != tb.Rows || !slices.Equal(seen[0], seen[1]) {
			t.Errorf("%s: OnStep saw other actions given the decisions", method)
		}
		if _, err := sv.Evaluate(ctx, p, 0.3, EvaluateOptions{Decisions: acts[1:], Evidence: evs[1:]}); err == nil {
			t.Errorf("%s: decisions for %d of %d rows accepted", method, len(acts)-1, tb.Rows)
		}
	}
}

// blockRows gives an action-block row's features at any action as Phi
// forms them, from those at the row's own action.
func TestBlockRows(t *testing.T) {
	m := features.Map{Kind: features.ActionBlock, A: 4, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	states := [][]float64{{0.2, 0.3, 0.5}, {0, 1.5, 2}, {3, 0, 0}, {0, 0, 0}}
	var b blockRows
	b.reset(len(states), m.P)
	idx, val := make([]int32, m.P), make([]float64, m.P)
	for j, s := range states {
		n := m.Phi(s, j%m.A, idx, val)
		b.set(j, j%m.A, idx[:n], val[:n])
	}
	gi, gv := make([]int32, m.P), make([]float64, m.P)
	for j, s := range states {
		for a := 0; a < m.A; a++ {
			n := m.Phi(s, a, idx, val)
			if g := b.at(j, a, gi, gv); g != n || !slices.Equal(gi[:g], idx[:n]) || !slices.Equal(gv[:g], val[:n]) {
				t.Errorf("row %d, action %d: %v %v, Phi %v %v", j, a, gi[:g], gv[:g], idx[:n], val[:n])
			}
		}
	}
}
