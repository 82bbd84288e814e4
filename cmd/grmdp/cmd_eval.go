package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/eval/report"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
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
	}, o, []optionGroup{own{[]cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (simulate --model-out) for exact robust values"},
	}, func(c *cli.Context) error {
		o.Policy, o.Model = c.String("policy"), c.String("model")
		return nil
	}}, &o.Clusters, own{[]cli.Flag{
		&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates for the intervals (0: none)"},
		&cli.IntFlag{Name: "permutations", Value: 199, Usage: "permutations for the Delta_h p-values, adjusted across steps and clusters (0: none; the smallest p-value is 1/(1+N))"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the bootstrap and the permutations"},
	}, func(c *cli.Context) error {
		o.Bootstrap, o.Permutations, o.Seed = c.Int("bootstrap"), c.Int("permutations"), c.Uint64("seed")
		return nil
	}}, &o.JSON, own{[]cli.Flag{
		&cli.StringFlag{Name: "report", Usage: "write a Markdown report with plots to `DIR`"},
	}, func(c *cli.Context) error {
		o.Report = c.String("report")
		return nil
	}}, &o.returnRangeGroup, &o.Columns, &o.Workers, &o.Memory, &o.Disclosure, &o.Declared, &o.Prep, own{nil, func(c *cli.Context) error {
		o.Paths, o.Recorded, o.CommandLine = dataArgs(c), settingsUsed(c), commandLine(c)
		return nil
	}}}, runEval))
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

// evalDoc is the JSON of `grmdp eval --json` (DESIGN.md keys, and more):
// the policy, the report's values, then the rest.
type evalDoc struct {
	Policy string `json:"policy"`
	Method string `json:"method"`
	Report *eval.Report
	evalTail
}

// evalTail is the part of evalDoc after the report's values.
type evalTail struct {
	Delta         []eval.DeltaValue `json:"delta"`
	DeltaSum      *float64          `json:"delta_sum"`
	Yardstick     *float64          `json:"yardstick"`
	Bootstrap     int               `json:"bootstrap"`
	Permutations  int               `json:"permutations"`
	Seed          uint64            `json:"seed"`
	OptimalValue  *float64          `json:"optimal_value,omitempty"`
	RobustValue   *float64          `json:"robust_value,omitempty"`
	Suboptimality *float64          `json:"suboptimality,omitempty"`
	// ValueGap is null with --model for policies without a value estimate
	// (pevi-avg, pevi-min, behaviour); absent without --model.
	ValueGap    json.RawMessage      `json:"value_gap,omitempty"`
	ModelStates int                  `json:"model_states,omitempty"`
	Settings    map[string]string    `json:"settings"`
	Observed    []eval.ObservedValue `json:"observed"`
	Warnings    []string             `json:"warnings"`
	// Notes are what the evaluation suggests about its settings (a return
	// range to state); ReturnRange is the [lo, hi] it used.
	Notes       []string  `json:"notes"`
	ReturnRange []float64 `json:"return_range"`
	// Agreement is the policy's agreement with the data's actions.
	Agreement *evalAgreement `json:"agreement"`
	// InSample says that the policy was learned from these rows (sample
	// says so in a line; dataset.Data.LearnedFrom).
	InSample bool `json:"in_sample"`
	sample   string
}

// MarshalJSON writes the policy, the report's values and the tail as one
// object.
func (d *evalDoc) MarshalJSON() ([]byte, error) { return d.marshal() }

// marshal writes the document as one object, with the keys of extra
// (structs) after its own.
func (d *evalDoc) marshal(extra ...any) ([]byte, error) {
	var parts [][]byte
	for _, v := range append([]any{struct {
		Policy string `json:"policy"`
		Method string `json:"method"`
	}{d.Policy, d.Method}, d.Report, &d.evalTail}, extra...) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		parts = append(parts, bytes.TrimSuffix(bytes.TrimPrefix(b, []byte("{")), []byte("}")))
	}
	return append(append([]byte("{"), bytes.Join(parts, []byte(","))...), '}'), nil
}

func fptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
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
	do := dataset.Options{FirstStep: o.Prep.FirstStep, Nulls: o.Prep.Nulls, Workers: workers, Columns: policyColumns(o.Columns.Columns, p), MaxMemory: o.Memory.Value,
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
	if err := d.CheckPolicy(p, o.Policy); err != nil {
		return dataErr(err)
	}
	s := evalSettings(p, workers)
	opts := eval.Options{Bootstrap: o.Bootstrap, Permutations: o.Permutations, Seed: o.Seed, Workers: workers, ReturnRange: o.ReturnRange}
	stop := timing.Start(ctx, "evaluation and bootstrap")
	bootBar := newBar(stderr, "bootstrap (replicate-steps)")
	opts.Progress = bootBar
	rep, err := d.Evaluate(ctx, p, s, opts)
	bootBar.Finish()
	opts.Progress = nil
	stop()
	if err != nil {
		return dataErr(err)
	}
	prob, err := deltaProblem(o, p, d.Sites(), stderr)
	if err != nil {
		return err
	}
	doc := &evalDoc{Policy: o.Policy, Method: string(p.Method), Report: rep, evalTail: evalTail{Bootstrap: opts.Bootstrap, Permutations: opts.Permutations,
		Seed: opts.Seed, Settings: withColumns(o.Recorded, policyColumns(o.Columns.Columns, p)), Delta: []eval.DeltaValue{}}}
	if prob != nil {
		permBar := newBar(stderr, "permutations")
		opts.Progress = permBar
		err := d.Delta(ctx, rep, s, *prob, opts)
		permBar.Finish()
		if err != nil {
			return dataErr(err)
		}
		doc.Delta = append(doc.Delta, rep.Delta...)
		doc.DeltaSum, doc.Yardstick = fptr(rep.DeltaSum), fptr(rep.Yardstick)
	}
	var mv *report.ModelValues
	if model != nil {
		if mv, err = addModelEval(doc, rep, model, p); err != nil {
			return err
		}
	}
	doc.Observed = append([]eval.ObservedValue{}, rep.Observed...)
	doc.Warnings = append([]string{}, rep.Warnings...)
	doc.Notes = append([]string{}, rep.Notes...)
	doc.ReturnRange = []float64{rep.ReturnLo, rep.ReturnHi}
	for _, n := range rep.Notes {
		fmt.Fprintf(stderr, "grmdp: note: %s\n", n)
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
	}
	agree, err := eval.AgreementOf(ctx, p, d.PolicyRows(), workers)
	if err != nil {
		return err
	}
	doc.Agreement = agreementDoc(agree)
	doc.InSample, doc.sample = d.LearnedFrom(p)
	if o.Report != "" {
		if err := writeEvalReport(o, p, d, rep, mv, agree); err != nil {
			return err
		}
	}
	if o.JSON.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	printEval(stdout, doc)
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
		declared.Features, declared.State, declared.Bins, declared.NumState = "", "", nil, 0
	}
	if err := checkAgainstPolicy(declared, p); err != nil {
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

// evalSettings are the solver settings the policy was learned with.
func evalSettings(p *solve.Policy, workers int) solve.Settings {
	s := solve.DefaultSettings
	s.Lambda, s.C, s.Xi, s.Workers = p.Lambda, p.C, p.Xi, workers
	if p.BetaGiven {
		s.Beta, s.BetaSet = p.Beta, true
	}
	return s
}

// deltaProblem is the clustering of Delta_h: the cluster file, or the
// policy's own groups when it pools sites, or nil.
func deltaProblem(o EvalOptions, p *solve.Policy, sites []string, stderr io.Writer) (*solve.Problem, error) {
	if o.Clusters.Clusters.Path != "" {
		pr, warns, err := clusterProblem(o.Clusters.Clusters, sites)
		if err != nil {
			return nil, err
		}
		for _, w := range warns {
			fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
		}
		return &pr, nil
	}
	if p.Method != solve.Cluster && p.Method != solve.Pooled {
		return nil, nil
	}
	pr := solve.Problem{Method: solve.Cluster}
	index := map[string]int{}
	for k, site := range sites {
		index[site] = k
	}
	for _, g := range p.Groups {
		var members []int
		for _, site := range g.Sites {
			k, ok := index[site]
			if !ok {
				return nil, badInputf("%s: the policy's site %s is not in the data", o.Policy, site)
			}
			members = append(members, k)
		}
		pr.Groups = append(pr.Groups, members)
		pr.GroupNames = append(pr.GroupNames, g.Name)
	}
	return &pr, nil
}

// addModelEval adds the exact values under the true model to the
// document, and returns them for the report.
func addModelEval(doc *evalDoc, rep *eval.Report, model *modelEval, p *solve.Policy) (*report.ModelValues, error) {
	r, err := model.evaluate(p)
	if err != nil {
		return nil, err
	}
	doc.OptimalValue, doc.RobustValue, doc.Suboptimality = fptr(r.OptimalValue), fptr(r.PolicyValue), fptr(r.Suboptimality)
	doc.ValueGap = json.RawMessage("null")
	if g := fptr(r.ValueGap); g != nil {
		doc.ValueGap, _ = json.Marshal(*g)
	}
	doc.ModelStates = r.States
	sites, err := model.ExactSites(p)
	if err != nil {
		return nil, err
	}
	rep.SetExact(model.Model.Model.Sites(), sites)
	return &report.ModelValues{OptimalValue: r.OptimalValue, PolicyValue: r.PolicyValue, Suboptimality: r.Suboptimality, ValueGap: r.ValueGap}, nil
}

// writeEvalReport writes the Markdown report to o.Report.
func writeEvalReport(o EvalOptions, p *solve.Policy, d *dataset.Data, rep *eval.Report, mv *report.ModelValues, agree *eval.Agreement) error {
	in := report.Input{
		Title:    "grmdp evaluation of " + o.Policy,
		Policy:   report.PolicyInfo{Method: string(p.Method), Features: featuresLine(p.Map), H: p.H, D: p.D, A: p.A, Beta: p.Beta, Lambda: p.Lambda, Fallback: string(p.Fallback)},
		Eval:     rep,
		Model:    mv,
		Commands: []string{o.CommandLine},
		Notes:    p.Warnings,
	}
	in.Agreement = agree
	for _, g := range p.Groups {
		in.Policy.Groups = append(in.Policy.Groups, g.Name)
	}
	in.Coverage = coverageOf(d, p)
	return report.Write(o.Report, in)
}

// coverageOf counts, per site and feature, the rows that observe it.
func coverageOf(d *dataset.Data, p *solve.Policy) *report.Coverage {
	cov := &report.Coverage{Sites: d.Sites(), Counts: solve.Coverage(d.Stats())}
	m := d.Map()
	for i := 0; i < m.Dim(); i++ {
		cov.Features = append(cov.Features, featureLabel(&m, i))
		cov.FeatureAction = append(cov.FeatureAction, m.ActionOf(i))
	}
	cov.Actions = d.Table().Actions
	return cov
}

// featureLabel names feature i for people: its action and state part.
func featureLabel(m *features.Map, i int) string {
	switch m.Kind {
	case features.Tabular:
		return fmt.Sprintf("s%d:a%d", i/m.A, i%m.A)
	case features.ActionBlock:
		return fmt.Sprintf("a%d:%s", i/m.P, m.StateColumns[i%m.P])
	case features.Binned, features.SoftBinned:
		return binnedFeatureLabel(m, i)
	case features.Indicator:
		switch {
		case i < m.A:
			return fmt.Sprintf("s0:a%d", i)
		case i == m.A:
			return "s1"
		default:
			return "s2"
		}
	}
	return fmt.Sprintf("phi%d", i)
}

func printEval(w io.Writer, d *evalDoc) {
	printEvalHead(w, d)
	censored := printEvalSites(w, d)
	printEstimates(w, d.Report.Sites, d.Report.Worst)
	printAgreement(w, d.Agreement)
	printObserved(w, d.Observed, censored)
	printDelta(w, d)
}

// printEvalHead prints the headline: the policy, the worst site, the
// robust value and what it means, the bounds, the pessimistic value and,
// under a model, the exact values.
func printEvalHead(w io.Writer, d *evalDoc) {
	r := d.Report
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\t%s (%s)\n", d.Policy, d.Method)
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
	if lo, hi := fptr(r.ValueCILow), fptr(r.ValueCIHigh); lo != nil && hi != nil {
		ci = fmt.Sprintf("  [%.4g, %.4g] (%d bootstrap replicates)", *lo, *hi, d.Bootstrap)
	}
	if b := fptr(r.ValueBias); b != nil {
		ci += fmt.Sprintf(", bootstrap bias %.4g", *b)
	}
	fmt.Fprintf(tw, "robust value (data)\t%.4g%s\n", r.PolicyValue, ci)
	fmt.Fprintf(tw, "\t%s\n", eval.RobustMeaning)
	if d.sample != "" {
		fmt.Fprintf(tw, "sample\t%s\n", d.sample)
	}
	if r.HasBounds {
		fmt.Fprintf(tw, "identification bounds\t[%s, %s]%s; %s\n", optFloat(fptr(r.Lower)), optFloat(fptr(r.Upper)), boundsCI(fptr(r.BoundsCILow), fptr(r.BoundsCIHigh)), identifiedWords(r.Identified))
	}
	if sp := fptr(r.Support); sp != nil {
		fmt.Fprintf(tw, "support (every site)\t%.3g of visits\n", *sp)
	}
	fmt.Fprintf(tw, "pessimistic value\t%.4g (beta = %.4g; the robust value with the policy's lambda, minus its penalty)\n", r.PessimisticValue, r.Beta)
	if d.OptimalValue != nil {
		fmt.Fprintf(tw, "optimal value V*_1 (model)\t%.4g\n", *d.OptimalValue)
		fmt.Fprintf(tw, "robust value V^pi_1 (model)\t%.4g\n", *d.RobustValue)
		fmt.Fprintf(tw, "suboptimality (model)\t%.4g\n", *d.Suboptimality)
		var gap float64
		if d.ValueGap != nil && json.Unmarshal(d.ValueGap, &gap) == nil {
			fmt.Fprintf(tw, "value gap (model)\t%.4g\n", gap)
		}
	}
	tw.Flush()
}

// printEvalSites prints each site's own values (with the exact value,
// bounds, support and censored episodes where there are any) and the
// captions that explain them; it returns whether any episode was censored.
func printEvalSites(w io.Writer, d *evalDoc) bool {
	r := d.Report
	fmt.Fprintln(w, "\nper-site values (each site's own fitted-Q evaluation):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	exact := d.OptimalValue != nil
	bounds := r.HasBounds
	head := "site\tvalue\tci low\tci high\tbias\t"
	if exact {
		head += "exact (model)\t"
	}
	support := len(r.Sites) > 0 && fptr(r.Sites[0].Support) != nil
	if bounds {
		head += "lower\tupper\t"
	}
	if support {
		head += "support\t"
	}
	if bounds {
		head += "identified\t"
	}
	censored := anyCensored(r.Sites)
	if censored {
		head += "censored\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range r.Sites {
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%s\t", quoteName(s.Site), s.Value, optFloat(fptr(s.CILow)), optFloat(fptr(s.CIHigh)), optFloat(fptr(s.Bias)))
		if exact {
			fmt.Fprintf(tw, "%s\t", optFloat(fptr(s.Exact)))
		}
		if bounds {
			fmt.Fprintf(tw, "%s\t%s\t", optFloat(fptr(s.Lower)), optFloat(fptr(s.Upper)))
		}
		if support {
			fmt.Fprintf(tw, "%s\t", optFloat(fptr(s.Support)))
		}
		if bounds {
			word := "yes"
			if !s.Identified {
				word = "NO"
			}
			fmt.Fprintf(tw, "%s\t", word)
		}
		if censored {
			fmt.Fprintf(tw, "%d\t", s.Censored)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
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
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		if censored {
			fmt.Fprintln(tw, "site\treturn\tci low\tci high\tcensored\t")
		} else {
			fmt.Fprintln(tw, "site\treturn\tci low\tci high\t")
		}
		for _, o := range obs {
			fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t", quoteName(o.Site), o.Value, optFloat(fptr(o.CILow)), optFloat(fptr(o.CIHigh)))
			if censored {
				fmt.Fprintf(tw, "%d\t", o.Censored)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// printDelta prints Delta_h per step and cluster, with its sum and the
// yardstick.
func printDelta(w io.Writer, d *evalDoc) {
	if len(d.Delta) > 0 {
		fmt.Fprintln(w, "\nDelta_h (distance of each site's regression from its cluster's):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "step\tcluster\tdelta\tadjusted p\t")
		for _, x := range d.Delta {
			fmt.Fprintf(tw, "%d\t%s\t%.4g\t%s\t\n", x.Step, x.Cluster, x.Delta, optFloat(fptr(x.PValue)))
		}
		tw.Flush()
		if d.DeltaSum != nil && d.Yardstick != nil {
			fmt.Fprintf(w, "sum of Delta_h = %.4g; yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool) = %.4g\n", *d.DeltaSum, *d.Yardstick)
		}
	}
}

// censoredNote says how eval treats censored episodes (see "Censored
// episodes" in package eval's documentation).
const censoredNote = "censored: episodes cut by --nulls truncate, whose returns are unknown; observed care, PDWIS and WDR leave them out, " +
	"fitted-Q learns from their rows before the cut (each row whose successor was observed); unbiased when censoring is independent of the outcome (missing at random)"

// anyCensored reports whether some site has censored episodes.
func anyCensored(sites []eval.SiteValue) bool {
	for _, s := range sites {
		if s.Censored > 0 {
			return true
		}
	}
	return false
}

func boundsCI(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return ""
	}
	return fmt.Sprintf(" (with bootstrap: [%.4g, %.4g])", *lo, *hi)
}

func identifiedWords(ok bool) string {
	if ok {
		return "identified"
	}
	return "NOT identified: the estimate rests on cells without data"
}
