package features

import "testing"

// ActionOf names the action that owns a feature, by each map's layout.
func TestActionOf(t *testing.T) {
	for _, c := range []struct {
		m    Map
		i    int
		want int
	}{
		{Map{Kind: Tabular, A: 3, S: 4}, 7, 1},     // e_{s*A+a}: s = 2, a = 1
		{Map{Kind: ActionBlock, A: 4, P: 3}, 7, 2}, // block a of p = 3
		{Map{Kind: Indicator, A: 2}, 1, 1},         // e_a for state 0
		{Map{Kind: Indicator, A: 2}, 2, -1},        // a state feature, every action's
		{Map{Kind: Precomputed, A: 2, D: 5}, 3, -1},
	} {
		if got := c.m.ActionOf(c.i); got != c.want {
			t.Errorf("%v map, feature %d: action %d, want %d", c.m.Kind, c.i, got, c.want)
		}
	}
}
