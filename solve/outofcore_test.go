package solve

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// windowReader serves step windows cut from a table in memory, as
// parquetio.Plan serves them from files: the whole input's sites, actions,
// A, H and trajectory counts; only steps lo..hi hold rows; rows at step hi
// have no successor.
type windowReader struct {
	t     *traj.Table
	reads [][2]int
}

func (w *windowReader) ReadSteps(ctx context.Context, lo, hi int) (*traj.Table, error) {
	w.reads = append(w.reads, [2]int{lo, hi})
	t := w.t
	out := &traj.Table{Sites: t.Sites, Trajectories: t.Trajectories, Actions: t.Actions, A: t.A, H: t.H, W: t.W, Sources: t.Sources}
	out.Steps = make([]traj.Step, t.H)
	for h := 1; h <= t.H; h++ {
		s := &t.Steps[h-1]
		if h < lo || h > hi {
			out.Steps[h-1] = traj.Step{SiteStart: make([]int32, len(t.Sites)+1)}
			continue
		}
		c := traj.Step{SiteStart: append([]int32(nil), s.SiteStart...), Traj: append([]int32(nil), s.Traj...),
			Action: append([]int32(nil), s.Action...), Reward: append([]float64(nil), s.Reward...),
			State: append([]float64(nil), s.State...), Next: append([]int32(nil), s.Next...), Weight: append([]float64(nil), s.Weight...)}
		if h == hi {
			for j := range c.Next {
				c.Next[j] = -1
			}
		}
		out.Steps[h-1] = c
		out.Rows += c.Len()
	}
	return out, nil
}

// TestSolveStreamedMatchesInMemory checks that solving one two-step window
// at a time gives bit for bit the policies, value estimates and
// diagnostics of the in-memory solve, for every map and method, and reads
// each window once.
func TestSolveStreamedMatchesInMemory(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		for _, rows := range []int{SampleRows, 37} {
			// Grams kept for every (site, step), and computed per step
			// when a round needs them (as for large tabular maps), both
			// in memory and out of core.
			for _, limit := range []int64{64 << 20, -1} {
				testSolveStreamed(t, ctx, m, Tuning{SampleRows: rows, GramCacheBytes: limit})
			}
		}
	}
}

func testSolveStreamed(t *testing.T, ctx context.Context, m features.Map, tn Tuning) {
	{
		// Site 3 has no rows at the last steps: empty cells.
		tb := randomTable(t, m, 4, 5, []int{40, 25, 60, 3}, 11)
		blocks := BlocksFor(tb, &m)
		st, err := newStats(ctx, tb, m, blocks, 0, tn)
		if err != nil {
			t.Fatal(err)
		}
		probs := everyProblem()
		cellRows := make([][]int, tb.H)
		for h := range cellRows {
			cellRows[h] = make([]int, len(tb.Sites))
			for k := range cellRows[h] {
				cellRows[h][k] = int(tb.Steps[h].SiteStart[k+1] - tb.Steps[h].SiteStart[k])
			}
		}
		s := DefaultSettings
		s.C, s.Tuning = 2e-3, tn
		r := &windowReader{t: tb}
		got, err := SolveStreamed(ctx, r, m, blocks, s, probs, cellRows, tb.Rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.reads) != tb.H || r.reads[0] != [2]int{tb.H, tb.H} || r.reads[tb.H-1] != [2]int{1, 2} {
			t.Fatalf("%v: windows read %v", m.Kind, r.reads)
		}
		for i, prob := range probs {
			want, err := NewSolver(st, s).Solve(ctx, prob)
			if err != nil {
				t.Fatal(err)
			}
			p := got.Policies[i]
			name := m.Kind.String() + "/" + string(prob.Method)
			if math.Float64bits(p.ValueEstimate) != math.Float64bits(want.ValueEstimate) || p.Beta != want.Beta || p.Rows != want.Rows ||
				!reflect.DeepEqual(p.Groups, want.Groups) || !reflect.DeepEqual(p.BehaviourAction, want.BehaviourAction) || len(p.Runs) != len(want.Runs) {
				t.Fatalf("%s: streamed policy differs: value %v/%v beta %v/%v rows %d/%d", name, p.ValueEstimate, want.ValueEstimate, p.Beta, want.Beta, p.Rows, want.Rows)
			}
			for ri := range p.Runs {
				if p.Runs[ri].Group != want.Runs[ri].Group || p.Runs[ri].Beta != want.Runs[ri].Beta {
					t.Fatalf("%s: run %d is %s/%v, want %s/%v", name, ri, p.Runs[ri].Group, p.Runs[ri].Beta, want.Runs[ri].Group, want.Runs[ri].Beta)
				}
				for h := range p.Runs[ri].Steps {
					g, w := &p.Runs[ri].Steps[h], &want.Runs[ri].Steps[h]
					if !bitsEqual(g.W, w.W) || !bitsEqual(g.M, w.M) || !bitsEqual(g.Linv, w.Linv) {
						t.Fatalf("%s: run %d step %d coefficients differ", name, ri, h+1)
					}
				}
			}
			acts, evs, err := ActAll(ctx, want, tb, 0, tn.stride(tb.Rows))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Actions[i], acts) || !reflect.DeepEqual(got.Evidence[i], evs) {
				t.Fatalf("%s: sampled actions or evidence differ from ActAll's", name)
			}
			gd, wd := got.Diagnostics[i], Diagnose(st, want)
			if !reflect.DeepEqual(gd, wd) {
				t.Fatalf("%s: diagnostics differ:\nstreamed  %+v\nin memory %+v", name, gd, wd)
			}
		}
	}
}

func TestSolveStreamedRefusesStationary(t *testing.T) {
	m := testMaps()[1]
	tb := randomTable(t, m, 2, 3, []int{5, 5}, 1)
	s := DefaultSettings
	s.Stationary = true
	_, err := SolveStreamed(context.Background(), &windowReader{t: tb}, m, BlocksFor(tb, &m), s, []Problem{{Method: Sitewise}}, [][]int{{1, 1}, {1, 1}, {1, 1}}, 6)
	if err != ErrStationaryStreamed {
		t.Fatalf("stationary: got %v", err)
	}
}
