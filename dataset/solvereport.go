package dataset

import (
	"encoding/json"
	"math"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// SolveReport is a solve's result as JSON documents it (`grmdp solve
// --json`, a federated job's solve.json): the policy's settings and every
// diagnostic a reviewer asks about.
type SolveReport struct {
	Policy   string        `json:"policy"`
	Method   string        `json:"method"`
	Features string        `json:"features"`
	H        int           `json:"H"`
	D        int           `json:"d"`
	Actions  int           `json:"actions"`
	Lambda   float64       `json:"lambda"`
	Beta     float64       `json:"beta"`
	Groups   []solve.Group `json:"groups"`
	Fallback string        `json:"fallback"`
	// ValueEstimate is the policy's value estimate (null when it has
	// none or it is not finite).
	ValueEstimate *float64           `json:"value_estimate"`
	Diagnostics   *solve.Diagnostics `json:"diagnostics"`
	Warnings      []string           `json:"warnings"`
	// FeatureNote says what the map does to the state columns.
	FeatureNote string `json:"feature_note,omitempty"`
	// Nulls counts the rows and episodes the null policy removed, per
	// site.
	Nulls []traj.NullCount `json:"nulls,omitempty"`
	// Selection is the record of --c auto's choice ([Selection]), absent
	// otherwise.
	Selection json.RawMessage `json:"selection,omitempty"`

	// runs are the policy's passes, whose betas the text lists when there
	// are several.
	runs []solve.PolicyRun
}

// NewSolveReport is the report of policy p, written at path, with its
// diagnostics and the rows the null policy removed (nil: none).
func NewSolveReport(p *solve.Policy, diag *solve.Diagnostics, path string, nulls []traj.NullCount) *SolveReport {
	r := &SolveReport{Policy: path, Method: string(p.Method), Features: p.Map.Kind.String(), H: p.H, D: p.D, Actions: p.A,
		Lambda: p.Lambda, Beta: p.Beta, Groups: p.Groups, Fallback: string(p.Fallback), Diagnostics: diag,
		Warnings: p.Warnings, FeatureNote: p.Map.Note(), Nulls: nulls, Selection: p.Selection, runs: p.Runs}
	if v := p.ValueEstimate; !math.IsNaN(v) && !math.IsInf(v, 0) {
		r.ValueEstimate = &v
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	return r
}
