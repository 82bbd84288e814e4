package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/federate"
)

// parseActionLabels returns --action-labels in the central solve's order
// (sorted), or nil; actions is --actions (0 when not given).
func parseActionLabels(c *cli.Context, actions int) ([]string, error) {
	if !c.IsSet("action-labels") {
		return nil, nil
	}
	var labels []string
	for _, l := range c.StringSlice("action-labels") {
		if l = strings.TrimSpace(l); l == "" {
			return nil, usagef("--action-labels: an empty label")
		}
		if slices.Contains(labels, l) {
			return nil, usagef("--action-labels: %q is listed twice", l)
		}
		labels = append(labels, l)
	}
	if len(labels) == 0 {
		return nil, usagef("--action-labels: no label given")
	}
	if actions > 0 && actions != len(labels) {
		return nil, usagef("--actions %d with %d --action-labels: the labels are the actions; leave out --actions", actions, len(labels))
	}
	slices.Sort(labels)
	return labels, nil
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
	switch {
	case re.Rule == "action-labels" && !errors.Is(re, federate.ErrLabelsNeeded):
		hint = "the coordinator lists every site's labels with federate init --action-labels (action-labels: in its config)"
	case re.Rule == "nulls":
		nulls := j.Rules.Nulls
		if nulls == "" {
			nulls = "error"
		}
		hint = fmt.Sprintf("the job's null policy is %s: %s", nulls, hint)
	}
	return badInputf("%v; %s", re.Err, hint)
}

// ruleHints say how the coordinator sets each of the job's rules.
var ruleHints = map[string]string{
	"action-labels": "the coordinator lists every site's action labels with federate init --action-labels (action-labels: in its config)",
	"nulls":         "the coordinator sets it for every site with federate init --nulls truncate or --nulls drop-episode (nulls: in its config)",
	"first-step":    "the job reads steps as numbered from 1: the coordinator sets it for every site with federate init --first-step 0 (first-step: in its config)",
}
