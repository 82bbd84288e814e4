package dataset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// warnings are the warnings about how the data meet the map: the
// action-block scale check and actions that never appear.
func warnings(o *Options, t *traj.Table, m features.Map) []string {
	var out []string
	for _, w := range []string{missingActionsWarning(o, t), scaleWarning(m, t)} {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// scaleSampleRows bounds the rows the action-block scale check reads.
const scaleSampleRows = 100_000

// scaleWarning is the action-block map's warning when its columns look
// like separate measurements ([features.Scales.Separate]), measured on
// a systematic sample of at most scaleSampleRows rows (every k-th row in
// the table's step, site, trajectory order), or "".
func scaleWarning(m features.Map, t *traj.Table) string {
	if m.Kind != features.ActionBlock || t.Rows == 0 || t.W != m.P {
		return ""
	}
	stride := (t.Rows + scaleSampleRows - 1) / scaleSampleRows
	rows := make([]float64, 0, (t.Rows/stride+1)*t.W)
	// Rows base.. of the table are step h's; next is the next row taken.
	base, next := 0, 0
	for h := range t.Steps {
		st := &t.Steps[h]
		for ; next < base+st.Len(); next += stride {
			i := next - base
			rows = append(rows, st.State[i*t.W:(i+1)*t.W]...)
		}
		base += st.Len()
	}
	why := features.MeasureScales(m.StateColumns, rows).Separate()
	if why == "" {
		return ""
	}
	return fmt.Sprintf("the action-block map divides each row's %s by their sum, but these columns look like separate measurements, not shares of one whole: %s; "+
		"use --features binned or --features soft-binned with --bins to put them on the simplex without mixing their units",
		strings.Join(m.StateColumns, ", "), why)
}

// missingActionsWarning warns when A was inferred from integer actions
// (no number of actions given) and some action in 0..A-1 never appears:
// one miscoded row would otherwise change A, d and beta without a word.
func missingActionsWarning(o *Options, t *traj.Table) string {
	if o.Actions > 0 || t.Actions != nil || t.A == 0 {
		return ""
	}
	seen := make([]bool, t.A)
	for h := range t.Steps {
		for _, a := range t.Steps[h].Action {
			seen[a] = true
		}
	}
	return missingActions(seen)
}

// missingActions words the warning for the actions never seen (seen[a]
// for a in 0..A-1, A = len(seen) from the largest action), or "".
func missingActions(seen []bool) string {
	var miss []string
	first := -1
	for a, ok := range seen {
		if !ok {
			miss = append(miss, strconv.Itoa(a))
			if first < 0 {
				first = a
			}
		}
	}
	if len(miss) == 0 {
		return ""
	}
	A := len(seen)
	what := "action " + miss[0] + " never appears"
	if len(miss) > 1 {
		what = "actions " + strings.Join(miss, ", ") + " never appear"
	}
	hint := "a row may have a miscoded action, or an action was never taken"
	// A run of missing actions just below the largest one: the data look
	// coded 0..first-1 with a stray larger code.
	if first > 0 && first+len(miss) == A-1 {
		hint = fmt.Sprintf("if the data are coded 0..%d, a row has a miscoded action", first-1)
	} else if first == 0 && len(miss) == 1 {
		hint = fmt.Sprintf("if the data are coded 1..%d, recode them 0..%d", A-1, A-2)
	}
	return fmt.Sprintf("%s in the data (A = %d from the largest action %d); %s; set --actions to say A explicitly", what, A, A-1, hint)
}
