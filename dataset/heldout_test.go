package dataset_test

import (
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/traj"
)

// TestHeldOutTableCensored checks that a held-out fold's table marks as
// censored exactly its trajectories that --nulls truncate cut (those
// whose last row has weight 0: its successor was not observed), and as
// many per site as the full table's censored trajectories in the fold.
func TestHeldOutTableCensored(t *testing.T) {
	spec := sim.DefaultClinicalSpec()
	spec.NullRate = 0.05
	m, err := sim.NewClinical(sim.Params{Seed: 2, Clinical: &spec})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(5)
	if err != nil {
		t.Fatal(err)
	}
	const K = 5
	fold := dataset.Folds(tb, K, 7)
	for f := int32(0); f < K; f++ {
		ht := dataset.HeldOutTable(tb, fold, f)
		want := make([]int, len(tb.Sites))
		s1 := &tb.Steps[0]
		for k := range tb.Sites {
			for j := s1.SiteStart[k]; j < s1.SiteStart[k+1]; j++ {
				if i := s1.Traj[j]; fold[i] == f && tb.IsCensored(i) {
					want[k]++
				}
			}
		}
		got := ht.CensoredCount()
		for k := range want {
			if got == nil || got[k] != want[k] {
				t.Fatalf("fold %d: censored per site %v, want %v", f, got, want)
			}
		}
		cutLast := lastRowWeightZero(ht)
		for i, c := range cutLast {
			if c != ht.IsCensored(int32(i)) {
				t.Errorf("fold %d, trajectory %d: censored %v, last row of weight 0 %v", f, i, ht.IsCensored(int32(i)), c)
			}
		}
	}
}

// lastRowWeightZero reports, per trajectory, whether its last row has
// weight 0.
func lastRowWeightZero(t *traj.Table) []bool {
	n := 0
	for k := range t.Sites {
		n += t.Trajectories[k]
	}
	out := make([]bool, n)
	for h := range t.Steps {
		s := &t.Steps[h]
		for j, i := range s.Traj {
			out[i] = s.Weight != nil && s.Weight[j] == 0
		}
	}
	return out
}
