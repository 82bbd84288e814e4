package traj_test

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// rows is a hand-made input: two sites, trajectories of length 2 and 1,
// in shuffled order, one state column.
func rows() *traj.Chunk {
	return &traj.Chunk{
		Src:       traj.Origin{File: "hand", RowGroup: 0},
		SiteInt:   []int64{2, 1, 1, 2, 1},
		TrajInt:   []int64{7, 5, 5, 7, 3},
		Step:      []int64{2, 2, 1, 1, 1},
		ActionInt: []int64{1, 0, 1, 0, 1},
		Reward:    []float64{0.5, 0.25, 0, 1, 0.75},
		State:     []float64{4, 3, 2, 1, 0},
		W:         1,
	}
}

func build(t *testing.T, c *traj.Chunk) (*traj.Table, error) {
	t.Helper()
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"s"}}})
	if err := b.Add(c); err != nil {
		return nil, err
	}
	return b.Build()
}

// TestBuildHandWorked checks the Table of the hand-made input, worked out
// by hand: rows sorted by step, site, trajectory; trajectories numbered in
// (site, key) order; Next linking each row to its trajectory's next step.
func TestBuildHandWorked(t *testing.T) {
	tb, err := build(t, rows())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tb.Sites, []string{"1", "2"}) || tb.A != 2 || tb.H != 2 || tb.Rows != 5 || !reflect.DeepEqual(tb.Trajectories, []int{2, 1}) {
		t.Fatalf("sites %v A %d H %d rows %d trajectories %v", tb.Sites, tb.A, tb.H, tb.Rows, tb.Trajectories)
	}
	// Step 1: site 1 traj 3, site 1 traj 5, site 2 traj 7.
	s1 := tb.Steps[0]
	want1 := traj.Step{SiteStart: []int32{0, 2, 3}, Traj: []int32{0, 1, 2}, Action: []int32{1, 1, 0},
		Reward: []float64{0.75, 0, 1}, State: []float64{0, 2, 1}, Next: []int32{-1, 0, 1}}
	if !reflect.DeepEqual(s1, want1) {
		t.Errorf("step 1 = %+v, want %+v", s1, want1)
	}
	// Step 2: site 1 traj 5, site 2 traj 7.
	want2 := traj.Step{SiteStart: []int32{0, 1, 2}, Traj: []int32{1, 2}, Action: []int32{0, 1},
		Reward: []float64{0.25, 0.5}, State: []float64{3, 4}, Next: []int32{-1, -1}}
	if !reflect.DeepEqual(tb.Steps[1], want2) {
		t.Errorf("step 2 = %+v, want %+v", tb.Steps[1], want2)
	}
}

// TestBuildErrors checks that a duplicate row and a gap are reported with
// the row that names them, and that the gap wraps ErrGap.
func TestBuildErrors(t *testing.T) {
	dup := rows()
	dup.Step[1] = 1 // site 1 traj 5 twice at step 1 (rows 1 and 2)
	_, err := build(t, dup)
	const wantDup = `hand: row group 0, row 2: column "step": duplicate row for site 1, traj 5, step 1 (also at hand row 1): each (site, traj, step) must appear once`
	if err == nil || err.Error() != wantDup || !errors.Is(err, traj.ErrBadData) {
		t.Errorf("duplicate: %v\nwant %s", err, wantDup)
	}
	gap := rows()
	gap.Step[3] = 3 // site 2 traj 7 at steps 2 (row 0) and 3, none at 1
	_, err = build(t, gap)
	const wantGap = `hand: row group 0, row 0: column "step": gap inside an episode: site 2, traj 7 has a row at step 2 but none at step 1: episodes start at step 1 and may end early but not skip steps`
	if err == nil || err.Error() != wantGap || !errors.Is(err, traj.ErrGap) {
		t.Errorf("gap: %v\nwant %s", err, wantGap)
	}
	bad := rows()
	bad.Reward[4] = 1.5
	_, err = build(t, bad)
	const wantReward = `hand: row group 0, row 4: column "reward": reward 1.5 is outside [0,1]: rescale rewards to [0,1] before solving`
	if err == nil || err.Error() != wantReward {
		t.Errorf("reward: %v\nwant %s", err, wantReward)
	}
}

// TestWindows checks that a survey and windows of one step rebuild each
// step of the whole Table (rows, values, trajectory ordinals), and that
// KeepSteps keeps the rows' own numbers for messages.
func TestWindows(t *testing.T) {
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"s"}}}
	whole, err := build(t, rows())
	if err != nil {
		t.Fatal(err)
	}
	sv := traj.NewSurveyBuilder(opts)
	if err := sv.Add(rows()); err != nil {
		t.Fatal(err)
	}
	sum, err := sv.Summarize()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sum.CellRows, [][]int{{2, 1}, {1, 1}}) || !reflect.DeepEqual(sum.Trajectories, []int{2, 1}) {
		t.Fatalf("survey: cells %v trajectories %v", sum.CellRows, sum.Trajectories)
	}
	for h := 1; h <= whole.H; h++ {
		b := traj.NewWindowBuilder(opts, sum, h, h)
		c := rows()
		c.KeepSteps(h, h)
		if err := b.Add(c); err != nil {
			t.Fatal(err)
		}
		w, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		got, want := w.Steps[h-1], whole.Steps[h-1]
		got.Next, want.Next = nil, nil // a one-step window links nothing
		if !reflect.DeepEqual(got, want) {
			t.Errorf("window %d: %+v, want %+v", h, got, want)
		}
	}
	// Row 3 of the input is the only row of site 2 at step 1; a bad
	// reward there is reported as row 3 after KeepSteps dropped rows 0
	// and 1.
	c := rows()
	c.Reward[3] = -1
	c.KeepSteps(1, 1)
	b := traj.NewWindowBuilder(opts, sum, 1, 1)
	err = b.Add(c)
	const want = `hand: row group 0, row 3: column "reward": reward -1 is outside [0,1]: rescale rewards to [0,1] before solving`
	if err == nil || err.Error() != want {
		t.Errorf("window error: %v\nwant %s", err, want)
	}
}

// newTable builds c with NewTable, as a reader in two passes does: sites
// interned in the order seen, the states written afterwards at the places
// NewTable returns (when later is set) or given with the rows.
func newTable(t *testing.T, c *traj.Chunk, later bool) (*traj.Table, error) {
	t.Helper()
	n := c.Len()
	r := traj.Rows{IntSites: true, Site: make([]int32, n), Traj: slices.Clone(c.TrajInt), Step: make([]int32, n),
		Action: make([]int32, n), Reward: slices.Clone(c.Reward), W: c.W,
		Origins: []traj.Origin{c.Src}, Ends: []int{n}}
	ids := map[int64]int32{}
	for i := range n {
		id, ok := ids[c.SiteInt[i]]
		if !ok {
			id = int32(len(r.Sites))
			ids[c.SiteInt[i]] = id
			r.Sites = append(r.Sites, strconv.FormatInt(c.SiteInt[i], 10))
		}
		r.Site[i], r.Step[i], r.Action[i] = id, int32(c.Step[i]), int32(c.ActionInt[i])
	}
	if !later {
		r.State = slices.Clone(c.State)
		tb, places, err := traj.NewTable(r, traj.Options{State: traj.StateSpec{Columns: []string{"s"}}})
		if places != nil {
			t.Errorf("places %v with the states given", places)
		}
		return tb, err
	}
	all := make([]float64, n*c.W)
	r.State, r.StatesLater = all, true
	tb, places, err := traj.NewTable(r, traj.Options{State: traj.StateSpec{Columns: []string{"s"}}})
	if err != nil {
		return nil, err
	}
	for i, p := range places {
		copy(all[int(p)*c.W:int(p+1)*c.W], c.State[i*c.W:(i+1)*c.W])
	}
	return tb, nil
}

// TestNewTable checks that NewTable gives the Builder's Table, with the
// states given and with the states written later at the places it
// returns, and names the trajectory of a duplicate and of a gap as the
// Builder does, from the sorted ids: held as int32 offsets for these ids,
// as int64 ids when one id lies 2^40 away from the others.
func TestNewTable(t *testing.T) {
	whole, err := build(t, rows())
	if err != nil {
		t.Fatal(err)
	}
	for _, later := range []bool{false, true} {
		got, err := newTable(t, rows(), later)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, whole) {
			t.Errorf("states later %v: %+v, want %+v", later, got, whole)
		}
	}
	for _, far := range []int64{0, 1 << 40} {
		for _, tc := range []struct {
			name string
			edit func(c *traj.Chunk)
		}{
			{"duplicate", func(c *traj.Chunk) { c.Step[1] = 1 }}, // site 1 traj 5 twice at step 1
			{"gap", func(c *traj.Chunk) { c.Step[3] = 3 }},       // site 2 traj 7 at steps 2 and 3
		} {
			one, two := rows(), rows()
			for _, c := range []*traj.Chunk{one, two} {
				tc.edit(c)
				c.TrajInt[0] += far
				c.TrajInt[3] += far
			}
			_, want := build(t, one)
			_, err := newTable(t, two, true)
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("%s, ids %d apart: %v\nwant %v", tc.name, far, err, want)
			}
		}
	}
}

// TestNewTablePanics checks that NewTable panics on columns of different
// lengths and on a site or step out of range, as its doc says.
func TestNewTablePanics(t *testing.T) {
	ok := func() traj.Rows {
		return traj.Rows{Sites: []string{"a"}, Site: []int32{0}, Traj: []int64{1}, Step: []int32{1},
			Action: []int32{0}, Reward: []float64{0.5}, Origins: []traj.Origin{{File: "f"}}, Ends: []int{1}}
	}
	if _, _, err := traj.NewTable(ok(), traj.Options{}); err != nil {
		t.Fatalf("well-formed rows: %v", err)
	}
	for name, edit := range map[string]func(r *traj.Rows){
		"lengths": func(r *traj.Rows) { r.Reward = nil },
		"site":    func(r *traj.Rows) { r.Site[0] = 1 },
		"step":    func(r *traj.Rows) { r.Step[0] = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			r := ok()
			edit(&r)
			traj.NewTable(r, traj.Options{})
		})
	}
}
