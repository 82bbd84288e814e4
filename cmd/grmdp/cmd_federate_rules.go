package main

import (
	"errors"
	"fmt"
	"io"
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

// askWords names the sizes of a shape round in words.
func askWords(ask []string) string {
	words := map[string]string{federate.AskH: "step (H)", federate.AskA: "action + 1 (A)", federate.AskS: "state + 1 (S)"}
	var w []string
	for _, x := range ask {
		w = append(w, words[x])
	}
	return strings.Join(w, ", ")
}

// rulesWords says a job's data rules in words.
func rulesWords(r federate.Rules) string {
	fs := map[string]string{"": "steps numbered from 1", "1": "steps numbered from 1", "0": "steps numbered from 0",
		"detect": "steps numbered from 0 when a site's smallest step is 0"}[r.FirstStep]
	nulls := r.Nulls
	if nulls == "" {
		nulls = "error"
	}
	acts := "integer actions"
	if r.ActionLabels != nil {
		acts = "action labels " + strings.Join(r.ActionLabels, ", ")
	}
	return fmt.Sprintf("%s; NULLs: %s; %s", fs, nulls, acts)
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

// shapeWords says a shape message's sizes in words.
func shapeWords(j *federate.Job, sz *federate.Sizes) string {
	var w []string
	if j.Asks(federate.AskH) {
		w = append(w, fmt.Sprintf("largest step H = %d", sz.H))
	}
	if j.Asks(federate.AskA) {
		w = append(w, fmt.Sprintf("A = %d actions (largest action + 1)", sz.A))
	}
	if j.Asks(federate.AskS) {
		w = append(w, fmt.Sprintf("S = %d states (largest state + 1)", sz.S))
	}
	return strings.Join(w, ", ")
}

// showShape prints what a shape message discloses.
func showShape(w io.Writer, path string, inc federate.Incoming) {
	m := inc.Msg
	fmt.Fprintf(w, "%s is site %s's message for the shape round of federated job %s.\n", path, m.Site, m.JobID)
	fmt.Fprintf(w, "It holds no row of data, no count and no label. Its checksum is verified (%s).\n\n", m.Checksum[:16])
	fmt.Fprintf(w, "What is sent: the site's largest values, after the job's rules (first step, NULLs):\n")
	sz := m.Shape
	if sz.H > 0 {
		fmt.Fprintf(w, "  - the largest step: H = %d\n", sz.H)
	}
	if sz.A > 0 {
		fmt.Fprintf(w, "  - the largest action + 1: A = %d\n", sz.A)
	}
	if sz.S > 0 {
		fmt.Fprintf(w, "  - the largest state + 1: S = %d\n", sz.S)
	}
	fmt.Fprintf(w, "Each says that some row of the site's data has that value; the job fixes every other size.\n")
	showSources(w, inc)
}

// releaseWords says what kind of aggregate a message releases.
func releaseWords(m *federate.Message) string {
	if m.Kind == federate.KindShape {
		return "largest values only"
	}
	return "sums only"
}
