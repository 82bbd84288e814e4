// Command grmdp learns treatment policies that stay good at every site from
// offline multi-site trajectory data in Parquet, following "Learning
// Sequential Decisions from Multiple Sources via Group-Robust Markov
// Decision Processes" (Algorithm 1: pessimistic site-wise ridge regression
// with a feature-wise penalty).
//
// Usage:
//
//	grmdp quickstart
//	grmdp simulate --scenario benchmark -o data.parquet --model-out model.json
//	grmdp solve --features action-block -o policy.parquet data.parquet
//	grmdp show policy.parquet --json
//	grmdp apply --policy policy.parquet -o out.parquet data.parquet
//	grmdp version
//
// Exit status: 0 success, 2 bad usage, 3 bad input data, 1 anything else,
// 130 interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/fileio"
)

// version is the tool's version, recorded in every artifact.
const version = "0.1.0"

func main() {
	// The first SIGINT or SIGTERM cancels the context: the command stops,
	// removes its temporary files and exits with 130. Then the default
	// handling is restored, so a second signal ends a process that does not
	// stop at once (leaving, at worst, a temporary file beside an output).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit code. It never
// panics out: an unexpected panic is reported as an internal error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "grmdp: internal error: %v\n", r)
			code = exitInternal
		}
	}()
	// Every command writes stdout through out, whose first write error
	// fails the run, whatever the command did with it (solve > /dev/full).
	out := &checkedWriter{w: stdout}
	app := newApp(out, stderr)
	app.Metadata = map[string]any{"args": args}
	created := &fileio.Dirs{}
	ctx = context.WithValue(ctx, outputDirsKey{}, created)
	err := app.RunContext(ctx, flagsFirst(app, args))
	if out.err != nil && (err == nil || errors.Is(err, out.err)) {
		err = fmt.Errorf("cannot write to standard output: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	// A failed or interrupted run leaves no empty output directory behind.
	created.RemoveCreated()
	code = exitCode(ctx, err)
	fmt.Fprintf(stderr, "grmdp: %s\n", message(ctx, err))
	return code
}

// checkedWriter is a writer that keeps its first error; later writes fail
// at once with it.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.err = err
	return n, err
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:      "grmdp",
		Usage:     "group-robust offline policies from multi-site trajectory data",
		Version:   version,
		Writer:    stdout,
		ErrWriter: stderr,
		// Exit codes are decided in run, once; never os.Exit inside the app.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usagef("%v", err)
		},
		Commands: []*cli.Command{quickstartCommand(), simulateCommand(), inspectCommand(), solveCommand(), showCommand(), applyCommand(),
			clusterCommand(), evalCommand(), compareCommand(), validateCommand(), experimentCommand(), prepareCommand(), scanCommand(),
			federateCommand(), vantage6Command(), versionCommand()},
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a pprof CPU profile of the run to `FILE`"},
			&cli.StringFlag{Name: "memprofile", Usage: "write a pprof heap profile at the end of the run to `FILE`"},
			&cli.BoolFlag{Name: "timings", Usage: "print the wall time of each phase of the run (reading, statistics, backward pass, writing) on stderr"},
		},
	}
	// A flag that does not parse is a one-line usage error (exit 2) that
	// points at the command's help, not the whole help on stdout.
	eachCommand("", app.Commands, func(name string, cmd *cli.Command) {
		cmd.OnUsageError = func(c *cli.Context, err error, isSub bool) error {
			return usagef("%v (see grmdp %s --help)", err, name)
		}
	})
	var stopProfile func()
	var timings *timing.Recorder
	app.Before = func(c *cli.Context) error {
		if c.Bool("timings") {
			// The command's context carries the recorder to every phase.
			timings = timing.New()
			c.Context = timing.With(c.Context, timings)
		}
		stop, err := startProfiles(c.String("cpuprofile"), c.String("memprofile"))
		stopProfile = stop
		return err
	}
	app.After = func(c *cli.Context) error {
		if stopProfile != nil {
			stopProfile()
		}
		if timings != nil {
			timings.Write(c.App.ErrWriter)
		}
		return nil
	}
	return app
}

// eachCommand calls fn for every command of cmds and their subcommands,
// named as on the command line ("federate site" for a subcommand).
func eachCommand(prefix string, cmds []*cli.Command, fn func(name string, cmd *cli.Command)) {
	for _, cmd := range cmds {
		name := strings.TrimSpace(prefix + " " + cmd.Name)
		fn(name, cmd)
		eachCommand(name, cmd.Subcommands, fn)
	}
}

// flagsFirst moves a command's flags ahead of its positional arguments, so
// that `grmdp show POLICY --json` and `grmdp solve DATA -o p.parquet` work:
// urfave/cli stops reading flags at the first positional argument. A
// value-taking flag keeps its value; "--" ends the flags.
func flagsFirst(app *cli.App, args []string) []string {
	takes := func(flags []cli.Flag, arg string) bool {
		name := strings.TrimLeft(arg, "-")
		for _, f := range flags {
			if slices.Contains(f.Names(), name) {
				df, ok := f.(cli.DocGenerationFlag)
				return !ok || df.TakesValue()
			}
		}
		return false
	}
	// Skip the global flags to the command name, then to its subcommand.
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if takes(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return args
	}
	cmd := app.Command(args[i])
	for cmd != nil && i+1 < len(args) && cmd.Command(args[i+1]) != nil {
		cmd, i = cmd.Command(args[i+1]), i+1
	}
	if cmd == nil {
		return args
	}
	out, pos := slices.Clone(args[:i+1]), []string{}
	for j := i + 1; j < len(args); j++ {
		a := args[j]
		if a == "--" {
			pos = append(pos, args[j+1:]...)
			break
		}
		if len(a) < 2 || !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		out = append(out, a)
		if takes(cmd.Flags, a) && j+1 < len(args) {
			out = append(out, args[j+1])
			j++
		}
	}
	return append(out, pos...)
}
