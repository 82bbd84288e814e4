package solve

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/grmdp/grmdp/features"
)

// A policy artifact is a format-free form of a [Policy]: rows of vectors
// ([ArtifactRow]) and key-value metadata holding the header under
// [MetaKey]. [Policy.ArtifactRows] makes it and [FromRows] reads it back;
// io/policyio stores it as a Parquet file (the rows as its rows, the
// metadata as its key-value metadata).

// MetaKey is the artifact's metadata key holding a policy's header (every
// field but the per-step vectors) as JSON.
const MetaKey = "grmdp.policy"

// ArtifactRow is one row of a policy artifact: run Group's vectors w, m
// and Lambda^{-1} (Linv, PEVI only) at one step, or, with Group -1, the
// step's behaviour table (Fallback) and, for tabular and binned maps, its
// evidence counts per (cell, action) ([Policy.EvidenceCounts]).
type ArtifactRow struct {
	Step, Group int32
	W, M, Linv  []float64
	Fallback    []int32
	Counts      []float64
}

// ErrBadPolicy marks a policy file that grmdp cannot use.
var ErrBadPolicy = errors.New("bad policy file")

type header struct {
	*Policy
	ValueEstimate *float64    `json:"value_estimate"`
	RunsHeader    []PolicyRun `json:"runs"`
	Format        int         `json:"format"`
}

// ArtifactRows returns the policy as artifact rows and metadata: one row per (run,
// step) with w, m and Lambda^{-1} (PEVI), and one row per step (group -1)
// with the behaviour table.
func (p *Policy) ArtifactRows() ([]ArtifactRow, map[string]string, error) {
	h := header{Policy: p, RunsHeader: p.Runs, Format: 1}
	if !math.IsNaN(p.ValueEstimate) {
		v := p.ValueEstimate
		h.ValueEstimate = &v
	}
	js, err := json.Marshal(h)
	if err != nil {
		return nil, nil, err
	}
	var rows []ArtifactRow
	for step := 1; step <= p.H; step++ {
		for r, run := range p.Runs {
			c := run.Steps[step-1]
			rows = append(rows, ArtifactRow{Step: int32(step), Group: int32(r), W: c.W, M: c.M, Linv: c.Linv})
		}
		if p.BehaviourAction != nil {
			row := ArtifactRow{Step: int32(step), Group: -1, Fallback: p.BehaviourAction[step-1]}
			if p.EvidenceCounts != nil {
				row.Counts = p.EvidenceCounts[step-1]
			}
			rows = append(rows, row)
		}
	}
	return rows, map[string]string{MetaKey: string(js)}, nil
}

// FromRows rebuilds a policy from artifact rows and metadata, checking that
// every vector has the length the header promises. name is used in errors.
func FromRows(name string, rows []ArtifactRow, meta map[string]string) (*Policy, error) {
	js, ok := meta[MetaKey]
	if !ok {
		return nil, fmt.Errorf("%s: %w: no %q metadata: not a grmdp policy", name, ErrBadPolicy, MetaKey)
	}
	p := &Policy{}
	h := header{Policy: p}
	if err := json.Unmarshal([]byte(js), &h); err != nil {
		return nil, fmt.Errorf("%s: %w: metadata: %v", name, ErrBadPolicy, err)
	}
	p.ValueEstimate = math.NaN()
	if h.ValueEstimate != nil {
		p.ValueEstimate = *h.ValueEstimate
	}
	if h.Format != 1 {
		return nil, fmt.Errorf("%s: %w: format %d, this grmdp reads format 1", name, ErrBadPolicy, h.Format)
	}
	if _, err := ParseMethod(string(p.Method)); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrBadPolicy, err)
	}
	if p.H < 1 || p.A < 1 || p.D < 1 || p.H > 1<<15 || p.A > 1<<24 || p.D > 1<<28 {
		return nil, fmt.Errorf("%s: %w: implausible sizes H=%d A=%d d=%d", name, ErrBadPolicy, p.H, p.A, p.D)
	}
	if p.Map.A != p.A || func() (ok bool) {
		defer func() {
			if recover() != nil {
				ok = true
			}
		}()
		return p.Map.Dim() != p.D
	}() {
		return nil, fmt.Errorf("%s: %w: the feature map does not match d=%d, A=%d", name, ErrBadPolicy, p.D, p.A)
	}
	if p.ActionLabels != nil && len(p.ActionLabels) != p.A {
		return nil, fmt.Errorf("%s: %w: %d action labels for A=%d", name, ErrBadPolicy, len(p.ActionLabels), p.A)
	}
	if want := p.Map.Width(); len(p.Map.StateColumns) != want && !(p.Map.Kind == features.Precomputed && len(p.Map.StateColumns) == 1) {
		return nil, fmt.Errorf("%s: %w: %d state columns for the %s map, want %d", name, ErrBadPolicy, len(p.Map.StateColumns), p.Map.Kind, want)
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"lambda", p.Lambda}, {"beta", p.Beta}, {"c", p.C}, {"xi", p.Xi}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return nil, fmt.Errorf("%s: %w: %s = %v, want a finite nonnegative number", name, ErrBadPolicy, v.name, v.x)
		}
	}
	switch p.Fallback {
	case "", FallbackBehaviour, FallbackLowest:
	default:
		return nil, fmt.Errorf("%s: %w: unknown fallback %q", name, ErrBadPolicy, p.Fallback)
	}
	if p.BlockLabels != nil && len(p.BlockLabels) != p.D {
		return nil, fmt.Errorf("%s: %w: %d block labels for d=%d", name, ErrBadPolicy, len(p.BlockLabels), p.D)
	}
	p.Runs = h.RunsHeader
	for r := range p.Runs {
		if b := p.Runs[r].Beta; math.IsNaN(b) || math.IsInf(b, 0) || b < 0 {
			return nil, fmt.Errorf("%s: %w: run %d has beta %v, want a finite nonnegative number", name, ErrBadPolicy, r, b)
		}
		p.Runs[r].Steps = make([]StepCoef, p.H)
	}
	if p.Method != Behaviour && len(p.Runs) == 0 {
		return nil, fmt.Errorf("%s: %w: no runs", name, ErrBadPolicy)
	}
	seen := map[[2]int32]bool{}
	pevi := p.penalty() == pevi
	size := p.Layout().Size()
	for _, row := range rows {
		if row.Step < 1 || int(row.Step) > p.H {
			return nil, fmt.Errorf("%s: %w: row for step %d outside 1..%d", name, ErrBadPolicy, row.Step, p.H)
		}
		key := [2]int32{row.Step, row.Group}
		if seen[key] {
			return nil, fmt.Errorf("%s: %w: two rows for step %d, group %d", name, ErrBadPolicy, row.Step, row.Group)
		}
		seen[key] = true
		if row.Group == -1 {
			if p.BehaviourAction == nil {
				p.BehaviourAction = make([][]int32, p.H)
			}
			for _, a := range row.Fallback {
				if a < 0 || int(a) >= p.A {
					return nil, fmt.Errorf("%s: %w: step %d: behaviour action %d outside 0..%d", name, ErrBadPolicy, row.Step, a, p.A-1)
				}
			}
			S, discrete := p.Map.Discrete()
			if want := map[bool]int{true: S, false: 1}[discrete]; len(row.Fallback) != want {
				return nil, fmt.Errorf("%s: %w: step %d: behaviour table of length %d, want %d", name, ErrBadPolicy, row.Step, len(row.Fallback), want)
			}
			p.BehaviourAction[row.Step-1] = row.Fallback
			if row.Counts != nil {
				if !HasEvidenceCounts(p.Map.Kind) || len(row.Counts) != p.D {
					return nil, fmt.Errorf("%s: %w: step %d: %d evidence counts for the %s map, want %d", name, ErrBadPolicy, row.Step, len(row.Counts), p.Map.Kind, p.D)
				}
				for i, x := range row.Counts {
					if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
						return nil, fmt.Errorf("%s: %w: step %d: evidence count %d is %v, want a finite number >= 0", name, ErrBadPolicy, row.Step, i, x)
					}
				}
				if p.EvidenceCounts == nil {
					p.EvidenceCounts = make([][]float64, p.H)
				}
				p.EvidenceCounts[row.Step-1] = row.Counts
			}
			continue
		}
		if row.Group < 0 || int(row.Group) >= len(p.Runs) {
			return nil, fmt.Errorf("%s: %w: row for run %d of %d", name, ErrBadPolicy, row.Group, len(p.Runs))
		}
		if len(row.W) != p.D || (!pevi && len(row.M) != p.D) || (pevi && len(row.Linv) != size) {
			return nil, fmt.Errorf("%s: %w: step %d, run %d: vectors of length w=%d m=%d linv=%d, want d=%d", name, ErrBadPolicy, row.Step, row.Group, len(row.W), len(row.M), len(row.Linv), p.D)
		}
		for _, vec := range []struct {
			name string
			v    []float64
		}{{"w", row.W}, {"m", row.M}, {"linv", row.Linv}} {
			for i, x := range vec.v {
				if math.IsNaN(x) || math.IsInf(x, 0) || (vec.name == "m" && x < 0) {
					return nil, fmt.Errorf("%s: %w: step %d, run %d: %s[%d] = %v, want a finite number%s", name, ErrBadPolicy, row.Step, row.Group, vec.name, i, x,
						map[bool]string{true: " >= 0", false: ""}[vec.name == "m"])
				}
			}
		}
		c := &p.Runs[row.Group].Steps[row.Step-1]
		c.W, c.M, c.Linv = row.W, row.M, row.Linv
	}
	for r, run := range p.Runs {
		for h := range run.Steps {
			c := &run.Steps[h]
			if c.W == nil {
				return nil, fmt.Errorf("%s: %w: run %d has no row for step %d", name, ErrBadPolicy, r, h+1)
			}
			if !pevi {
				c.setPenalized(run.Beta)
			}
		}
	}
	for h, c := range p.EvidenceCounts {
		if c == nil {
			return nil, fmt.Errorf("%s: %w: evidence counts for some steps but not step %d", name, ErrBadPolicy, h+1)
		}
	}
	if p.Method == Behaviour || p.Fallback == FallbackBehaviour {
		for h := range p.BehaviourAction {
			if p.BehaviourAction[h] == nil {
				return nil, fmt.Errorf("%s: %w: no behaviour table for step %d", name, ErrBadPolicy, h+1)
			}
		}
		if p.BehaviourAction == nil {
			return nil, fmt.Errorf("%s: %w: no behaviour table", name, ErrBadPolicy)
		}
	}
	return p, nil
}
