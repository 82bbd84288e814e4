package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

func applyCommand() *cli.Command {
	o := &ApplyOptions{
		Output: outputGroup{usage: "output `FILE` (Parquet)"},
		Columns: columnsGroup{fromPolicy: true, names: []string{"step", "action", "site"}, usage: map[string]string{
			"action": "action column, checked against the policy's actions when present (default: the policy's)",
			"site":   "site column the --json summary counts by (default: the policy's)"}},
		Workers: workersGroup{usage: "parallel workers (default: all cores)"},
		Prep:    prepGroup{nullsUsage: "a NULL in a state column: `error|truncate|drop-episode`; every row is kept, and the row (truncate: with its episode's later rows; drop-episode: with every row of its episode) gets no recommendation and a recommendation_note"},
		JSON:    jsonGroup{usage: "print a JSON summary (rows, recommended actions, agreement with the recorded action, no-evidence share, unscored rows, per site) instead of the \"wrote\" line"},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "apply",
		Usage:     "add recommended_action, recommended_q and evidence to every row of DATA",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{own{fl: []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true, Destination: &o.Policy},
	}}, &o.Output, own{fl: []cli.Flag{
		&cli.StringFlag{Name: "fallback", Usage: "override the policy's rule for decisions without evidence: behaviour or lowest", Destination: (*string)(&o.Fallback)},
		&cli.Float64Flag{Name: "min-evidence", Usage: "exit 4 (after writing the output) when the share of scored rows with evidence is below `P` (0..1)", Destination: &o.MinEvidence},
	}}, &o.Columns, &o.Workers, &o.JSON, &o.Declared, &o.Prep, from(&o.Paths, dataArgs)}, runApply))
}

// ApplyOptions is what the command line of `grmdp apply` says.
type ApplyOptions struct {
	Policy string
	Output outputGroup
	// Fallback overrides the policy's rule for decisions without evidence
	// ("" keeps it).
	Fallback solve.Fallback
	// MinEvidence is the share of scored rows with evidence below which
	// apply exits 4 (errLowEvidence); 0 never does.
	MinEvidence float64
	// Columns name the data's step, action and site columns ("" for the
	// columns the policy was learned with).
	Columns columnsGroup
	Workers workersGroup
	JSON    jsonGroup
	// Declared are the data flags the policy decides, checked against it.
	Declared policyDataGroup
	// Prep is how the steps are numbered and what to do with NULL states:
	// apply keeps every row, leaving those it cannot score without a
	// recommendation.
	Prep  prepGroup
	Paths []string
}

// runApply adds the policy's recommended action, its Qhat and the evidence
// flag to every row of the data and writes them to o.Output.
func runApply(ctx context.Context, o ApplyOptions, stdout, stderr io.Writer) error {
	p, err := readPolicy(o.Policy)
	if err != nil {
		return err
	}
	if err := dataErr(o.Declared.Declared.Check(p)); err != nil {
		return err
	}
	if err := dataErr(o.Fallback.Check()); err != nil {
		return err
	}
	p.Fallback = cmp.Or(o.Fallback, p.Fallback)
	if o.MinEvidence < 0 || o.MinEvidence > 1 || o.MinEvidence != o.MinEvidence {
		return usagef("--min-evidence must be a share between 0 and 1, got %g", o.MinEvidence)
	}
	out := o.Output.Path
	if err := prepareOutput(ctx, out); err != nil {
		return err
	}
	cols := p.Columns(o.Columns.Columns)
	sum, err := dataset.Apply(ctx, o.Paths, p, out, dataset.ApplyOptions{Step: cols.Step, Action: cols.Action, Site: cols.Site, Traj: cols.Traj,
		FirstStep: o.Prep.FirstStep, Nulls: o.Prep.Nulls, Workers: o.Workers.Workers, Summary: o.JSON.JSON, Note: noteTo(stderr)})
	if re := (*traj.RoleError)(nil); errors.As(err, &re) {
		return applyRoleErr(re, o.Columns.names)
	}
	if err != nil {
		return dataErr(err)
	}
	if err := printResult(stdout, o.JSON.JSON, sum); err != nil {
		return err
	}
	printFallbackLine(stderr, sum.NoEvidenceShare, p.Fallback)
	if with := 1 - sum.NoEvidenceShare; with < o.MinEvidence {
		return &cliError{fmt.Sprintf("%.1f%% of the scored rows have evidence, below --min-evidence %g: the recommendations in %s are mostly the fallback", 100*with, o.MinEvidence, out), []error{errLowEvidence}}
	}
	return nil
}

// applyRoleErr is a column named for two roles in apply's words: a role
// among apply's column flags (flags) by its flag, any other (the traj and
// state columns) as the policy's, which apply's flags cannot change.
func applyRoleErr(re *traj.RoleError, flags []string) error {
	name := func(role string) string {
		if slices.Contains(flags, role) {
			return roleFlags[role]
		}
		return "the policy's " + role + " column"
	}
	first, second := name(re.Roles[0]), name(re.Roles[1])
	if first == second {
		return usagef("the policy's %s columns name column %q twice", re.Roles[0], re.Column)
	}
	return usagef("%s and %s both name column %q: each column plays one role", first, second, re.Column)
}

// printFallbackLine says, when at least half of a policy's decisions take
// the fallback (dataset.MostlyFallback), that its recommendations are
// mostly the fallback and what to try instead.
func printFallbackLine(w io.Writer, noEvidence float64, f solve.Fallback) {
	if noEvidence < dataset.MostlyFallback {
		return
	}
	what := "the data's most frequent action at each step"
	if f == solve.FallbackLowest {
		what = "the lowest-numbered action"
	}
	fmt.Fprintf(w, "grmdp: note: %.1f%% of the decisions have no evidence: the recommendations are mostly the fallback (%s); try solve --c auto (c chosen held out) or a smaller --c (see --c-path), or grmdp validate to compare against cloning held out\n", 100*noEvidence, what)
}
