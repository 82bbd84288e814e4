package features

import (
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
