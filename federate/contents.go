package federate

import "fmt"

// contents says in words, one line each, what a value or evaluation
// round's message m sends: its Gram and counts, the right-hand sides of
// each regression, each other vector, and what it withheld.
func (m *Message) contents() []string {
	var out []string
	dc := m.Disclosure
	if m.Gram != nil {
		out = append(out, fmt.Sprintf("%d sums of products of features over step %d's %.0f rows (the Gram matrix, %d features)", len(m.Gram), m.Step, m.StepRows, len(m.Counts)))
	}
	if m.Counts != nil {
		out = append(out, fmt.Sprintf("the number of the step's rows behind each of the %d features (each 0 or at least %d; withheld: %d)", len(m.Counts), dc.MinCount, m.Suppressed))
	}
	for i, name := range m.Runs {
		if i < len(m.RHS) {
			out = append(out, fmt.Sprintf("%d weighted sums of reward plus estimated future value, one per feature, for the evaluation's regression %q", len(m.RHS[i]), name))
		}
	}
	for _, v := range m.Extra {
		out = append(out, sumsInWords(m, v))
	}
	for _, x := range m.Withheld {
		out = append(out, fmt.Sprintf("withheld: %s (from fewer than %d rows, or a count below %d)", x, max(dc.MinRows, dc.MinCount), dc.MinCount))
	}
	return out
}

// sumsInWords says what one vector of a value or evaluation round is.
func sumsInWords(m *Message, v Vec) string {
	switch v.Name {
	case "value":
		what := "the policy's estimated value"
		if m.Kind == KindEval {
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
