package traj_test

import (
	"fmt"
	"log"

	"github.com/grmdp/grmdp/traj"
)

// Example builds a Table from a hand-made set of trajectories: two
// hospitals, three patients, a state of one column. The rows may come in
// any order and in any number of chunks; Build sorts them by step, site
// and trajectory and links each row to its trajectory's next step.
func Example() {
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"severity"}}})
	err := b.Add(&traj.Chunk{
		Src:       traj.Origin{File: "hand-made"},
		SiteStr:   []string{"mercy", "general", "mercy", "general", "general"},
		TrajStr:   []string{"p7", "p1", "p7", "p1", "p2"},
		Step:      []int64{2, 1, 1, 2, 1},
		ActionInt: []int64{0, 1, 1, 0, 0},
		Reward:    []float64{1, 0, 0.5, 0.25, 0.75},
		State:     []float64{0.2, 0.9, 0.8, 0.4, 0.3},
		W:         1,
	})
	if err != nil {
		log.Fatal(err)
	}
	t, err := b.Build()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sites %v, trajectories %v, A = %d, H = %d, %d rows\n", t.Sites, t.Trajectories, t.A, t.H, t.Rows)
	for h, st := range t.Steps {
		for i := range st.Len() {
			fmt.Printf("step %d: site %s, trajectory %d, action %d, reward %.2f, state %.1f, next %d\n",
				h+1, t.Sites[st.Site(i)], st.Traj[i], st.Action[i], st.Reward[i], st.State[i], st.Next[i])
		}
	}
	// Output:
	// sites [general mercy], trajectories [2 1], A = 2, H = 2, 5 rows
	// step 1: site general, trajectory 0, action 1, reward 0.00, state 0.9, next 0
	// step 1: site general, trajectory 1, action 0, reward 0.75, state 0.3, next -1
	// step 1: site mercy, trajectory 2, action 1, reward 0.50, state 0.8, next 1
	// step 2: site general, trajectory 0, action 0, reward 0.25, state 0.4, next -1
	// step 2: site mercy, trajectory 2, action 0, reward 1.00, state 0.2, next -1
}
