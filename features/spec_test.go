package features

import (
	"errors"
	"slices"
	"testing"
)

func TestWithDefaultState(t *testing.T) {
	for _, tc := range []struct {
		sp      Spec
		want    []string
		wantErr bool
	}{
		{Spec{Kind: Tabular}, []string{"state"}, false},
		{Spec{Kind: Indicator}, []string{"state"}, false},
		{Spec{Kind: Precomputed}, []string{"phi"}, false},
		{Spec{Kind: Tabular, StateColumns: []string{"s"}}, []string{"s"}, false},
		{Spec{Kind: ActionBlock}, nil, false},
		{Spec{Kind: Tabular, StateColumns: []string{"a", "b"}}, nil, true},
		{Spec{Kind: Precomputed, StateColumns: []string{"a", "b"}}, nil, true},
	} {
		got, err := tc.sp.WithDefaultState()
		if (err != nil) != tc.wantErr {
			t.Errorf("%v %v: got error %v, want error %v", tc.sp.Kind, tc.sp.StateColumns, err, tc.wantErr)
			continue
		}
		if err == nil && !slices.Equal(got.StateColumns, tc.want) {
			t.Errorf("%v %v: got columns %v, want %v", tc.sp.Kind, tc.sp.StateColumns, got.StateColumns, tc.want)
		}
	}
}

func TestSpecCheck(t *testing.T) {
	for _, c := range []struct {
		sp    Spec
		field string
	}{
		{Spec{Kind: ActionBlock}, ""},
		{Spec{Kind: Tabular, S: -1}, "S"},
		{Spec{Kind: Binned, Bins: []Bins{{Column: "a", Cuts: []float64{1}}, {Column: "a", Cuts: []float64{2}}}}, "Bins"},
		{Spec{Kind: Binned, Bins: []Bins{{Column: "a", Quantiles: 3}}}, ""},
		{Spec{Kind: Tabular, StateColumns: []string{"a", "b"}}, "StateColumns"},
	} {
		err := c.sp.Check()
		got := ""
		if se := (*SpecError)(nil); errors.As(err, &se) {
			got = se.Field
		} else if err != nil {
			got = "?"
		}
		if got != c.field {
			t.Errorf("%+v: got %v, want an error on %q", c.sp, err, c.field)
		}
	}
}

func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		kind        string
		state, bins []string
		field       string
		want        []string
	}{
		{"action-block", []string{"s1", "s2"}, nil, "", []string{"s1", "s2"}},
		{"tabular", nil, nil, "", nil},
		{"nope", nil, nil, "Kind", nil},
		{"indicator", []string{"a", ""}, nil, "StateColumns", nil},
		{"tabular", nil, []string{"x:1"}, "Bins", nil},
		{"binned", nil, nil, "Bins", nil},
		{"binned", nil, []string{"x:2,1"}, "Bins", nil},
		{"soft-binned", nil, []string{"x:1,2", "y:q3"}, "", []string{"x", "y"}},
		{"binned", []string{"x"}, []string{"x:1"}, "", []string{"x"}},
		{"binned", []string{"y"}, []string{"x:1"}, "StateColumns", nil},
	} {
		sp, err := ParseSpec(c.kind, c.state, c.bins)
		got := ""
		if se := (*SpecError)(nil); errors.As(err, &se) {
			got = se.Field
		} else if err != nil {
			got = "?"
		}
		if got != c.field || err == nil && !slices.Equal(sp.StateColumns, c.want) {
			t.Errorf("%s %v %v: got %+v, %v; want columns %v or an error on %q", c.kind, c.state, c.bins, sp, err, c.want, c.field)
		}
	}
}

// TestSpecErrorChains: a SpecError wraps the error that says what is
// wrong, the same one ParseKind, CheckBins and WithDefaultState wrap.
func TestSpecErrorChains(t *testing.T) {
	_, kerr := ParseKind("nope")
	_, err := ParseSpec("nope", nil, nil)
	bad := Spec{Kind: Tabular, StateColumns: []string{"a", "b"}}
	_, derr := bad.WithDefaultState()
	bins := []Bins{{Column: "a", Cuts: []float64{1}}, {Column: "a", Cuts: []float64{2}}}
	for _, c := range []struct{ lib, spec error }{
		{kerr, err},
		{derr, bad.Check()},
		{CheckBins(Binned, bins), Spec{Kind: Binned, Bins: bins}.Check()},
	} {
		inner, want := errors.Unwrap(c.spec), errors.Unwrap(c.lib)
		if inner == nil || want == nil || inner.Error() != want.Error() {
			t.Errorf("%v wraps %v, want what %v wraps", c.spec, inner, c.lib)
		}
	}
}

// TestParseSpecSentinels: the map and bins that do not go together, and an
// empty state column, are told by the errors they wrap.
func TestParseSpecSentinels(t *testing.T) {
	for _, c := range []struct {
		kind        string
		state, bins []string
		want        error
	}{
		{"indicator", []string{"a", ""}, nil, ErrEmptyColumn},
		{"tabular", nil, []string{"x:1"}, ErrUnusedBins},
		{"binned", nil, nil, ErrMissingBins},
		{"soft-binned", nil, nil, ErrMissingBins},
	} {
		if _, err := ParseSpec(c.kind, c.state, c.bins); !errors.Is(err, c.want) {
			t.Errorf("%s %v %v: got %v, want one wrapping %v", c.kind, c.state, c.bins, err, c.want)
		}
	}
}
