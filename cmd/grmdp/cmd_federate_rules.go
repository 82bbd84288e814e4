package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/traj"
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

// jobRuleError is a site's data breaking one of the job's rules, in words
// that name what the coordinator sets (the site has no flag for it).
type jobRuleError struct {
	err  error
	hint string
}

func (e *jobRuleError) Error() string { return e.err.Error() + "; " + e.hint }

// Unwrap gives errBadInput only: the flags a command line would set for
// the cause are not the site's to set.
func (e *jobRuleError) Unwrap() error { return errBadInput }

// siteRuleErr puts a site's data error in the job's words: a NULL or a
// step 0 that the job's rules refuse says which rule and how the
// coordinator sets it, not a flag the site's command lacks.
func siteRuleErr(err error, j *federate.Job) error {
	if err == nil {
		return nil
	}
	r := j.Rules
	var oe *dataset.OptionError
	switch {
	case errors.Is(err, federate.ErrLabelsNeeded), errors.As(err, &oe) && oe.Option == "Actions":
		return &jobRuleError{federate.ErrLabelsNeeded, "the coordinator lists every site's action labels with federate init --action-labels (action-labels: in its config)"}
	case errors.Is(err, traj.ErrNull):
		nulls := r.Nulls
		if nulls == "" {
			nulls = "error"
		}
		return &jobRuleError{err, fmt.Sprintf("the job's null policy is %s: the coordinator sets it for every site with federate init --nulls truncate or --nulls drop-episode (nulls: in its config)", nulls)}
	case r.ActionLabels != nil && strings.Contains(err.Error(), "unknown action label"):
		msg := strings.Replace(err.Error(), "the policy's actions are", "the job's action labels are", 1)
		return &jobRuleError{errors.New(msg), "the coordinator lists every site's labels with federate init --action-labels (action-labels: in its config)"}
	case errors.Is(err, traj.ErrStepZero):
		return &jobRuleError{err, "the job reads steps as numbered from 1: the coordinator sets it for every site with federate init --first-step 0 (first-step: in its config)"}
	}
	return err
}
