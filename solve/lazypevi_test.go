package solve

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// randomPEVIPolicy returns a PEVI policy (method, R runs) over an
// action-block map with random coefficients: nu uniform in [-1, 3), each
// action's block of Lambda^{-1} positive definite.
func randomPEVIPolicy(rng *rand.Rand, method Method, R, A, P, H int) *Policy {
	m := features.Map{Kind: features.ActionBlock, A: A, P: P}
	l := NewLayout(m.Blocks())
	p := &Policy{Method: method, Map: m, H: H, A: A, D: m.Dim(), Fallback: FallbackLowest}
	for range R {
		run := PolicyRun{Beta: []float64{0, 0.05, 0.7, 3}[rng.IntN(4)], Steps: make([]StepCoef, H)}
		for h := range run.Steps {
			w := make([]float64, m.Dim())
			for i := range w {
				w[i] = 4*rng.Float64() - 1
			}
			linv := make([]float64, l.Size())
			fillPackedPD(rng, linv, &l, A, P)
			run.Steps[h] = StepCoef{W: w, Linv: linv}
		}
		p.Runs = append(p.Runs, run)
	}
	return p
}

// fillPackedPD sets each of A action blocks (p x p) of linv to the packed
// lower triangle of B B^T + I/10 for a random B: positive definite.
func fillPackedPD(rng *rand.Rand, linv []float64, l *Layout, A, p int) {
	for a := 0; a < A; a++ {
		b := make([]float64, p*p)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		for r := 0; r < p; r++ {
			for c := 0; c <= r; c++ {
				v := 0.0
				for k := 0; k < p; k++ {
					v += b[r*p+k] * b[c*p+k]
				}
				if r == c {
					v += 0.1
				}
				linv[l.Off[a]+r*(r+1)/2+c] = v
			}
		}
	}
}

// decideLazy gives decide's action, value (bits) and evidence on every
// action's Qhat, for pevi-pooled, pevi-avg and pevi-min, on random
// policies and on the cases where skipping actions could go wrong: ties
// between actions and between runs, no evidence (with either fallback),
// NaN and infinite coefficients, an infinite beta; a negative beta and
// more than 64 actions must decline.
func TestDecideLazyMatchesDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	nan, inf := math.NaN(), math.Inf(1)
	lazyRows, skipped := 0, 0
	for trial := 0; trial < 40000; trial++ {
		method := []Method{PEVIPooled, PEVIAvg, PEVIMin}[trial%3]
		R := []int{2, 3, 8}[rng.IntN(3)]
		if method == PEVIPooled {
			R = 1
		}
		A := []int{1, 2, 3, 10, 64, 65}[rng.IntN(6)]
		P := 1 + rng.IntN(4)
		H := 3
		p := randomPEVIPolicy(rng, method, R, A, P, H)
		h := 1 + rng.IntN(H)
		tab := []int32{int32(rng.IntN(A))}
		p.BehaviourAction = [][]int32{tab, tab, tab}
		if rng.IntN(2) == 0 {
			p.Fallback = FallbackBehaviour
		}
		c := &p.Runs[0].Steps[h-1]
		switch trial % 11 {
		case 1: // every action's block the same: ties between actions
			for a := 1; a < A; a++ {
				copy(c.W[a*P:(a+1)*P], c.W[:P])
				copy(c.Linv[p.Layout().Off[a]:p.Layout().Off[a]+P*(P+1)/2], c.Linv[:P*(P+1)/2])
			}
			for r := 1; r < R; r++ {
				p.Runs[r] = p.Runs[0]
			}
		case 2: // no evidence anywhere
			for r := range p.Runs {
				for i := range p.Runs[r].Steps[h-1].W {
					p.Runs[r].Steps[h-1].W[i] = -1 - rng.Float64()
				}
			}
		case 3: // a NaN in action 0's inverse: decide's scan keeps it
			c.Linv[0] = nan
		case 4: // a NaN or an infinity in some action's nu or inverse
			if rng.IntN(2) == 0 {
				c.W[rng.IntN(len(c.W))] = []float64{nan, inf, -inf}[rng.IntN(3)]
			} else {
				c.Linv[rng.IntN(len(c.Linv))] = []float64{nan, inf}[rng.IntN(2)]
			}
		case 5:
			p.Runs[rng.IntN(R)].Beta = inf
		case 6:
			p.Runs[rng.IntN(R)].Beta = -0.5
		case 7: // large beta: little evidence, many exact ties at +0
			for r := range p.Runs {
				p.Runs[r].Beta = 50
			}
		case 8: // action 0's inverse near overflow, beta 0: 0 * Inf is NaN
			for i := range P * (P + 1) / 2 {
				c.Linv[i] = []float64{1e308, -1e308, 1e300}[rng.IntN(3)]
			}
			p.Runs[0].Beta = 0
		case 9: // a negative state (below)
		}
		state := make([]float64, P)
		for i := range state {
			if rng.IntN(3) > 0 {
				state[i] = rng.Float64()
			}
		}
		state[rng.IntN(P)] = 0.5
		if trial%11 == 9 && P > 1 {
			// Features far outside [0, 1] (the contract forbids negative
			// states): action 0's quadratic form overflows, and beta 0
			// times its root is NaN.
			clear(state)
			state[0], state[1] = 1, -(1 - 1e-12)
			l := p.Layout()
			for i := l.Off[0]; i < l.Off[1]; i++ {
				c.Linv[i] = 1e300
			}
			p.Runs[0].Beta = 0
		}

		q := make([]float64, A)
		p.QValues(h, state, q)
		wa, wv, we := p.decide(h, state, q)

		var row phiRow
		var lr lazyRuns
		if row.prepare(&p.Map, state); !row.block {
			t.Fatalf("trial %d: an action-block row was not prepared", trial)
		}
		applies := lr.init(p, h, &row)
		wantApply := A <= lazyMaxActions
		for _, run := range p.Runs {
			d := make([]float64, A)
			p.Map.DotAll(d, state, run.Steps[h-1].W)
			wantApply = wantApply && run.Beta >= 0 && !hasNaN(d)
		}
		if applies != wantApply {
			t.Fatalf("trial %d (A %d): init says %v, want %v", trial, A, applies, wantApply)
		}
		if !applies {
			continue
		}
		ga, gv, ge, ok := p.decideLazy(h, state, &lr)
		if !ok {
			continue
		}
		lazyRows++
		for r := range lr.done {
			if lr.done[r] != 1<<A-1 {
				skipped++
				break
			}
		}
		if ga != wa || ge != we || math.Float64bits(gv) != math.Float64bits(wv) {
			t.Fatalf("trial %d (%s, R %d, A %d, p %d): lazy (%d, %v, %v), full (%d, %v, %v)\nq %v", trial, method, R, A, P, ga, gv, ge, wa, wv, we, q)
		}
	}
	// The lazy path must have decided most rows, skipping work in many.
	if lazyRows < 20000 || skipped < 5000 {
		t.Fatalf("lazy decisions on %d rows, with actions skipped on %d: the test proves little", lazyRows, skipped)
	}
}

// A Decider decides as Policy.Act does, bit for bit, for every method and
// map, at every row of a table, reused from row to row.
func TestDeciderMatchesAct(t *testing.T) {
	ctx := t.Context()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 3, 4, []int{30, 20, 40}, 9)
		st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, fb := range []Fallback{FallbackBehaviour, FallbackLowest} {
			sv := NewSolver(st, Settings{Lambda: 1, C: 3e-3, Xi: 0.05, Fallback: fb})
			for _, meth := range []Method{Sitewise, Pooled, PEVIPooled, PEVIAvg, PEVIMin, Behaviour} {
				p, err := sv.Solve(ctx, Problem{Method: meth})
				if err != nil {
					t.Fatal(err)
				}
				d := p.NewDecider()
				q := make([]float64, p.A)
				for h := 1; h <= tb.H; h++ {
					s := &tb.Steps[h-1]
					for j := 0; j < s.Len(); j++ {
						state := s.State[j*tb.W : (j+1)*tb.W]
						wa, wv, we := p.Act(h, state, q)
						ga, gv, ge := d.Act(h, state)
						if ga != wa || ge != we || math.Float64bits(gv) != math.Float64bits(wv) {
							t.Fatalf("%v %s %s: step %d row %d: Decider (%d, %v, %v), Act (%d, %v, %v)", m.Kind, meth, fb, h, j, ga, gv, ge, wa, wv, we)
						}
					}
				}
			}
		}
	}
}

// A prepared row's dot products are DotAll's, bit for bit, for finite
// coefficients (NaN payloads: TestQValuesNaNPayloads; qValues and the
// values sweep use either): p = 1..8, states with zero coordinates, large
// and negative coefficients.
func TestRowDotsMatchDotAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 2))
	for trial := 0; trial < 20000; trial++ {
		P, A := 1+rng.IntN(8), 1+rng.IntN(12)
		m := features.Map{Kind: features.ActionBlock, A: A, P: P}
		coef := make([]float64, m.Dim())
		for i := range coef {
			coef[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(20)-10))
		}
		state := make([]float64, P)
		for i := range state {
			if rng.IntN(3) > 0 {
				state[i] = rng.Float64() * math.Pow(10, float64(rng.IntN(6)-3))
			}
		}
		state[rng.IntN(P)] = 0.25
		want, got := make([]float64, A), make([]float64, A)
		m.DotAll(want, state, coef)
		var row blockRow
		if !row.init(&m, state) {
			t.Fatalf("p = %d: the row was not prepared", P)
		}
		row.dots(coef, got)
		if !bitsEqual(got, want) {
			t.Fatalf("trial %d (p %d): row.dots %v, DotAll %v", trial, P, got, want)
		}
	}
}

// ActAllMany's pevi-avg and pevi-min share their runs' terms even when a
// policy on another map (here p = 2 on the same rows) comes between them:
// every decision is Policy.Act's. Solved policies and random ones.
func TestActAllManySharedRunsAcrossMaps(t *testing.T) {
	ctx := t.Context()
	m := features.Map{Kind: features.ActionBlock, A: 6, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	tb := randomTable(t, m, 3, 4, []int{60, 50, 40}, 13)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewSolver(st, Settings{Lambda: 1, C: 3e-3, Xi: 0.05, Fallback: FallbackBehaviour})
	avg, err := sv.Solve(ctx, Problem{Method: PEVIAvg})
	if err != nil {
		t.Fatal(err)
	}
	minp, err := sv.Solve(ctx, Problem{Method: PEVIMin})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 1))
	ravg := randomPEVIPolicy(rng, PEVIAvg, 3, m.A, 3, tb.H)
	rmin := *ravg
	rmin.Method = PEVIMin
	other := randomPEVIPolicy(rng, PEVIPooled, 1, m.A, 2, tb.H)
	for _, ps := range [][]*Policy{{avg, other, minp}, {ravg, other, &rmin}} {
		acts, evs, err := ActAllMany(ctx, ps, tb, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		q := make([]float64, m.A)
		g := 0
		for h := 1; h <= tb.H; h++ {
			s := &tb.Steps[h-1]
			for j := 0; j < s.Len(); j, g = j+1, g+1 {
				for i, p := range ps {
					a, _, ev := p.Act(h, s.State[j*tb.W:(j+1)*tb.W], q)
					if int32(a) != acts[i][g] || ev != evs[i][g] {
						t.Fatalf("policy %d (%s) step %d row %d: ActAllMany %d/%v, Act %d/%v", i, p.Method, h, j, acts[i][g], evs[i][g], a, ev)
					}
				}
			}
		}
	}
}

// A featurewise policy whose coefficients hold NaNs of different payloads:
// Act's values are those of DotAll, bit for bit (the order of an addition's
// operands decides which NaN it keeps).
func TestQValuesNaNPayloads(t *testing.T) {
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 3}
	nanA, nanB := math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0xfff8000000000000)
	w := []float64{nanA, nanB, 1, 0.5, nanB, nanA, 2, 1, 3}
	p := &Policy{Method: Sitewise, Map: m, H: 1, A: 3, D: 9, Fallback: FallbackLowest,
		Runs: []PolicyRun{{Beta: 0, Steps: []StepCoef{{W: w, M: make([]float64, 9)}}}}}
	state := []float64{0.2, 0.3, 0.5}
	want := make([]float64, 3)
	m.DotAll(want, state, w)
	for a := range want {
		want[a] = clip(want[a], 1)
	}
	got := make([]float64, 3)
	p.QValues(1, state, got)
	if !bitsEqual(got, want) {
		t.Fatalf("QValues %x, DotAll's %x", bitsOf(got), bitsOf(want))
	}
}

func bitsOf(x []float64) []uint64 {
	out := make([]uint64, len(x))
	for i, v := range x {
		out[i] = math.Float64bits(v)
	}
	return out
}

// factorBytes counts each grouping's factors once, and none already
// cached: an evaluation's robust value and lower bound share theirs.
func TestFactorBytesCountsEachGroupingOnce(t *testing.T) {
	ctx := t.Context()
	m := testMaps()[1]
	tb := randomTable(t, m, 3, 4, []int{30, 20, 40}, 3)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		t.Fatal(err)
	}
	sv := NewSolver(st, DefaultSettings)
	one := passSpec{groups: singletons(3), kind: featurewise}
	two := passSpec{groups: singletons(3), kind: featurewise, beta: 0.5}
	own := passSpec{groups: [][]int{{1}}, kind: featurewise}
	b1 := sv.factorBytes([]passSpec{one})
	if b1 <= 0 || sv.factorBytes([]passSpec{one, two}) != b1 {
		t.Fatalf("one grouping %d bytes, twice %d", b1, sv.factorBytes([]passSpec{one, two}))
	}
	if bo := sv.factorBytes([]passSpec{one, own}); bo != b1+b1/3 {
		t.Fatalf("with a one-site grouping %d, want %d", bo, b1+b1/3)
	}
	if _, err := sv.factorsFor(ctx, one.groups, false); err != nil {
		t.Fatal(err)
	}
	if b := sv.factorBytes([]passSpec{one, two}); b != 0 {
		t.Fatalf("cached factors counted: %d bytes", b)
	}
}
