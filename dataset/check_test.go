package dataset

import (
	"errors"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

func TestOptionsCheck(t *testing.T) {
	ab := features.Spec{Kind: features.ActionBlock}
	for _, c := range []struct {
		name string
		o    Options
		want any
	}{
		{"defaults", Options{Map: ab}, nil},
		{"negative horizon", Options{Map: ab, Horizon: -1}, new(*OptionError)},
		{"horizon above the reader's", Options{Map: ab, Horizon: maxHorizon + 1}, new(*OptionError)},
		{"too many actions", Options{Map: ab, Actions: traj.MaxActions + 1}, new(*OptionError)},
		{"negative S", Options{Map: features.Spec{Kind: features.Tabular, S: -1}}, new(*features.SpecError)},
		{"default state column plays a role", Options{Map: features.Spec{Kind: features.Tabular}, Columns: traj.Columns{Site: "state"}}, new(*traj.RoleError)},
		{"negative disclosure", Options{Map: ab, Disclosure: solve.Disclosure{MinRows: -1}}, new(*solve.SettingError)},
	} {
		err := c.o.Check()
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		} else if !errors.As(err, c.want) {
			t.Errorf("%s: got %v, want a %T", c.name, err, c.want)
		}
	}
}

func TestParsePenaltyGrid(t *testing.T) {
	if cs, err := ParsePenaltyGrid("1e-4:1e-2:3"); err != nil || len(cs) != 3 || cs[0] != 1e-4 || cs[2] != 1e-2 {
		t.Errorf("1e-4:1e-2:3: got %v, %v", cs, err)
	}
	for _, s := range []string{"1:2", "2:1:3", "0:1:1", "0:inf:3", "a:1:2"} {
		if _, err := ParsePenaltyGrid(s); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}
