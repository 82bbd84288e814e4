package features

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Spec is a feature map as a user names it, before the data fix its sizes:
// the kind, the state columns, the binned maps' cut points and the sizes
// the user gave. [Spec.Map] completes it.
type Spec struct {
	Kind Kind
	// StateColumns names the columns the state is read from.
	StateColumns []string
	// Bins are the binned and soft-binned maps' cut points, one entry per
	// state column; quantile bins must be resolved ([QuantileCuts]) first.
	Bins []Bins
	// S is the tabular map's number of states; 0 takes the data's.
	S int
}

// The errors a [*SpecError] of [ParseSpec] wraps when the map and its
// bins do not go together, and when a state column is named "".
var (
	ErrUnusedBins  = errors.New("for the binned and soft-binned maps only")
	ErrMissingBins = errors.New("needs COL:c1,c2,... or COL:qK for each state column")
	ErrEmptyColumn = errors.New("an empty column name")
)

// ParseSpec returns the map a user names by its kind ([ParseKind]), its
// state columns (nil: the kind's default, see [Spec.WithDefaultState]) and
// the binned maps' cut points, one "COL:..." spec each ([ParseBins]). The
// binned and soft-binned maps need bins and read the columns the bins
// name, which state must then leave out or name alike; the other maps take
// no bins. It returns a [*SpecError] on the field that cannot be used
// ("Kind", "StateColumns" or "Bins"); S is left 0, and [Spec.Check]
// checks the rest.
func ParseSpec(kind string, state, bins []string) (Spec, error) {
	k, err := parseKind(kind)
	if err != nil {
		return Spec{}, &SpecError{Field: "Kind", Err: err}
	}
	if slices.Contains(state, "") {
		return Spec{}, &SpecError{Field: "StateColumns", Value: strings.Join(state, ","), Err: ErrEmptyColumn}
	}
	sp := Spec{Kind: k, StateColumns: state}
	binned := k == Binned || k == SoftBinned
	switch {
	case !binned && len(bins) > 0:
		return Spec{}, &SpecError{Field: "Bins", Err: fmt.Errorf("%w, not %s", ErrUnusedBins, k)}
	case !binned:
		return sp, nil
	case len(bins) == 0:
		return Spec{}, &SpecError{Field: "Bins", Err: fmt.Errorf("the %s map %w", k, ErrMissingBins)}
	}
	var cols []string
	for _, s := range bins {
		b, err := parseBins(s)
		if err != nil {
			return Spec{}, &SpecError{Field: "Bins", Err: fmt.Errorf("bins %q: %v", s, err)}
		}
		sp.Bins, cols = append(sp.Bins, b), append(cols, b.Column)
	}
	if state != nil && !slices.Equal(state, cols) {
		return Spec{}, &SpecError{Field: "StateColumns", Value: strings.Join(state, ","),
			Err: fmt.Errorf("the %s map reads the columns its bins name (%s): name those or none", k, strings.Join(cols, ","))}
	}
	sp.StateColumns = cols
	return sp, nil
}

// Map returns the map sp names for data with a actions whose rows hold
// width state values (the action-block map's p columns, or the
// precomputed map's list of a*d values) and whose largest tabular state
// is states-1. states is read only by a tabular map without S
// ([Spec.NeedsStates]).
func (sp Spec) Map(a, width, states int) Map {
	m := Map{Kind: sp.Kind, A: a, StateColumns: sp.StateColumns}
	switch sp.Kind {
	case Tabular:
		m.S = sp.S
		if m.S == 0 {
			m.S = states
		}
	case ActionBlock:
		m.P = width
	case Precomputed:
		if a > 0 {
			m.D = width / a
		}
	case Binned, SoftBinned:
		m.Bins = sp.Bins
	}
	return m
}

// NeedsStates reports whether [Spec.Map] reads the data's number of
// states: a tabular map whose S is not given.
func (sp Spec) NeedsStates() bool { return sp.Kind == Tabular && sp.S == 0 }

// WithDefaultState returns sp with the state column of the maps that read
// one column given its default when StateColumns is empty: "state" for the
// tabular and indicator maps, "phi" for the precomputed map. It is an
// error for those maps to name other than one column.
func (sp Spec) WithDefaultState() (Spec, error) {
	sp, err := sp.withDefaultState()
	if err != nil {
		return sp, fmt.Errorf("features: %w", err)
	}
	return sp, nil
}

// withDefaultState is [Spec.WithDefaultState] with an error that does not
// name the package.
func (sp Spec) withDefaultState() (Spec, error) {
	def, what := "", ""
	switch sp.Kind {
	case Tabular, Indicator:
		def, what = "state", "integer"
	case Precomputed:
		def, what = "phi", "list"
	default:
		return sp, nil
	}
	if sp.StateColumns == nil {
		sp.StateColumns = []string{def}
	}
	if len(sp.StateColumns) != 1 {
		return sp, fmt.Errorf("the %s map reads one %s column, got %d", sp.Kind, what, len(sp.StateColumns))
	}
	return sp, nil
}

// SpecError is a field of a [Spec] that cannot be used: Field names it
// ("Kind", "S", "Bins", "StateColumns"), Value is the value given (""
// when Err says it), Err says what is wrong. A command line names its own
// flag instead.
type SpecError struct {
	Field, Value string
	Err          error
}

func (e *SpecError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("features: %s %s: %v", e.Field, e.Value, e.Err)
	}
	return fmt.Sprintf("features: %s: %v", e.Field, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Check returns a [*SpecError] on the first field of sp that cannot be
// used: a negative S, explicit Bins that [CheckBins] refuses (quantile
// bins are checked once computed), StateColumns that are not the one
// column a map reads ([Spec.WithDefaultState]).
func (sp Spec) Check() error {
	if sp.S < 0 {
		return &SpecError{Field: "S", Value: fmt.Sprint(sp.S), Err: errors.New("must not be negative")}
	}
	var explicit []Bins
	for _, b := range sp.Bins {
		if b.Cuts != nil {
			explicit = append(explicit, b)
		}
	}
	if len(explicit) > 0 {
		if err := checkBins(sp.Kind, explicit); err != nil {
			return &SpecError{Field: "Bins", Err: err}
		}
	}
	if _, err := sp.withDefaultState(); err != nil {
		return &SpecError{Field: "StateColumns", Err: err}
	}
	return nil
}
