package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/internal/flagfile"
	"github.com/grmdp/grmdp/internal/textfmt"
)

func fedRunCommand() *cli.Command {
	o := &FederateRunOptions{Workers: workersGroup{usage: "parallel workers of each process (default: all cores); results do not depend on it"}}
	return leaf(&cli.Command{
		Name: "run",
		Usage: "play a whole job locally: each site's part and each step as a separate grmdp process, " +
			"exchanging only the job's files and the messages",
		ArgsUsage: " ",
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "job", Usage: "the job `DIR` (made by grmdp federate init)", Required: true, Destination: &o.Local.Dir},
		&cli.StringSliceFlag{Name: "site", Usage: "a site and its data, `NAME=DATA` (a file, directory or glob); one per site of the job", Required: true},
		&cli.StringFlag{Name: "messages", Usage: "`DIR` to keep the messages in (default: JOB/messages)", Destination: &o.Local.Messages},
		&cli.StringFlag{Name: "eval", Usage: "then evaluate policy `FILE` (e.g. JOB/policy.parquet) in evaluation rounds, as federate eval --policy FILE opens them", Destination: &o.Local.EvalPolicy},
		&cli.StringFlag{Name: "eval-clusters", Usage: "with --eval: cluster `FILE` for Delta_h, as federate eval --clusters", Destination: &o.Local.EvalClusters},
		&cli.BoolFlag{Name: "no-cache", Usage: "read every site's data again at every round (by default each site keeps its rows " +
			"in a temporary cache of its own, federate site --cache, removed when the run ends)", Destination: &o.NoCache},
	}, o.parse}, &o.Workers}, runFederateRun)
}

// FederateRunOptions is what the command line of `grmdp federate run`
// says: the job, the messages' directory ("": JOB/messages), each
// site's data and the policy to evaluate after the job, in Local.
type FederateRunOptions struct {
	Local   federate.Local
	NoCache bool
	Workers workersGroup
}

func (o *FederateRunOptions) parse(c *cli.Command) error {
	if c.Args().Len() > 0 {
		return usagef("federate run takes flags only (got %v): name each site's data with --site NAME=DATA", c.Args().Slice())
	}
	if o.Local.EvalClusters != "" && o.Local.EvalPolicy == "" {
		return usagef("--eval-clusters is for --eval POLICY")
	}
	o.Local.Data = map[string]string{}
	for _, kv := range c.StringSlice("site") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || name == "" || path == "" {
			return usagef("--site %q: want NAME=DATA", kv)
		}
		if _, dup := o.Local.Data[name]; dup {
			return usagef("--site %s is given twice", name)
		}
		o.Local.Data[name] = path
	}
	return nil
}

func runFederateRun(ctx context.Context, o FederateRunOptions, stdout, stderr io.Writer) error {
	lr := o.Local
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("federate run: cannot find this program to start its parts: %w", err)
	}
	lr.Exe, lr.Cache, lr.Workers, lr.Stdout, lr.Stderr = exe, !o.NoCache, o.Workers.Workers, stdout, stderr
	lr.Messages = cmp.Or(lr.Messages, filepath.Join(lr.Dir, "messages"))
	// A part's failure keeps its exit code's meaning.
	err = lr.Run(ctx)
	var pe *federate.PartError
	var de *federate.DataError
	switch {
	case errors.As(err, &de) && de.Unknown:
		return usagef("--site %s: the job's sites are %s", textfmt.Quote(de.Site), flagfile.JoinList(textfmt.QuoteAll(de.Sites)))
	case errors.As(err, &de):
		return usagef("no --site %s=DATA: every site of the job needs its data", de.Site)
	case errors.As(err, &pe):
		switch pe.Code {
		case exitUsage:
			return usagef("%s", err)
		case exitBadData:
			return badInputf("%s", err)
		case exitInterrupted:
			return context.Canceled
		}
	}
	return err
}
