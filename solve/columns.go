package solve

import (
	"maps"

	"github.com/grmdp/grmdp/traj"
)

// columnSettings are the keys under which Settings records the data's
// column names, in traj.Columns' order (site, traj, step, action, reward),
// with each column's default name.
var columnSettings = [5]struct{ key, def string }{
	{"site-col", "site"}, {"traj-col", "traj"}, {"step-col", "step"}, {"action-col", "action"}, {"reward-col", "reward"},
}

// columnFields are c's column names in columnSettings' order.
func columnFields(c *traj.Columns) [5]*string {
	return [5]*string{&c.Site, &c.Traj, &c.Step, &c.Action, &c.Reward}
}

// Columns are the data's columns for p: each column given names itself,
// and each left "" is the column p was learned with (recorded in
// Settings), or the default name when p records none.
func (p *Policy) Columns(given traj.Columns) traj.Columns {
	for i, f := range columnFields(&given) {
		if *f == "" {
			*f = p.Settings[columnSettings[i].key]
		}
		if *f == "" {
			*f = columnSettings[i].def
		}
	}
	return given
}

// RecordColumns returns a copy of the recorded settings with the column
// names c (nil stays nil).
func RecordColumns(settings map[string]string, c traj.Columns) map[string]string {
	if settings == nil {
		return nil
	}
	out := maps.Clone(settings)
	for i, f := range columnFields(&c) {
		out[columnSettings[i].key] = *f
	}
	return out
}
