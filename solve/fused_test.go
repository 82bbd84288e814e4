package solve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// bitsEqual reports whether x and y hold the same float64 bits.
func bitsEqual(x, y []float64) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// everyProblem is every method over four sites, clusters {0, 2} and
// {1, 3} for the cluster method.
func everyProblem() []Problem {
	probs := []Problem{{Method: Cluster, Groups: [][]int{{0, 2}, {1, 3}}}}
	for _, meth := range Methods {
		if meth != Cluster {
			probs = append(probs, Problem{Method: meth})
		}
	}
	return probs
}

// TestPrepareMatchesSolveAlone checks that running every method's passes in
// lockstep (Prepare, as compare does) gives bit for bit the policies that
// each method's own solver gives, for every map, with and without
// stationarity and for several worker counts.
func TestPrepareMatchesSolveAlone(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 4, 5, []int{40, 25, 60, 10}, 3)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
		if err != nil {
			t.Fatal(err)
		}
		probs := everyProblem()
		for _, stationary := range []bool{false, true} {
			for _, workers := range []int{1, 3} {
				s := DefaultSettings
				s.C, s.Stationary, s.Workers = 2e-3, stationary, workers
				fused := NewSolver(st, s)
				if err := fused.Prepare(ctx, probs); err != nil {
					t.Fatal(err)
				}
				prepared := len(fused.runs)
				for _, prob := range probs {
					alone, err := NewSolver(st, s).Solve(ctx, prob)
					if err != nil {
						t.Fatal(err)
					}
					got, err := fused.Solve(ctx, prob)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprint(m.Kind) + "/" + string(prob.Method)
					if math.Float64bits(got.ValueEstimate) != math.Float64bits(alone.ValueEstimate) || got.Beta != alone.Beta || len(got.Runs) != len(alone.Runs) {
						t.Fatalf("%s stationary=%v: value %v beta %v runs %d, alone %v %v %d", name, stationary,
							got.ValueEstimate, got.Beta, len(got.Runs), alone.ValueEstimate, alone.Beta, len(alone.Runs))
					}
					for r := range got.Runs {
						for h := range got.Runs[r].Steps {
							g, a := &got.Runs[r].Steps[h], &alone.Runs[r].Steps[h]
							if !bitsEqual(g.W, a.W) || !bitsEqual(g.M, a.M) || !bitsEqual(g.Linv, a.Linv) ||
								!bitsEqual(g.NoEvidenceBySite, a.NoEvidenceBySite) ||
								!bitsEqual([]float64{g.Penalty, g.PenaltyTerms}, []float64{a.Penalty, a.PenaltyTerms}) {
								t.Fatalf("%s stationary=%v workers=%d: run %d step %d differs from the method solved alone", name, stationary, workers, r, h+1)
							}
						}
					}
				}
				// Solve found every pass prepared: none was added.
				if len(fused.runs) != prepared || prepared == 0 {
					t.Fatalf("%v stationary=%v: %d passes prepared, %d after solving", m.Kind, stationary, prepared, len(fused.runs))
				}
			}
		}
	}
}

// TestPeviBestIsMaxOfPeviQ checks the PEVI fast path that skips actions
// which cannot raise the maximum against the maximum of every action's
// Qhat, bit for bit, on states with and without zero coordinates.
func TestPeviBestIsMaxOfPeviQ(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for _, p := range []int{1, 2, 3, 5} {
		m := features.Map{Kind: features.ActionBlock, A: 6, P: p}
		l := NewLayout(m.Blocks())
		nu := make([]float64, m.Dim())
		linv := make([]float64, l.Size())
		for trial := 0; trial < 2000; trial++ {
			for i := range nu {
				nu[i] = 4*rng.Float64() - 1
			}
			fillPackedPD(rng, linv, &l, m.A, p)
			state := make([]float64, p)
			for i := range state {
				if rng.IntN(3) > 0 {
					state[i] = rng.Float64()
				}
			}
			state[rng.IntN(p)] = 0.5
			beta := []float64{0, 0.05, 0.7, 3}[trial%4]
			top := 1 + float64(trial%3)
			q := make([]float64, m.A)
			var row phiRow
			row.prepare(&m, state)
			peviQ(&row, &l, nu, linv, beta, top, q)
			want := 0.0
			for _, x := range q {
				want = max(want, x)
			}
			got := peviBest(&row, &l, nu, linv, beta, top, make([]float64, m.A))
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("p=%d trial %d: peviBest %v, max of peviQ %v", p, trial, got, want)
			}
		}
	}
}

// sameBits reports whether x and y have the same bits, any NaN matching
// any NaN (the built-ins do not fix a NaN's payload).
func sameBits(x, y float64) bool {
	return math.Float64bits(x) == math.Float64bits(y) || x != x && y != y
}

// clip and nonneg replace min/max by comparisons: the same bits, NaN and
// signed zeros included.
func TestClipBits(t *testing.T) {
	xs := []float64{math.NaN(), math.Inf(-1), -3, -1e-300, math.Copysign(0, -1), 0, 1e-300, 0.5, 1, 2, 2.5, 7, math.Inf(1)}
	for _, top := range []float64{1, 2, 20} {
		for _, x := range xs {
			if got, want := clip(x, top), max(min(x, top), 0); !sameBits(got, want) {
				t.Errorf("clip(%v, %v) = %v, want %v", x, top, got, want)
			}
			if got, want := nonneg(x), max(x, 0); !sameBits(got, want) {
				t.Errorf("nonneg(%v) = %v, want %v", x, got, want)
			}
		}
	}
}

// ActAllMany shares the runs of pevi-avg and pevi-min and gives each
// policy exactly ActAll's actions and evidence.
func TestActAllManyMatchesActAll(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 3, 4, []int{30, 20, 40}, 5)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
		if err != nil {
			t.Fatal(err)
		}
		sv := NewSolver(st, Settings{Lambda: 1, C: 3e-3, Xi: 0.05, Fallback: FallbackBehaviour})
		var ps []*Policy
		for _, meth := range []Method{Sitewise, PEVIAvg, Pooled, PEVIMin, PEVIPooled, Behaviour} {
			p, err := sv.Solve(ctx, Problem{Method: meth})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		if !sameRuns(ps[1], ps[3]) {
			t.Fatalf("%v: pevi-avg and pevi-min do not share their runs", m.Kind)
		}
		for _, stride := range []int{1, 3} {
			acts, evs, err := ActAllMany(ctx, ps, tb, 2, stride)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range ps {
				a, e, err := ActAll(ctx, p, tb, 1, stride)
				if err != nil {
					t.Fatal(err)
				}
				// ActAll is ActAllMany of one policy: check it against Act.
				for h, j, gj := 1, 0, 0; h <= tb.H; h++ {
					s := &tb.Steps[h-1]
					for j = 0; j < s.Len(); j, gj = j+1, gj+1 {
						if gj%stride != 0 {
							continue
						}
						wa, _, we := p.Act(h, s.State[j*tb.W:(j+1)*tb.W], make([]float64, tb.A))
						if int32(wa) != a[gj/stride] || we != e[gj/stride] {
							t.Fatalf("%v %s: ActAll at row %d is %d/%v, Act %d/%v", m.Kind, p.Method, gj, a[gj/stride], e[gj/stride], wa, we)
						}
					}
				}
				if !slices.Equal(acts[i], a) || !slices.Equal(evs[i], e) {
					t.Fatalf("%v %s stride %d: ActAllMany differs from ActAll", m.Kind, p.Method, stride)
				}
			}
		}
	}
}

// TestPerRoundFactorsMatchCached checks that building each round's factors
// (as for large tabular maps) gives bit for bit what the cached factors of
// every (group, step) give: every map and method, solved alone and in
// lockstep, including the site-wise coefficients of the Delta diagnostics.
// So do statistics that compute each step's Grams when a round needs them.
func TestPerRoundFactorsMatchCached(t *testing.T) {
	ctx := context.Background()
	solveAll := func(st *Stats, s Settings, perRound bool) []*Policy {
		t.Helper()
		if perRound {
			s.Tuning.FactorCacheBytes = -1
		}
		probs := everyProblem()
		fused := NewSolver(st, s)
		if err := fused.Prepare(ctx, probs); err != nil {
			t.Fatal(err)
		}
		var out []*Policy
		for _, prob := range probs {
			p, err := fused.Solve(ctx, prob)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := NewSolver(st, s).Solve(ctx, prob)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p, alone)
		}
		return out
	}
	for _, m := range testMaps() {
		tb := randomTable(t, m, 4, 5, []int{40, 25, 60, 10}, 11)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
		if err != nil {
			t.Fatal(err)
		}
		// The same statistics with each step's Grams computed when a
		// round needs them (as for large tabular maps).
		lazy, err := newStats(ctx, tb, m, BlocksFor(tb, &m), 0, Tuning{GramCacheBytes: -1})
		if err != nil {
			t.Fatal(err)
		}
		if lazy.Cells != nil && lazy.counts == nil {
			t.Fatalf("%v: NewStats kept the Grams above tuning.GramCacheBytes", m.Kind)
		}
		s := DefaultSettings
		s.C, s.Workers = 2e-3, 2
		for _, c := range []struct {
			name       string
			st         *Stats
			perRound   bool
			stationary bool
		}{
			{"per-round factors", st, true, false},
			{"per-step Grams, cached factors", lazy, false, false},
			{"per-step Grams, per-round factors", lazy, true, false},
			{"per-step Grams, stationary", lazy, false, true},
		} {
			s := s
			s.Stationary = c.stationary
			comparePolicies(t, fmt.Sprint(m.Kind, " ", c.name), solveAll(st, s, false), solveAll(c.st, s, c.perRound))
		}
	}
}

// comparePolicies fails unless got's policies equal want's bit for bit.
func comparePolicies(t *testing.T, what string, want, got []*Policy) {
	t.Helper()
	for i := range want {
		w, g := want[i], got[i]
		name := fmt.Sprint(what, "/", w.Method)
		if math.Float64bits(g.ValueEstimate) != math.Float64bits(w.ValueEstimate) || len(g.Runs) != len(w.Runs) {
			t.Fatalf("%s: value %v with %d runs, cached %v with %d", name, g.ValueEstimate, len(g.Runs), w.ValueEstimate, len(w.Runs))
		}
		for r := range w.Runs {
			for h := range w.Runs[r].Steps {
				gs, ws := &g.Runs[r].Steps[h], &w.Runs[r].Steps[h]
				same := bitsEqual(gs.W, ws.W) && bitsEqual(gs.M, ws.M) && bitsEqual(gs.Linv, ws.Linv) &&
					len(gs.Nu) == len(ws.Nu) && len(gs.SiteNu) == len(ws.SiteNu)
				for k := range ws.Nu {
					same = same && bitsEqual(gs.Nu[k], ws.Nu[k])
				}
				for k := range ws.SiteNu {
					same = same && bitsEqual(gs.SiteNu[k], ws.SiteNu[k])
				}
				if !same {
					t.Fatalf("%s: run %d step %d differs from the eager statistics' and cached factors'", name, r, h+1)
				}
			}
		}
	}
}

// ActAllMany's batch of single-run linear policies (a path of c, learned
// on two different tables, beside behaviour cloning and PEVI) gives each
// policy exactly Act's action and evidence at every row.
func TestActAllManyPolicyBatch(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 4, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	var ps []*Policy
	var tb *traj.Table
	for _, seed := range []uint64{5, 9} {
		tb = randomTable(t, m, 3, 4, []int{30, 20, 40}, seed)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []float64{5e-2, 3e-3, 1e-5, 0} {
			p, err := NewSolver(st, Settings{Lambda: 1, C: c, Xi: 0.05, Fallback: FallbackBehaviour}).Solve(ctx, Problem{Method: Sitewise})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		for _, meth := range []Method{Behaviour, PEVIPooled, Pooled} {
			p, err := NewSolver(st, Settings{Lambda: 1, C: 1e-3, Xi: 0.05, Fallback: FallbackBehaviour}).Solve(ctx, Problem{Method: meth})
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
	}
	if lb := newPolicyBatch(ps, 1); lb == nil || lb.n != 10 {
		t.Fatalf("the batch holds %v policies, want 10", lb)
	}
	acts, evs, err := ActAllMany(ctx, ps, tb, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := make([]float64, tb.A)
	for i, p := range ps {
		for h, gj := 1, 0; h <= tb.H; h++ {
			s := &tb.Steps[h-1]
			for j := 0; j < s.Len(); j, gj = j+1, gj+1 {
				a, _, ev := p.Act(h, s.State[j*tb.W:(j+1)*tb.W], q)
				if int32(a) != acts[i][gj] || ev != evs[i][gj] {
					t.Fatalf("policy %d (%s, c %g) step %d row %d: ActAllMany %d/%v, Act %d/%v", i, p.Method, p.C, h, j, acts[i][gj], evs[i][gj], a, ev)
				}
			}
		}
	}
}
