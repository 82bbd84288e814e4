package dataset

import (
	"strconv"

	"github.com/grmdp/grmdp/traj"
)

// maxHorizon is the largest step the reader holds (traj.Builder).
const maxHorizon = 1<<15 - 1

// Check returns an error on the first setting of o that cannot be used,
// before any data are read: an [*OptionError] on a negative or too large
// Horizon or Actions, a features.SpecError on Map (features.Spec.Check), a
// [*traj.RoleError] on a column named for two roles (the map's default
// state columns included), a solve.SettingError on Disclosure.
func (o *Options) Check() error {
	for _, f := range []struct {
		option string
		v      int
	}{{"Horizon", o.Horizon}, {"Actions", o.Actions}} {
		if f.v < 0 {
			return optionErr(f.option, strconv.Itoa(f.v), "must not be negative")
		}
	}
	if o.Horizon > maxHorizon {
		return optionErr("Horizon", strconv.Itoa(o.Horizon), "above the largest step the reader holds, %d", maxHorizon)
	}
	if o.Actions > traj.MaxActions {
		return optionErr("Actions", strconv.Itoa(o.Actions), "above the most actions a table holds, %d", traj.MaxActions)
	}
	if err := o.Map.Check(); err != nil {
		return err
	}
	sp, _ := o.Map.WithDefaultState()
	if err := o.Columns.Check(sp.StateColumns); err != nil {
		return err
	}
	return o.Disclosure.Check()
}
