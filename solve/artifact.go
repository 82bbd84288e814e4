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
// the key "grmdp.policy". [Policy.ArtifactRows] makes it and [FromRows] reads it back;
// io/policyio stores it as a Parquet file (the rows as its rows, the
// metadata as its key-value metadata).

// metaKey is the artifact's metadata key holding a policy's header (every
// field but the per-step vectors) as JSON.
const metaKey = "grmdp.policy"

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
	return rows, map[string]string{metaKey: string(js)}, nil
}

// FromRows rebuilds a policy from artifact rows and metadata, checking that
// every vector has the length the header promises. name is used in errors.
func FromRows(name string, rows []ArtifactRow, meta map[string]string) (*Policy, error) {
	p, err := decodeHeader(meta)
	if err == nil {
		err = p.readRows(rows)
	}
	if err == nil {
		err = p.checkComplete()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrBadPolicy, err)
	}
	return p, nil
}

// decodeHeader reads the policy header from the artifact metadata and checks
// it, leaving each run with an empty coefficient slot per step.
func decodeHeader(meta map[string]string) (*Policy, error) {
	js, ok := meta[metaKey]
	if !ok {
		return nil, fmt.Errorf("no %q metadata: not a grmdp policy", metaKey)
	}
	p := &Policy{}
	h := header{Policy: p}
	if err := json.Unmarshal([]byte(js), &h); err != nil {
		return nil, fmt.Errorf("metadata: %v", err)
	}
	p.ValueEstimate = math.NaN()
	if h.ValueEstimate != nil {
		p.ValueEstimate = *h.ValueEstimate
	}
	if h.Format != 1 {
		return nil, fmt.Errorf("format %d, this grmdp reads format 1", h.Format)
	}
	if err := p.checkShape(); err != nil {
		return nil, err
	}
	if err := p.checkSettings(); err != nil {
		return nil, err
	}
	if p.BlockLabels != nil && len(p.BlockLabels) != p.D {
		return nil, fmt.Errorf("%d block labels for d=%d", len(p.BlockLabels), p.D)
	}
	if err := p.setRuns(h.RunsHeader); err != nil {
		return nil, err
	}
	return p, nil
}

// checkShape checks the header's method and sizes against its feature map
// and action labels.
func (p *Policy) checkShape() error {
	if _, err := ParseMethod(string(p.Method)); err != nil {
		return err
	}
	if p.H < 1 || p.A < 1 || p.D < 1 || p.H > 1<<15 || p.A > 1<<24 || p.D > 1<<28 {
		return fmt.Errorf("implausible sizes H=%d A=%d d=%d", p.H, p.A, p.D)
	}
	if p.Map.Kind == features.Binned || p.Map.Kind == features.SoftBinned {
		if err := features.CheckBins(p.Map.Kind, p.Map.Bins); err != nil {
			return err
		}
	}
	if p.Map.A != p.A || !mapHasDim(p.Map, p.D) {
		return fmt.Errorf("the feature map does not match d=%d, A=%d", p.D, p.A)
	}
	if p.ActionLabels != nil && len(p.ActionLabels) != p.A {
		return fmt.Errorf("%d action labels for A=%d", len(p.ActionLabels), p.A)
	}
	if want := p.Map.Width(); len(p.Map.StateColumns) != want && !(p.Map.Kind == features.Precomputed && len(p.Map.StateColumns) == 1) {
		return fmt.Errorf("%d state columns for the %s map, want %d", len(p.Map.StateColumns), p.Map.Kind, want)
	}
	return nil
}

// mapHasDim reports whether the feature map has dimension d; a map too
// malformed to report its dimension (Dim panics) has none.
func mapHasDim(m features.Map, d int) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return m.Dim() == d
}

// checkSettings checks the header's tuning parameters and fallback rule.
func (p *Policy) checkSettings() error {
	for _, v := range []struct {
		name string
		x    float64
	}{{"lambda", p.Lambda}, {"beta", p.Beta}, {"c", p.C}, {"xi", p.Xi}} {
		if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
			return fmt.Errorf("%s = %v, want a finite nonnegative number", v.name, v.x)
		}
	}
	switch p.Fallback {
	case "", FallbackBehaviour, FallbackLowest:
	default:
		return fmt.Errorf("unknown fallback %q", p.Fallback)
	}
	return nil
}

// setRuns installs the header's runs, checking each run's beta and giving
// it an empty coefficient slot per step for the rows to fill.
func (p *Policy) setRuns(runs []PolicyRun) error {
	p.Runs = runs
	for r := range p.Runs {
		if b := p.Runs[r].Beta; math.IsNaN(b) || math.IsInf(b, 0) || b < 0 {
			return fmt.Errorf("run %d has beta %v, want a finite nonnegative number", r, b)
		}
		p.Runs[r].Steps = make([]StepCoef, p.H)
	}
	if p.Method != Behaviour && len(p.Runs) == 0 {
		return errors.New("no runs")
	}
	return nil
}

// readRows checks each artifact row and stores it in the policy: a run's
// vectors at one step, or (group -1) the step's behaviour table.
func (p *Policy) readRows(rows []ArtifactRow) error {
	seen := map[[2]int32]bool{}
	linvSize := p.Layout().Size()
	for _, row := range rows {
		if row.Step < 1 || int(row.Step) > p.H {
			return fmt.Errorf("row for step %d outside 1..%d", row.Step, p.H)
		}
		key := [2]int32{row.Step, row.Group}
		if seen[key] {
			return fmt.Errorf("two rows for step %d, group %d", row.Step, row.Group)
		}
		seen[key] = true
		var err error
		if row.Group == -1 {
			err = p.readBehaviourRow(row)
		} else {
			err = p.readRunRow(row, linvSize)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readBehaviourRow checks and stores a step's behaviour table and, if the
// row has them, its evidence counts.
func (p *Policy) readBehaviourRow(row ArtifactRow) error {
	if p.BehaviourAction == nil {
		p.BehaviourAction = make([][]int32, p.H)
	}
	for _, a := range row.Fallback {
		if a < 0 || int(a) >= p.A {
			return fmt.Errorf("step %d: behaviour action %d outside 0..%d", row.Step, a, p.A-1)
		}
	}
	S, discrete := BehaviourCells(&p.Map)
	// A binned policy may also hold one action per step (the step's most
	// frequent action, as binned policies were written before the
	// fallback was chosen per cell).
	oneForBinned := p.Map.Kind == features.Binned && len(row.Fallback) == 1
	if want := map[bool]int{true: S, false: 1}[discrete]; len(row.Fallback) != want && !oneForBinned {
		return fmt.Errorf("step %d: behaviour table of length %d, want %d", row.Step, len(row.Fallback), want)
	}
	p.BehaviourAction[row.Step-1] = row.Fallback
	if row.Counts == nil {
		return nil
	}
	return p.readEvidenceCounts(row)
}

// readEvidenceCounts checks and stores a step's evidence counts, one per
// (cell, action) of a tabular or binned map.
func (p *Policy) readEvidenceCounts(row ArtifactRow) error {
	if !HasEvidenceCounts(p.Map.Kind) || len(row.Counts) != p.D {
		return fmt.Errorf("step %d: %d evidence counts for the %s map, want %d", row.Step, len(row.Counts), p.Map.Kind, p.D)
	}
	for i, x := range row.Counts {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("step %d: evidence count %d is %v, want a finite number >= 0", row.Step, i, x)
		}
	}
	if p.EvidenceCounts == nil {
		p.EvidenceCounts = make([][]float64, p.H)
	}
	p.EvidenceCounts[row.Step-1] = row.Counts
	return nil
}

// readRunRow checks and stores one run's vectors w, m and (PEVI)
// Lambda^{-1}, of linvSize entries, at one step.
func (p *Policy) readRunRow(row ArtifactRow, linvSize int) error {
	if row.Group < 0 || int(row.Group) >= len(p.Runs) {
		return fmt.Errorf("row for run %d of %d", row.Group, len(p.Runs))
	}
	usesPEVI := p.penalty() == pevi
	if len(row.W) != p.D || (!usesPEVI && len(row.M) != p.D) || (usesPEVI && len(row.Linv) != linvSize) {
		return fmt.Errorf("step %d, run %d: vectors of length w=%d m=%d linv=%d, want d=%d", row.Step, row.Group, len(row.W), len(row.M), len(row.Linv), p.D)
	}
	for _, vec := range []struct {
		name string
		v    []float64
	}{{"w", row.W}, {"m", row.M}, {"linv", row.Linv}} {
		for i, x := range vec.v {
			if math.IsNaN(x) || math.IsInf(x, 0) || (vec.name == "m" && x < 0) {
				return fmt.Errorf("step %d, run %d: %s[%d] = %v, want a finite number%s", row.Step, row.Group, vec.name, i, x,
					map[bool]string{true: " >= 0", false: ""}[vec.name == "m"])
			}
		}
	}
	c := &p.Runs[row.Group].Steps[row.Step-1]
	c.W, c.M, c.Linv = row.W, row.M, row.Linv
	return nil
}

// Check checks that a policy assembled from its parts (coefficients
// solved by [Round]s, say) is complete: every run has coefficients at
// every step, and evidence counts and behaviour tables, where present or
// needed, cover every step. It readies the runs for evaluation, so call it
// before evaluating such a policy; policies from [Solver.Solve] and
// [FromRows] are ready.
func (p *Policy) Check() error {
	if err := p.checkComplete(); err != nil {
		return fmt.Errorf("solve: %w", err)
	}
	return nil
}

// checkComplete checks that every run has a row for every step (setting
// each step's penalized coefficients), that evidence counts and behaviour
// tables, where present or needed, cover every step.
func (p *Policy) checkComplete() error {
	usesPEVI := p.penalty() == pevi
	for r, run := range p.Runs {
		for h := range run.Steps {
			c := &run.Steps[h]
			if c.W == nil {
				return fmt.Errorf("run %d has no row for step %d", r, h+1)
			}
			if !usesPEVI {
				c.setPenalized(run.Beta)
			}
		}
	}
	for h, c := range p.EvidenceCounts {
		if c == nil {
			return fmt.Errorf("evidence counts for some steps but not step %d", h+1)
		}
	}
	if p.Method == Behaviour || p.Fallback == FallbackBehaviour {
		for h := range p.BehaviourAction {
			if p.BehaviourAction[h] == nil {
				return fmt.Errorf("no behaviour table for step %d", h+1)
			}
		}
		if p.BehaviourAction == nil {
			return errors.New("no behaviour table")
		}
	}
	return nil
}
