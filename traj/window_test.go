package traj_test

import (
	"reflect"
	"testing"
)

// TestTableWindow: a window keeps the header and the rows of its steps as
// they are (Next links included) and empties every other step, its sites
// all starting at row 0; a window outside 1..H panics.
func TestTableWindow(t *testing.T) {
	c := rows()
	c.SiteInt = append(c.SiteInt, 1, 1)
	c.TrajInt = append(c.TrajInt, 5, 5)
	c.Step = append(c.Step, 3, 4)
	c.ActionInt = append(c.ActionInt, 0, 1)
	c.Reward = append(c.Reward, 0.2, 0.3)
	c.State = append(c.State, 5, 6)
	tb, err := build(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if tb.H != 4 {
		t.Fatalf("H = %d", tb.H)
	}
	w := tb.Window(2, 3)
	if w.H != tb.H || w.Rows != tb.Rows || !reflect.DeepEqual(w.Sites, tb.Sites) || !reflect.DeepEqual(w.Trajectories, tb.Trajectories) {
		t.Fatalf("header changed: %+v", w)
	}
	for h := 1; h <= 4; h++ {
		s := &w.Steps[h-1]
		if h == 2 || h == 3 {
			if !reflect.DeepEqual(*s, tb.Steps[h-1]) {
				t.Fatalf("step %d: %+v, want %+v", h, *s, tb.Steps[h-1])
			}
			continue
		}
		if s.Len() != 0 || !reflect.DeepEqual(s.SiteStart, []int32{0, 0, 0}) {
			t.Fatalf("step %d outside the window: %+v", h, *s)
		}
	}
	if tb.Steps[0].Len() != 3 || tb.Steps[3].Len() != 1 {
		t.Fatal("the window changed the table")
	}
	for _, bad := range [][2]int{{0, 1}, {2, 1}, {3, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("window %v did not panic", bad)
				}
			}()
			tb.Window(bad[0], bad[1])
		}()
	}
}
