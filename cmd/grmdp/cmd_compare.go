package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

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
		&cli.BoolFlag{Name: "evaluate", Usage: "evaluate every method's policy by one estimator on the same data (eval's values, no bootstrap) and show the observed care per site; data in memory only"},
		outOfCoreFlag(),
	)
	return withConfig(&cli.Command{
		Name:      "compare",
		Usage:     "solve every method on the same data, side by side",
		ArgsUsage: "DATA...",
		Flags:     flags,
		Action: func(c *cli.Context) error {
			return runCompare(c.Context, c, c.App.Writer, c.App.ErrWriter)
		},
	})
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
	// compared data (with --evaluate), comparable across methods.
	Evaluation *evalValues `json:"evaluation,omitempty"`
}

// observedBootstrap and observedSeed give compare's observed care its
// intervals.
const (
	observedBootstrap = 200
	observedSeed      = 1
)

func runCompare(ctx context.Context, c *cli.Context, stdout, stderr io.Writer) error {
	o, err := parseDataOptions(c)
	if err != nil {
		return err
	}
	s, err := parseSettings(c)
	if err != nil {
		return err
	}
	dir := c.String("output")
	// The output directory's parent must exist; the directory itself is
	// created only once the data have been read, so a failed run leaves
	// nothing behind.
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return usagef("--output %s is not a directory", dir)
	} else if err != nil {
		if err := checkOutput(dir); err != nil {
			return err
		}
	}
	var model *modelEval
	if path := c.String("model"); path != "" {
		if model, err = loadModel(path); err != nil {
			return err
		}
	}
	ds, sd, err := openData(ctx, c, o, c.Args().Slice(), whyNotStreamed(o, s, ""), stderr)
	if err != nil {
		return err
	}
	evaluate := c.Bool("evaluate")
	if evaluate && sd != nil {
		return usagef("--evaluate needs the data in memory: drop --out-of-core or raise --max-memory")
	}
	sites := func() []string {
		if sd != nil {
			return sd.plan.Sites
		}
		return ds.Table.Sites
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--output %s: %v", dir, err)
	}
	var probs []solve.Problem
	var warnings []string
	if ds != nil {
		warnings = append(warnings, ds.Warnings...)
	}
	for _, m := range solve.Methods {
		switch m {
		case solve.Cluster:
			if c.String("clusters") == "" {
				continue
			}
			p, w, err := clusterProblem(c, sites)
			if err != nil {
				return err
			}
			warnings = append(warnings, w...)
			probs = append(probs, p)
		default:
			probs = append(probs, solve.Problem{Method: m})
		}
	}
	var policies []*solve.Policy
	var diags []*solve.Diagnostics
	// Recommended actions of every method at a systematic sample of data
	// rows, for the disagreement column.
	var actions [][]int32
	if sd != nil {
		res, err := sd.solve(ctx, s, probs)
		if err != nil {
			return err
		}
		policies, diags, actions = res.Policies, res.Diagnostics, res.Actions
	} else {
		sv := solve.NewSolver(ds.Stats, s)
		// Every method's backward passes in one lockstep sweep per round.
		if err := sv.Prepare(ctx, probs); err != nil {
			return err
		}
		stop := timing.Start(ctx, "policies")
		for _, prob := range probs {
			p, err := sv.Solve(ctx, prob)
			if err != nil {
				stop()
				return fmt.Errorf("%s: %w", prob.Method, err)
			}
			policies = append(policies, p)
		}
		stop()
		t := ds.Table
		var evidence [][]bool
		stop = timing.Start(ctx, "sampled actions")
		actions, evidence, err = solve.ActAllMany(ctx, policies, t, s.Workers, solve.SampleStride(t))
		stop()
		if err != nil {
			return err
		}
		stop = timing.Start(ctx, "diagnostics")
		for i, p := range policies {
			diags = append(diags, solve.DiagnoseSampled(ds.Stats, p, evidence[i]))
		}
		stop()
	}
	for i, p := range policies {
		p.Version = version
		p.Settings = policySettings(c)
		p.Settings["method"] = string(probs[i].Method)
	}
	var rows []compareRow
	var methodWarnings []string
	for i, p := range policies {
		dg := diags[i]
		p.Warnings = append(append([]string(nil), warnings...), dg.Warnings()...)
		for _, w := range dg.Warnings() {
			methodWarnings = append(methodWarnings, fmt.Sprintf("%s: %s", p.Method, w))
		}
		path := filepath.Join(dir, string(p.Method)+".parquet")
		r := compareRow{Method: string(p.Method), Groups: len(p.Groups), Beta: p.Beta, Policy: path}
		if p.Method != solve.Behaviour {
			v := dg.NoEvidenceShare
			r.NoEvidenceShare = &v
		}
		if !math.IsNaN(p.ValueEstimate) {
			v := p.ValueEstimate
			r.ValueEstimate = &v
		}
		diff := 0
		for j := range actions[i] {
			if actions[i][j] != actions[0][j] {
				diff++
			}
		}
		if len(actions[i]) > 0 {
			r.Disagreement = float64(diff) / float64(len(actions[i]))
		}
		if model != nil {
			ev, err := model.evaluate(p)
			if err != nil {
				return err
			}
			r.OptimalValue, r.PolicyValue, r.Suboptimality = &ev.OptimalValue, &ev.PolicyValue, &ev.Suboptimality
			if !math.IsNaN(ev.ValueGap) {
				r.ValueGap = &ev.ValueGap
			}
		}
		if evaluate {
			rep, err := eval.FromData(ctx, solve.NewSolver(ds.Stats, s), p, s, eval.Options{Workers: s.Workers})
			if err != nil {
				return fmt.Errorf("%s: %w", p.Method, err)
			}
			v := valuesDoc(rep)
			r.Evaluation = &v
		}
		rows = append(rows, r)
	}
	var observed []evalObserved
	if evaluate {
		observed = observedDoc(eval.ObservedCare(ds.Table, observedBootstrap, observedSeed, 0.95))
	}
	// The policy files are independent: write them in parallel, report
	// the first method's error.
	errs := make([]error, len(policies))
	var wg sync.WaitGroup
	workers := s.Workers
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
	js, err := json.MarshalIndent(struct {
		Methods  []compareRow   `json:"methods"`
		Observed []evalObserved `json:"observed,omitempty"`
	}{rows, observed}, "", "  ")
	if err != nil {
		return err
	}
	if err := fileio.WriteAtomic(filepath.Join(dir, "compare.json"), func(w io.Writer) error {
		_, err := w.Write(append(js, '\n'))
		return err
	}); err != nil {
		return err
	}
	if c.Bool("json") {
		_, err := stdout.Write(append(js, '\n'))
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "method\tgroups\tbeta\tvalue est.\tno evidence\tdiffers from sitewise\t")
	if model != nil {
		fmt.Fprint(tw, "robust value\tsuboptimality\t")
	}
	if evaluate {
		fmt.Fprint(tw, "robust value (data)\tbounds\t")
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%s\t%s\t%.1f%%\t", r.Method, r.Groups, r.Beta, optFloat(r.ValueEstimate), pctp(r.NoEvidenceShare), 100*r.Disagreement)
		if model != nil {
			fmt.Fprintf(tw, "%.4f\t%.4f\t", *r.PolicyValue, *r.Suboptimality)
		}
		if e := r.Evaluation; e != nil {
			b := "-"
			if e.Identified != nil {
				b = fmt.Sprintf("[%s, %s]", optFloat(e.Lower), optFloat(e.Upper))
				if !*e.Identified {
					b += " not identified"
				}
			}
			fmt.Fprintf(tw, "%.4g\t%s\t", e.PolicyValue, b)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if evaluate {
		fmt.Fprintln(stdout, "\nrobust value (data): every policy evaluated by eval's robust fitted-Q evaluation on these data, so the column ranks methods;")
		fmt.Fprintln(stdout, "value est. is each method's own estimate and is not comparable across methods.")
		fmt.Fprintln(stdout, "\nobserved care (mean realised return per trajectory):")
		tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "site\treturn\tci low\tci high\t")
		for _, o := range observed {
			fmt.Fprintf(tw, "%s\t%.4g\t%s\t%s\t\n", o.Site, o.Value, optFloat(o.CILow), optFloat(o.CIHigh))
		}
		tw.Flush()
	}
	fmt.Fprintf(stdout, "\npolicies and compare.json in %s\n", dir)
	for _, w := range append(warnings, methodWarnings...) {
		fmt.Fprintf(stderr, "grmdp: warning: %s\n", w)
	}
	return nil
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
