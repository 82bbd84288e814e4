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
// Exit status: 0 success, 1 anything else, 2 bad usage, 3 bad input data,
// 4 apply --min-evidence not reached, 130 interrupted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/urfave/cli/v3"

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
	err := app.Run(ctx, args)
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

func newApp(stdout, stderr io.Writer) *cli.Command {
	app := &cli.Command{
		Name:      "grmdp",
		Usage:     "group-robust offline policies from multi-site trajectory data",
		Version:   version,
		Writer:    stdout,
		ErrWriter: stderr,
		// Exit codes are decided in run, once; never os.Exit inside the app.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		Commands: []*cli.Command{quickstartCommand(), simulateCommand(), inspectCommand(), solveCommand(), showCommand(), applyCommand(),
			clusterCommand(), evalCommand(), compareCommand(), validateCommand(), experimentCommand(), prepareCommand(), scanCommand(),
			federateCommand(), vantage6Command(), versionCommand(), helpCommand()},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a pprof CPU profile of the run to `FILE`", Local: true},
			&cli.StringFlag{Name: "memprofile", Usage: "write a pprof heap profile at the end of the run to `FILE`", Local: true},
			&cli.BoolFlag{Name: "timings", Usage: "print the wall time of each phase of the run (reading, statistics, backward pass, writing) on stderr", Local: true},
		},
	}
	withUsageError(app)
	var stopProfile func()
	var timings *timing.Recorder
	app.Before = func(ctx context.Context, c *cli.Command) (context.Context, error) {
		if c.Bool("timings") {
			timings = timing.New()
			ctx = timing.With(ctx, timings)
		}
		stop, err := startProfiles(c.String("cpuprofile"), c.String("memprofile"))
		stopProfile = stop
		return context.WithValue(ctx, parsedKey{}, true), err
	}
	app.After = func(ctx context.Context, c *cli.Command) error {
		if stopProfile != nil {
			stopProfile()
		}
		if timings != nil {
			timings.Write(c.Root().ErrWriter)
		}
		return nil
	}
	return app
}

// parsedKey marks the context of a command line whose flags parsed: the
// Before steps ran, and a usage error after them is a required flag
// missing (on the command line and in --config).
type parsedKey struct{}

// usageError makes err, a flag that does not parse or a required flag
// missing, a one-line usage error (exit 2): a command's points at its
// help, not the whole help on stdout.
func usageError(ctx context.Context, c *cli.Command, err error, _ bool) error {
	for _, f := range c.Flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() && !f.IsSet() && ctx.Value(parsedKey{}) != nil {
			return usagef("--%s is required%s", f.Names()[0], map[bool]string{true: " (on the command line or in --config)"}[hasFlag(c, "config")])
		}
	}
	if c.Root() == c {
		return usagef("%v", err)
	}
	return usagef("%v (see grmdp %s --help)", err, strings.Join(c.Path()[1:], " "))
}

// helpCommand is grmdp help [COMMAND], hidden: --help is the way at the
// top. Being there, it keeps each parent command's help subcommand
// (grmdp federate help site), which hiding the top one would remove.
func helpCommand() *cli.Command {
	return &cli.Command{Name: "help", Hidden: true, HideHelp: true, Action: func(ctx context.Context, c *cli.Command) error {
		if c.NArg() == 0 {
			return cli.ShowRootCommandHelp(c.Root())
		}
		return cli.ShowCommandHelp(ctx, c.Root(), c.Args().First())
	}}
}

// withUsageError makes usageError the usage-error handler of cmd and of
// every command under it (urfave/cli does not pass it down).
func withUsageError(cmd *cli.Command) {
	cmd.OnUsageError = usageError
	for _, sub := range cmd.Commands {
		withUsageError(sub)
	}
}

// startProfiles starts a CPU profile and arranges a heap profile; the
// returned function stops and writes them.
func startProfiles(cpu, mem string) (func(), error) {
	for _, p := range []struct{ flag, path string }{{"cpuprofile", cpu}, {"memprofile", mem}} {
		if p.path != "" {
			if err := fileio.CheckOutput(p.path); err != nil {
				return nil, fmt.Errorf("--%s: %w", p.flag, err)
			}
		}
	}
	stopCPU := func() {}
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			f.Close()
			return nil, usagef("--cpuprofile: %v", err)
		}
		stopCPU = func() { pprof.StopCPUProfile(); f.Close() }
	}
	return func() {
		stopCPU()
		if mem != "" {
			if f, err := os.Create(mem); err == nil {
				runtime.GC()
				_ = pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}, nil
}
