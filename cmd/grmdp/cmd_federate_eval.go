package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
)

func fedEvalCommand() *cli.Command {
	o := &FederateEvalOptions{
		jsonGroup: jsonGroup{usage: "print the result as JSON (the keys of grmdp eval --json)"},
		Clusters:  clusterGroup{use: "with --policy: cluster `FILE` for Delta_h (default: the policy's own groups when it pools sites)", sites: "job sites"},
	}
	return leaf(&cli.Command{
		Name: "eval",
		Usage: "open the evaluation of a policy on a finished job (--policy), whose rounds the sites answer with federate site " +
			"and the coordinator folds with federate step; without --policy, print the evaluation's result",
		ArgsUsage: " ",
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "job", Usage: "the job `DIR` (finished: its policy and sites' sizes are known)", Required: true, Destination: &o.Job},
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` to evaluate (written by grmdp solve or federate step); copied into JOB/eval", Destination: &o.Policy},
	}, nil}, &o.jsonGroup, &o.Clusters, own{nil, func(c *cli.Command) error {
		switch {
		case c.Args().Len() > 0:
			return usagef("federate eval reads no data (got %v): each site answers the evaluation's rounds with grmdp federate site", c.Args().Slice())
		case o.Policy != "" && o.JSON:
			return usagef("--json prints an evaluation's result, without --policy (which opens one)")
		case o.Policy == "" && (c.IsSet("clusters") || c.IsSet("threshold") || c.IsSet("num-clusters") || c.IsSet("allow-singletons")):
			return usagef("--clusters, --threshold, --num-clusters and --allow-singletons are for opening an evaluation with --policy")
		}
		return nil
	}}}, runFederateEval)
}

// FederateEvalOptions is what the command line of `grmdp federate eval`
// says: with Policy, open its evaluation on the job (with the cluster file
// Clusters); without, print the job's evaluation (as JSON with JSON).
type FederateEvalOptions struct {
	Job, Policy string
	jsonGroup
	Clusters clusterGroup
}

func runFederateEval(_ context.Context, o FederateEvalOptions, stdout, stderr io.Writer) error {
	var ev *dataset.JobEvaluation
	var err error
	if o.Policy != "" {
		ev, err = dataset.OpenEvaluation(o.Job, o.Policy, o.Clusters.Clusters)
	} else {
		ev, err = dataset.ReadEvaluation(o.Job)
	}
	switch {
	case errors.Is(err, dataset.ErrEvalOpen):
		return usagef("%s", strings.TrimPrefix(err.Error(), dataset.ErrEvalOpen.Error()+": "))
	case err != nil:
		return dataErr(notPolicyErr(err))
	case ev.State == nil:
		return usagef("job %s has no evaluation: open one with grmdp federate eval --job %s --policy P", ev.Job.ID, o.Job)
	}
	tell(stderr, "warning", ev.Warnings)
	if o.JSON && ev.JSON != nil {
		_, err = stdout.Write(ev.JSON)
		return err
	}
	if err := ev.WriteText(stdout); err != nil || o.Policy == "" {
		return err
	}
	fmt.Fprintf(stdout, "next, at each site: grmdp federate site --job %s --site SITE -o SITE-eval0.parquet DATA\n", o.Job)
	return nil
}
