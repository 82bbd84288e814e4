package solve

import (
	"encoding/json"
	"math"

	"github.com/grmdp/grmdp/traj"
)

// View is a policy as a reader sees it (grmdp show --json): its settings
// and provenance, its per-step vectors, and its tables for the chosen
// steps ([Policy.CoefficientTables], [Policy.Decisions]).
type View struct {
	Method        string            `json:"method"`
	Features      string            `json:"features"`
	FeatureMap    any               `json:"feature_map"`
	H             int               `json:"H"`
	D             int               `json:"d"`
	Actions       int               `json:"actions"`
	ActionLabels  []string          `json:"action_labels"`
	Lambda        float64           `json:"lambda"`
	Beta          float64           `json:"beta"`
	C             float64           `json:"c"`
	Xi            float64           `json:"xi"`
	BetaGiven     bool              `json:"beta_given"`
	Groups        []Group           `json:"groups"`
	Fallback      string            `json:"fallback"`
	ValueEstimate *float64          `json:"value_estimate"`
	Version       string            `json:"version"`
	Settings      map[string]string `json:"settings"`
	Sources       []traj.Source     `json:"sources"`
	Warnings      []string          `json:"warnings"`
	// Selection is the record of the cross-fitted choice of c (solve --c
	// auto), absent otherwise.
	Selection json.RawMessage `json:"selection,omitempty"`
	Steps     []ViewStep      `json:"steps"`
	// Coefficients holds, per chosen step (and pass), w and m as tables
	// by state feature (rows) and action (columns).
	Coefficients []CoefficientTable `json:"coefficients"`
	// Decisions holds, for tabular and binned maps, the recommended action
	// per state cell and chosen step with its evidence count; null for
	// other maps.
	Decisions          []Decision `json:"decisions"`
	DecisionsTruncated int        `json:"decisions_truncated,omitempty"`
}

// ViewStep is a policy's vectors at one step.
type ViewStep struct {
	Step int `json:"step"`
	// W is null for pevi-avg and pevi-min, whose per-site vectors are in Runs.
	W    []float64 `json:"w"`
	M    []float64 `json:"m,omitempty"`
	Linv []float64 `json:"linv,omitempty"`
	Runs []ViewRun `json:"runs,omitempty"`
	// Behaviour holds the data's most frequent action per state (or at the
	// step, or over all steps at a step without counts) used by the
	// behaviour fallback.
	Behaviour []int32 `json:"behaviour,omitempty"`
}

// ViewRun is one site's pass of pevi-avg or pevi-min at one step.
type ViewRun struct {
	Group string    `json:"group"`
	Beta  float64   `json:"beta"`
	W     []float64 `json:"w"`
	Linv  []float64 `json:"linv"`
}

// View returns p as a reader sees it, with the tables of the given steps
// at most maxRows rows each (0: all).
func (p *Policy) View(steps []int, maxRows int) *View {
	v := &View{
		Method: string(p.Method), Features: p.Map.Kind.String(), FeatureMap: p.Map, H: p.H, D: p.D, Actions: p.A,
		ActionLabels: p.ActionLabels, Lambda: p.Lambda, Beta: p.Beta, C: p.C, Xi: p.Xi, BetaGiven: p.BetaGiven,
		Groups: p.Groups, Fallback: string(p.Fallback), Version: p.Version, Settings: p.Settings, Sources: p.Sources,
		Warnings: p.Warnings, Selection: p.Selection,
	}
	if v.ActionLabels == nil {
		v.ActionLabels = []string{}
	}
	if v.Warnings == nil {
		v.Warnings = []string{}
	}
	if !math.IsNaN(p.ValueEstimate) {
		x := p.ValueEstimate
		v.ValueEstimate = &x
	}
	for h := 1; h <= p.H; h++ {
		s := ViewStep{Step: h}
		if p.BehaviourAction != nil {
			s.Behaviour = p.BehaviourAction[h-1]
		}
		switch {
		case len(p.Runs) == 1:
			c := p.Runs[0].Steps[h-1]
			s.W, s.M, s.Linv = c.W, c.M, c.Linv
		case len(p.Runs) > 1:
			for _, r := range p.Runs {
				c := r.Steps[h-1]
				s.Runs = append(s.Runs, ViewRun{Group: r.Group, Beta: r.Beta, W: c.W, Linv: c.Linv})
			}
		}
		v.Steps = append(v.Steps, s)
	}
	v.Coefficients = p.CoefficientTables(steps, maxRows)
	v.Decisions, v.DecisionsTruncated = p.Decisions(steps, maxRows)
	return v
}

// StepRange is the smallest, mean and largest coefficient of a policy's
// first pass at one step: of w (nu for a pass without a penalty) and,
// where the pass has one, of the penalty m (HasM).
type StepRange struct {
	Step              int
	MinW, MeanW, MaxW float64
	HasM              bool
	MinM, MeanM, MaxM float64
}

// StepRanges returns the [StepRange] of every step of p's first pass; nil
// for a policy without passes (behaviour cloning).
func (p *Policy) StepRanges() []StepRange {
	if len(p.Runs) == 0 {
		return nil
	}
	var out []StepRange
	for h := 1; h <= p.H; h++ {
		c := p.Runs[0].Steps[h-1]
		r := StepRange{Step: h, HasM: len(c.M) > 0}
		r.MinW, r.MeanW, r.MaxW = rangeOf(c.W)
		if r.HasM {
			r.MinM, r.MeanM, r.MaxM = rangeOf(c.M)
		}
		out = append(out, r)
	}
	return out
}

func rangeOf(x []float64) (lo, mean, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
		mean += v
	}
	return lo, mean / float64(len(x)), hi
}
