package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/solve"
)

func compareCommand() *cli.Command {
	flags := append(dataFlags(), solverFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "compare", Usage: "`DIR` for the policies and compare.json (created if missing)"},
		&cli.StringFlag{Name: "model", Usage: "true model `FILE` (from simulate --model-out) for exact robust values"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON for scripts"},
		&cli.BoolFlag{Name: "evaluate", Value: true, Usage: "evaluate every method's policy by one estimator on the same data (eval's values, no bootstrap) and show the observed care per site (default; data in memory only; --evaluate=false skips it)"},
		outOfCoreFlag(),
	)
	return withConfig(&cli.Command{
		Name:      "compare",
		Usage:     "solve every method on the same data, side by side",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			o, err := parseCompareOptions(c)
			if err != nil {
				return err
			}
			return runCompare(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	})
}

// CompareOptions is what the command line of `grmdp compare` says.
type CompareOptions struct {
	Data     dataset.Options
	Settings solve.Settings
	// Clusters adds the cluster method when its Path is set.
	Clusters clusterOptions
	// Dir receives the policies and compare.json.
	Dir string
	// Model is a true model file for exact robust values ("" for none).
	Model string
	// JSON prints compare.json instead of a table.
	JSON bool
	// NoEvaluate skips the shared evaluation: by default every policy is
	// scored by eval's estimator on the same data, with the observed care
	// (data in memory only; out of core the keys are null and a note says
	// why).
	NoEvaluate bool
	// RequireEvaluate refuses to run out of core (--evaluate given
	// explicitly).
	RequireEvaluate bool
	// Paths are the DATA arguments.
	Paths []string
	// Recorded are the settings every policy records (policySettings), to
	// which each adds its method.
	Recorded map[string]string
}

func parseCompareOptions(c *cli.Context) (CompareOptions, error) {
	o := CompareOptions{Clusters: parseClusterOptions(c), Dir: c.String("output"), Model: c.String("model"), JSON: c.Bool("json"),
		NoEvaluate: !c.Bool("evaluate"), RequireEvaluate: c.IsSet("evaluate") && c.Bool("evaluate"), Paths: dataArgs(c), Recorded: policySettings(c)}
	var err error
	if o.Data, err = parseDataOptions(c); err != nil {
		return o, err
	}
	o.Settings, err = parseSettings(c)
	return o, err
}

// compareRow is one method's line in the comparison.
type compareRow struct {
	Method          string   `json:"method"`
	Groups          int      `json:"groups"`
	Beta            float64  `json:"beta"`
	ValueEstimate   *float64 `json:"value_estimate"`
	NoEvidenceShare *float64 `json:"no_evidence_share"`
	Disagreement    float64  `json:"disagreement_with_sitewise"`
	Policy          string   `json:"policy"`
	OptimalValue    *float64 `json:"optimal_value,omitempty"`
	PolicyValue     *float64 `json:"policy_value,omitempty"`
	Suboptimality   *float64 `json:"suboptimality,omitempty"`
	ValueGap        *float64 `json:"value_gap,omitempty"`
	// Evaluation is the policy's evaluation by eval's estimator on the
	// compared data, comparable across methods (null out of core or with
	// --evaluate=false).
	Evaluation *eval.Report `json:"evaluation"`
}

// runCompare solves every method on the same data, writes their policies
// and compare.json to o.Dir and prints the comparison.
func runCompare(ctx context.Context, o CompareOptions, stdout, stderr io.Writer) error {
	if err := checkCompareDir(o.Dir); err != nil {
		return err
	}
	var model *modelEval
	if o.Model != "" {
		var err error
		if model, err = loadModel(o.Model); err != nil {
			return err
		}
	}
	d, err := openData(ctx, o.Data, o.Paths, o.Settings, false)
	if err != nil {
		return err
	}
	// The shared evaluation needs the rows in memory: out of core it is
	// skipped with a note, unless --evaluate asked for it.
	if !o.NoEvaluate && o.RequireEvaluate {
		if err := d.Held("--evaluate"); err != nil {
			return dataErr(err)
		}
	}
	if err := makeOutputDir(ctx, o.Dir); err != nil {
		return err
	}
	probs, warnings, err := compareProblems(o.Clusters, d.Sites())
	if err != nil {
		return err
	}
	warnings = append(append([]string(nil), d.Warnings()...), warnings...)
	res, err := d.SolveAll(ctx, o.Settings, probs)
	if err != nil {
		return dataErr(err)
	}
	recordSettings(res, o.Recorded)
	rows, methodWarnings, err := compareRows(res, warnings, model, o.Dir)
	if err != nil {
		return err
	}
	var observed []eval.ObservedValue
	note := ""
	switch {
	case o.NoEvaluate:
		note = noEvaluationFlag
	case !d.InMemory():
		note = noEvaluationOutOfCore
	default:
		stop := timing.Start(ctx, "shared evaluation")
		reps, err := d.EvaluateAll(ctx, res, o.Settings)
		stop()
		if err != nil {
			return err
		}
		for i, rep := range reps {
			rows[i].Evaluation = rep
		}
		if observed, err = d.Observed(observedBootstrap, observedSeed, 0.95); err != nil {
			return err
		}
		if observed == nil {
			observed = []eval.ObservedValue{}
		}
	}
	if err := writeComparePolicies(ctx, res.Policies, rows, o.Settings.Workers); err != nil {
		return err
	}
	js, err := writeCompareJSON(o.Dir, rows, observed, note)
	if err != nil {
		return err
	}
	if o.JSON {
		_, err := stdout.Write(append(js, '\n'))
		return err
	}
	printCompare(stdout, rows, model != nil, observed, note, o.Dir)
	for _, w := range append(warnings, methodWarnings...) {
		fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
	}
	return nil
}

// checkCompareDir refuses an output directory that is a file or lies below
// one. The directory (and its missing parents) is created only once the
// data have been read, and removed again if the run fails.
func checkCompareDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return usagef("--output %s is not a directory", dir)
	} else if err != nil {
		if err := checkOutput(dir); err != nil {
			return err
		}
	}
	return nil
}

// compareProblems lists every method's problem in solve.Methods' order;
// the cluster method only with a cluster file, whose warnings it returns.
func compareProblems(co clusterOptions, sites []string) ([]solve.Problem, []string, error) {
	var probs []solve.Problem
	var warnings []string
	for _, m := range solve.Methods {
		switch m {
		case solve.Cluster:
			if co.Path == "" {
				continue
			}
			p, w, err := clusterProblem(co, sites)
			if err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, w...)
			probs = append(probs, p)
		default:
			probs = append(probs, solve.Problem{Method: m})
		}
	}
	return probs, warnings, nil
}

// recordSettings records the version and the settings in every policy,
// each with its own method.
func recordSettings(res *dataset.Compared, recorded map[string]string) {
	for i, p := range res.Policies {
		p.Version = version
		p.Settings = maps.Clone(recorded)
		p.Settings["method"] = string(res.Problems[i].Method)
	}
}

// compareRows makes each method's row, its policy in dir, and adds the
// warnings (the cluster file's, then each method's diagnostics') to its
// policy; it returns the methods' warnings, named by method.
func compareRows(res *dataset.Compared, warnings []string, model *modelEval, dir string) ([]compareRow, []string, error) {
	var rows []compareRow
	var methodWarnings []string
	for i, p := range res.Policies {
		dg := res.Diagnostics[i]
		p.Warnings = append(append([]string(nil), warnings...), solveWarnings(dg)...)
		methodWarnings = append(methodWarnings, withMethod(string(p.Method), solveWarnings(dg))...)
		r := compareRow{Method: string(p.Method), Groups: len(p.Groups), Beta: p.Beta, Policy: filepath.Join(dir, string(p.Method)+".parquet")}
		if p.Method != solve.Behaviour {
			v := dg.NoEvidenceShare
			r.NoEvidenceShare = &v
		}
		if !math.IsNaN(p.ValueEstimate) {
			v := p.ValueEstimate
			r.ValueEstimate = &v
		}
		r.Disagreement = disagreement(res.Actions[i], res.Actions[0])
		if model != nil {
			if err := addModelValues(&r, model, p); err != nil {
				return nil, nil, err
			}
		}
		rows = append(rows, r)
	}
	return rows, groupWarnings(methodWarnings), nil
}

// withMethod pairs each warning with the method it is about, as "method\x00warning".
func withMethod(method string, warnings []string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		out[i] = method + "\x00" + w
	}
	return out
}

// groupWarnings prints each distinct warning once, in the order of first
// appearance, naming the methods it applies to: "sitewise, pooled: w".
func groupWarnings(tagged []string) []string {
	var order []string
	methods := map[string][]string{}
	for _, l := range tagged {
		m, w, _ := strings.Cut(l, "\x00")
		if _, ok := methods[w]; !ok {
			order = append(order, w)
		}
		methods[w] = append(methods[w], m)
	}
	out := make([]string, len(order))
	for i, w := range order {
		out[i] = strings.Join(methods[w], ", ") + ": " + w
	}
	return out
}

// Why compare.json's evaluation keys are null, in compare.json's
// evaluation_note and under the table.
const (
	noEvaluationOutOfCore = "out of core: methods[].evaluation and observed are null, since the shared evaluation needs the data in memory; " +
		"run compare in memory (raise --max-memory) or grmdp eval --policy DIR/METHOD.parquet on each policy"
	noEvaluationFlag = "--evaluate=false: methods[].evaluation and observed are null; drop the flag to score every method by one estimator"
)

// observedBootstrap and observedSeed give compare's observed care its
// intervals.
const (
	observedBootstrap = 200
	observedSeed      = 1
)

// disagreement is the share of sampled rows where a's action differs from
// ref's (0 without rows).
func disagreement(a, ref []int32) float64 {
	if len(a) == 0 {
		return 0
	}
	diff := 0
	for j := range a {
		if a[j] != ref[j] {
			diff++
		}
	}
	return float64(diff) / float64(len(a))
}

// addModelValues fills the row's exact values under the true model.
func addModelValues(r *compareRow, model *modelEval, p *solve.Policy) error {
	ev, err := model.evaluate(p)
	if err != nil {
		return err
	}
	r.OptimalValue, r.PolicyValue, r.Suboptimality = &ev.OptimalValue, &ev.PolicyValue, &ev.Suboptimality
	if !math.IsNaN(ev.ValueGap) {
		r.ValueGap = &ev.ValueGap
	}
	return nil
}

// writeComparePolicies writes each policy to its row's path. The files
// are independent: they are written in parallel, and the first method's
// error is reported.
func writeComparePolicies(ctx context.Context, policies []*solve.Policy, rows []compareRow, workers int) error {
	errs := make([]error, len(policies))
	var wg sync.WaitGroup
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	stopWrite := timing.Start(ctx, "write")
	for i, p := range policies {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = writePolicy(rows[i].Policy, p)
		}()
	}
	wg.Wait()
	stopWrite()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// writeCompareJSON writes dir/compare.json and returns its bytes.
// observed and note are null (and the evaluations too) when the shared
// evaluation did not run; note then says why.
func writeCompareJSON(dir string, rows []compareRow, observed []eval.ObservedValue, note string) ([]byte, error) {
	var notePtr *string
	if note != "" {
		notePtr = &note
	}
	js, err := json.MarshalIndent(struct {
		Methods        []compareRow         `json:"methods"`
		Observed       []eval.ObservedValue `json:"observed"`
		EvaluationNote *string              `json:"evaluation_note"`
	}{rows, observed, notePtr}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fileio.WriteAtomic(filepath.Join(dir, "compare.json"), func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	}); err != nil {
		return nil, err
	}
	return js, nil
}

// printCompare prints the comparison table (with the model's columns when
// there is one).
func printCompare(w io.Writer, rows []compareRow, withModel bool, observed []eval.ObservedValue, note, dir string) {
	evaluate := observed != nil
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "method\tgroups\tbeta\tvalue est.\tno evidence\tdiffers from sitewise\t")
	if withModel {
		fmt.Fprint(tw, "robust value\tsuboptimality\t")
	}
	if evaluate {
		fmt.Fprint(tw, "robust value (data)\tbounds\t")
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%s\t%s\t%.1f%%\t", r.Method, r.Groups, r.Beta, optFloat(r.ValueEstimate), pctp(r.NoEvidenceShare), 100*r.Disagreement)
		if withModel {
			fmt.Fprintf(tw, "%.4f\t%.4f\t", *r.PolicyValue, *r.Suboptimality)
		}
		if e := r.Evaluation; e != nil {
			b := "-"
			if e.HasBounds {
				b = fmt.Sprintf("[%s, %s]", optFloat(fptr(e.Lower)), optFloat(fptr(e.Upper)))
				if !e.Identified {
					b += " not identified"
				}
			}
			fmt.Fprintf(tw, "%.4g\t%s\t", e.PolicyValue, b)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if evaluate {
		fmt.Fprintln(w, "\nrobust value (data): every policy evaluated by eval's robust fitted-Q evaluation on these data, so the column ranks methods;")
		fmt.Fprintln(w, "value est. is each method's own estimate and is not comparable across methods.")
		fmt.Fprintln(w, "\nobserved care (mean realised return per trajectory):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "site\treturn\tci low\tci high\t")
		for _, o := range observed {
			fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t\n", o.Site, o.Value, optFloat(fptr(o.CILow)), optFloat(fptr(o.CIHigh)))
		}
		tw.Flush()
	}
	if note != "" {
		fmt.Fprintf(w, "\nno shared evaluation: %s\n", note)
	}
	fmt.Fprintf(w, "\npolicies and compare.json in %s\n", dir)
}

func optFloat(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *v)
}

func pctp(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100**v)
}
