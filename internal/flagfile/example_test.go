package flagfile_test

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/internal/flagfile"
)

// One file serves two commands: solve takes the top level, its own
// section and its DATA from the file, and keeps the --lambda given on its
// command line; rows belongs to show, so solve returns it as ignored.
func ExampleFile_Apply() {
	file, err := flagfile.Parse("run.yaml", []byte(`
data: [a.parquet, b.parquet]
lambda: 2
xi: 0.1
rows: 20
solve:
  xi: 0.05
  bins:
    s1: [0.3, 0.6]
    s2: q3
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	solve := &cli.Command{
		Name:      "solve",
		ArgsUsage: "DATA...",
		Flags: []cli.Flag{
			&cli.FloatFlag{Name: "lambda"},
			&cli.FloatFlag{Name: "xi"},
			&cli.StringSliceFlag{Name: "bins"},
		},
		Before: func(ctx context.Context, c *cli.Command) (context.Context, error) {
			res, err := file.Apply(c, flagfile.Options{Args: "data"})
			fmt.Printf("DATA %q, ignored %q\n", res.Args, res.Ignored)
			return ctx, err
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			fmt.Println("lambda", c.Float("lambda"), "xi", c.Float("xi"), "bins", c.StringSlice("bins"))
			return nil
		},
	}
	show := &cli.Command{Name: "show", Flags: []cli.Flag{&cli.IntFlag{Name: "rows"}}}
	prog := &cli.Command{Name: "prog", Commands: []*cli.Command{solve, show}}
	if err := prog.Run(context.Background(), []string{"prog", "solve", "--lambda", "5"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	// Output:
	// DATA ["a.parquet" "b.parquet"], ignored ["rows"]
	// lambda 5 xi 0.05 bins [s1:0.3,0.6 s2:q3]
}
