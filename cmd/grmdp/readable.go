package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// The tables that make a policy readable: its coefficients by state
// feature (row) and action (column), and, for tabular and binned maps, the
// recommended action in every state cell with the evidence behind it.

// coefLayout says how a map's coordinates form a table: Rows names the
// state features (a tabular state, an action-block column, a binned cell,
// a soft-binned centre), Cols the actions (one "all actions" column for a
// precomputed map, whose coordinates are shared by every action), and
// Index(r, c) is the coordinate of row r and column c.
type coefLayout struct {
	Rows, Cols []string
	Index      func(r, c int) int
}

// actionLabels returns the policy's action labels: its string labels, or
// the integers 0..A-1.
func actionLabels(p *solve.Policy) []string {
	out := make([]string, p.A)
	for a := range out {
		out[a] = p.ActionLabel(a)
	}
	return out
}

// newCoefLayout returns the table layout of p's feature map.
func newCoefLayout(p *solve.Policy) coefLayout {
	m := &p.Map
	A := m.A
	acts := actionLabels(p)
	var rows []string
	switch m.Kind {
	case features.Tabular:
		for s := 0; s < m.S; s++ {
			rows = append(rows, "s"+strconv.Itoa(s))
		}
		return coefLayout{rows, acts, func(r, a int) int { return r*A + a }}
	case features.Indicator:
		// phi(0, a) = e_a; states 1 and 2 share one coordinate for every
		// action.
		return coefLayout{[]string{"s0", "s1", "s2"}, acts, func(r, a int) int {
			if r == 0 {
				return a
			}
			return A + r - 1
		}}
	case features.ActionBlock:
		for j := 0; j < m.P; j++ {
			rows = append(rows, stateColumnName(m, j))
		}
		return coefLayout{rows, acts, func(r, a int) int { return a*m.P + r }}
	case features.Binned:
		for c := 0; c < m.Cells(); c++ {
			rows = append(rows, cellLabel(m, c))
		}
		return coefLayout{rows, acts, func(r, a int) int { return r*A + a }}
	case features.SoftBinned:
		for _, b := range m.Bins {
			for _, c := range b.Cuts {
				rows = append(rows, b.Column+"~"+strconv.FormatFloat(c, 'g', 6, 64))
			}
		}
		k := len(rows)
		return coefLayout{rows, acts, func(r, a int) int { return a*k + r }}
	}
	for i := 0; i < p.D; i++ {
		rows = append(rows, "phi"+strconv.Itoa(i))
	}
	return coefLayout{rows, []string{"all actions"}, func(r, _ int) int { return r }}
}

// stateColumnName names action-block column j: its data column, or sJ+1.
func stateColumnName(m *features.Map, j int) string {
	if j < len(m.StateColumns) {
		return m.StateColumns[j]
	}
	return "s" + strconv.Itoa(j+1)
}

// coefTable is one run's coefficients at one step, as a table: W[r][c] and
// (Algorithm 1's featurewise penalty) M[r][c] by the layout's rows and
// columns.
type coefTable struct {
	Step int `json:"step"`
	// Run names the backward pass: "all", or a site for pevi-avg and
	// pevi-min, which combine one pass per site.
	Run      string      `json:"run"`
	Features []string    `json:"features"`
	Actions  []string    `json:"actions"`
	W        [][]float64 `json:"w"`
	M        [][]float64 `json:"m,omitempty"`
	// Truncated is the number of feature rows left out by --max-rows.
	Truncated int `json:"truncated,omitempty"`
}

// coefficientTables returns p's coefficient tables at the given steps (in
// order), each limited to maxRows feature rows (0: all).
func coefficientTables(p *solve.Policy, steps []int, maxRows int) []coefTable {
	out := []coefTable{}
	if len(p.Runs) == 0 {
		return out
	}
	l := newCoefLayout(p)
	n := len(l.Rows)
	if maxRows > 0 {
		n = min(n, maxRows)
	}
	for _, h := range steps {
		for _, run := range p.Runs {
			c := run.Steps[h-1]
			t := coefTable{Step: h, Run: run.Group, Features: l.Rows[:n], Actions: l.Cols, Truncated: len(l.Rows) - n}
			t.W = pick(l, c.W, n)
			if len(c.M) > 0 {
				t.M = pick(l, c.M, n)
			}
			out = append(out, t)
		}
	}
	return out
}

func pick(l coefLayout, v []float64, n int) [][]float64 {
	out := make([][]float64, n)
	for r := range out {
		out[r] = make([]float64, len(l.Cols))
		for c := range l.Cols {
			out[r][c] = v[l.Index(r, c)]
		}
	}
	return out
}

// decision is the policy's choice in one state cell at one step.
type decision struct {
	Step  int    `json:"step"`
	Cell  int    `json:"cell"`
	State string `json:"state"`
	// Action is the recommended action's label; Q its Qhat_h.
	Action string  `json:"action"`
	Q      float64 `json:"q"`
	// Evidence says whether some action's Qhat_h is positive; without
	// evidence the action is the policy's fallback.
	Evidence bool `json:"evidence"`
	// Count is the evidence count: the (weighted) number of rows, across
	// sites, at this cell and step whose recorded action is the
	// recommended one, the rows behind Qhat_h(cell, action). Rows is the
	// number at this cell and step with any action. Both are null for a
	// policy that does not store counts.
	Count *float64 `json:"count"`
	Rows  *float64 `json:"rows"`
}

// decisionStates returns, for a tabular or binned map, one state vector
// per cell (a value inside each bin) and the cells' names; ok is false
// for other maps.
func decisionStates(m *features.Map) (states [][]float64, names []string, ok bool) {
	switch m.Kind {
	case features.Tabular:
		for s := 0; s < m.S; s++ {
			states = append(states, []float64{float64(s)})
			names = append(names, "s"+strconv.Itoa(s))
		}
		return states, names, true
	case features.Binned:
		for c := 0; c < m.Cells(); c++ {
			bins := m.CellBins(c)
			st := make([]float64, len(bins))
			for j, b := range bins {
				cuts := m.Bins[j].Cuts
				if b < len(cuts) {
					st[j] = cuts[b] // the bin's right end belongs to it
				} else {
					st[j] = math.Nextafter(cuts[len(cuts)-1], math.Inf(1))
				}
			}
			states = append(states, st)
			names = append(names, cellLabel(m, c))
		}
		return states, names, true
	}
	return nil, nil, false
}

// decisionTable returns the recommended action in every state cell of a
// tabular or binned policy at the given steps (nil for other maps), at
// most maxRows cells per step (0: all), and the number of cells left out
// per step.
func decisionTable(p *solve.Policy, steps []int, maxRows int) (out []decision, truncated int) {
	states, names, ok := decisionStates(&p.Map)
	if !ok {
		return nil, 0
	}
	n := len(states)
	if maxRows > 0 {
		n = min(n, maxRows)
	}
	out = []decision{}
	q := make([]float64, p.A)
	for _, h := range steps {
		for c := 0; c < n; c++ {
			a, v, ev := p.Act(h, states[c], q)
			d := decision{Step: h, Cell: c, State: names[c], Action: p.ActionLabel(a), Q: v, Evidence: ev}
			if p.EvidenceCounts != nil {
				counts := p.EvidenceCounts[h-1][c*p.A : (c+1)*p.A]
				cnt, rows := counts[a], 0.0
				for _, x := range counts {
					rows += x
				}
				d.Count, d.Rows = &cnt, &rows
			}
			out = append(out, d)
		}
	}
	return out, len(states) - n
}

// printCoefficients prints the coefficient tables.
func printCoefficients(w io.Writer, tabs []coefTable, multiRun bool) {
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
func printDecisions(w io.Writer, ds []decision, truncated int) {
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
