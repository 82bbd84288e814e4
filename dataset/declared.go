package dataset

import (
	"slices"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// Declared are the feature map and sizes a caller states for data that a
// policy is applied to or evaluated on, each zero when not stated. The
// policy decides them ([Options.UsePolicy]); [Declared.Check] refuses a
// statement that contradicts it, so that one batch script can pass the
// same settings to every step.
type Declared struct {
	// Features names the map's kind; State its state columns, comma
	// separated.
	Features, State string
	// Horizon, Actions and NumStates are H, A and the tabular map's S.
	Horizon, Actions, NumStates int
	// Bins are the binned maps' cut points, one "COL:..." spec each
	// (features.ParseBins).
	Bins []string
}

// Check returns an [OptionError] on the first setting of d (named
// "Declared.Features", "Declared.State", "Declared.Bins",
// "Declared.Horizon", "Declared.Actions" or "Declared.NumStates") that
// contradicts p.
func (d Declared) Check(p *solve.Policy) error {
	if f := d.Features; f != "" && f != p.Map.Kind.String() {
		return optionErr("Declared.Features", f, "the policy was learned with the %s map", p.Map.Kind)
	}
	if st, want := d.State, strings.Join(p.Map.StateColumns, ","); st != "" && st != want {
		return optionErr("Declared.State", st, "the policy reads the state columns %s", want)
	}
	if err := d.checkBins(p.Map); err != nil {
		return err
	}
	for _, x := range []struct {
		option    string
		got, want int
	}{{"Declared.Horizon", d.Horizon, p.H}, {"Declared.Actions", d.Actions, p.A}, {"Declared.NumStates", d.NumStates, p.Map.S}} {
		if x.got != 0 && x.got != x.want {
			return optionErr(x.option, strconv.Itoa(x.got), "the policy has %d", x.want)
		}
	}
	return nil
}

// Through reports whether d names a feature map to evaluate p through
// ([Options.UsePolicyThrough]): a kind, and more than p's own kind alone
// (which [Declared.Check] checks against p).
func (d Declared) Through(p *solve.Policy) bool {
	return d.Features != "" && (d.Features != p.Map.Kind.String() || d.State != "" || len(d.Bins) > 0 || d.NumStates != 0)
}

// CheckEval is [Declared.Check] for data p is evaluated on: when d names
// a map to evaluate p through (Through), d's map settings are that map's
// and only its horizon and actions are checked against p.
func (d Declared) CheckEval(p *solve.Policy) error {
	if d.Through(p) {
		d.Features, d.State, d.Bins, d.NumStates = "", "", nil, 0
	}
	return d.Check(p)
}

// checkBins refuses bins that differ from the map's: the same columns in
// the same order, the same K for quantile bins and the same cut points
// otherwise.
func (d Declared) checkBins(m features.Map) error {
	if len(d.Bins) == 0 {
		return nil
	}
	if len(m.Bins) == 0 {
		return optionErr("Declared.Bins", "", "the policy's %s map has no bins", m.Kind)
	}
	same := len(d.Bins) == len(m.Bins)
	for j := 0; same && j < len(d.Bins); j++ {
		b, err := features.ParseBins(d.Bins[j])
		p := m.Bins[j]
		same = err == nil && b.Column == p.Column && b.Quantiles == p.Quantiles && (b.Quantiles > 0 || slices.Equal(b.Cuts, p.Cuts))
	}
	if same {
		return nil
	}
	want := make([]string, len(m.Bins))
	for i, b := range m.Bins {
		want[i] = b.String()
	}
	return optionErr("Declared.Bins", strings.Join(d.Bins, " "), "the policy was learned with bins %s", strings.Join(want, " "))
}
