package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/federate"
)

func fedSiteCommand() *cli.Command {
	o := &FederateSiteOptions{
		Output:     outputGroup{usage: "message `FILE` to write (Parquet)"},
		Disclosure: disclosureGroup{minCount: federate.DefaultMinCount, minRows: federate.DefaultMinRows},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "site",
		Usage:     "compute this site's message for the job's current round from its own data (aggregates only)",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{own{fl: []cli.Flag{
		&cli.StringFlag{Name: "job", Usage: "the job `DIR` (its job.json and state.json)", Required: true, Destination: &o.Job},
		&cli.StringFlag{Name: "site", Usage: "this site's name, as the job lists it", Required: true, Destination: &o.Site},
	}}, &o.Output, &o.Workers, &o.Memory, own{fl: []cli.Flag{
		&cli.StringFlag{Name: "cache", Destination: &o.Cache, Usage: "keep this site's rows in `DIR` (readable by you only) after the first round, so that " +
			"later rounds read two steps of them instead of the whole data; rebuilt when a data file or the job changes"},
	}}, &o.Disclosure, from(&o.Paths, argsGiven)}, runFederateSite))
}

// FederateSiteOptions is what the command line of `grmdp federate site`
// says; the job decides the map, horizon, actions and columns.
type FederateSiteOptions struct {
	Job, Site string
	Output    outputGroup
	Workers   workersGroup
	Memory    memoryGroup
	// Cache is --cache ("" for none).
	Cache string
	// Disclosure is the site's thresholds, checked against the job's
	// (dataset.Site.Disclosure).
	Disclosure disclosureGroup
	Paths      []string
}

// runFederateSite computes the site's message for the job's current round
// and writes it.
func runFederateSite(ctx context.Context, o FederateSiteOptions, stdout, stderr io.Writer) error {
	site, err := dataset.OpenSite(o.Job, o.Site, o.Cache)
	if err != nil {
		return dataErr(err)
	}
	do := dataset.Options{Workers: o.Workers.Workers, MaxMemory: o.Memory.Value, Note: noteTo(stderr), Progress: barsTo(stderr)}
	if do.Disclosure, err = site.Disclosure(o.Disclosure.Disclosure, o.Disclosure.CountSet, o.Disclosure.RowsSet); err != nil {
		return dataErr(err)
	}
	msg, err := siteMessage(ctx, do, site, o.Paths)
	if err != nil {
		return err
	}
	out := o.Output.Path
	n, err := dataset.WriteMessage(out, msg)
	if err != nil {
		return err
	}
	if err := msg.WriteReceipt(stdout, site.Job, out, n); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  read it in plain words: grmdp federate show %s\n", out)
	return nil
}

// siteMessage computes the message of site for its round from the data
// at paths, with the errors of the job's rules in the job's words.
func siteMessage(ctx context.Context, o dataset.Options, site dataset.Site, paths []string) (*federate.Message, error) {
	msg, err := dataset.SiteMessage(ctx, paths, o, site)
	return msg, dataErr(siteRuleErr(err, site.Job))
}

// siteRuleErr adds to a site's data breaking one of the job's rules how
// the coordinator sets the rule for every site. The cause is not wrapped:
// the flags a command line would set for it (message) are not the site's
// to set.
func siteRuleErr(err error, j *federate.Job) error {
	var re *federate.RuleError
	if !errors.As(err, &re) {
		return err
	}
	hint := ruleHints[re.Rule]
	if re.Rule == "nulls" {
		hint = fmt.Sprintf("the job's null policy is %s: %s", cmp.Or(j.Rules.Nulls, "error"), hint)
	}
	return badInputf("%v; %s", re.Err, hint)
}

// ruleHints say how the coordinator sets each of the job's rules.
var ruleHints = map[string]string{
	"action-labels": "the coordinator lists every site's action labels with federate init --action-labels (action-labels: in its config)",
	"nulls":         "the coordinator sets it for every site with federate init --nulls truncate or --nulls drop-episode (nulls: in its config)",
	"first-step":    "the job reads steps as numbered from 1: the coordinator sets it for every site with federate init --first-step 0 (first-step: in its config)",
}
