package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestExperimentCommand checks the command line an experiment records to
// reproduce it: the subcommand (with the coverage study's scenario),
// --reps and --seed, then every other flag given, as parsed; never
// --workers or --output.
func TestExperimentCommand(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"benchmark -o d", "grmdp experiment benchmark --reps 50 --seed 1"},
		{"benchmark -o d --reps 3 --fixed-model --c 1e-3 --states 7 --workers 2", "grmdp experiment benchmark --reps 3 --seed 1 --c 1e-3 --states 7 --fixed-model"},
		{"coverage -o d --scenario formulary --reps 2 --bootstrap 3 --trajectories 5,6", "grmdp experiment coverage --scenario formulary --reps 2 --seed 1 --bootstrap 3 --trajectories 5,6"},
		{"pessimism -o d --reps 2 --n-min 10,20 --reward-scale 0.5 --trap-count 2 --seed 4 --lambda 0.5 --xi 0.1 --beta-n-min 3",
			"grmdp experiment pessimism --reps 2 --seed 4 --lambda 0.5 --xi 0.1 --n-min 10,20 --trap-count 2 --reward-scale 0.5 --beta-n-min 3"},
	} {
		var got any
		ctx := context.WithValue(context.Background(), parseOnlyKey{}, &got)
		var stdout, stderr bytes.Buffer
		if code := run(ctx, append([]string{"grmdp", "experiment"}, strings.Fields(c.args)...), &stdout, &stderr); code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.args, code, stderr.String())
		}
		if cmd := got.(ExperimentOptions).Config.Command; cmd != c.want {
			t.Errorf("%s: records %q, want %q", c.args, cmd, c.want)
		}
	}
}
