package main

import (
	"bytes"
	"context"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// flagSample sets one flag: a command line with it (a) against the same
// command line with another value, or without it (b). Both must parse.
type flagSample struct{ a, b []string }

func set(args ...string) flagSample { return flagSample{a: args} }

// flagSamples are the samples of each flag name; sampleFor overrides them
// for a command.
var flagSamples = map[string]flagSample{
	"workers":          set("--workers", "3"),
	"max-memory":       set("--max-memory", "64GiB"),
	"return-range":     set("--return-range", "0,1"),
	"output":           set("-o", "other"),
	"json":             set("--json"),
	"row-group-rows":   set("--row-group-rows", "100"),
	"features":         set("--features", "indicator"),
	"state":            set("--state", "a,b"),
	"bins":             {a: []string{"--features", "binned", "--bins", "x:1,2"}, b: []string{"--features", "binned", "--bins", "x:1"}},
	"horizon":          set("--horizon", "4"),
	"actions":          set("--actions", "3"),
	"num-states":       {a: []string{"--features", "tabular", "--num-states", "5"}, b: []string{"--features", "tabular"}},
	"site-col":         set("--site-col", "hospital"),
	"traj-col":         set("--traj-col", "patient"),
	"step-col":         set("--step-col", "t"),
	"action-col":       set("--action-col", "dose"),
	"reward-col":       set("--reward-col", "outcome"),
	"first-step":       set("--first-step", "1"),
	"nulls":            set("--nulls", "truncate"),
	"action-labels":    set("--action-labels", "a,b"),
	"lambda":           set("--lambda", "2"),
	"c":                set("--c", "0.001"),
	"xi":               set("--xi", "0.1"),
	"beta":             set("--beta", "0.5"),
	"fallback":         set("--fallback", "lowest"),
	"min-evidence":     set("--min-evidence", "0.5"),
	"stationary":       set("--stationary"),
	"min-count":        set("--min-count", "7"),
	"min-rows":         set("--min-rows", "11"),
	"out-of-core":      set("--out-of-core"),
	"scenario":         set("--scenario", "formulary"),
	"sites":            set("--sites", "4"),
	"trajectories":     set("--trajectories", "10,20"),
	"seed":             set("--seed", "2"),
	"min-trajectories": set("--min-trajectories", "5"),
	"model-out":        set("--model-out", "m.json"),
	"split-sites":      set("--split-sites", "hospital-"),
	"step":             set("--step", "2"),
	"max-rows":         set("--max-rows", "5"),
	"dir":              set("--dir", "elsewhere"),
	"reps":             set("--reps", "3"),
	"folds":            set("--folds", "3"),
	"states":           set("--states", "10"),
	"fixed-model":      set("--fixed-model"),
	"n-min":            set("--n-min", "10,20"),
	"trap-count":       set("--trap-count", "3"),
	"reward-scale":     set("--reward-scale", "0.5"),
	"beta-n-min":       set("--beta-n-min", "100"),
	"bootstrap":        set("--bootstrap", "5"),
	"job":              set("--job", "other"),
	"messages":         set("--messages", "m"),
	"eval":             set("--eval", "p.parquet"),
	"eval-clusters":    {a: []string{"--eval", "p.parquet", "--eval-clusters", "c.csv"}, b: []string{"--eval", "p.parquet"}},
	"no-cache":         set("--no-cache"),
	"clusters":         set("--method", "cluster", "--clusters", "c.csv"),
	"threshold":        set("--threshold", "0.5"),
	"num-clusters":     set("--num-clusters", "2"),
	"allow-singletons": set("--allow-singletons"),
	"policy":           set("--policy", "p.parquet"),
	"method":           set("--method", "pooled"),
	"min-sites":        set("--min-sites", "2"),
	"dim":              {a: []string{"--features", "precomputed", "--dim", "3"}, b: []string{"--features", "precomputed", "--dim", "2"}},
	"model":            set("--model", "m.json"),
	"evaluate":         {a: []string{"--evaluate"}, b: []string{"--evaluate=false"}},
	"heldout":          set("--heldout"),
	"c-path":           set("--c-path", "0.001:0.01:3"),
	"similarity":       set("--similarity", "t.csv"),
	"report":           set("--report", "r"),
	"permutations":     set("--permutations", "5"),
	"cache":            set("--cache", "cdir"),
	"site":             set("--site", "b"),
}

// commandBase is the command line each command parses without error,
// the flags' samples added to it.
var commandBase = map[string][]string{
	"show":                   {"p.parquet"},
	"simulate":               {"-o", "d.parquet"},
	"prepare":                {"-o", "out.parquet", "d.parquet"},
	"scan":                   {"d.parquet"},
	"experiment benchmark":   {"-o", "dir"},
	"experiment convergence": {"-o", "dir"},
	"experiment pessimism":   {"-o", "dir"},
	"experiment coverage":    {"-o", "dir", "--scenario", "benchmark"},
	"federate init":          {"--sites", "a,b,c", "--horizon", "3", "--actions", "2", "--state", "s1", "-o", "job"},
	"federate run":           {"--job", "job", "--site", "a=x"},
	"federate eval":          {"--job", "job"},
	"federate step":          {"--job", "job", "m.parquet"},
	"federate show":          {"m.parquet"},
	"federate site":          {"--job", "job", "--site", "a", "-o", "m.parquet", "d.parquet"},
	"solve":                  {"-o", "p.parquet", "d.parquet"},
	"compare":                {"d.parquet"},
	"eval":                   {"--policy", "p.parquet", "d.parquet"},
	"apply":                  {"--policy", "p.parquet", "-o", "a.parquet", "d.parquet"},
	"inspect":                {"d.parquet"},
	"cluster":                {"--similarity", "s.csv", "-o", "c.json", "d.parquet"},
}

// sampleFor is the sample of flag for the command path.
func sampleFor(path, flag string) (flagSample, bool) {
	clusters := func(extra ...string) flagSample {
		return flagSample{a: append([]string{"--policy", "p.parquet", "--clusters", "c.csv"}, extra...), b: []string{"--policy", "p.parquet", "--clusters", "c.csv"}}
	}
	switch path + " " + flag {
	case "federate init num-states":
		return flagSample{a: []string{"--features", "tabular", "--num-states", "5"}, b: []string{"--features", "tabular", "--num-states", "4"}}, true
	case "federate init bins":
		return flagSample{a: []string{"--features", "binned", "--bins", "s1:1,2"}, b: []string{"--features", "binned", "--bins", "s1:1"}}, true
	case "federate init features":
		return set("--features", "indicator"), true
	case "federate init clusters":
		return flagSample{a: []string{"--method", "cluster", "--clusters", "c.csv"}, b: []string{"--method", "cluster", "--clusters", "d.csv"}}, true
	case "federate init threshold", "federate init num-clusters", "federate init allow-singletons":
		s := flagSamples[flag]
		base := []string{"--method", "cluster", "--clusters", "c.csv"}
		return flagSample{a: append(slices.Clone(base), s.a...), b: base}, true
	case "federate eval clusters":
		return flagSample{a: []string{"--policy", "p.parquet", "--clusters", "c.csv"}, b: []string{"--policy", "p.parquet"}}, true
	case "federate eval threshold":
		return clusters("--threshold", "0.5"), true
	case "federate eval num-clusters":
		return clusters("--num-clusters", "2"), true
	case "federate eval allow-singletons":
		return clusters("--allow-singletons"), true
	case "federate run site":
		return set("--site", "b=y"), true
	case "eval policy", "apply policy":
		return set("--policy", "q.parquet"), true
	case "eval clusters", "compare clusters":
		return set("--clusters", "c.csv"), true
	case "cluster clusters":
		return set("--clusters", "3"), true
	case "experiment pessimism c":
		return set("--c", "0,0.001"), true
	}
	s, ok := flagSamples[flag]
	return s, ok
}

// parseOnly parses the command line args as grmdp would and returns the
// options the command would run with.
func parseOnly(t *testing.T, args []string) (any, string) {
	t.Helper()
	var got any
	ctx := context.WithValue(context.Background(), parseOnlyKey{}, &got)
	var stdout, stderr bytes.Buffer
	if code := run(ctx, append([]string{"grmdp"}, args...), &stdout, &stderr); code != exitOK {
		return nil, stderr.String()
	}
	if got == nil {
		return nil, "the command ran without parsing its options through leaf"
	}
	return normalized(got), ""
}

// normalized zeroes what records the command line as given (Recorded, an
// experiment's Config.Command): it changes with every flag, used or not.
func normalized(v any) any {
	c := reflect.New(reflect.TypeOf(v)).Elem()
	c.Set(reflect.ValueOf(v))
	var zero func(v reflect.Value)
	zero = func(v reflect.Value) {
		if v.Kind() != reflect.Struct {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			switch v.Type().Field(i).Name {
			case "Recorded", "Command":
				f.Set(reflect.Zero(f.Type()))
			default:
				zero(f)
			}
		}
	}
	zero(c)
	return c.Interface()
}

// TestEveryFlagCounts walks every command of the app, subcommands too, and
// checks that each flag it declares changes the options the command runs
// with (what it records for a later command included): set to another
// value, the flag gives other options than the command line without it.
// Options come only from option groups (leaf), so a flag that sets no
// field, or one that no group reads, fails here.
func TestEveryFlagCounts(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			path := append(slices.Clone(prefix), cmd.Name)
			name := strings.Join(path, " ")
			if len(cmd.Commands) > 0 {
				if len(cmd.Flags) > 0 {
					t.Errorf("%s has subcommands and flags of its own", name)
				}
				walk(path, cmd.Commands)
				continue
			}
			t.Run(name, func(t *testing.T) { checkFlags(t, path, cmd) })
		}
	}
	walk(nil, newApp(nil, nil).Commands)
}

func checkFlags(t *testing.T, path []string, cmd *cli.Command) {
	name := strings.Join(path, " ")
	base := append(slices.Clone(path), commandBase[name]...)
	if _, msg := parseOnly(t, base); msg != "" {
		if len(cmd.Flags) == 0 && strings.Contains(msg, "without parsing") {
			return // no flags, no options (version)
		}
		t.Fatalf("grmdp %s: %s", strings.Join(base, " "), msg)
	}
	for _, f := range cmd.Flags {
		flag := f.Names()[0]
		if flag == "config" {
			continue // TestConfigFile
		}
		s, ok := sampleFor(name, flag)
		if !ok {
			t.Errorf("--%s: no sample value (flagSamples)", flag)
			continue
		}
		if !slices.ContainsFunc(s.a, func(a string) bool { return a == "--"+flag || slices.Contains(f.Names(), strings.TrimLeft(a, "-")) }) {
			t.Fatalf("--%s: its sample %v does not set it", flag, s.a)
		}
		withFlag, msg := parseOnly(t, append(slices.Clone(base), s.a...))
		if msg != "" {
			t.Errorf("--%s: grmdp %s %s: %s", flag, strings.Join(base, " "), strings.Join(s.a, " "), msg)
			continue
		}
		without, msg := parseOnly(t, append(slices.Clone(base), s.b...))
		if msg != "" {
			t.Errorf("--%s: grmdp %s %s: %s", flag, strings.Join(base, " "), strings.Join(s.b, " "), msg)
			continue
		}
		if reflect.DeepEqual(withFlag, without) {
			t.Errorf("--%s %v changes nothing in %T: the command accepts a flag it does not use", flag, s.a, withFlag)
		}
	}
}

// A flag a command would not use is refused with a usage error: federate
// init's resources (the coordinator reads no data), flags
// given without what they qualify. So are a missing required flag, a
// subcommand's unknown flag and an unknown subcommand.
func TestRefusedCommandLines(t *testing.T) {
	dir := t.TempDir()
	initArgs := []string{"federate", "init", "--sites", "a,b,c", "--horizon", "3", "--actions", "2", "--state", "s1", "-o", dir + "/job"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(slices.Clone(initArgs), "--workers", "7"), "flag provided but not defined: -workers"},
		{append(slices.Clone(initArgs), "--max-memory", "1KB"), "flag provided but not defined: -max-memory"},
		{append(slices.Clone(initArgs), "--action-labels", "a,b,c"), "--actions 2 with 3 action labels"},
		{append(slices.Clone(initArgs), "--nulls", "zero"), "--nulls"},
		{append(slices.Clone(initArgs), "--clusters", "c.csv"), "are for --method cluster"},
		{append(slices.Clone(initArgs), "--features", "indicator", "--num-states", "4"), "--num-states: for the tabular map only"},
		{[]string{"federate", "eval", "--job", dir, "--policy", "p.parquet", "--json"}, "--json prints an evaluation's result"},
		{[]string{"federate", "eval", "--job", dir, "--clusters", "c.csv"}, "for opening an evaluation with --policy"},
		{[]string{"federate", "run", "--job", dir, "--site", "a=x", "--eval-clusters", "c.csv"}, "--eval-clusters is for --eval"},
		{[]string{"scan", "--max-memory", "1KB", "d.parquet"}, "flag provided but not defined: -max-memory"},
		{[]string{"federate", "step", "m.parquet"}, "--job is required"},
		{[]string{"federate", "init", "--horizon", "3", "-o", "job"}, "--sites is required (on the command line or in --config)"},
		{[]string{"experiment", "pessimism", "--bogus", "-o", "dir"}, "(see grmdp experiment pessimism --help)"},
		{[]string{"federate", "frobnicate"}, "No help topic for 'frobnicate'"},
	} {
		code, _, errOut := grmdp(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("grmdp %s: exit %d, %q; want exit %d and %q", strings.Join(tc.args, " "), code, errOut, exitUsage, tc.want)
		}
	}
}
