package flagfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// program is a small program with the shapes Apply meets: a command that
// takes DATA, one that takes a file, a subcommand, aliases, a list flag
// and a hidden flag. Each command's Before applies the file text (named
// run.yaml) and keeps what it set in *got.
func program(text string, got *outcome) *cli.Command {
	before := func(ctx context.Context, c *cli.Command) (context.Context, error) {
		f, err := Parse("run.yaml", []byte(text))
		if err == nil {
			got.res, err = f.Apply(c, Options{Args: "data", FileFlag: "config"})
		}
		got.err = err
		got.values = map[string]string{}
		for _, fl := range c.Flags {
			switch n := fl.Names()[0]; {
			case !c.IsSet(n) || n == "help":
			case n == "bins":
				got.values[n] = strings.Join(c.StringSlice(n), "|")
			default:
				got.values[n] = fmt.Sprint(c.Value(n))
			}
		}
		return ctx, err
	}
	leaf := func(name, args string, flags ...cli.Flag) *cli.Command {
		flags = append(flags, &cli.StringFlag{Name: "config"})
		return &cli.Command{Name: name, ArgsUsage: args, Flags: flags, Before: before, Action: func(context.Context, *cli.Command) error { return nil }}
	}
	return &cli.Command{Name: "prog", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{
		leaf("solve", "DATA...",
			&cli.StringFlag{Name: "state"},
			&cli.StringSliceFlag{Name: "bins"},
			&cli.StringFlag{Name: "lambda"},
			&cli.FloatFlag{Name: "xi"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
			&cli.StringFlag{Name: "secret", Hidden: true}),
		leaf("show", "POLICY", &cli.StringFlag{Name: "rows"}),
		{Name: "federate", Commands: []*cli.Command{leaf("init", "", &cli.StringFlag{Name: "sites"}, &cli.StringFlag{Name: "min-sites"})}},
	}}
}

type outcome struct {
	values map[string]string
	res    Result
	err    error
}

func apply(t *testing.T, text string, args ...string) outcome {
	t.Helper()
	var got outcome
	program(text, &got).Run(context.Background(), append([]string{"prog"}, args...))
	return got
}

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name, text string
		args       []string
		values     map[string]string
		args2      []string // Result.Args
		ignored    []string
	}{
		{"top level", "lambda: 2\n", []string{"solve"}, map[string]string{"lambda": "2"}, nil, nil},
		{"section over top level", "lambda: 2\nsolve:\n  lambda: 3\n", []string{"solve"}, map[string]string{"lambda": "3"}, nil, nil},
		{"command line wins", "lambda: 2\nsolve:\n  lambda: 3\n", []string{"solve", "--lambda", "5"}, map[string]string{"lambda": "5"}, nil, nil},
		{"another section is not applied", "show:\n  rows: 4\n", []string{"solve"}, map[string]string{}, nil, nil},
		{"subcommand section", "min-sites: 2\nfederate init:\n  min-sites: 7\n", []string{"federate", "init"}, map[string]string{"min-sites": "7"}, nil, nil},
		{"alias", "o: p.parquet\n", []string{"solve"}, map[string]string{"output": "p.parquet"}, nil, nil},
		{"other commands' settings", "rows: 3\nsites: a\nlambda: 1\n", []string{"solve"}, map[string]string{"lambda": "1"}, nil, []string{"rows", "sites"}},
		{"data for DATA", "data: [a.parquet, b.parquet]\n", []string{"solve"}, map[string]string{}, []string{"a.parquet", "b.parquet"}, nil},
		{"one data path", "data: a.parquet\n", []string{"solve"}, map[string]string{}, []string{"a.parquet"}, nil},
		{"data elsewhere ignored", "data: a.parquet\n", []string{"show"}, map[string]string{}, nil, []string{"data"}},
		{"data in a section", "federate init:\n  data: x\n", []string{"solve"}, map[string]string{}, nil, nil},
		{"list flag from a list", "bins: [a, b]\n", []string{"solve"}, map[string]string{"bins": "a|b"}, nil, nil},
		{"list flag from a mapping", "bins:\n  s2: q3\n  s1: [0.3, 0.6]\n", []string{"solve"}, map[string]string{"bins": "s2:q3|s1:0.3,0.6"}, nil, nil},
		{"string flag from a list", "state: [\"Boston, MA\", Paris]\n", []string{"solve"}, map[string]string{"state": `"Boston, MA",Paris`}, nil, nil},
		{"a number", "xi: 0.1\n", []string{"solve"}, map[string]string{"xi": "0.1"}, nil, nil},
		{"string flag from a list of numbers", "lambda: [1, 2]\n", []string{"solve"}, map[string]string{"lambda": "1,2"}, nil, nil},
		{"empty file", "", []string{"solve"}, map[string]string{}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := apply(t, c.text, c.args...)
			if got.err != nil {
				t.Fatal(got.err)
			}
			if !equalMaps(got.values, c.values) {
				t.Errorf("flags set %v, want %v", got.values, c.values)
			}
			if !slices.Equal(got.res.Args, c.args2) || !slices.Equal(got.res.Ignored, c.ignored) {
				t.Errorf("result %+v, want Args %q, Ignored %q", got.res, c.args2, c.ignored)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Every refusal is an *Error whose message is the file and what is
// wrong, word for word as the command line prints it after --config.
func TestApplyErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"lamda: 2\n", `run.yaml: unknown setting "lamda": the settings are the command's flag names (state, bins, lambda, xi, output)`},
		{"secret: 1\n", `run.yaml: unknown setting "secret": the settings are the command's flag names (state, bins, lambda, xi, output)`},
		{"show:\n  lamda: 2\n", `run.yaml: section show: unknown setting "lamda"`},
		{"solve: 3\n", "run.yaml: section solve: not a mapping of solve's flag names to values"},
		{"state: {a: 1}\n", "run.yaml: state: want a value or a list of values"},
		{"xi: high\n", `run.yaml: xi: strconv.ParseFloat: parsing "high": invalid syntax`},
		{"xi: [1, 2]\n", "run.yaml: xi: want a value"},
		{"state: [[a]]\n", "run.yaml: state: want a value or a list of values"},
		{"data: {a: 1}\n", "run.yaml: data: want a value or a list of values"},
		{"bins: []\n", "run.yaml: bins: an empty list: give at least one value, or leave the setting out"},
		{"bins: {}\n", "run.yaml: bins: an empty list: give at least one value, or leave the setting out"},
		{"[1, 2]\n", "run.yaml: not a YAML mapping of flag names to values: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into map[string]yaml.Node"},
	} {
		got := apply(t, c.text, "solve")
		var fe *Error
		if !errors.As(got.err, &fe) || fe.Path != "run.yaml" || got.err.Error() != c.want {
			t.Errorf("%q: error %v, want *Error %q", c.text, got.err, c.want)
		}
	}
}

func TestReadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := Read(path)
	var fe *Error
	if !errors.As(err, &fe) || !errors.Is(err, fs.ErrNotExist) || err.Error() != path+": cannot read: no such file or directory" {
		t.Errorf("Read of a missing file: %v", err)
	}
}

// FuzzApply: any file is applied or refused with an *Error, never a
// panic, whichever command reads it.
func FuzzApply(f *testing.F) {
	f.Add("lambda: 2\nsolve:\n  xi: 0.1\n  bins: {s1: [1, 2]}\ndata: [a, b]\n")
	f.Add("federate init:\n  sites: [\"Boston, MA\", Paris]\nrows: 3\n")
	f.Fuzz(func(t *testing.T, text string) {
		for _, args := range [][]string{{"solve"}, {"show"}, {"federate", "init"}} {
			got := apply(t, text, args...)
			if got.err != nil && !errors.As(got.err, new(*Error)) {
				t.Fatalf("%v: %T %v", args, got.err, got.err)
			}
		}
	})
}
