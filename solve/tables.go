package solve

import (
	"math"
	"strconv"

	"github.com/grmdp/grmdp/features"
)

// The tables that make a policy readable: its coefficients by state
// feature (row) and action (column), and, for tabular and binned maps, the
// recommended action in every state cell with the evidence behind it.

// CoefficientTable is one run's coefficients at one step as a table: W[r][c]
// and (Algorithm 1's featurewise penalty) M[r][c] by state feature (row)
// and action (column). A precomputed map, whose coordinates every action
// shares, has one column, "all actions".
type CoefficientTable struct {
	Step int `json:"step"`
	// Run names the backward pass: "all", or a site for pevi-avg and
	// pevi-min, which combine one pass per site.
	Run      string      `json:"run"`
	Features []string    `json:"features"`
	Actions  []string    `json:"actions"`
	W        [][]float64 `json:"w"`
	M        [][]float64 `json:"m,omitempty"`
	// Truncated is the number of feature rows left out by the row limit.
	Truncated int `json:"truncated,omitempty"`
}

// Decision is the policy's choice in one state cell at one step.
type Decision struct {
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
	// number at this cell and step with any action. Both are nil for a
	// policy that does not store counts.
	Count *float64 `json:"count"`
	Rows  *float64 `json:"rows"`
}

// coefLayout says how a map's coordinates form a table: rows names the
// state features (a tabular state, an action-block column, a binned cell,
// a soft-binned centre), cols the actions, and index(r, c) is the
// coordinate of row r and column c.
type coefLayout struct {
	rows, cols []string
	index      func(r, c int) int
}

// newCoefLayout returns the table layout of p's feature map.
func newCoefLayout(p *Policy) coefLayout {
	m := &p.Map
	A := m.A
	acts := make([]string, p.A)
	for a := range acts {
		acts[a] = p.ActionLabel(a)
	}
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
			rows = append(rows, m.StateColumn(j))
		}
		return coefLayout{rows, acts, func(r, a int) int { return a*m.P + r }}
	case features.Binned:
		for c := 0; c < m.Cells(); c++ {
			rows = append(rows, m.CellLabel(c))
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

// CoefficientTables returns p's coefficient tables at the given steps (in
// order; each in 1..H), one per run and step, each limited to maxRows
// feature rows (0: all). A policy without runs (behaviour cloning) has
// none.
func (p *Policy) CoefficientTables(steps []int, maxRows int) []CoefficientTable {
	out := []CoefficientTable{}
	if len(p.Runs) == 0 {
		return out
	}
	l := newCoefLayout(p)
	n := len(l.rows)
	if maxRows > 0 {
		n = min(n, maxRows)
	}
	for _, h := range steps {
		for _, run := range p.Runs {
			c := run.Steps[h-1]
			t := CoefficientTable{Step: h, Run: run.Group, Features: l.rows[:n], Actions: l.cols, Truncated: len(l.rows) - n}
			t.W = l.pick(c.W, n)
			if len(c.M) > 0 {
				t.M = l.pick(c.M, n)
			}
			out = append(out, t)
		}
	}
	return out
}

// pick arranges the first n rows of coordinates v as the layout's table.
func (l coefLayout) pick(v []float64, n int) [][]float64 {
	out := make([][]float64, n)
	for r := range out {
		out[r] = make([]float64, len(l.cols))
		for c := range l.cols {
			out[r][c] = v[l.index(r, c)]
		}
	}
	return out
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
			names = append(names, m.CellLabel(c))
		}
		return states, names, true
	}
	return nil, nil, false
}

// Decisions returns the recommended action in every state cell of a
// tabular or binned policy at the given steps (in order; each in 1..H),
// at most maxRows cells per step (0: all), and the number of cells left
// out per step. Other maps have no cells: it returns nil, 0.
func (p *Policy) Decisions(steps []int, maxRows int) (out []Decision, truncated int) {
	states, names, ok := decisionStates(&p.Map)
	if !ok {
		return nil, 0
	}
	n := len(states)
	if maxRows > 0 {
		n = min(n, maxRows)
	}
	out = []Decision{}
	q := make([]float64, p.A)
	for _, h := range steps {
		for c := 0; c < n; c++ {
			a, v, ev := p.Act(h, states[c], q)
			d := Decision{Step: h, Cell: c, State: names[c], Action: p.ActionLabel(a), Q: v, Evidence: ev}
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
