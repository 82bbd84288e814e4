package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

func showCommand() *cli.Command {
	o := &ShowOptions{}
	return withConfig(leaf(&cli.Command{
		Name:      "show",
		Usage:     "print a policy's settings, its coefficients by state feature and action, and its decisions per state cell",
		ArgsUsage: "POLICY",
	}, o, []optionGroup{&o.jsonGroup, own{[]cli.Flag{
		&cli.IntSliceFlag{Name: "step", Usage: "show the tables of step `H` only (repeatable or comma-separated; default: every step)"},
		&cli.IntFlag{Name: "max-rows", Value: defaultShowRows, Usage: "at most `N` rows per table (0: all; --json shows all unless given)"},
	}, func(c *cli.Context) error {
		if c.NArg() != 1 {
			return usagef("show takes one POLICY file, got %d arguments", c.NArg())
		}
		o.Policy, o.Steps, o.MaxRows = c.Args().First(), c.IntSlice("step"), c.Int("max-rows")
		if o.JSON && !c.IsSet("max-rows") {
			o.MaxRows = 0
		}
		if o.MaxRows < 0 {
			return usagef("--max-rows must not be negative, got %d", o.MaxRows)
		}
		return nil
	}}}, runShow))
}

// defaultShowRows bounds show's tables unless --max-rows says otherwise.
const defaultShowRows = 40

// ShowOptions is what the command line of `grmdp show` says.
type ShowOptions struct {
	// Policy is the policy file to show.
	Policy string
	// JSON prints the policy as JSON instead of tables.
	jsonGroup
	// Steps picks the steps of the coefficient and decision tables (nil:
	// every step).
	Steps []int
	// MaxRows bounds the rows of each table (0: all).
	MaxRows int
}

// runShow prints the policy: its settings, the per-step summary, its
// coefficients by state feature and action and, for tabular and binned
// maps, the recommended action per state cell.
func runShow(_ context.Context, o ShowOptions, stdout, _ io.Writer) error {
	p, err := readPolicy(o.Policy)
	if err != nil {
		return err
	}
	steps := o.Steps
	if len(steps) == 0 {
		for h := 1; h <= p.H; h++ {
			steps = append(steps, h)
		}
	}
	for _, h := range steps {
		if h < 1 || h > p.H {
			return usagef("--step %d: the policy has steps 1..%d", h, p.H)
		}
	}
	if o.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(p.View(steps, o.MaxRows))
	}
	return showText(stdout, p, steps, o.MaxRows)
}

func showText(w io.Writer, p *solve.Policy, steps []int, maxRows int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\t%s\n", p.Method)
	fmt.Fprintf(tw, "features\t%s (d = %d, A = %d, H = %d)\n", p.Map.Kind, p.D, p.A, p.H)
	for _, b := range p.Map.Bins {
		fmt.Fprintf(tw, "bins %s\t%s\n", b.Column, b.Describe())
	}
	if p.ActionLabels != nil {
		fmt.Fprintf(tw, "actions\t%v\n", quoteNames(p.ActionLabels))
	}
	fmt.Fprintf(tw, "lambda\t%g\n", p.Lambda)
	if p.BetaGiven {
		fmt.Fprintf(tw, "beta\t%.6g (given)\n", p.Beta)
	} else {
		fmt.Fprintf(tw, "beta\t%.6g (c = %g, xi = %g)\n", p.Beta, p.C, p.Xi)
	}
	fmt.Fprintf(tw, "fallback\t%s\n", p.Fallback)
	for _, g := range p.Groups {
		fmt.Fprintf(tw, "group %s\t%d trajectories, sites %v\n", quoteName(g.Name), g.Trajectories, quoteNames(g.Sites))
	}
	if !math.IsNaN(p.ValueEstimate) {
		fmt.Fprintf(tw, "value estimate\t%.6g\n", p.ValueEstimate)
	}
	fmt.Fprintf(tw, "version\t%s\n", p.Version)
	for _, s := range p.Sources {
		fmt.Fprintf(tw, "source\t%s (%d rows, sha256 %s)\n", quoteName(s.Path), s.Rows, short(s.Fingerprint))
	}
	for _, k := range sortedKeys(p.Settings) {
		fmt.Fprintf(tw, "setting %s\t%s\n", k, quoteName(p.Settings[k]))
	}
	tw.Flush()
	fmt.Fprintln(w)
	if p.Selection != nil {
		if err := printSelection(w, p.Selection); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if err := showSummary(w, p); err != nil {
		return err
	}
	printCoefficients(w, p.CoefficientTables(steps, maxRows), len(p.Runs) > 1)
	ds, truncated := p.Decisions(steps, maxRows)
	printDecisions(w, ds, truncated)
	return nil
}

// showSummary prints the per-step minimum, mean and maximum of the
// coefficients (nothing for behaviour cloning, which has none).
func showSummary(w io.Writer, p *solve.Policy) error {
	rs := p.StepRanges()
	if rs == nil {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(p.Runs) == 1 && rs[0].HasM {
		fmt.Fprintf(tw, "step\tmin w\tmean w\tmax w\tmin m\tmax m\t\n")
	} else {
		fmt.Fprintf(tw, "step\tmin nu\tmean nu\tmax nu\t\t\t\n")
	}
	for _, r := range rs {
		if r.HasM {
			fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t\n", r.Step, r.MinW, r.MeanW, r.MaxW, r.MinM, r.MaxM)
		} else {
			fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t\t\t\n", r.Step, r.MinW, r.MeanW, r.MaxW)
		}
	}
	return tw.Flush()
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// printSelection prints the record of a cross-fitted choice of c (solve
// --c auto): one row per candidate, the chosen one marked.
func printSelection(w io.Writer, js json.RawMessage) error {
	var sel dataset.Selection
	if err := json.Unmarshal(js, &sel); err != nil {
		return fmt.Errorf("the policy's selection record: %w", err)
	}
	fmt.Fprintf(w, "c chosen by cross-fitting (%d folds by trajectory within sites, seed %d): score = lower limit of the %g%% interval of the worst site's held-out value, gain = of the paired difference from the fallback's worst site by wdr (for maps of cell indicators the smaller of it and fqe's); among those with gain above 0 and score at least the fallback's, the most pessimistic whose worst site the held-out data do not show below the best score's wins\n",
		sel.Folds, sel.Seed, 100*sel.Level)
	num := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return fmt.Sprintf("%.4g", *x)
	}
	same := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tc\tlambda\tscore\tgain\tworst site\tno evidence\n")
	for _, c := range sel.Candidates {
		mark, name := "", num(c.C)
		if c.C == nil {
			name = "behaviour fallback"
		}
		if same(c.C, sel.Chosen.C) && same(c.Lambda, sel.Chosen.Lambda) && (c.Stationary == nil || sel.Chosen.Stationary == nil || *c.Stationary == *sel.Chosen.Stationary) {
			mark = "*"
		}
		if c.Stationary != nil && *c.Stationary {
			name += " (stationary)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.1f%%\n", mark, name, num(c.Lambda), num(c.Score), num(c.Gain), quoteName(c.WorstSite), 100*c.NoEvidenceShare)
	}
	return tw.Flush()
}
