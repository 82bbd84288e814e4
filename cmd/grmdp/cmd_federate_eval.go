package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/solve"
)

// SolveJSONFile is the job's solve summary, the JSON `grmdp solve --json`
// prints, written after the value round beside the policy.
const SolveJSONFile = "solve.json"

// finishJob writes the finished job's policy (with its value estimate),
// its solve summary (JOB/solve.json, the keys of solve --json) and the
// state, and prints the summary a central solve prints.
func finishJob(dir string, j *federate.Job, next *federate.State, sites int, bytes int64, stdout, stderr io.Writer) error {
	// The state is the job's commit point, saved before the policy: so
	// policy.parquet never exists while state.json says the value round is
	// open, and a step stopped between the two writes the policy from the
	// state when run again (finishedWithoutOutputs).
	if err := federate.SaveState(dir, next); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "round %d of %d folded (the value round, %d sites, %d bytes): job done\n", j.Rounds(), j.Rounds(), sites, bytes)
	return writeJobOutputs(dir, j, next, stdout, stderr)
}

// writeJobOutputs writes a finished job's policy and solve.json from its
// final state s.
func writeJobOutputs(dir string, j *federate.Job, s *federate.State, stdout, stderr io.Writer) error {
	p, diag, err := federate.FinalPolicy(j, s, version, solveWarnings)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, federate.PolicyFile)
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
	if err := writePolicy(out, p); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s\n", out, filepath.Join(dir, SolveJSONFile))
	printSummary(stdout, p, diag, out)
	for _, w := range p.Warnings {
		fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
	}
	return nil
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
	fmt.Fprintf(w, "%s is site %s's message for %s of federated job %s.\n", path, quoteName(m.Site), what, m.JobID)
	fmt.Fprintf(w, "It holds sums over the site's rows and no row of data. Its checksum is verified (%s).\n\n", m.Checksum[:16])
	fmt.Fprintf(w, "Disclosure control: a count below %d is withheld and shown as \"fewer than %d\"; a sum over the site's patients is sent only from at least %d rows.\n\n",
		dc.MinCount, dc.MinCount, max(dc.MinRows, dc.MinCount))
	fmt.Fprintf(w, "Totals: %d trajectories (patients' episodes) and %d rows over every step.\n", m.Trajectories, m.Rows)
	fmt.Fprintf(w, "\nWhat is sent:\n")
	if m.Gram != nil {
		fmt.Fprintf(w, "  - %d sums of products of features over step %d's %.0f rows (the Gram matrix, %d features)\n", len(m.Gram), m.Step, m.StepRows, len(m.Counts))
	}
	if m.Counts != nil {
		fmt.Fprintf(w, "  - the number of the step's rows behind each of the %d features (each 0 or at least %d; withheld: %d)\n", len(m.Counts), dc.MinCount, m.Suppressed)
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
	switch v.Name {
	case "value":
		what := "the policy's estimated value"
		if m.Kind == federate.KindEval {
			what = []string{"the robust value", "the pessimistic value"}[min(int(v.Index), 1)]
		}
		return fmt.Sprintf("the sum of %s over the site's %.0f initial states (%g), and their number", what, v.Values[1], v.Values[0])
	case "no_evidence":
		return fmt.Sprintf("the number of the site's decisions (all steps) without evidence: %.0f (a number from 1 to %d is withheld)", v.Values[0], max(m.Disclosure.MinCount-1, 0))
	case "coverage":
		return fmt.Sprintf("the number of the site's rows (all steps) behind each of the %d features (each 0 or at least %d)", len(v.Values), m.Disclosure.MinCount)
	case "bound_n":
		return fmt.Sprintf("the number of the step's rows in each of the %d cells (each 0 or at least %d)", len(v.Values), m.Disclosure.MinCount)
	case "bound_lo", "bound_hi":
		return fmt.Sprintf("per cell, the sum of reward plus the robust %s bound of the next step's value (%d sums)", map[string]string{"bound_lo": "lower", "bound_hi": "upper"}[v.Name], len(v.Values))
	case "site":
		x := v.Values
		return fmt.Sprintf("the site's own results (means over at least %d rows): its own value of the policy %.4g, its observed care (mean realised return) %.4g, "+
			"its support %.4g, its own identification bounds [%.4g, %.4g] (NaN: not an indicator map)", max(m.Disclosure.MinRows, m.Disclosure.MinCount), x[0], x[1], x[2], x[3], x[4])
	case "agreement":
		return fmt.Sprintf("the site's rows (every step, %.0f), those at which the policy recommends the recorded action (%.0f) and those without evidence (%.0f); withheld if either, or the rows without agreement, is from 1 to %d",
			v.Values[0], v.Values[1], v.Values[2], max(m.Disclosure.MinCount-1, 0))
	case "bounds":
		return "the sums of the robust identification bounds over the site's initial states"
	case "censored":
		return fmt.Sprintf("the number of the site's censored episodes (cut by a NULL under --nulls truncate), which its results leave out: %.0f (withheld if it, or the rest of its trajectories, is from 1 to %d)",
			v.Values[0], max(m.Disclosure.MinCount-1, 0))
	case "support":
		return fmt.Sprintf("the number of the site's visits at which the policy's action was observed at every site (%.0f; from 1 to %d withheld), and its visits (%.0f)",
			v.Values[0], max(m.Disclosure.MinCount-1, 0), v.Values[1])
	}
	return fmt.Sprintf("%s %d (%d values)", v.Name, v.Index, len(v.Values))
}

// openEval is a job's open evaluation, as a site answers it: its state
// and the policy it evaluates.
type openEval struct {
	state  *federate.EvalState
	policy *solve.Policy
}

// openEvalFor reads the evaluation open in jobDir and its policy, whose
// bytes must be those the evaluation was opened with.
func openEvalFor(jobDir string, j *federate.Job) (*openEval, error) {
	if jobDir == "" {
		return nil, fmt.Errorf("federate: job %s is finished; its evaluation rounds run with grmdp federate site --job JOB (the job directory holds the evaluation)", j.ID)
	}
	e, err := federate.LoadEval(jobDir, j)
	if err != nil {
		return nil, err
	}
	if e == nil || e.Done(j) {
		return nil, fmt.Errorf("federate: job %s is finished (all %d rounds folded) and no evaluation is open: nothing to send (open one with grmdp federate eval --job %s --policy P)", j.ID, j.Rounds(), jobDir)
	}
	path, err := federate.EvalPolicyPath(jobDir, e)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, err
	} else if err != nil {
		return nil, badInputf("%w", err)
	}
	p, err := readPolicy(path)
	if err != nil {
		return nil, err
	}
	return &openEval{state: e, policy: p}, nil
}

// roundWords names a message's round for the one-line reports.
func roundWords(j *federate.Job, m *federate.Message) string {
	switch {
	case m.Kind == federate.KindShape:
		return "the shape round"
	case m.Kind == federate.KindEval:
		return fmt.Sprintf("evaluation round %d of %d", m.Round+1, j.H+1)
	case m.Kind == federate.KindValue:
		return fmt.Sprintf("round %d of %d (the value round)", m.Round+1, j.Rounds())
	}
	return fmt.Sprintf("round %d of %d (step %d)", m.Round+1, j.Rounds(), m.Step)
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
		&cli.StringFlag{Name: "job", Usage: "the job `DIR` (finished: its policy and sites' sizes are known)", Required: true},
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` to evaluate (written by grmdp solve or federate step); copied into JOB/eval"},
	}, func(c *cli.Context) error {
		if c.Args().Len() > 0 {
			return usagef("federate eval reads no data (got %v): each site answers the evaluation's rounds with grmdp federate site", c.Args().Slice())
		}
		o.Job, o.Policy = c.String("job"), c.String("policy")
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
		for _, w := range warns {
			fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
		}
		for i, g := range prob.Groups {
			cl := federate.Cluster{Name: prob.GroupNames[i]}
			for _, k := range g {
				cl.Sites = append(cl.Sites, s.Order[k])
			}
			clusters = append(clusters, cl)
		}
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
	doc := fedEvalDocOf(j, next, res)
	var text strings.Builder
	printFedEval(&text, doc)
	if err := federate.WriteEvalResult(dir, next, doc, text.String()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "evaluation round %d of %d folded (%d sites, %d bytes): evaluation done, wrote %s\n\n", e.Rounds(j), e.Rounds(j), len(in), bytes,
		filepath.Join(dir, federate.EvalDir, federate.EvalResultFile))
	_, err = io.WriteString(stdout, text.String())
	return err
}

// fedEvalDoc is federate eval's JSON: the keys of grmdp eval --json for
// what sums give (intervals, p-values and the agreement with behaviour
// null), and what the federated evaluation left out.
type fedEvalDoc struct {
	evalDoc
	Federated fedEvalInfo `json:"federated"`
}

// MarshalJSON writes grmdp eval's keys, then federated.
func (d fedEvalDoc) MarshalJSON() ([]byte, error) {
	return d.evalDoc.marshal(struct {
		Federated fedEvalInfo `json:"federated"`
	}{d.Federated})
}

type fedEvalInfo struct {
	Job     string   `json:"job"`
	Rounds  int      `json:"rounds"`
	Bytes   int64    `json:"bytes"`
	LeftOut []string `json:"left_out"`
	Notes   []string `json:"notes"`
}

// leftOut says what a federated evaluation does not compute, and why.
var leftOut = []string{
	"bootstrap intervals and bias (they resample each site's trajectories: rows)",
	"permutation p-values of Delta_h (they reassign trajectories between sites: rows)",
}

func fedEvalDocOf(j *federate.Job, e *federate.EvalState, res *federate.EvalResult) fedEvalDoc {
	rep := res.Report
	settings := maps.Clone(j.Settings)
	if settings == nil {
		settings = map[string]string{}
	}
	settings["federated_job"] = j.ID
	doc := evalDoc{Policy: e.Policy, Method: string(e.Method), Report: rep, evalTail: evalTail{Settings: settings, Delta: append([]eval.DeltaValue{}, rep.Delta...)}}
	doc.Observed = append([]eval.ObservedValue{}, rep.Observed...)
	doc.Warnings = append([]string{}, rep.Warnings...)
	if len(rep.Delta) > 0 {
		doc.DeltaSum, doc.Yardstick = fptr(rep.DeltaSum), fptr(rep.Yardstick)
	}
	if res.Agreement != nil {
		doc.Agreement = agreementDoc(res.Agreement)
	}
	var bytes int64
	for _, m := range e.Messages {
		bytes += m.Bytes
	}
	info := fedEvalInfo{Job: j.ID, Rounds: e.Rounds(j), Bytes: bytes, LeftOut: leftOut, Notes: append([]string{}, res.Notes...)}
	if !e.Bounds {
		info.LeftOut = append(info.LeftOut, "the robust support of a map whose features are not indicators (each visit's leverage under every site's Gram: rows of one site against the Grams of all)")
	}
	return fedEvalDoc{evalDoc: doc, Federated: info}
}

// printFedEval prints the result as grmdp eval does, with what the
// federated evaluation left out.
func printFedEval(w io.Writer, doc fedEvalDoc) {
	printEval(w, &doc.evalDoc)
	fmt.Fprintf(w, "\nfederated evaluation (job %s, %d rounds, %d bytes of messages); not computed from sums:\n", doc.Federated.Job, doc.Federated.Rounds, doc.Federated.Bytes)
	for _, x := range doc.Federated.LeftOut {
		fmt.Fprintf(w, "  - %s\n", x)
	}
	for _, x := range doc.Federated.Notes {
		fmt.Fprintf(w, "note: %s\n", x)
	}
	for _, x := range doc.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x)
	}
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

// evalRounds opens the evaluation of policy on the finished job and plays
// its rounds as the job's are played (messages in msgDir/eval-round-NNN).
// The sites read their data afresh each round: an evaluation round reads
// every step, and the site cache made 2 runs on (a) 1.10x slower (wall,
// paired), so it is not used here.
func (lr *localRun) evalRounds(ctx context.Context, msgDir, policy, clusters string) error {
	open := []string{"federate", "eval", "--job", lr.dir, "--policy", policy}
	if clusters != "" {
		open = append(open, "--clusters", clusters)
	}
	if err := part(ctx, lr.exe, open, lr.stdout, lr.stderr); err != nil {
		return fmt.Errorf("coordinator, opening the evaluation: %w", err)
	}
	for r := 0; r <= lr.job.H; r++ {
		if err := lr.round(ctx, filepath.Join(msgDir, fmt.Sprintf("eval-round-%03d", r)), "evaluation round", r, &runCaches{}); err != nil {
			return err
		}
	}
	return nil
}

// writeEvalInput writes an evaluation round's state and policy, as a
// vantage6 task's input carries them, into the job folder dir.
func writeEvalInput(dir string, state json.RawMessage, policy []byte) error {
	if len(policy) == 0 {
		return badInputf("INPUT_FILE: an evaluation round's input needs the policy's bytes (\"policy\", base64)")
	}
	return federate.WriteEvalInput(dir, state, policy)
}
