package traj

import "fmt"

// RoleError is a column named for two roles: Roles are the two, each
// "site", "traj", "step", "action", "reward" (the [Columns]) or "state"
// (a state column), and both "state" when the state columns name it
// twice.
type RoleError struct {
	Column string
	Roles  [2]string
}

func (e *RoleError) Error() string {
	if e.Roles[0] == e.Roles[1] {
		return fmt.Sprintf("traj: the %s columns name column %q twice", e.Roles[0], e.Column)
	}
	return fmt.Sprintf("traj: the %s and %s columns are both %q: each column plays one role", e.Roles[0], e.Roles[1], e.Column)
}

// Check returns a [*RoleError] when a column plays two roles among c (with
// its defaults for empty names) and the state columns state.
func (c Columns) Check(state []string) error {
	c = c.WithDefaults()
	role := map[string]string{}
	for _, r := range [...]struct{ role, col string }{{"site", c.Site}, {"traj", c.Traj}, {"step", c.Step},
		{"action", c.Action}, {"reward", c.Reward}} {
		if prev, ok := role[r.col]; ok {
			return &RoleError{Column: r.col, Roles: [2]string{prev, r.role}}
		}
		role[r.col] = r.role
	}
	for _, col := range state {
		if prev, ok := role[col]; ok {
			return &RoleError{Column: col, Roles: [2]string{prev, "state"}}
		}
		role[col] = "state"
	}
	return nil
}
