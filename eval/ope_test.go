package eval

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// denseOPE computes site k's PDWIS and WDR and the ESS with straight loops
// over trajectories, from the per-row ratios rho and values v the sweep
// kept, each trajectory counted cnt(i) times its rows' weight: every
// trajectory's weights w_0..w_{H-1} (frozen after its last row), then
// per step the self-normalised sums.
func denseOPE(tb *traj.Table, rho, v [][]float64, k int, cnt func(i int) float64) (pdwis, wdr, ess float64) {
	H := tb.H
	off := 0
	for kk := 0; kk < k; kk++ {
		off += tb.Trajectories[kk]
	}
	n := tb.Trajectories[k]
	// Per trajectory and step: weight, reward, value, present.
	w := make([][]float64, n)
	r := make([][]float64, n)
	val := make([][]float64, n)
	here := make([][]bool, n)
	om := make([]float64, n)
	for i := range w {
		w[i], r[i], val[i], here[i] = make([]float64, H), make([]float64, H), make([]float64, H), make([]bool, H)
	}
	for h := 1; h <= H; h++ {
		s := &tb.Steps[h-1]
		for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
			i := int(s.Traj[j]) - off
			here[i][h-1], r[i][h-1], val[i][h-1] = true, s.Reward[j], v[h-1][j]
			w[i][h-1] = rho[h-1][j]
			om[i] = rowWeight(s, j)
		}
	}
	cw := make([][]float64, n) // cumulative, frozen after the end
	for i := range w {
		cw[i] = make([]float64, H)
		prev := 1.0
		if !here[i][0] {
			prev = 0
		}
		for h := 0; h < H; h++ {
			if here[i][h] {
				prev = min(prev*w[i][h], WeightClip)
			}
			cw[i][h] = prev
		}
	}
	n0 := 0.0
	for i := range w {
		if here[i][0] {
			n0 += cnt(off+i) * om[i]
		}
	}
	if n0 == 0 {
		return math.NaN(), math.NaN(), 0
	}
	nprev, nh := n0, 0.0
	for h := 0; h < H; h++ {
		nh = 0
		rew, res, mod := 0.0, 0.0, 0.0
		for i := range w {
			c := cnt(off+i) * om[i]
			nh += c * cw[i][h]
			if !here[i][h] {
				continue
			}
			wp := 1.0
			if h > 0 {
				wp = cw[i][h-1]
			}
			rew += c * cw[i][h] * r[i][h]
			res += c * cw[i][h] * (r[i][h] - val[i][h])
			mod += c * wp * val[i][h]
		}
		if nh > 0 {
			pdwis += rew / nh
			wdr += res / nh
		}
		if nprev > 0 {
			wdr += mod / nprev
		}
		nprev = nh
	}
	if nh == 0 {
		pdwis = math.NaN()
	}
	s1, s2 := 0.0, 0.0
	for i := range w {
		s1 += om[i] * cw[i][H-1]
		s2 += om[i] * cw[i][H-1] * cw[i][H-1]
	}
	if s2 > 0 {
		ess = s1 * s1 / s2
	}
	return pdwis, wdr, ess
}

// collect runs the evaluation's sweep of p on sv with replicates and
// returns what it gathered.
func collect(t *testing.T, sv *solve.Solver, p *solve.Policy, B int, seed uint64, nworkers int) (*opeCollector, []uint8) {
	t.Helper()
	st := sv.Stats()
	c := newOPECollector(st.Table, &st.Map, B, nworkers)
	ctx := context.Background()
	var counts []uint8
	var eo solve.EvaluateOptions
	if B > 0 {
		counts = poissonCounts(st.Table, seed, B, nworkers)
		eo.Replicates = &solve.Replicates{B: B, Counts: counts}
	}
	c.hook(&eo)
	if _, err := sv.Evaluate(ctx, p, 0, eo); err != nil {
		t.Fatal(err)
	}
	return c, counts
}

// allRatios returns every row's clipped ratio (rho[h-1][j] for row j of
// step h), each site's behaviour fitted at every step, as the forward
// pass computes them where it needs them: in column col, the behaviour
// refitted to replicate col-1 of the B whose counts are counts.
func allRatios(c *opeCollector, counts []uint8, B, col int) [][]float64 {
	t := c.t
	rho := make([][]float64, t.H)
	for h := 1; h <= t.H; h++ {
		s := &t.Steps[h-1]
		rho[h-1] = make([]float64, s.Len())
		for k := range t.Sites {
			lo, hi := int(s.SiteStart[k]), int(s.SiteStart[k+1])
			if lo == hi {
				continue
			}
			b := fitBehaviour(c.m, s, t.W, lo, hi)
			if col > 0 {
				b = b.refit(c.m, s, t.W, lo, hi, counts, B)[col-1]
			}
			scratch := make([]float64, t.W+1+len(b.actions))
			for j := lo; j < hi; j++ {
				rho[h-1][j], _ = c.ratio(b, s, j, c.act[h-1][j], scratch)
			}
		}
	}
	return rho
}

// TestOPEDenseReference checks the sweep's PDWIS, WDR and ESS against
// straight loops over trajectories, for the data and for every bootstrap
// replicate, on every test map: a replicate's WDR reads the fitted-Q
// values of the table weighted by the replicate's counts (its own model,
// fitted in the sweep, up to rounding).
func TestOPEDenseReference(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		t.Run(m.Kind.String(), func(t *testing.T) {
			tb := randomTable(t, m, 3, 4, []int{40, 25, 30}, 3)
			s := solve.DefaultSettings
			s.Workers = 2
			sv := newSolver(t, tb, m, s)
			p := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
			const B, seed = 7, 5
			c, counts := collect(t, sv, p, B, seed, 2)
			sums, err := c.sums(ctx, counts)
			if err != nil {
				t.Fatal(err)
			}
			// v[col]: the fitted-Q values column col's WDR reads.
			v := [][][]float64{c.v}
			for b := 0; b < B; b++ {
				rc, _ := collect(t, newSolver(t, reweighted(tb, seed, b), m, s), p, 0, 0, 2)
				v = append(v, rc.v)
			}
			zeroes, moved := 0, false
			for k := range tb.Sites {
				for col := 0; col <= B; col++ {
					rho := allRatios(c, counts, B, col)
					cnt := func(int) float64 { return 1 }
					if col > 0 {
						cnt = func(i int) float64 { return float64(counts[i*B+col-1]) }
					}
					gp, gw := sums[k].estimates(col, B+1, tb.H)
					wp, ww, ess := denseOPE(tb, rho, v[col], k, cnt)
					// The replicate's fitted-Q values, had WDR kept
					// the data's.
					_, wdata, _ := denseOPE(tb, rho, c.v, k, cnt)
					moved = moved || !near(ww, wdata, 1e-9)
					if !same(gp, wp) || !near(gw, ww, 1e-10) && !(math.IsNaN(gw) && math.IsNaN(ww)) {
						t.Errorf("site %d, column %d: PDWIS %v, WDR %v; dense %v, %v", k, col, gp, gw, wp, ww)
					}
					if col == 0 && !near(sums[k].ess(), ess, 1e-12) {
						t.Errorf("site %d: ESS %v, dense %v", k, sums[k].ess(), ess)
					}
					if math.IsNaN(wp) {
						zeroes++
					}
				}
			}
			if zeroes == len(tb.Sites)*(B+1) {
				t.Errorf("every PDWIS is NaN: the case tests nothing")
			}
			if !moved {
				t.Errorf("no replicate's WDR moves with its own fitted-Q model: the case tests nothing")
			}
		})
	}
}

// sameEstimate reports whether a and b are bitwise equal (NaN equal to
// NaN).
func sameEstimate(a, b Estimate) bool {
	return math.Float64bits(a.Value) == math.Float64bits(b.Value) && math.Float64bits(a.CILow) == math.Float64bits(b.CILow) &&
		math.Float64bits(a.CIHigh) == math.Float64bits(b.CIHigh)
}

// same reports whether a and b agree to 1e-12 (relative for large
// values), NaN equal to NaN.
func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b))
}

// TestOPEHandWorked checks PDWIS and WDR on a two-step tabular case
// worked by hand: one site, one state, two actions, the policy always
// taking action 1.
//
//	traj 0: step 1 a=1 r=0, step 2 a=1 r=1
//	traj 1: step 1 a=1 r=0, step 2 a=0 r=0
//	traj 2: step 1 a=0 r=1 (ends)
//	traj 3: step 1 a=1 r=1 (ends)
//
// Step 1: 3 of 4 rows took action 1, so mu(1) = (3+1/2)/(4+1) = 0.7 and
// the ratio of the rows that followed is 1/0.7. Step 2: 1 of 2 rows took
// action 1: mu(1) = 1.5/3 = 0.5, ratio 2. Final weights: traj 0 w =
// (1/0.7)*2, traj 1 0, traj 2 0, traj 3 1/0.7 (frozen).
//
//	N_1 = 3/0.7, N_2 = 2/0.7 + 1/0.7 = 3/0.7
//	PDWIS = (1/0.7)*1/N_1 + (2/0.7)*1/N_2 = 1/3 + 2/3 = 1.
//
// WDR with the model's values v (the site's own fitted-Q at the policy's
// action): v_1 at the four step-1 rows and v_2 at the two step-2 rows,
//
//	WDR = mean(v_1) + sum_h sum_i w_{i,h}(r - v)/N_h + sum_{h>=2} w_{i,h-1} v_h / N_{h-1}.
func TestOPEHandWorked(t *testing.T) {
	m := features.Map{Kind: features.Tabular, A: 2, S: 1, StateColumns: []string{"state"}}
	b := traj.NewBuilder(traj.Options{State: specFor(m), Actions: 2, Horizon: 2})
	c := &traj.Chunk{Src: traj.Origin{File: "x"}, W: 1}
	add := func(tr, h, a int, r float64) {
		c.SiteStr = append(c.SiteStr, "s")
		c.TrajInt = append(c.TrajInt, int64(tr))
		c.Step = append(c.Step, int64(h))
		c.ActionInt = append(c.ActionInt, int64(a))
		c.Reward = append(c.Reward, r)
		c.State = append(c.State, 0)
	}
	add(0, 1, 1, 0)
	add(0, 2, 1, 1)
	add(1, 1, 1, 0)
	add(1, 2, 0, 0)
	add(2, 1, 0, 1)
	add(3, 1, 1, 1)
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	s := solve.DefaultSettings
	s.Workers, s.Lambda = 1, EvalLambda
	sv := newSolver(t, tb, m, s)
	p := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Behaviour})
	for h := range p.BehaviourAction {
		p.BehaviourAction[h] = []int32{1}
	}
	col, _ := collect(t, sv, p, 0, 0, 1)
	sums, err := col.sums(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pdwis, wdr := sums[0].estimates(0, 1, 2)
	if !near(pdwis, 1, 1e-12) {
		t.Errorf("PDWIS %v, want 1", pdwis)
	}
	// The fitted-Q values: step 2's Qhat(0, 1) is the mean reward of
	// action 1 at step 2 (1); step 1's is the mean over action-1 rows of
	// r + V_2(s') = (0+1, 0+1, 1+0)/3 = 1 (EvalLambda's ridge moves them
	// by about 1e-6).
	v1, v2 := 1.0, 1.0
	s1, s2 := tb.Steps[0], tb.Steps[1]
	for j := range s1.Reward {
		if !near(col.v[0][j], v1, 1e-5) {
			t.Fatalf("step 1 row %d: value %v, want %v", j, col.v[0][j], v1)
		}
	}
	for j := range s2.Reward {
		if !near(col.v[1][j], v2, 1e-5) {
			t.Fatalf("step 2 row %d: value %v, want %v", j, col.v[1][j], v2)
		}
	}
	// By hand with the exact values: mean v_1 = 1; step 1's residuals
	// (1/0.7)(0 - 1) twice (traj 0, 1) and (1/0.7)(1 - 1) (traj 3) over
	// N_1 = 3/0.7: -2/3; step 2's residual (2/0.7)(1 - 1) = 0 and its
	// model term (1/0.7)(1 + 1) over N_1: 2/3. WDR = 1 - 2/3 + 2/3 = 1.
	if !near(wdr, 1, 1e-5) {
		t.Errorf("WDR %v, want 1", wdr)
	}
	// The same from the kept values, exactly.
	r := allRatios(col, nil, 0, 0)
	want := (col.v[0][0]+col.v[0][1]+col.v[0][2]+col.v[0][3])/4 +
		(r[0][0]*(0-col.v[0][0])+r[0][1]*(0-col.v[0][1])+r[0][3]*(1-col.v[0][3]))/(3/0.7) +
		(r[0][0]*r[1][0]*(1-col.v[1][0]))/(r[0][0]*r[1][0]+r[0][3]) + (r[0][0]*col.v[1][0]+r[0][1]*col.v[1][1])/(3/0.7)
	if !near(wdr, want, 1e-12) {
		t.Errorf("WDR %v, want %v", wdr, want)
	}
	if !near(r[0][0], 1/0.7, 1e-15) || !near(r[1][0], 2, 1e-15) || r[1][1] != 0 || r[0][2] != 0 {
		t.Errorf("ratios %v, want 1/0.7 at followed step-1 rows and 2, 0 at step 2", r)
	}
	if !near(sums[0].ess(), (3/0.7)*(3/0.7)/(4/0.49+1/0.49), 1e-12) {
		t.Errorf("ESS %v", sums[0].ess())
	}
}

// TestOPEWorkers checks that the estimates are bitwise identical for any
// number of workers.
func TestOPEWorkers(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 4, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	tb := randomTable(t, m, 3, 4, []int{60, 45, 50}, 9)
	var ref *Report
	for _, w := range []int{1, 2, 5} {
		s := solve.DefaultSettings
		s.Workers = w
		sv := newSolver(t, tb, m, s)
		p := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
		rep, err := FromData(ctx, sv, p, s, Options{Bootstrap: 20, Seed: 3, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		// Every estimator's worst site is WorstOf the sites' estimates,
		// the headline FQE's.
		for _, e := range Estimators {
			ests := make([]Estimate, len(rep.Sites))
			for k, s := range rep.Sites {
				ests[k] = s.Estimates[e]
			}
			want, at := WorstOf(ests)
			got := rep.Worst.Estimates[e]
			if at < 0 || got.Site != rep.Sites[at].Site || !sameEstimate(got.Estimate, want) {
				t.Errorf("%d workers, worst %s: %+v, want %+v at %d", w, e, got, want, at)
			}
		}
		if rep.Worst.Estimator != FQE || rep.Worst.WorstEstimate != rep.Worst.Estimates[FQE] {
			t.Errorf("%d workers: the headline worst %+v is not FQE's %+v", w, rep.Worst.WorstEstimate, rep.Worst.Estimates[FQE])
		}
		if ref == nil {
			ref = rep
			continue
		}
		for k, s := range rep.Sites {
			for _, e := range Estimators {
				g, r := s.Estimates[e], ref.Sites[k].Estimates[e]
				if math.Float64bits(g.Value) != math.Float64bits(r.Value) || math.Float64bits(g.CILow) != math.Float64bits(r.CILow) || math.Float64bits(g.CIHigh) != math.Float64bits(r.CIHigh) {
					t.Errorf("%d workers, site %d, %s: %+v, want %+v", w, k, e, g, r)
				}
			}
			if s.ESS != ref.Sites[k].ESS {
				t.Errorf("%d workers, site %d: ESS %v, want %v", w, k, s.ESS, ref.Sites[k].ESS)
			}
		}
	}
}

// TestBehaviourRefit checks the behaviour's refits to bootstrap
// replicates: a replicate that counts every trajectory once refits the
// data's own model (cells exactly; logistic up to Newton's tolerance),
// and one that leaves out most of them moves it.
func TestBehaviourRefit(t *testing.T) {
	for _, m := range testMaps() {
		t.Run(m.Kind.String(), func(t *testing.T) {
			tb := randomTable(t, m, 2, 3, []int{60, 50}, 7)
			s := &tb.Steps[0]
			lo, hi := int(s.SiteStart[0]), int(s.SiteStart[1])
			b := fitBehaviour(&m, s, tb.W, lo, hi)
			if len(b.actions) <= 1 {
				t.Skip("one action")
			}
			const B = 2
			counts := make([]uint8, tb.Trajectories[0]*B+tb.Trajectories[1]*B)
			for i := 0; i < len(counts)/B; i++ {
				counts[i*B] = 1
				if i%4 == 0 {
					counts[i*B+1] = 1
				}
			}
			refits := b.refit(&m, s, tb.W, lo, hi, counts, B)
			scratch := make([]float64, tb.W+1+len(b.actions))
			moved := 0.0
			for j := lo; j < hi; j++ {
				state := s.State[j*tb.W : (j+1)*tb.W]
				p0 := b.prob(&m, state, s.Action[j], scratch)
				if p1 := refits[0].prob(&m, state, s.Action[j], scratch); !near(p1, p0, 1e-8) {
					t.Fatalf("row %d: all counts 1 refit %v, want %v", j, p1, p0)
				}
				moved = max(moved, math.Abs(refits[1].prob(&m, state, s.Action[j], scratch)-p0))
			}
			if moved < 1e-6 {
				t.Errorf("a replicate of a quarter of the trajectories moved no propensity (by %v)", moved)
			}
		})
	}
}

// TestOPESweepShortcuts checks that the forward pass's shortcuts (weights
// left unformed after a departure and in replicates that do not draw the
// trajectory) give the same bits as computing every column's weight, on
// every test map.
func TestOPESweepShortcuts(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		t.Run(m.Kind.String(), func(t *testing.T) {
			tb := randomTable(t, m, 3, 4, []int{40, 25, 30}, 3)
			s := solve.DefaultSettings
			s.Workers = 2
			sv := newSolver(t, tb, m, s)
			p := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
			c, counts := collect(t, sv, p, 9, 5, 2)
			got, err := c.sums(ctx, counts)
			if err != nil {
				t.Fatal(err)
			}
			c.exact = true
			want, err := c.sums(ctx, counts)
			if err != nil {
				t.Fatal(err)
			}
			bits := func(o opeSite) []uint64 {
				var out []uint64
				for _, xs := range [][]float64{o.act, o.end, o.rew, o.res, o.mod, o.first, {o.ess1, o.ess2, o.offFormulary}} {
					for _, x := range xs {
						out = append(out, math.Float64bits(x))
					}
				}
				return out
			}
			for k := range got {
				if !slices.Equal(bits(got[k]), bits(want[k])) {
					t.Errorf("site %d: the sums differ from those of every column computed", k)
				}
			}
		})
	}
}
