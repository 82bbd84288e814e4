package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

// parseCPath reads LO:HI:N: N values of c from LO to HI
// (dataset.PenaltyGrid).
func parseCPath(s string) ([]float64, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return nil, usagef("--c-path %q: want LO:HI:N, e.g. 1e-5:1e-2:7", s)
	}
	lo, err1 := strconv.ParseFloat(f[0], 64)
	hi, err2 := strconv.ParseFloat(f[1], 64)
	n, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || !(lo >= 0) || !(hi > lo) || n < 2 || n > 1000 || math.IsInf(hi, 0) {
		return nil, usagef("--c-path %q: want 0 <= LO < HI and 2 <= N <= 1000", s)
	}
	return dataset.PenaltyGrid(lo, hi, n), nil
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
