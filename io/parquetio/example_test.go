package parquetio_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// exampleDir makes a directory with a small trajectory file, data.parquet:
// two sites, string actions, one state column.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "parquetio-example-")
	if err != nil {
		log.Fatal(err)
	}
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"severity"}}})
	err = b.Add(&traj.Chunk{
		SiteStr:   []string{"north", "north", "north", "south", "south"},
		TrajInt:   []int64{1, 1, 2, 7, 7},
		Step:      []int64{1, 2, 1, 1, 2},
		ActionStr: []string{"drug", "none", "none", "drug", "drug"},
		Reward:    []float64{0, 1, 0.5, 0.25, 1},
		State:     []float64{3, 1, 2, 4, 2},
		W:         1,
	})
	if err != nil {
		log.Fatal(err)
	}
	t, err := b.Build()
	if err != nil {
		log.Fatal(err)
	}
	err = parquetio.WriteTrajectories(filepath.Join(dir, "data.parquet"), t, parquetio.WriteOptions{StateColumns: []string{"severity"}})
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

func ExampleRead() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	opts := traj.Options{State: traj.StateSpec{Columns: []string{"severity"}}}
	t, err := parquetio.Read(context.Background(), []string{dir}, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sites:", t.Sites, "trajectories:", t.Trajectories)
	fmt.Println("actions:", t.Actions, "H:", t.H, "rows:", t.Rows)
	for h, st := range t.Steps {
		fmt.Printf("step %d: traj %v action %v reward %v state %v next %v\n", h+1, st.Traj, st.Action, st.Reward, st.State, st.Next)
	}
	// Output:
	// sites: [north south] trajectories: [2 1]
	// actions: [drug none] H: 2 rows: 5
	// step 1: traj [0 1 2] action [0 1 0] reward [0 0.5 0.25] state [3 2 4] next [0 -1 1]
	// step 2: traj [0 2] action [1 0] reward [1 1] state [1 2] next [-1 -1]
}

func ExampleRead_error() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	// The file has no column "bp".
	_, err := parquetio.Read(context.Background(), []string{filepath.Join(dir, "data.parquet")},
		traj.Options{State: traj.StateSpec{Columns: []string{"bp"}}})
	fmt.Println(filepath.Base(err.Error()))
	// Output:
	// data.parquet: column "bp": missing: the file has columns [site traj step action reward severity]
}

func ExampleWritePolicy() {
	dir, _ := os.MkdirTemp("", "parquetio-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "policy.parquet")

	rows := []parquetio.PolicyRow{
		{Step: 1, Group: 0, W: []float64{0.5, 0.25}, M: []float64{0.1, 0.2}, Fallback: []int32{1}},
		{Step: 2, Group: 0, W: []float64{0.75, 0}, M: []float64{0.3, 0.1}},
	}
	if err := parquetio.WritePolicy(path, rows, map[string]string{"method": "sitewise", "H": "2"}); err != nil {
		log.Fatal(err)
	}
	got, meta, err := parquetio.ReadPolicy(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%+v\n%+v\n%v\n", got[0], got[1], meta)
	// Output:
	// {Step:1 Group:0 W:[0.5 0.25] M:[0.1 0.2] Linv:[] Fallback:[1] Counts:[]}
	// {Step:2 Group:0 W:[0.75 0] M:[0.3 0.1] Linv:[] Fallback:[] Counts:[]}
	// map[H:2 method:sitewise]
}

func ExampleAnnotate() {
	dir := exampleDir()
	defer os.RemoveAll(dir)

	// Recommend action 1 ("none") when severity is below 3, else 0 ("drug").
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"severity"}}, Workers: 1}
	out := filepath.Join(dir, "annotated.parquet")
	err := parquetio.Annotate(context.Background(), []string{filepath.Join(dir, "data.parquet")}, out, opts, []string{"drug", "none"},
		func(steps []int64, state []float64, w int, action []int32, q []float64, evidence []bool) error {
			for i := range steps {
				if state[i*w] < 3 {
					action[i] = 1
				}
				q[i] = float64(steps[i]) / 2
				evidence[i] = true
			}
			return nil
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", filepath.Base(out))
	// Output:
	// wrote annotated.parquet
}
