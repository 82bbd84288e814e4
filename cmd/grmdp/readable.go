package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/grmdp/grmdp/solve"
)

// printCoefficients prints the coefficient tables.
func printCoefficients(w io.Writer, tabs []solve.CoefficientTable, multiRun bool) {
	for _, t := range tabs {
		run := ""
		if multiRun {
			run = " (site " + t.Run + "'s pass)"
		}
		printMatrix(w, fmt.Sprintf("step %d%s: w, the coefficients of Qhat, by state feature and action:", t.Step, run), t.Features, t.Actions, t.W, t.Truncated)
		if t.M != nil {
			printMatrix(w, fmt.Sprintf("step %d: m, the penalty (beta m is subtracted), by state feature and action:", t.Step), t.Features, t.Actions, t.M, t.Truncated)
		}
	}
}

func printMatrix(w io.Writer, title string, rows, cols []string, v [][]float64, truncated int) {
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "feature\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", quoteName(c))
	}
	fmt.Fprintln(tw)
	for r, name := range rows {
		fmt.Fprintf(tw, "%s\t", quoteName(name))
		for _, x := range v[r] {
			fmt.Fprintf(tw, "%.4g\t", x)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if truncated > 0 {
		fmt.Fprintf(w, "(%d more rows; --max-rows 0 shows all)\n", truncated)
	}
}

// printDecisions prints the decision table, one block per step.
func printDecisions(w io.Writer, ds []solve.Decision, truncated int) {
	for i := 0; i < len(ds); {
		h := ds[i].Step
		fmt.Fprintf(w, "\nstep %d: recommended action per state cell:\n", h)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "state\taction\tQhat\tevidence\tcount\trows\t")
		for ; i < len(ds) && ds[i].Step == h; i++ {
			d := ds[i]
			ev := "yes"
			if !d.Evidence {
				ev = "no (fallback)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\t%s\t%s\t\n", d.State, d.Action, d.Q, ev, optCount(d.Count), optCount(d.Rows))
		}
		tw.Flush()
		if truncated > 0 {
			fmt.Fprintf(w, "(%d more cells; --max-rows 0 shows all)\n", truncated)
		}
	}
	if len(ds) > 0 {
		fmt.Fprintln(w, "count: rows (all sites) at the cell and step whose recorded action is the recommended one, the data behind its Qhat; rows: the cell's rows at that step with any action")
	}
}

func optCount(x *float64) string {
	if x == nil {
		return "-"
	}
	return strconv.FormatFloat(*x, 'g', 6, 64)
}
