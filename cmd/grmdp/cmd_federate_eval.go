package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
)

// writeJobOutputs writes a finished job's policy and solve.json from its
// final state s.
func writeJobOutputs(dir string, j *federate.Job, s *federate.State, stdout, stderr io.Writer) error {
	p, diag, err := federate.FinalPolicy(j, s, version, solveWarnings)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, federate.PolicyFile)
	f, err := fileio.CreateAtomic(filepath.Join(dir, federate.SolveFile))
	if err != nil {
		return err
	}
	defer f.Abort()
	rep := dataset.NewSolveReport(p, diag, out, nil)
	if err := writeJSON(f, rep); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if err := writePolicy(out, p); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", out, filepath.Join(dir, federate.SolveFile))
	if err := rep.WriteText(stdout); err != nil {
		return err
	}
	tell(stderr, "warning", p.Warnings)
	return nil
}

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
	}, func(c *cli.Context) error {
		if c.Args().Len() > 0 {
			return usagef("federate eval reads no data (got %v): each site answers the evaluation's rounds with grmdp federate site", c.Args().Slice())
		}
		return nil
	}}, &o.jsonGroup, &o.Clusters, own{nil, func(c *cli.Context) error {
		switch {
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
	if o.Policy != "" {
		return fedErr(openEvaluation(o.Job, o.Policy, o.Clusters.Clusters, stdout, stderr))
	}
	return fedErr(showEvaluation(o.Job, o.JSON, stdout))
}

// openEvaluation copies the policy into JOB/eval and writes the
// evaluation's round-0 state.
func openEvaluation(dir, policy string, co clusterOptions, stdout, stderr io.Writer) error {
	j, s, err := federate.Load(dir)
	if err != nil {
		return err
	}
	if e, err := federate.LoadEval(dir, j); err != nil {
		return err
	} else if e != nil && !e.Done(j) {
		return usagef("job %s already has an evaluation open (of %s, at round %d of %d): finish it first", j.ID, e.Policy, e.Round+1, e.Rounds(j))
	}
	b, err := os.ReadFile(policy)
	if err != nil {
		return err
	}
	p, err := readPolicy(policy)
	if err != nil {
		return err
	}
	var clusters []federate.Cluster
	if co.Path != "" {
		prob, warns, err := clusterProblem(co, s.Order)
		if err != nil {
			return err
		}
		tell(stderr, "warning", warns)
		clusters = federate.NamedClusters(prob.Groups, prob.GroupNames, s.Order)
	}
	sum := sha256.Sum256(b)
	e, err := federate.NewEval(j, s, p, filepath.Base(policy), hex.EncodeToString(sum[:]), clusters)
	if err != nil {
		return err
	}
	if err := federate.WriteEval(dir, e, b); err != nil {
		return err
	}
	var passes []string
	for _, ps := range e.Passes {
		passes = append(passes, ps.Name)
	}
	fmt.Fprintf(stdout, "evaluation of %s opened on job %s: %d rounds (passes %s%s)\n", policy, j.ID, e.Rounds(j), strings.Join(passes, ", "),
		map[bool]string{true: "; identification bounds", false: ""}[e.Bounds])
	fmt.Fprintf(stdout, "next, at each site: grmdp federate site --job %s --site SITE -o SITE-eval0.parquet DATA\n", dir)
	return nil
}

// foldEvalRound folds a round of the job's open evaluation; after the last
// it writes JOB/eval/eval.json and prints the result.
func foldEvalRound(ctx context.Context, dir string, j *federate.Job, s *federate.State, in []federate.Incoming, bytes int64, stdout io.Writer) error {
	e, err := federate.LoadEval(dir, j)
	if err != nil {
		return err
	}
	if e == nil {
		return badInputf("%w: job %s is finished (all %d rounds folded) and no evaluation is open", federate.ErrRefused, j.ID, j.Rounds())
	}
	next, res, err := federate.FoldEval(ctx, j, s, e, in)
	if err != nil {
		return err
	}
	if res == nil {
		if err := federate.SaveEval(dir, next); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "evaluation round %d of %d folded (step %d, %d sites, %d bytes)\n", e.Round+1, e.Rounds(j), j.StepOf(e.Round), len(in), bytes)
		return nil
	}
	doc := res.Result(j, next)
	var text strings.Builder
	doc.CensoredBy = censoredBy
	doc.WriteText(&text)
	if err := federate.WriteEvalResult(dir, next, doc, text.String()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "evaluation round %d of %d folded (%d sites, %d bytes): evaluation done, wrote %s\n\n", e.Rounds(j), e.Rounds(j), len(in), bytes,
		filepath.Join(dir, federate.EvalDir, federate.EvalResultFile))
	_, err = io.WriteString(stdout, text.String())
	return err
}

// showEvaluation prints the job's evaluation: its result when finished,
// its round otherwise.
func showEvaluation(dir string, asJSON bool, stdout io.Writer) error {
	j, _, err := federate.Load(dir)
	if err != nil {
		return err
	}
	e, err := federate.LoadEval(dir, j)
	if err != nil {
		return err
	}
	if e == nil {
		return usagef("job %s has no evaluation: open one with grmdp federate eval --job %s --policy P", j.ID, dir)
	}
	if !e.Done(j) {
		fmt.Fprintf(stdout, "evaluation of %s on job %s: at round %d of %d\n", e.Policy, j.ID, e.Round+1, e.Rounds(j))
		return nil
	}
	name := federate.EvalTextFile
	if asJSON {
		name = federate.EvalResultFile
	}
	b, err := os.ReadFile(filepath.Join(dir, federate.EvalDir, name))
	if err != nil {
		return badInputf("evaluation of job %s: %w", j.ID, err)
	}
	_, err = stdout.Write(b)
	return err
}
