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
//
// Exit status: 0 success, 2 bad usage, 3 bad input data, 1 anything else,
// 130 interrupted.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
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
	app := newApp(stdout, stderr)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	code = exitCode(ctx, err)
	fmt.Fprintf(stderr, "grmdp: %s\n", message(ctx, err))
	return code
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
		Commands: []*cli.Command{
			quickstartCommand(),
			simulateCommand(),
			inspectCommand(),
			solveCommand(),
			showCommand(),
			applyCommand(),
			clusterCommand(),
			evalCommand(),
			compareCommand(),
			experimentCommand(),
			prepareCommand(),
			scanCommand(),
		},
		HideHelpCommand: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a pprof CPU profile of the run to `FILE`"},
			&cli.StringFlag{Name: "memprofile", Usage: "write a pprof heap profile at the end of the run to `FILE`"},
		},
	}
	// A flag that does not parse is a one-line usage error (exit 2) that
	// points at the command's help, not the whole help on stdout.
	for _, cmd := range app.Commands {
		name := cmd.Name
		cmd.OnUsageError = func(c *cli.Context, err error, isSub bool) error {
			return usagef("%v (see grmdp %s --help)", err, name)
		}
	}
	var stopProfile func()
	app.Before = func(c *cli.Context) error {
		stop, err := startProfiles(c.String("cpuprofile"), c.String("memprofile"))
		stopProfile = stop
		return err
	}
	app.After = func(c *cli.Context) error {
		if stopProfile != nil {
			stopProfile()
		}
		return nil
	}
	return app
}
