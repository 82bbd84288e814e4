package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

// parseCPath reads --c-path LO:HI:N (dataset.ParsePenaltyGrid).
func parseCPath(s string) ([]float64, error) {
	cs, err := dataset.ParsePenaltyGrid(s)
	if err != nil {
		return nil, usagef("--c-path%s", strings.TrimPrefix(err.Error(), "dataset: penalty grid"))
	}
	return cs, nil
}

// runCPath solves prob at each c (statistics and factorisations reused,
// and with --c auto the chosen lambda and step pooling) and writes a
// table, a CSV and a plot beside the policy.
func runCPath(ctx context.Context, w io.Writer, res *dataset.Solved, base solve.Settings, prob solve.Problem, cs []float64, prefix string) error {
	pts, err := res.PenaltyPath(ctx, base, prob, cs)
	if err == nil {
		err = pts.WriteText(w)
	}
	if err == nil {
		err = pts.WriteFiles(prefix, base, res.Policy)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s.cpath.csv and %s.cpath.png/.svg\n", prefix, prefix)
	return nil
}
