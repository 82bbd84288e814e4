package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/grmdp/grmdp/traj"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/eval/report"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/solve"
)

func evalCommand() *cli.Command {
	evalFlags := []cli.Flag{
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` written by grmdp solve", Required: true},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (simulate --model-out) for exact robust values"},
		&cli.StringFlag{Name: "clusters", Usage: "cluster `FILE` for Delta_h (default: the policy's own groups when it pools sites)"},
		&cli.Float64Flag{Name: "threshold", Usage: "with a similarity --clusters file: connected components of similarity >= T"},
		&cli.IntFlag{Name: "num-clusters", Usage: "with a similarity --clusters file: average-linkage clusters, cut at M"},
		&cli.BoolFlag{Name: "allow-singletons", Usage: "keep data sites missing from the cluster file as clusters of their own"},
		&cli.IntFlag{Name: "bootstrap", Value: 100, Usage: "bootstrap replicates for the intervals (0: none)"},
		&cli.IntFlag{Name: "permutations", Value: 199, Usage: "permutations for the Delta_h p-values, adjusted across steps and clusters (0: none; the smallest p-value is 1/(1+N))"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the bootstrap and the permutations"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
		&cli.StringFlag{Name: "report", Usage: "write a Markdown report with plots to `DIR`"},
		&cli.StringFlag{Name: "site-col", Value: "site", Usage: "site column (default: the policy's)"},
		&cli.StringFlag{Name: "traj-col", Value: "traj", Usage: "trajectory column (default: the policy's)"},
		&cli.StringFlag{Name: "step-col", Value: "step", Usage: "step column (default: the policy's)"},
		&cli.StringFlag{Name: "action-col", Value: "action", Usage: "action column (default: the policy's)"},
		&cli.StringFlag{Name: "reward-col", Value: "reward", Usage: "reward column (default: the policy's)"},
		&cli.IntFlag{Name: "workers", Usage: "parallel workers (default: all cores); results do not depend on it"},
		memoryFlag(),
	}

	return withConfig(&cli.Command{
		Name:      "eval",
		Usage:     "evaluate a policy: robust value from data with intervals, Delta_h, exact values under a known model",
		ArgsUsage: "DATA...",
		Flags:     append(evalFlags, policyDataFlags(flagNames(evalFlags))...),
		Action: func(c *cli.Context) error {
			o, err := parseEvalOptions(c)
			if err != nil {
				return err
			}
			return runEval(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	})
}

// EvalOptions is what the command line of `grmdp eval` says.
type EvalOptions struct {
	// FirstStep and Nulls are --first-step and --nulls.
	FirstStep traj.FirstStep
	Nulls     traj.NullPolicy
	// Policy is the policy file to evaluate.
	Policy string
	// Model is a true model file for exact robust values ("" for none).
	Model string
	// Clusters is the clustering of Delta_h ("" Path: the policy's own
	// groups when it pools sites).
	Clusters     clusterOptions
	Bootstrap    int
	Permutations int
	Seed         uint64
	// JSON prints the result as JSON instead of a table.
	JSON bool
	// Report is the directory of a Markdown report ("" for none).
	Report string
	// Columns names the data's columns ("" for the column the policy was
	// learned with; the state columns come from the policy).
	Columns   traj.Columns
	Workers   int
	MaxMemory string
	// Declared are the data flags the policy decides, checked against it.
	Declared policyData
	// Paths are the DATA arguments.
	Paths []string
	// Recorded are the settings the JSON records (settingsUsed).
	Recorded map[string]string
	// CommandLine is the command that ran, as the report records it.
	CommandLine string
}

func parseEvalOptions(c *cli.Context) (EvalOptions, error) {
	var prep dataOptions
	if err := parsePrep(c, &prep); err != nil {
		return EvalOptions{}, err
	}
	return EvalOptions{FirstStep: prep.FirstStep, Nulls: prep.Nulls, Policy: c.String("policy"), Model: c.String("model"), Clusters: parseClusterOptions(c),
		Bootstrap: c.Int("bootstrap"), Permutations: c.Int("permutations"), Seed: c.Uint64("seed"), JSON: c.Bool("json"), Report: c.String("report"),
		Columns: traj.Columns{Site: givenString(c, "site-col"), Traj: givenString(c, "traj-col"), Step: givenString(c, "step-col"),
			Action: givenString(c, "action-col"), Reward: givenString(c, "reward-col")},
		Workers: c.Int("workers"), MaxMemory: c.String("max-memory"), Declared: parsePolicyData(c), Paths: dataArgs(c),
		Recorded: settingsUsed(c), CommandLine: commandLine(c)}, nil
}

// evalDoc is the JSON of `grmdp eval --json` (DESIGN.md keys, and more).
type evalDoc struct {
	Policy string `json:"policy"`
	Method string `json:"method"`
	evalValues
	Delta         []evalDelta `json:"delta"`
	DeltaSum      *float64    `json:"delta_sum"`
	Yardstick     *float64    `json:"yardstick"`
	Bootstrap     int         `json:"bootstrap"`
	Permutations  int         `json:"permutations"`
	Seed          uint64      `json:"seed"`
	OptimalValue  *float64    `json:"optimal_value,omitempty"`
	RobustValue   *float64    `json:"robust_value,omitempty"`
	Suboptimality *float64    `json:"suboptimality,omitempty"`
	// ValueGap is null with --model for policies without a value estimate
	// (pevi-avg, pevi-min, behaviour); absent without --model.
	ValueGap    json.RawMessage   `json:"value_gap,omitempty"`
	ModelStates int               `json:"model_states,omitempty"`
	Settings    map[string]string `json:"settings"`
	Observed    []evalObserved    `json:"observed"`
	Warnings    []string          `json:"warnings"`
	// Agreement is the policy's agreement with the data's actions.
	Agreement *evalAgreement `json:"agreement"`
}

// evalValues are the values of one policy from data: eval's keys, also
// compare's methods[].evaluation.
type evalValues struct {
	PolicyValue float64    `json:"policy_value"`
	LowerBound  float64    `json:"lower_bound"`
	ValueCILow  *float64   `json:"value_ci_low"`
	ValueCIHigh *float64   `json:"value_ci_high"`
	Beta        float64    `json:"beta"`
	WorstSite   string     `json:"worst_site"`
	Sites       []evalSite `json:"sites"`
	// Bias is the bootstrap's bias estimate of policy_value; Lower, Upper
	// and Support the identification bounds and support of the robust
	// value (null for maps whose features are not indicators).
	Bias         *float64 `json:"bias"`
	Lower        *float64 `json:"lower"`
	Upper        *float64 `json:"upper"`
	BoundsCILow  *float64 `json:"bounds_ci_low"`
	BoundsCIHigh *float64 `json:"bounds_ci_high"`
	Support      *float64 `json:"support"`
	Identified   *bool    `json:"identified"`
	// Estimator names the estimator of policy_value; Worst is the worst
	// site by each estimator (eval.Report's).
	Estimator string          `json:"estimator"`
	Worst     *eval.WorstSite `json:"worst"`
}

// valuesDoc returns the JSON form of rep's values.
func valuesDoc(rep *eval.Report) evalValues {
	v := evalValues{PolicyValue: rep.PolicyValue, LowerBound: rep.LowerBound, ValueCILow: fptr(rep.ValueCILow), ValueCIHigh: fptr(rep.ValueCIHigh),
		Beta: rep.Beta, WorstSite: rep.WorstSite, Sites: []evalSite{}}
	for _, sv := range rep.Sites {
		es := evalSite{Site: sv.Site, Value: sv.Value, CILow: fptr(sv.CILow), CIHigh: fptr(sv.CIHigh), ExactValue: fptr(sv.Exact),
			Bias: fptr(sv.Bias), Lower: fptr(sv.Lower), Upper: fptr(sv.Upper), BoundsCILow: fptr(sv.BoundsCILow), BoundsCIHigh: fptr(sv.BoundsCIHigh), Support: fptr(sv.Support)}
		if rep.HasBounds {
			es.Identified = &sv.Identified
		}
		es.Estimator, es.Estimates, es.ESS = sv.Estimator, sv.Estimates, fptr(sv.ESS)
		v.Sites = append(v.Sites, es)
	}
	v.Bias, v.Lower, v.Upper, v.Support = fptr(rep.ValueBias), fptr(rep.Lower), fptr(rep.Upper), fptr(rep.Support)
	v.BoundsCILow, v.BoundsCIHigh = fptr(rep.BoundsCILow), fptr(rep.BoundsCIHigh)
	if rep.HasBounds {
		v.Identified = &rep.Identified
	}
	v.Estimator, v.Worst = rep.Estimator, rep.Worst
	return v
}

// observedDoc returns the JSON form of the observed care.
func observedDoc(obs []eval.ObservedValue) []evalObserved {
	out := []evalObserved{}
	for _, o := range obs {
		out = append(out, evalObserved{Site: o.Site, Value: o.Value, CILow: fptr(o.CILow), CIHigh: fptr(o.CIHigh)})
	}
	return out
}

type evalObserved struct {
	Site   string   `json:"site"`
	Value  float64  `json:"value"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
}

type evalSite struct {
	Site   string   `json:"site"`
	Value  float64  `json:"value"`
	CILow  *float64 `json:"ci_low"`
	CIHigh *float64 `json:"ci_high"`
	// ExactValue is the site's own exact value under --model, averaged
	// over the site's own initial-state law (the quantity Value
	// estimates; absent without --model).
	ExactValue   *float64 `json:"exact_value,omitempty"`
	Bias         *float64 `json:"bias"`
	Lower        *float64 `json:"lower"`
	Upper        *float64 `json:"upper"`
	BoundsCILow  *float64 `json:"bounds_ci_low"`
	BoundsCIHigh *float64 `json:"bounds_ci_high"`
	Support      *float64 `json:"support"`
	Identified   *bool    `json:"identified"`
	// Estimator names the estimate of value, ci_low and ci_high;
	// Estimates holds every estimator's; ESS is the importance weights'
	// effective sample size (eval.SiteValue's).
	Estimator string                   `json:"estimator"`
	Estimates map[string]eval.Estimate `json:"estimates"`
	ESS       *float64                 `json:"ess"`
}

type evalDelta struct {
	Step    int      `json:"step"`
	Cluster string   `json:"cluster"`
	Delta   float64  `json:"delta"`
	PValue  *float64 `json:"p_value"`
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
	}{{"bootstrap", o.Bootstrap}, {"permutations", o.Permutations}, {"workers", o.Workers}} {
		if f.v < 0 {
			return usagef("--%s must not be negative", f.name)
		}
	}
	p, model, err := readEvalInputs(ctx, o)
	if err != nil {
		return err
	}
	ds, err := loadEvalData(ctx, o, p, stderr)
	if err != nil {
		return err
	}
	s := evalSettings(p, o.Workers)
	sv := solve.NewSolver(ds.Stats, s)
	opts := eval.Options{Bootstrap: o.Bootstrap, Permutations: o.Permutations, Seed: o.Seed, Workers: o.Workers}
	stop := timing.Start(ctx, "evaluation and bootstrap")
	bootBar := newBar(stderr, "bootstrap (replicate-steps)")
	opts.Progress = bootBar
	rep, err := eval.FromData(ctx, sv, p, s, opts)
	bootBar.finish()
	opts.Progress = nil
	stop()
	if err != nil {
		return err
	}
	prob, err := deltaProblem(o, p, ds.Table.Sites, stderr)
	if err != nil {
		return err
	}
	doc := newEvalDoc(o, p, opts)
	if prob != nil {
		permBar := newBar(stderr, "permutations")
		opts.Progress = permBar
		err := addDelta(ctx, &doc, rep, sv, *prob, opts)
		permBar.finish()
		if err != nil {
			return err
		}
	}
	var mv *report.ModelValues
	if model != nil {
		if mv, err = addModelEval(&doc, rep, model, p); err != nil {
			return err
		}
	}
	addValues(&doc, rep, stderr)
	agree, err := eval.AgreementOf(ctx, p, ds.Table, o.Workers)
	if err != nil {
		return err
	}
	doc.Agreement = agreementDoc(agree)
	if o.Report != "" {
		if err := writeEvalReport(o, p, ds, rep, mv, agree); err != nil {
			return err
		}
	}
	if o.JSON {
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
	if err := checkAgainstPolicy(o.Declared, p); err != nil {
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

// loadEvalData reads the data with the policy's feature map and checks
// that the policy fits them.
func loadEvalData(ctx context.Context, o EvalOptions, p *solve.Policy, stderr io.Writer) (*dataset, error) {
	do := dataOptions{FirstStep: o.FirstStep, Nulls: o.Nulls, Kind: p.Map.Kind, State: p.Map.StateColumns, Bins: p.Map.Bins, Horizon: p.H, Actions: p.A, Workers: o.Workers,
		ActionLabels: p.ActionLabels, PolicyActions: true, Columns: policyColumns(o.Columns, p), MaxMemory: o.MaxMemory}
	if p.Map.Kind == features.Tabular {
		do.NumStates = p.Map.S
	}
	ds, err := loadData(ctx, do, o.Paths, stderr)
	if err != nil {
		return nil, err
	}
	if ds.Map.Dim() != p.D || ds.Table.A != p.A {
		return nil, badInputf("%s: the policy (%s, d = %d, A = %d) does not fit the data (d = %d, A = %d)", o.Policy, p.Map.Kind, p.D, p.A, ds.Map.Dim(), ds.Table.A)
	}
	if p.ActionLabels != nil && strings.Join(p.ActionLabels, "\x00") != strings.Join(ds.Table.Actions, "\x00") {
		return nil, badInputf("%s: the policy's actions %v differ from the data's %v", o.Policy, p.ActionLabels, ds.Table.Actions)
	}
	return ds, nil
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
	if o.Clusters.Path != "" {
		pr, warns, err := clusterProblem(o.Clusters, sites)
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

// newEvalDoc is the JSON document of the evaluation, without Delta_h and
// the model's values.
func newEvalDoc(o EvalOptions, p *solve.Policy, opts eval.Options) evalDoc {
	return evalDoc{Policy: o.Policy, Method: string(p.Method),
		Bootstrap: opts.Bootstrap, Permutations: opts.Permutations, Seed: opts.Seed, Settings: withColumns(o.Recorded, policyColumns(o.Columns, p)), Delta: []evalDelta{}}
}

// addValues fills the document's values from the finished report and
// prints its warnings.
func addValues(doc *evalDoc, rep *eval.Report, stderr io.Writer) {
	doc.evalValues = valuesDoc(rep)
	doc.Observed = observedDoc(rep.Observed)
	doc.Warnings = append([]string{}, rep.Warnings...)
	for _, w := range rep.Warnings {
		fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
	}
}

// addDelta computes Delta_h for prob into the report and the document.
func addDelta(ctx context.Context, doc *evalDoc, rep *eval.Report, sv *solve.Solver, prob solve.Problem, opts eval.Options) error {
	stop := timing.Start(ctx, "Delta")
	cells, sum, yard, err := eval.Delta(ctx, sv, prob, opts)
	stop()
	if err != nil {
		return err
	}
	rep.Delta, rep.DeltaSum, rep.Yardstick, rep.Permutations = cells, sum, yard, opts.Permutations
	for _, d := range cells {
		doc.Delta = append(doc.Delta, evalDelta{Step: d.Step, Cluster: d.Cluster, Delta: d.Delta, PValue: fptr(d.PValue)})
	}
	doc.DeltaSum, doc.Yardstick = fptr(sum), fptr(yard)
	return nil
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
func writeEvalReport(o EvalOptions, p *solve.Policy, ds *dataset, rep *eval.Report, mv *report.ModelValues, agree *eval.Agreement) error {
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
	in.Coverage = coverageOf(ds, p)
	return report.Write(o.Report, in)
}

// coverageOf counts, per site and feature, the rows that observe it.
func coverageOf(ds *dataset, p *solve.Policy) *report.Coverage {
	dg := solve.Diagnose(ds.Stats, p)
	cov := &report.Coverage{Sites: ds.Table.Sites, Counts: dg.Coverage}
	m := ds.Map
	for i := 0; i < m.Dim(); i++ {
		cov.Features = append(cov.Features, featureLabel(&m, i))
		cov.FeatureAction = append(cov.FeatureAction, m.ActionOf(i))
	}
	cov.Actions = ds.Table.Actions
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

func printEval(w io.Writer, d evalDoc) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\t%s (%s)\n", d.Policy, d.Method)
	ci := ""
	if d.ValueCILow != nil {
		ci = fmt.Sprintf("  [%.4g, %.4g] (%d bootstrap replicates)", *d.ValueCILow, *d.ValueCIHigh, d.Bootstrap)
	}
	if d.Bias != nil {
		ci += fmt.Sprintf(", bootstrap bias %.4g", *d.Bias)
	}
	fmt.Fprintf(tw, "robust value (data)\t%.4g%s\n", d.PolicyValue, ci)
	if d.Identified != nil {
		fmt.Fprintf(tw, "identification bounds\t[%s, %s]%s; %s\n", optFloat(d.Lower), optFloat(d.Upper), boundsCI(d.BoundsCILow, d.BoundsCIHigh), identifiedWords(*d.Identified))
	}
	if d.Support != nil {
		fmt.Fprintf(tw, "support (every site)\t%.3g of visits\n", *d.Support)
	}
	fmt.Fprintf(tw, "lower bound\t%.4g (beta = %.4g)\n", d.LowerBound, d.Beta)
	fmt.Fprintf(tw, "worst site\t%s\n", d.WorstSite)
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
	fmt.Fprintln(w, "\nper-site values (each site's own fitted-Q evaluation):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	exact := d.OptimalValue != nil
	bounds := d.Identified != nil
	head := "site\tvalue\tci low\tci high\tbias\t"
	if exact {
		head += "exact (model)\t"
	}
	support := len(d.Sites) > 0 && d.Sites[0].Support != nil
	if bounds {
		head += "lower\tupper\t"
	}
	if support {
		head += "support\t"
	}
	if bounds {
		head += "identified\t"
	}
	fmt.Fprintln(tw, head)
	for _, s := range d.Sites {
		fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t%s\t", s.Site, s.Value, optFloat(s.CILow), optFloat(s.CIHigh), optFloat(s.Bias))
		if exact {
			fmt.Fprintf(tw, "%s\t", optFloat(s.ExactValue))
		}
		if bounds {
			fmt.Fprintf(tw, "%s\t%s\t", optFloat(s.Lower), optFloat(s.Upper))
		}
		if support {
			fmt.Fprintf(tw, "%s\t", optFloat(s.Support))
		}
		if bounds {
			word := "yes"
			if !*s.Identified {
				word = "NO"
			}
			fmt.Fprintf(tw, "%s\t", word)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if exact {
		fmt.Fprintln(w, "exact (model): the site's own value under the model, averaged over the site's own initial states (its case-mix), as its estimate is")
	}
	if bounds {
		fmt.Fprintf(w, "intervals: basic bootstrap (bias-corrected); bounds count cells a site never observed as 0 (lower) and as the remaining horizon (upper);\n"+
			"a value whose bounds are wider than %g%% of the value range [0, H] is not identified: its estimate rests on cells without data\n", 100*eval.IdentifiedShare)
	}
	printEstimates(w, d.Sites, d.Worst)
	printAgreement(w, d.Agreement)
	if len(d.Observed) > 0 {
		fmt.Fprintln(w, "\nobserved care (mean realised return per trajectory at each site):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "site\treturn\tci low\tci high\t")
		for _, o := range d.Observed {
			fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t\n", o.Site, o.Value, optFloat(o.CILow), optFloat(o.CIHigh))
		}
		tw.Flush()
	}
	if len(d.Delta) > 0 {
		fmt.Fprintln(w, "\nDelta_h (distance of each site's regression from its cluster's):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "step\tcluster\tdelta\tadjusted p\t")
		for _, x := range d.Delta {
			fmt.Fprintf(tw, "%d\t%s\t%.4g\t%s\t\n", x.Step, x.Cluster, x.Delta, optFloat(x.PValue))
		}
		tw.Flush()
		if d.DeltaSum != nil && d.Yardstick != nil {
			fmt.Fprintf(w, "sum of Delta_h = %.4g; yardstick 1/sqrt(N_min) - 1/sqrt(N_min^pool) = %.4g\n", *d.DeltaSum, *d.Yardstick)
		}
	}
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
