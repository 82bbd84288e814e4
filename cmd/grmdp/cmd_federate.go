package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/internal/flagfile"
	"github.com/grmdp/grmdp/solve"
)

func federateCommand() *cli.Command {
	return &cli.Command{
		Name:  "federate",
		Usage: "solve over hospitals that keep their rows: rounds of aggregate messages between sites and a coordinator",
		Description: "A coordinator makes a job (init); each round, every site computes its message from its own data (site),\n" +
			"a data steward can read it in plain words (show), and the coordinator folds the round (step). After the last\n" +
			"round the job holds policy.parquet, the policy a central solve --min-count K of all the rows would give.\n" +
			"eval opens the evaluation of a policy on a finished job, whose rounds the sites answer and step folds the same way.\n" +
			"run plays every part locally, as separate processes exchanging only files.",
		Commands: []*cli.Command{fedInitCommand(), fedSiteCommand(), fedStepCommand(), fedShowCommand(), fedRunCommand(), fedEvalCommand()},
	}
}

func fedInitCommand() *cli.Command {
	o := &FederateInitOptions{
		Clusters:   clusterGroup{sites: "job sites"},
		Disclosure: disclosureGroup{minCount: federate.DefaultMinCount, minRows: federate.DefaultMinRows},
		Output:     outputGroup{usage: "job `DIR` to create"},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "init",
		Usage:     "make a federated job: settings, feature map with its sizes, expected sites, privacy thresholds",
		ArgsUsage: " ",
	}, o, []optionGroup{&o.Data, &o.Solver, &o.Clusters, &methodGroup{dst: &o.Method}, own{[]cli.Flag{
		&cli.StringFlag{Name: "sites", Usage: "the sites of the job, comma separated `A,B,C`", Required: true},
		&cli.IntFlag{Name: "min-sites", Value: federate.DefaultMinSites, Usage: "refuse a job with fewer than `N` sites", Destination: &o.MinSites},
		&cli.IntFlag{Name: "dim", Usage: "precomputed map: the number of features per action `d` (the list column holds A*d values)", Destination: &o.Dim},
		&cli.StringSliceFlag{Name: "action-labels", Usage: "the text actions of every site's data, `A,B,...` (a YAML list in --config); " +
			"required when the action column holds text: a site refuses a label the job does not list"},
	}, func(c *cli.Command) error { return o.parse(c) }}, &o.Output, &o.Disclosure}, runFederateInit))
}

// FederateInitOptions is what the command line of `grmdp federate init`
// says: the job's settings, and nothing the coordinator does not record
// for the sites or the steps (the coordinator reads no data).
type FederateInitOptions struct {
	// Data are the map, its sizes and the columns every site reads.
	Data       dataGroup
	Solver     solverGroup
	Method     solve.Method
	Clusters   clusterGroup
	Sites      []string
	MinSites   int
	Dim        int
	Disclosure disclosureGroup
	// ActionLabels are --action-labels (nil: integer actions), checked and
	// sorted by federate.New.
	ActionLabels []string
	// Output is the job directory.
	Output outputGroup
	// Recorded are the flags as given, recorded in the job and in its
	// policy.
	Recorded map[string]string
}

func (o *FederateInitOptions) parse(c *cli.Command) error {
	if c.Args().Len() > 0 {
		return usagef("federate init reads no data (got %v): each site reads its own with grmdp federate site", c.Args().Slice())
	}
	if c.IsSet("horizon") && c.Int("horizon") < 1 || c.IsSet("actions") && c.Int("actions") < 1 || c.IsSet("num-states") && c.Int("num-states") < 1 {
		return usagef("--horizon, --actions and --num-states must be at least 1 when given (left out, the sites' shape round decides them)")
	}
	sites, err := flagfile.SplitList(c.String("sites"))
	if err != nil {
		return usagef("--sites %v", err)
	}
	o.Sites = slices.DeleteFunc(sites, func(s string) bool { return s == "" })
	o.ActionLabels = nil
	if c.IsSet("action-labels") {
		o.ActionLabels = []string{}
		for _, l := range c.StringSlice("action-labels") {
			o.ActionLabels = append(o.ActionLabels, strings.TrimSpace(l))
		}
	}
	switch {
	case o.Method != solve.Cluster && (c.IsSet("clusters") || c.IsSet("threshold") || c.IsSet("num-clusters") || c.IsSet("allow-singletons")):
		return usagef("--clusters, --threshold, --num-clusters and --allow-singletons are for --method cluster, not %s", o.Method)
	case o.Method == solve.Cluster && o.Clusters.Clusters.Path == "":
		return usagef("--method cluster needs --clusters FILE")
	}
	o.Recorded = settingsUsed(c)
	return nil
}

func runFederateInit(_ context.Context, o FederateInitOptions, stdout, _ io.Writer) error {
	dm, s, dc, sites, method := o.Data.Map, o.Solver.Settings, o.Disclosure.Disclosure, o.Sites, o.Method
	m := dm.Spec.Map(dm.Actions, len(dm.Spec.StateColumns), 0)
	m.S, m.D = dm.Spec.S, o.Dim // federate.New refuses either on a map that takes none
	j, err := federate.New(federate.Job{Method: method, Map: m, H: dm.Horizon,
		Lambda: s.Lambda, C: s.C, Xi: s.Xi, Beta: s.Beta, BetaGiven: s.BetaSet, Fallback: s.Fallback, Stationary: s.Stationary,
		Columns: federate.Columns(o.Data.Columns.Columns), Sites: sites, Disclosure: dc, MinSites: o.MinSites, Settings: o.Recorded,
		Rules: federate.RulesOf(o.Data.Prep.FirstStep, o.Data.Prep.Nulls, o.ActionLabels)})
	if se := (*federate.SettingError)(nil); errors.As(err, &se) {
		return usagef("%s %v", optionFlags[se.Field], se.Err)
	} else if err != nil {
		return dataErr(err)
	}
	if method == solve.Cluster {
		co := o.Clusters.Clusters
		if j.Clusters, err = federate.ClustersOf(co.Path, co.Options, sites, co.AllowSingletons); err != nil {
			return err
		}
	}
	dir := o.Output.Path
	if err := federate.Create(dir, j); err != nil {
		if errors.Is(err, federate.ErrJobExists) {
			return usagef("-o %s already holds a job (%s): a job is never replaced; name a new directory", dir, filepath.Join(dir, federate.JobFile))
		}
		return err
	}
	first := "round0"
	if j.ShapeOpen() {
		first = "shape"
	}
	if err := j.WriteSummary(stdout, dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "next, at each site: grmdp federate site --job %s --site SITE -o SITE-%s.parquet DATA\n", dir, first)
	return nil
}

func fedStepCommand() *cli.Command {
	o := &FederateStepOptions{}
	return leaf(&cli.Command{
		Name:      "step",
		Usage:     "fold one round's messages (one per site) into the job and advance it; after the last round write JOB/policy.parquet",
		ArgsUsage: "MSG...",
	}, o, []optionGroup{own{fl: []cli.Flag{
		&cli.StringFlag{Name: "job", Usage: "the job `DIR`", Required: true, Destination: &o.Job},
	}}, from(&o.Messages, argsGiven)}, runFederateStep)
}

// FederateStepOptions is what the command line of `grmdp federate step`
// says: the job and its round's messages.
type FederateStepOptions struct {
	Job      string
	Messages []string
}

func runFederateStep(ctx context.Context, o FederateStepOptions, stdout, stderr io.Writer) error {
	st, err := dataset.StepJob(ctx, o.Job, o.Messages, dataset.CoordinatorOptions{Version: version, Warn: solveWarnings, CensoredBy: censoredBy})
	if errors.Is(err, dataset.ErrNoMessages) {
		return usagef("no MSG given: name one message file per site")
	}
	if err != nil {
		return policyErr(err)
	}
	if err := st.WriteText(stdout); err != nil {
		return err
	}
	if st.Policy != nil {
		tell(stderr, "warning", st.Policy.Warnings)
	}
	return nil
}

func fedShowCommand() *cli.Command {
	o := &FederateShowOptions{}
	return leaf(&cli.Command{
		Name:      "show",
		Usage:     "print a site message in plain words, for the data steward who releases it",
		ArgsUsage: "MSG",
	}, o, []optionGroup{own{nil, func(c *cli.Command) error {
		if c.Args().Len() != 1 {
			return usagef("federate show takes one message file")
		}
		o.Message = c.Args().First()
		return nil
	}}}, runFederateShow)
}

// FederateShowOptions is what the command line of `grmdp federate show`
// says: the message file.
type FederateShowOptions struct {
	Message string
}

// runFederateShow prints what a message discloses.
func runFederateShow(_ context.Context, o FederateShowOptions, stdout, _ io.Writer) error {
	inc, err := dataset.ReadMessage(o.Message)
	if err != nil {
		return err
	}
	return inc.WriteText(stdout, o.Message)
}
