package federate

// The feature maps and settings beyond tabular, indicator and action-block:
// binned and soft-binned maps with explicit cut points, the precomputed
// map (whose blocks the sites find each from its own rows), the stationary
// variant and weighted rows. For each, every method, K = 0 and K = 5, the
// folded policy equals the central solve --min-count K bit for bit.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// precomputedPatterns are the supports of phi(s, a) each site draws from:
// no site's rows join features 0 and 1 and features 2 and 3 both, but the
// four sites together do ({0,1} at site 0, {2,3} at site 2), and no site
// ever joins the two pairs.
var precomputedPatterns = [][][]int{
	{{0, 1}, {2}, {3}},
	{{0}, {1}, {2}, {3}},
	{{2, 3}, {0}},
	{{1}, {3}, {0}},
}

// mapChunks returns random rows of K sites for the binned, soft-binned and
// precomputed maps (and, through siteChunks, the others), one chunk per
// site.
func mapChunks(m features.Map, K, H int, perSite []int, seed uint64) ([]string, []*traj.Chunk) {
	switch m.Kind {
	case features.Binned, features.SoftBinned, features.Precomputed:
	default:
		return siteChunks(m, K, H, perSite, false, seed)
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	var names []string
	var chunks []*traj.Chunk
	for k := 0; k < K; k++ {
		name := fmt.Sprintf("s%d", k)
		names = append(names, name)
		c := &traj.Chunk{Src: traj.Origin{File: name}, W: m.Width()}
		for tr := 0; tr < perSite[k]; tr++ {
			length := H
			if rng.IntN(4) == 0 {
				length = 1 + rng.IntN(H)
			}
			for h := 1; h <= length; h++ {
				c.SiteStr = append(c.SiteStr, name)
				c.TrajInt = append(c.TrajInt, int64(tr))
				c.Step = append(c.Step, int64(h))
				c.ActionInt = append(c.ActionInt, int64(min(rng.IntN(m.A+2), m.A-1)))
				c.Reward = append(c.Reward, rng.Float64())
				switch m.Kind {
				case features.Binned, features.SoftBinned:
					// Values around the cut points, some exactly on one.
					for _, b := range m.Bins {
						lo, hi := b.Cuts[0]-1, b.Cuts[len(b.Cuts)-1]+1
						v := lo + (hi-lo)*rng.Float64()*rng.Float64()
						if rng.IntN(8) == 0 {
							v = b.Cuts[rng.IntN(len(b.Cuts))]
						}
						c.State = append(c.State, v)
					}
				case features.Precomputed:
					pats := precomputedPatterns[k%len(precomputedPatterns)]
					for a := 0; a < m.A; a++ {
						phi := make([]float64, m.D)
						// The last pattern is rare: a feature withheld
						// under K = 5 at some sites and steps.
						pat := pats[rng.IntN(len(pats)-1)]
						if rng.IntN(40) == 0 {
							pat = pats[len(pats)-1]
						}
						sum := 0.0
						for _, i := range pat {
							phi[i] = 0.25 + rng.Float64()
							sum += phi[i]
						}
						for _, i := range pat {
							phi[i] /= sum
						}
						c.State = append(c.State, phi...)
					}
				}
			}
		}
		chunks = append(chunks, c)
	}
	return names, chunks
}

// mapTable builds a table of chunks for m (buildTable, with the
// precomputed map's list state).
func mapTable(t testing.TB, m features.Map, H int, chunks ...*traj.Chunk) *traj.Table {
	t.Helper()
	if m.Kind != features.Precomputed {
		return buildTable(t, m, H, chunks...)
	}
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: m.StateColumns, List: true}, Actions: m.A, Horizon: H})
	b.SetListWidth(m.Width())
	for _, c := range chunks {
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// weigh gives every row of tb a multiplicity from 1 to 4, a function of
// the row's reward and action alone, so that a site's table and the
// central one weigh each row alike.
func weigh(tb *traj.Table) {
	for h := range tb.Steps {
		s := &tb.Steps[h]
		s.Weight = make([]float64, s.Len())
		for j := range s.Weight {
			s.Weight[j] = float64(1 + (math.Float64bits(s.Reward[j])>>20+uint64(s.Action[j]))%4)
		}
	}
}

// mapCase is one map and setting of the equivalence test.
type mapCase struct {
	name       string
	m          features.Map
	stationary bool
	weighted   bool
}

func mapCases() []mapCase {
	lactate := features.Bins{Column: "lactate", Cuts: []float64{1, 2.5, 4}}
	sofa := features.Bins{Column: "sofa", Cuts: []float64{2, 6}}
	ab := features.Map{Kind: features.ActionBlock, A: 3, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	tab := features.Map{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}}
	pre := features.Map{Kind: features.Precomputed, A: 3, D: 4, StateColumns: []string{"phi"}}
	return []mapCase{
		{name: "binned", m: features.Map{Kind: features.Binned, A: 3, StateColumns: []string{"lactate", "sofa"}, Bins: []features.Bins{lactate, sofa}}},
		{name: "soft-binned", m: features.Map{Kind: features.SoftBinned, A: 3, StateColumns: []string{"lactate", "sofa"}, Bins: []features.Bins{lactate, sofa}}},
		{name: "precomputed", m: pre},
		{name: "stationary action-block", m: ab, stationary: true},
		{name: "stationary tabular", m: tab, stationary: true},
		{name: "stationary precomputed", m: pre, stationary: true},
		{name: "weighted action-block", m: ab, weighted: true},
		{name: "weighted tabular", m: tab, weighted: true},
		{name: "weighted stationary binned", m: features.Map{Kind: features.Binned, A: 3, StateColumns: []string{"lactate"}, Bins: []features.Bins{lactate}},
			stationary: true, weighted: true},
	}
}

// TestFederatedMapsEqualCentral: for the binned, soft-binned and
// precomputed maps, the stationary variant and weighted rows, every method
// and K = 0 and K = 5 (min rows 10), the policy folded from every site's
// messages equals the central solve's bit for bit: runs, betas, w, m,
// Lambda^{-1}, groups, behaviour table and rows, and the decision and Qhat
// at every row.
func TestFederatedMapsEqualCentral(t *testing.T) {
	ctx := context.Background()
	const H = 4
	for _, tc := range mapCases() {
		m := tc.m
		perSite := []int{200, 150, 260, 120}
		switch m.Kind {
		case features.ActionBlock, features.Tabular:
			// siteChunks' sizes, at which some features are rare.
			perSite = []int{60, 45, 80, 30}
		}
		names, chunks := mapChunks(m, 4, H, perSite, 23)
		central := mapTable(t, m, H, chunks...)
		if tc.weighted {
			weigh(central)
		}
		blocks := solve.BlocksFor(central, &m)
		if m.Kind == features.Precomputed {
			// The central blocks join features 0, 1 and 2, 3: two blocks
			// that no one site's rows show.
			if got := fmt.Sprint(blocks.Of); got != "[0 0 1 1]" {
				t.Fatalf("%s: central blocks %s: the case does not test the join", tc.name, got)
			}
		}
		settings := solve.DefaultSettings
		settings.Stationary = tc.stationary
		for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
			cst, err := solve.NewStatsDisclosed(ctx, central, m, blocks, 2, dc)
			if err != nil {
				t.Fatal(err)
			}
			var sites []SiteInput
			suppressed := 0
			for k, c := range chunks {
				tb := mapTable(t, m, H, c)
				if tc.weighted {
					weigh(tb)
				}
				st, err := solve.NewStatsDisclosed(ctx, tb, m, solve.BlocksFor(tb, &m), 1, dc)
				if err != nil {
					t.Fatal(err)
				}
				for h := 1; h <= H; h++ {
					silent, f := st.Suppressed(h, 0)
					if silent {
						f++
					}
					suppressed += f
				}
				sites = append(sites, SiteInput{Stats: st, Site: names[k]})
			}
			if dc.Active() && suppressed == 0 {
				t.Fatalf("%s: nothing suppressed with %+v", tc.name, dc)
			}
			for _, method := range solve.Methods {
				what := fmt.Sprintf("%s %s %+v", tc.name, method, dc)
				j := testJob(method, m, H, names, dc)
				j.Stationary = tc.stationary
				prob := jobProblem(t, j, central, fourClusters(names))
				if err := j.Check(); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				want, err := solve.NewSolver(cst, settings).Solve(ctx, prob)
				if err != nil {
					t.Fatal(err)
				}
				got := runJob(t, j, sites)
				// The pooled regression must be nontrivial (the site-wise
				// row-min may be zero where some site withholds a feature).
				if method == solve.Pooled && !slices.ContainsFunc(want.Runs[0].Steps[H-1].W, func(x float64) bool { return x != 0 }) {
					t.Fatalf("%s: w_H is zero: the case tests nothing", what)
				}
				samePolicy(t, what, want, got)
				// The value round's estimate (NaN for the methods without one).
				if math.IsNaN(want.ValueEstimate) != math.IsNaN(got.ValueEstimate) ||
					!math.IsNaN(want.ValueEstimate) && !relClose(want.ValueEstimate, got.ValueEstimate, 1e-12) {
					t.Fatalf("%s: value %v, central %v", what, got.ValueEstimate, want.ValueEstimate)
				}
				if !slices.Equal(want.BlockLabels, got.BlockLabels) {
					t.Fatalf("%s: block labels %v, want %v", what, got.BlockLabels, want.BlockLabels)
				}
				sameActs(t, what, central, want, got)
			}
		}
	}
}

// sameActs compares the policies' decision and Qhat at every row of tb.
func sameActs(t *testing.T, what string, tb *traj.Table, want, got *solve.Policy) {
	t.Helper()
	q1, q2 := make([]float64, tb.A), make([]float64, tb.A)
	for h := 1; h <= tb.H; h++ {
		s := &tb.Steps[h-1]
		for j := 0; j < s.Len(); j++ {
			st := s.State[j*tb.W : (j+1)*tb.W]
			a1, v1, e1 := want.Act(h, st, q1)
			a2, v2, e2 := got.Act(h, st, q2)
			if a1 != a2 || math.Float64bits(v1) != math.Float64bits(v2) || e1 != e2 {
				t.Fatalf("%s: step %d row %d: decision %d (%v, %v), want %d (%v, %v)", what, h, j, a2, v2, e2, a1, v1, e1)
			}
		}
	}
}

// TestFederatedQuantileBinsRefused: a job whose bins are quantiles (COL:qK)
// is refused with the reason and the remedy, since type-7 quantiles over
// every site's rows are no sum of one site's rows.
func TestFederatedQuantileBinsRefused(t *testing.T) {
	j := &Job{FormatVersion: FormatVersion, ID: "test", Method: solve.Pooled, H: 3, Lambda: 1, Sites: []string{"a", "b", "c"}, MinSites: 3,
		Map: features.Map{Kind: features.Binned, A: 2, StateColumns: []string{"lactate"}, Bins: []features.Bins{{Column: "lactate", Quantiles: 4}}}}
	err := j.Check()
	if err == nil || !strings.Contains(err.Error(), "quantile") || !strings.Contains(err.Error(), "explicit cut points") {
		t.Fatalf("quantile bins: %v", err)
	}
}

// TestWeightedRowsCountRows: disclosure control counts rows, not weights,
// at a site as centrally (the same solve.Stats). Hand-worked, tabular S =
// 2, A = 2, K = 5, min rows 5: at step 1, state 0 with action 0 has 3 rows
// of weight 4 (weighted 12 >= 5, but 3 rows < 5: withheld) and with action
// 1 2 rows of weight 4 (withheld), state 1 with action 0 has 4 rows of
// weight 1 (withheld; the withheld cells hold 9 = 2K-1 rows, so no other
// cell is withheld beside them), state 1 with action 1 has 6 rows of
// weight 1 (kept, Gram entry 6); at step 2, 4 rows of weight 10 (weighted
// 40, but 4 rows < 5: the step is silent).
func TestWeightedRowsCountRows(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.Tabular, A: 2, S: 2, StateColumns: []string{"state"}}
	c := &traj.Chunk{Src: traj.Origin{File: "a"}, W: 1}
	add := func(tr, h, s, a int) {
		c.SiteStr = append(c.SiteStr, "a")
		c.TrajInt = append(c.TrajInt, int64(tr))
		c.Step = append(c.Step, int64(h))
		c.State = append(c.State, float64(s))
		c.ActionInt = append(c.ActionInt, int64(a))
		c.Reward = append(c.Reward, 1)
	}
	for tr := 0; tr < 15; tr++ {
		switch {
		case tr < 3:
			add(tr, 1, 0, 0)
		case tr < 5:
			add(tr, 1, 0, 1)
		case tr < 9:
			add(tr, 1, 1, 0)
		default:
			add(tr, 1, 1, 1)
		}
		if tr >= 11 {
			add(tr, 2, 1, 0)
		}
	}
	tb := buildTable(t, m, 2, c)
	for h := range tb.Steps {
		s := &tb.Steps[h]
		s.Weight = make([]float64, s.Len())
		for j := range s.Weight {
			s.Weight[j] = 10
			if h == 0 {
				s.Weight[j] = []float64{4, 1}[int(s.State[j])]
			}
		}
	}
	dc := solve.Disclosure{MinCount: 5, MinRows: 5}
	st, err := solve.NewStatsDisclosed(ctx, tb, m, m.Blocks(), 1, dc)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.Counts(1, 0)); got != "[0 0 0 6]" {
		t.Fatalf("step 1 counts %s, want [0 0 0 6] (3 rows of weight 4 withheld)", got)
	}
	if got := fmt.Sprint(st.BehaviourCounts(1, 0)); got != "[0 0 0 6]" {
		t.Fatalf("step 1 behaviour counts %s, want [0 0 0 6]", got)
	}
	grams, err := st.StepGrams(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The withheld rows add nothing to the sums; the cell's weighted row
	// count N = 5 x 4 + 4 + 6 still counts them (a total over at least min
	// rows rows).
	if got := fmt.Sprint(grams[0].Packed, grams[0].N, st.CellRows(1, 0)); got != "[0 0 0 6] 30 30" {
		t.Fatalf("step 1 Gram, N and rows %s, want [0 0 0 6] 30 30", got)
	}
	if silent, _ := st.Suppressed(2, 0); !silent || st.CellRows(2, 0) != 0 {
		t.Fatalf("step 2 (4 rows of weight 10) is not silent: %v rows", st.CellRows(2, 0))
	}
	j := &Job{FormatVersion: FormatVersion, ID: "w", Method: solve.Pooled, Map: m, H: 2, Lambda: 1, C: 5e-4, Xi: 0.05,
		Fallback: solve.FallbackBehaviour, Sites: []string{"a"}, Disclosure: dc, MinSites: 1}
	msg, err := SiteMessage(ctx, j, NewState(j), SiteInput{Stats: st, Site: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !msg.Silent || msg.StepRows != 0 || slices.ContainsFunc(msg.Gram, func(x float64) bool { return x != 0 }) ||
		slices.ContainsFunc(msg.RHS[0], func(x float64) bool { return x != 0 }) {
		t.Fatalf("step 2's message holds sums of 4 rows: %+v", msg)
	}
}

// TestFederatedMapsDisclose: with K = 5 and min rows 10, every message of
// a job of each map and setting above holds no count and no behaviour
// count below 5, and no Gram entry of a feature withheld at its step; a
// silent step's Gram is zero; a stationary message's Gram of each step is
// the one every other round's message of the site holds, released under
// that step's counts.
func TestFederatedMapsDisclose(t *testing.T) {
	ctx := context.Background()
	const H = 4
	dc := solve.Disclosure{MinCount: 5, MinRows: 10}
	for _, tc := range mapCases() {
		m := tc.m
		perSite := []int{200, 150, 260, 120}
		if m.Kind == features.ActionBlock || m.Kind == features.Tabular {
			perSite = []int{60, 45, 80, 30}
		}
		names, chunks := mapChunks(m, 4, H, perSite, 23)
		var sites []SiteInput
		for k, c := range chunks {
			tb := mapTable(t, m, H, c)
			if tc.weighted {
				weigh(tb)
			}
			st, err := solve.NewStatsDisclosed(ctx, tb, m, solve.BlocksFor(tb, &m), 1, dc)
			if err != nil {
				t.Fatal(err)
			}
			sites = append(sites, SiteInput{Stats: st, Site: names[k]})
		}
		j := &Job{FormatVersion: FormatVersion, ID: "d", Method: solve.PEVIAvg, Map: m, H: H, Lambda: 1, C: 5e-4, Xi: 0.05,
			Fallback: solve.FallbackBehaviour, Stationary: tc.stationary, Sites: names, Disclosure: dc, MinSites: 3}
		// msgs[site][h-1] is the site's message of step h's round.
		msgs := map[string][]*Message{}
		s := NewState(j)
		for !s.Done(j) {
			var in []Incoming
			for _, site := range sites {
				msg, err := SiteMessage(ctx, j, s, site)
				if err != nil {
					t.Fatal(err)
				}
				if msgs[site.Site] == nil {
					msgs[site.Site] = make([]*Message, H)
				}
				if msg.Kind == "" {
					msgs[site.Site][msg.Step-1] = msg
				}
				in = append(in, Incoming{File: site.Site, Msg: msg})
			}
			next, err := Fold(ctx, j, s, in)
			if err != nil {
				t.Fatal(err)
			}
			s = next
		}
		withheld := 0
		for site, bySteps := range msgs {
			for _, msg := range bySteps {
				what := fmt.Sprintf("%s site %s step %d", tc.name, site, msg.Step)
				for i, c := range append(slices.Clone(msg.Counts), msg.Behaviour...) {
					if c != 0 && c < 5 {
						t.Fatalf("%s: count %d is %v < 5", what, i, c)
					}
				}
				l := solve.NewLayout(m.Blocks())
				if m.Kind == features.Precomputed {
					l = solve.NewLayout(blocksOf(msg.Blocks))
				}
				n := l.Size()
				steps := []int{msg.Step}
				if tc.stationary {
					steps = []int{1, 2, 3, 4}
				}
				for x, h := range steps {
					gram := msg.Gram[x*n : (x+1)*n]
					at := bySteps[h-1] // the message that released step h's counts
					if tc.stationary && m.Kind != features.Precomputed && !slices.Equal(gram, at.Gram[(h-1)*n:h*n]) {
						t.Fatalf("%s: step %d's Gram differs from the one of its own round", what, h)
					}
					if at.Silent && slices.ContainsFunc(gram, func(v float64) bool { return v != 0 }) {
						t.Fatalf("%s: step %d is silent but its Gram holds sums", what, h)
					}
					for i, c := range at.Counts {
						if c != 0 {
							continue
						}
						withheld++
						b, pos := l.Blocks.Of[i], int(l.Blocks.Pos[i])
						for r := 0; r < l.Blocks.Size(int(b)); r++ {
							x, y := max(r, pos), min(r, pos)
							if v := gram[l.Off[b]+x*(x+1)/2+y]; v != 0 {
								t.Fatalf("%s: step %d's Gram entry (%d, %d) of withheld feature %d is %v", what, h, r, pos, i, v)
							}
						}
						if h == msg.Step && !tc.stationary {
							for _, rhs := range msg.RHS {
								if rhs[i] != 0 {
									t.Fatalf("%s: right-hand side of withheld feature %d is %v", what, i, rhs[i])
								}
							}
						}
					}
				}
			}
		}
		if withheld == 0 {
			t.Fatalf("%s: nothing withheld: the case does not test disclosure control", tc.name)
		}
	}
}

// TestOffDiagonalJointRows pins what docs/FEDERATED.md says of Gram
// entries between two released features. Tabular, indicator and binned
// maps have one nonzero feature per row: their Grams are diagonal and no
// message holds an off-diagonal entry. For action-block (and soft-binned,
// precomputed) maps an entry (i, j) is a sum over the rows holding both,
// which may be fewer than K although each feature is counted at K or
// more: hand-worked, action-block p = 3, one site, action 0, rows
// (1,1,0) x 5, (0,1,1) x 5, (1,0,1) x 2, (1,0,0) x 3: counts 10, 10, 7 of
// the action's 15 rows (all released at K = 5) and entry (0, 2) =
// 2 x (1/2)(1/2) = 0.5 from 2 joint rows. It
// also checks why such entries are not zeroed: zeroing one off-diagonal
// pair of phi phi^T, phi = (1,1,1)/3, leaves a matrix with determinant
// -1/729 < 0, not a Gram.
func TestOffDiagonalJointRows(t *testing.T) {
	for _, m := range []features.Map{{Kind: features.Tabular, A: 3, S: 4}, {Kind: features.Indicator, A: 3},
		{Kind: features.Binned, A: 2, Bins: []features.Bins{{Column: "x", Cuts: []float64{1, 2}}, {Column: "y", Cuts: []float64{0}}}}} {
		if b := m.Blocks(); !b.Diagonal() {
			t.Fatalf("%s: blocks are not diagonal", m.Kind)
		}
	}
	m := features.Map{Kind: features.ActionBlock, A: 2, P: 3, StateColumns: []string{"s1", "s2", "s3"}}
	c := &traj.Chunk{Src: traj.Origin{File: "a"}, W: 3}
	tr := 0
	for _, row := range []struct {
		s []float64
		n int
	}{{[]float64{1, 1, 0}, 5}, {[]float64{0, 1, 1}, 5}, {[]float64{1, 0, 1}, 2}, {[]float64{1, 0, 0}, 3}} {
		for i := 0; i < row.n; i++ {
			c.SiteStr = append(c.SiteStr, "a")
			c.TrajInt = append(c.TrajInt, int64(tr))
			c.Step = append(c.Step, 1)
			c.ActionInt = append(c.ActionInt, 0)
			c.Reward = append(c.Reward, 1)
			c.State = append(c.State, row.s...)
			tr++
		}
	}
	tb := buildTable(t, m, 1, c)
	st, err := solve.NewStatsDisclosed(context.Background(), tb, m, m.Blocks(), 1, solve.Disclosure{MinCount: 5, MinRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.Counts(1, 0)); got != "[10 10 7 0 0 0]" {
		t.Fatalf("counts %s, want [10 10 7 0 0 0]", got)
	}
	grams, _ := st.StepGrams(context.Background(), 1)
	// Block 0 packed: (0,0) (1,0) (1,1) (2,0) (2,1) (2,2).
	if got := grams[0].Packed[3]; got != 0.5 {
		t.Fatalf("entry (0, 2) = %v, want 0.5 (2 joint rows)", got)
	}
	// phi phi^T with the (0, 2) pair zeroed: 1/9 [[1,1,0],[1,1,1],[0,1,1]].
	a := [3][3]float64{{1, 1, 0}, {1, 1, 1}, {0, 1, 1}}
	det := a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) - a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) + a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	if det/729 >= 0 {
		t.Fatalf("determinant %v/729, want negative", det)
	}
}

// TestFeatureNameBinned: the steward's names of binned and soft-binned
// features: cell 1 of lactate (3 cuts, 4 bins) x sofa (2 cuts, 3 bins) is
// lactate's bin 0 and sofa's bin 1; soft-binned feature 4 of 5 per action
// is sofa's second centre.
func TestFeatureNameBinned(t *testing.T) {
	bins := []features.Bins{{Column: "lactate", Cuts: []float64{1, 2.5, 4}}, {Column: "sofa", Cuts: []float64{2, 6}}}
	b := features.Map{Kind: features.Binned, A: 3, Bins: bins}
	if got := featureName(&b, 1*3+2); got != "lactate<=1 & 2<sofa<=6, action 2" {
		t.Fatalf("binned: %q", got)
	}
	s := features.Map{Kind: features.SoftBinned, A: 3, Bins: bins}
	if got := featureName(&s, 5+4); got != "sofa near 6, action 1" {
		t.Fatalf("soft-binned: %q", got)
	}
}

// TestPrecomputedBlocksChanged: after round 0 has fixed a precomputed
// job's blocks ({0, 1}, {2, 3}), a site whose rows now link features 0
// and 2 is refused at the site, and a message whose blocks cross the
// job's is refused at the fold, each as data changed since round 0.
func TestPrecomputedBlocksChanged(t *testing.T) {
	ctx := context.Background()
	const H = 3
	m := features.Map{Kind: features.Precomputed, A: 3, D: 4, StateColumns: []string{"phi"}}
	names, chunks := mapChunks(m, 4, H, []int{40, 30, 50, 20}, 29)
	var sites []SiteInput
	for k, c := range chunks {
		tb := mapTable(t, m, H, c)
		st, err := solve.NewStats(ctx, tb, m, solve.BlocksFor(tb, &m), 1)
		if err != nil {
			t.Fatal(err)
		}
		sites = append(sites, SiteInput{Stats: st, Site: names[k]})
	}
	j := &Job{FormatVersion: FormatVersion, ID: "b", Method: solve.Pooled, Map: m, H: H, Lambda: 1, C: 5e-4, Xi: 0.05,
		Fallback: solve.FallbackBehaviour, Sites: names, MinSites: 3}
	s := NewState(j)
	var in []Incoming
	for _, site := range sites {
		msg, err := SiteMessage(ctx, j, s, site)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, Incoming{File: site.Site, Msg: msg})
	}
	s, err := Fold(ctx, j, s, in)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(s.Blocks) != "[0 0 1 1]" {
		t.Fatalf("joint blocks %v, want [0 0 1 1]", s.Blocks)
	}
	// Site 0's first row now holds features 0 and 2 for every action.
	c := *chunks[0]
	c.State = slices.Clone(c.State)
	for a := 0; a < m.A; a++ {
		copy(c.State[a*m.D:(a+1)*m.D], []float64{0.5, 0, 0.5, 0})
	}
	tb := mapTable(t, m, H, &c)
	st, err := solve.NewStats(ctx, tb, m, solve.BlocksFor(tb, &m), 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = SiteMessage(ctx, j, s, SiteInput{Stats: st, Site: names[0]})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "changed since round 0") {
		t.Fatalf("site with changed blocks: %v", err)
	}
	in = in[:0]
	for _, site := range sites {
		msg, err := SiteMessage(ctx, j, s, site)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, Incoming{File: site.Site, Msg: msg})
	}
	in[1].Msg.Blocks = []int32{0, 0, 0, 0}
	in[1].Msg.Gram = make([]float64, 10)
	if _, err := Fold(ctx, j, s, in); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "changed since round 0") {
		t.Fatalf("message with crossing blocks: %v", err)
	}
}
