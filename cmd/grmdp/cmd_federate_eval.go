package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
)

// SolveJSONFile is the job's solve summary, the JSON `grmdp solve --json`
// prints, written after the value round beside the policy.
const SolveJSONFile = "solve.json"

// finishJob writes the finished job's policy (with its value estimate),
// its solve summary (JOB/solve.json, the keys of solve --json) and the
// state, and prints the summary a central solve prints.
func finishJob(dir string, j *federate.Job, next *federate.State, sites int, bytes int64, stdout io.Writer) error {
	p, err := federate.Policy(j, next)
	if err != nil {
		return err
	}
	p.Version = version
	p.Settings = maps.Clone(j.Settings)
	if p.Settings == nil {
		p.Settings = map[string]string{}
	}
	p.Settings["federated_job"] = j.ID
	_, diag, notes := federate.Diagnose(j, next, p)
	p.Warnings = append(notes, diag.Warnings()...)
	out := filepath.Join(dir, federate.PolicyFile)
	if err := writePolicy(out, p); err != nil {
		return err
	}
	f, err := fileio.CreateAtomic(filepath.Join(dir, SolveJSONFile))
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := solveJSON(f, p, diag, out, nil); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if err := federate.SaveState(dir, next); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "round %d of %d folded (the value round, %d sites, %d bytes): job done, wrote %s and %s\n", j.Rounds(), j.Rounds(), sites, bytes,
		out, filepath.Join(dir, SolveJSONFile))
	printSummary(stdout, p, diag, out)
	for _, w := range p.Warnings {
		fmt.Fprintf(os.Stderr, "grmdp: warning: %s\n", w)
	}
	return nil
}

// foldEvalRound folds a round of the job's open evaluation.
func foldEvalRound(ctx context.Context, dir string, j *federate.Job, s *federate.State, in []federate.Incoming, bytes int64, stdout io.Writer) error {
	return fmt.Errorf("federate: job %s is finished (all %d rounds folded)", j.ID, j.Rounds())
}

// showSums prints a value or evaluation round's message in words.
func showSums(w io.Writer, path string, inc federate.Incoming) {
	m := inc.Msg
	dc := m.Disclosure
	what := "the value round (after the last step)"
	if m.Kind == federate.KindEval {
		what = fmt.Sprintf("evaluation round %d", m.Round+1)
		if m.Step > 0 {
			what += fmt.Sprintf(" (step %d)", m.Step)
		} else {
			what += " (the last: values at the initial states)"
		}
	}
	fmt.Fprintf(w, "%s is site %s's message for %s of federated job %s.\n", path, m.Site, what, m.JobID)
	fmt.Fprintf(w, "It holds sums over the site's rows and no row of data. Its checksum is verified (%s).\n\n", m.Checksum[:16])
	fmt.Fprintf(w, "Disclosure control: a count below %d is withheld and shown as \"fewer than %d\"; a sum over the site's patients is sent only from at least %d rows.\n\n",
		dc.MinCount, dc.MinCount, max(dc.MinRows, dc.MinCount))
	fmt.Fprintf(w, "Totals: %d trajectories (patients' episodes) and %d rows over every step.\n", m.Trajectories, m.Rows)
	fmt.Fprintf(w, "\nWhat is sent:\n")
	if m.Gram != nil {
		fmt.Fprintf(w, "  - %d sums of products of features over step %d's %.0f rows (the Gram matrix, %d features)\n", len(m.Gram), m.Step, m.StepRows, len(m.Counts))
	}
	for i, name := range m.Runs {
		if i < len(m.RHS) {
			fmt.Fprintf(w, "  - %d weighted sums of reward plus estimated future value, one per feature, for the evaluation's regression %q\n", len(m.RHS[i]), name)
		}
	}
	for _, v := range m.Extra {
		fmt.Fprintf(w, "  - %s\n", sumsInWords(m, v))
	}
	for _, x := range m.Withheld {
		fmt.Fprintf(w, "  - withheld: %s (from fewer than %d rows, or a count below %d)\n", x, max(dc.MinRows, dc.MinCount), dc.MinCount)
	}
	fmt.Fprintf(w, "\nData files it was computed from:\n")
	for _, s := range m.Sources {
		fmt.Fprintf(w, "  %s (%d bytes, %d rows, fingerprint %s)\n", s.Path, s.Size, s.Rows, s.Fingerprint[:min(16, len(s.Fingerprint))])
	}
	fmt.Fprintf(w, "Message file: %d bytes, SHA-256 %s\n", inc.Bytes, inc.SHA256)
}

// sumsInWords says what one vector of a value or evaluation round is.
func sumsInWords(m *federate.Message, v federate.Vec) string {
	count := func(x float64) string {
		if x == 0 && m.Disclosure.MinCount > 0 {
			return fmt.Sprintf("0 or fewer than %d", m.Disclosure.MinCount)
		}
		return fmt.Sprintf("%.0f", x)
	}
	switch v.Name {
	case "value":
		what := "the policy's estimated value"
		if m.Kind == federate.KindEval {
			what = []string{"the robust value", "the lower bound"}[min(int(v.Index), 1)]
		}
		return fmt.Sprintf("the sum of %s over the site's %.0f initial states (%g), and their number", what, v.Values[1], v.Values[0])
	case "no_evidence":
		return fmt.Sprintf("the number of the site's decisions (all steps) without evidence: %s", count(v.Values[0]))
	case "coverage":
		return fmt.Sprintf("the number of the site's rows (all steps) behind each of the %d features (each 0 or at least %d)", len(v.Values), m.Disclosure.MinCount)
	case "bound_n":
		return fmt.Sprintf("the number of the step's rows in each of the %d cells (each 0 or at least %d)", len(v.Values), m.Disclosure.MinCount)
	case "bound_lo", "bound_hi":
		return fmt.Sprintf("per cell, the sum of reward plus the robust %s bound of the next step's value (%d sums)", map[string]string{"bound_lo": "lower", "bound_hi": "upper"}[v.Name], len(v.Values))
	case "site":
		return "the site's own results: its own value of the policy, its observed care (mean realised return), its support, its own identification bounds"
	case "bounds":
		return "the sums of the robust identification bounds over the site's initial states"
	case "support":
		return "the number of the site's visits at which the policy's action was observed at every site, and its visits"
	}
	return fmt.Sprintf("%s %d (%d values)", v.Name, v.Index, len(v.Values))
}
