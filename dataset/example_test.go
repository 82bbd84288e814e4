package dataset_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Simulate three hospitals, open their data once, learn the robust
// policy and evaluate it on the same data.
func Example() {
	dir, err := os.MkdirTemp("", "dataset-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	m, err := sim.New(sim.ScenarioBenchmark, sim.Params{Trajectories: []int{300, 200, 500}, Horizon: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	t, err := m.Sample(1)
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "data.parquet")
	if err := parquetio.WriteTrajectories(path, t, parquetio.WriteOptions{StateColumns: m.Map().StateColumns, IntSites: true}); err != nil {
		panic(err)
	}

	ctx := context.Background()
	d, err := dataset.Open(ctx, []string{path}, dataset.Options{Map: features.Spec{Kind: features.ActionBlock}})
	if err != nil {
		panic(err)
	}
	m2 := d.Map()
	fmt.Println("sites", d.Sites(), "d =", m2.Dim())

	s := solve.DefaultSettings
	res, err := d.Solve(ctx, s, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		panic(err)
	}
	p := res.Policy
	fmt.Printf("%s: beta %.4f, value estimate %.4f\n", p.Method, p.Beta, p.ValueEstimate)

	rep, err := d.Evaluate(ctx, p, s, eval.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("robust value %.4f, worst site %s\n", rep.PolicyValue, rep.WorstSite)
	// Output:
	// sites [1 2 3] d = 30
	// sitewise: beta 0.2384, value estimate 1.0035
	// robust value 1.7764, worst site 3
}
