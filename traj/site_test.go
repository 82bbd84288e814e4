package traj_test

import (
	"reflect"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// TestSiteHandWorked checks Table.Site on the hand-made input, worked out
// by hand from TestBuildHandWorked's table: site 1 keeps its two
// trajectories (ordinals 0 and 1) and its Next link; site 2 keeps its one
// trajectory with ordinal 2 (t's), and its step-1 row links to its own
// step-2 row, index 0 (index 1 in t).
func TestSiteHandWorked(t *testing.T) {
	tb, err := build(t, rows())
	if err != nil {
		t.Fatal(err)
	}
	s1 := tb.Site(0)
	if !reflect.DeepEqual(s1.Sites, []string{"1"}) || !reflect.DeepEqual(s1.Trajectories, []int{2}) || s1.Rows != 3 || s1.A != 2 || s1.H != 2 {
		t.Fatalf("site 1: sites %v trajectories %v rows %d A %d H %d", s1.Sites, s1.Trajectories, s1.Rows, s1.A, s1.H)
	}
	want := []traj.Step{
		{SiteStart: []int32{0, 2}, Traj: []int32{0, 1}, Action: []int32{1, 1}, Reward: []float64{0.75, 0}, State: []float64{0, 2}, Next: []int32{-1, 0}},
		{SiteStart: []int32{0, 1}, Traj: []int32{1}, Action: []int32{0}, Reward: []float64{0.25}, State: []float64{3}, Next: []int32{-1}},
	}
	if !reflect.DeepEqual(s1.Steps, want) {
		t.Errorf("site 1's steps = %+v, want %+v", s1.Steps, want)
	}
	s2 := tb.Site(1)
	if !reflect.DeepEqual(s2.Sites, []string{"2"}) || !reflect.DeepEqual(s2.Trajectories, []int{1}) || s2.Rows != 2 {
		t.Fatalf("site 2: sites %v trajectories %v rows %d", s2.Sites, s2.Trajectories, s2.Rows)
	}
	want = []traj.Step{
		{SiteStart: []int32{0, 1}, Traj: []int32{2}, Action: []int32{0}, Reward: []float64{1}, State: []float64{1}, Next: []int32{0}},
		{SiteStart: []int32{0, 1}, Traj: []int32{2}, Action: []int32{1}, Reward: []float64{0.5}, State: []float64{4}, Next: []int32{-1}},
	}
	if !reflect.DeepEqual(s2.Steps, want) {
		t.Errorf("site 2's steps = %+v, want %+v", s2.Steps, want)
	}
	// t itself is unchanged: its step-1 row of site 2 still links to row 1.
	if tb.Steps[0].Next[2] != 1 {
		t.Errorf("Site changed t's links: %v", tb.Steps[0].Next)
	}
}
