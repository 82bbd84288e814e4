package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/eval/report"
	"github.com/grmdp/grmdp/solve"
)

func evalCommand() *cli.Command {
	o := &EvalOptions{
		Clusters: clusterGroup{use: "cluster `FILE` for Delta_h (default: the policy's own groups when it pools sites)"},
		Declared: policyDataGroup{through: true},
		Columns:  policyColumnsGroup{names: []string{"site", "traj", "step", "action", "reward"}},
	}
	return withConfig(leaf(&cli.Command{
		Name:      "eval",
		Usage:     "evaluate a policy: robust value from data with intervals, Delta_h, exact values under a known model",
		ArgsUsage: "DATA...",
	}, o, []optionGroup{own{fl: []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true, Destination: &o.Policy},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (simulate --model-out) for exact robust values", Destination: &o.Model},
	}}, &o.Clusters, own{fl: []cli.Flag{
		&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates for the intervals (0: none)", Destination: &o.Bootstrap},
		&cli.IntFlag{Name: "permutations", Value: 199, Usage: "permutations for the Delta_h p-values, adjusted across steps and clusters (0: none; the smallest p-value is 1/(1+N))", Destination: &o.Permutations},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the bootstrap and the permutations", Destination: &o.Seed},
	}}, &o.JSON, own{fl: []cli.Flag{
		&cli.StringFlag{Name: "report", Usage: "write a Markdown report with plots to `DIR`", Destination: &o.Report},
	}}, &o.returnRangeGroup, &o.Columns, &o.Workers, &o.Memory, &o.Disclosure, &o.Declared, &o.Prep,
		from(&o.Paths, dataArgs), from(&o.Recorded, settingsUsed), from(&o.CommandLine, commandLine)}, runEval))
}

// EvalOptions is what the command line of `grmdp eval` says.
type EvalOptions struct {
	// Policy is the policy file to evaluate.
	Policy string
	// Model is a true model file for exact robust values ("" for none).
	Model string
	// Clusters is the clustering of Delta_h (no file: the policy's own
	// groups when it pools sites).
	Clusters     clusterGroup
	Bootstrap    int
	Permutations int
	Seed         uint64
	// JSON prints the result as JSON instead of a table.
	JSON jsonGroup
	// Report is the directory of a Markdown report ("" for none).
	Report string
	// Columns names the data's columns ("" for the column the policy was
	// learned with; the state columns come from the policy).
	Columns policyColumnsGroup
	Workers workersGroup
	Memory  memoryGroup
	// Disclosure is the disclosure control the evaluation's statistics
	// are formed under (--min-count, --min-rows; 0 by default), as a
	// federated job's sites apply it, so that federate eval's result can
	// be checked against this one.
	Disclosure disclosureGroup
	// Declared are the data flags the policy decides, checked against
	// it, except that --features (with --state, --bins, --num-states)
	// names the evaluation's map (evaluationMap).
	Declared policyDataGroup
	// Prep is how the steps are numbered and what a NULL does.
	Prep prepGroup
	// Paths are the DATA arguments.
	Paths []string
	// Recorded are the settings the JSON records (settingsUsed).
	Recorded map[string]string
	// CommandLine is the command that ran, as the report records it.
	CommandLine string
	returnRangeGroup
}

// runEval evaluates a policy on data: its robust value with intervals,
// Delta_h, and exact values under a known model; it prints them and writes
// a report.
func runEval(ctx context.Context, o EvalOptions, stdout, stderr io.Writer) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"bootstrap", o.Bootstrap}, {"permutations", o.Permutations}} {
		if f.v < 0 {
			return usagef("--%s must not be negative", f.name)
		}
	}
	p, model, err := readEvalInputs(ctx, o)
	if err != nil {
		return err
	}
	workers := o.Workers.Workers
	do := dataset.Options{FirstStep: o.Prep.FirstStep, Nulls: o.Prep.Nulls, Workers: workers, Columns: p.Columns(o.Columns.Columns), MaxMemory: o.Memory.Value,
		Note: noteTo(stderr), Progress: barsTo(stderr), Disclosure: o.Disclosure.Disclosure}
	do.UsePolicy(p)
	if evaluatesThrough(o.Declared.Declared, p) {
		m, err := evaluationMap(o.Declared.Declared)
		if err != nil {
			return err
		}
		do.UsePolicyThrough(p, m)
	}
	d, err := dataset.Open(ctx, o.Paths, do)
	if err != nil {
		return dataErr(err)
	}
	eo := dataset.PolicyEvalOptions{Name: o.Policy, Settings: solve.RecordColumns(o.Recorded, p.Columns(o.Columns.Columns)), Options: eval.Options{
		Bootstrap: o.Bootstrap, Permutations: o.Permutations, Seed: o.Seed, Workers: workers, ReturnRange: o.ReturnRange}}
	if o.Clusters.Clusters.Path != "" {
		pr, warns, err := clusterProblem(o.Clusters.Clusters, d.Sites())
		if err != nil {
			return err
		}
		tell(stderr, "warning", warns)
		eo.Clusters = &pr
	}
	if model != nil {
		eo.Model = model.Model
	}
	phase := &bar{}
	eo.Progress = func(what string) eval.Progress {
		phase.Finish()
		phase = newBar(stderr, what)
		return phase
	}
	res, err := d.EvaluatePolicy(ctx, p, eo)
	phase.Finish()
	if err != nil {
		return dataErr(err)
	}
	tell(stderr, "note", res.Notes)
	tell(stderr, "warning", res.Warnings)
	if o.Report != "" {
		if err := writeEvalReport(o, p, d, res); err != nil {
			return err
		}
	}
	if o.JSON.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printEval(stdout, res)
	if o.Report != "" {
		fmt.Fprintf(stdout, "\nreport in %s/report.md\n", o.Report)
	}
	return nil
}

// readEvalInputs reads the policy and the model (nil without one), checks
// them against each other and the declared data flags, and creates the
// report's directory.
func readEvalInputs(ctx context.Context, o EvalOptions) (*solve.Policy, *modelEval, error) {
	p, err := readPolicy(o.Policy)
	if err != nil {
		return nil, nil, err
	}
	declared := o.Declared.Declared
	if evaluatesThrough(declared, p) {
		declared.Features, declared.State, declared.Bins, declared.NumStates = "", "", nil, 0
	}
	if err := dataErr(declared.Check(p)); err != nil {
		return nil, nil, err
	}
	var model *modelEval
	if o.Model != "" {
		if model, err = loadModel(o.Model); err != nil {
			return nil, nil, err
		}
		if err := model.check(p); err != nil {
			return nil, nil, err
		}
	}
	if o.Report != "" {
		if err := makeOutputDir(ctx, o.Report); err != nil {
			return nil, nil, err
		}
	}
	return p, model, nil
}

// writeEvalReport writes the Markdown report to o.Report.
func writeEvalReport(o EvalOptions, p *solve.Policy, d *dataset.Data, res *eval.Result) error {
	in := report.ForResult("grmdp evaluation of "+o.Policy, p, res, d.Stats())
	in.Commands = []string{o.CommandLine}
	return report.Write(o.Report, in)
}

// printEval prints an evaluation: its headline, each site's values and
// estimators, the agreement with the recorded actions, the observed care,
// Delta_h and, for a federated evaluation, how it was computed.
func printEval(w io.Writer, r *eval.Result) {
	printEvalHead(w, r)
	censored := printEvalSites(w, r)
	printEstimates(w, r.Sites, r.Worst)
	printAgreement(w, r.Agreement)
	printObserved(w, r.Observed, censored)
	printDelta(w, r.Report)
	if f := r.Federated; f != nil {
		fmt.Fprintf(w, "\nfederated evaluation (job %s, %d rounds, %d bytes of messages); not computed from sums:\n", f.Job, f.Rounds, f.Bytes)
		for _, x := range f.LeftOut {
			fmt.Fprintf(w, "  - %s\n", x)
		}
		for _, x := range f.Notes {
			fmt.Fprintf(w, "note: %s\n", x)
		}
		for _, x := range r.Warnings {
			fmt.Fprintf(w, "warning: %s\n", x)
		}
	}
}

// printEvalHead prints the headline: the policy, the worst site, the
// robust value and what it means, the bounds, the pessimistic value and,
// under a model, the exact values.
func printEvalHead(w io.Writer, r *eval.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\t%s (%s)\n", r.Policy, r.Method)
	if r.EvaluationFeatures != "" {
		fmt.Fprintf(tw, "evaluated through\t%s (the policy's own map decides)\n", r.EvaluationFeatures)
	}
	if site, e, est := r.Headline(); site != "" {
		if est != "" {
			est = " (" + est + ")"
		}
		fmt.Fprintf(tw, "worst site\t%s: %s  [%s, %s]%s\n", site, num(e.Value), num(e.CILow), num(e.CIHigh), est)
	}
	ci := ""
	if finite(r.ValueCILow) && finite(r.ValueCIHigh) {
		ci = fmt.Sprintf("  [%.4g, %.4g] (%d bootstrap replicates)", r.ValueCILow, r.ValueCIHigh, r.Bootstrap)
	}
	if finite(r.ValueBias) {
		ci += fmt.Sprintf(", bootstrap bias %.4g", r.ValueBias)
	}
	fmt.Fprintf(tw, "robust value (data)\t%.4g%s\n", r.PolicyValue, ci)
	fmt.Fprintf(tw, "\t%s\n", eval.RobustMeaning)
	if r.Sample != "" {
		fmt.Fprintf(tw, "sample\t%s\n", r.Sample)
	}
	if r.HasBounds {
		fmt.Fprintf(tw, "identification bounds\t[%s, %s]%s; %s\n", num(r.Lower), num(r.Upper), boundsCI(r.BoundsCILow, r.BoundsCIHigh), identifiedWords(r.Identified))
	}
	if finite(r.Support) {
		fmt.Fprintf(tw, "support (every site)\t%.3g of visits\n", r.Support)
	}
	fmt.Fprintf(tw, "pessimistic value\t%.4g (beta = %.4g; the robust value with the policy's lambda, minus its penalty)\n", r.PessimisticValue, r.Beta)
	if x := r.Exact; x != nil {
		fmt.Fprintf(tw, "optimal value V*_1 (model)\t%.4g\n", x.OptimalValue)
		fmt.Fprintf(tw, "robust value V^pi_1 (model)\t%.4g\n", x.PolicyValue)
		fmt.Fprintf(tw, "suboptimality (model)\t%.4g\n", x.Suboptimality)
		if finite(x.ValueGap) {
			fmt.Fprintf(tw, "value gap (model)\t%.4g\n", x.ValueGap)
		}
	}
	tw.Flush()
}

// printEvalSites prints each site's own values (with the exact value,
// bounds, support and censored episodes where there are any) and the
// captions that explain them; it returns whether any episode was censored.
func printEvalSites(w io.Writer, r *eval.Result) bool {
	fmt.Fprintln(w, "\nper-site values (each site's own fitted-Q evaluation):")
	exact, bounds := r.Exact != nil, r.HasBounds
	censored := slices.ContainsFunc(r.Sites, func(s eval.SiteValue) bool { return s.Censored > 0 })
	site := func(i int) *eval.SiteValue { return &r.Sites[i] }
	printColumns(w, len(r.Sites), []column{
		{"site", true, func(i int) string { return quoteName(site(i).Site) }},
		{"value", true, func(i int) string { return fmt.Sprintf("%.4g", site(i).Value) }},
		{"ci low", true, func(i int) string { return num(site(i).CILow) }},
		{"ci high", true, func(i int) string { return num(site(i).CIHigh) }},
		{"bias", true, func(i int) string { return num(site(i).Bias) }},
		{"exact (model)", exact, func(i int) string { return num(site(i).Exact) }},
		{"lower", bounds, func(i int) string { return num(site(i).Lower) }},
		{"upper", bounds, func(i int) string { return num(site(i).Upper) }},
		{"support", len(r.Sites) > 0 && finite(r.Sites[0].Support), func(i int) string { return num(site(i).Support) }},
		{"identified", bounds, func(i int) string { return map[bool]string{true: "yes", false: "NO"}[site(i).Identified] }},
		{"censored", censored, func(i int) string { return strconv.Itoa(site(i).Censored) }},
	})
	if censored {
		fmt.Fprintln(w, censoredNote)
	}
	if exact {
		fmt.Fprintln(w, "exact (model): the site's own value under the model, averaged over the site's own initial states (its case-mix), as its estimate is")
	}
	if bounds {
		fmt.Fprintf(w, "intervals: basic bootstrap (bias-corrected); bounds count cells a site never observed as 0 (lower) and as the remaining horizon, at most the return range's upper end (upper), "+
			"the robust upper bound takes sites' 95%% upper confidence limits;\n"+
			"a value whose bounds are wider than %g%% of the return range [%.4g, %.4g] is not identified: its estimate rests on cells without data\n", 100*eval.IdentifiedShare, r.ReturnLo, r.ReturnHi)
	}
	return censored
}

// printObserved prints the observed care per site.
func printObserved(w io.Writer, obs []eval.ObservedValue, censored bool) {
	if len(obs) > 0 {
		fmt.Fprintln(w, "\nobserved care (mean realised return per trajectory at each site):")
		printColumns(w, len(obs), []column{
			{"site", true, func(i int) string { return quoteName(obs[i].Site) }},
			{"return", true, func(i int) string { return fmt.Sprintf("%.4g", obs[i].Value) }},
			{"ci low", true, func(i int) string { return num(obs[i].CILow) }},
			{"ci high", true, func(i int) string { return num(obs[i].CIHigh) }},
			{"censored", censored, func(i int) string { return strconv.Itoa(obs[i].Censored) }},
		})
	}
}

// printDelta prints Delta_h per step and cluster, with its sum and the
// yardstick.
func printDelta(w io.Writer, d *eval.Report) {
	if len(d.Delta) > 0 {
		fmt.Fprintln(w, "\nDelta_h (distance of each site's regression from its cluster's):")
		cells := d.Delta
		printColumns(w, len(cells), []column{
			{"step", true, func(i int) string { return strconv.Itoa(cells[i].Step) }},
			{"cluster", true, func(i int) string { return cells[i].Cluster }},
			{"delta", true, func(i int) string { return fmt.Sprintf("%.4g", cells[i].Delta) }},
			{"adjusted p", true, func(i int) string { return num(cells[i].PValue) }},
		})
		if finite(d.DeltaSum) && finite(d.Yardstick) {
			fmt.Fprintf(w, "sum of Delta_h = %.4g; yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool) = %.4g\n", d.DeltaSum, d.Yardstick)
		}
	}
}

// censoredNote says how eval treats censored episodes (see "Censored
// episodes" in package eval's documentation).
const censoredNote = "censored: episodes cut by --nulls truncate, whose returns are unknown; observed care, PDWIS and WDR leave them out and weight the others by the inverse probability of not being censored (Kaplan-Meier by step, per site), " +
	"fitted-Q learns from their rows before the cut (each row whose successor was observed); consistent when censoring depends on nothing but the step"

func boundsCI(lo, hi float64) string {
	if !finite(lo) || !finite(hi) {
		return ""
	}
	return fmt.Sprintf(" (with bootstrap: [%.4g, %.4g])", lo, hi)
}

func identifiedWords(ok bool) string {
	if ok {
		return "identified"
	}
	return "NOT identified: the estimate rests on cells without data"
}

// column is a column of a table: its head, whether the table shows it,
// and its cell in row i.
type column struct {
	head string
	show bool
	cell func(i int) string
}

// printColumns prints the head and n rows of the shown columns, aligned
// right.
func printColumns(w io.Writer, n int, cols []column) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i := -1; i < n; i++ {
		for _, c := range cols {
			switch {
			case !c.show:
			case i < 0:
				fmt.Fprintf(tw, "%s\t", c.head)
			default:
				fmt.Fprintf(tw, "%s\t", c.cell(i))
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
