package dataset

import (
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Inspection summarises the data: sites, steps, actions, counts, episode
// lengths and coverage.
type Inspection struct {
	Rows         int               `json:"rows"`
	Sites        []SiteSummary     `json:"sites"`
	H            int               `json:"H"`
	Actions      int               `json:"actions"`
	ActionLabels []string          `json:"action_labels"`
	Features     string            `json:"features"`
	D            int               `json:"d"`
	Sources      []traj.Source     `json:"sources"`
	Uncovered    []solve.Uncovered `json:"uncovered"`
	EmptyCells   []solve.Cell      `json:"empty_cells"`
	// FeatureNote says what the map does to the state columns ("" when it
	// reads them as they are; [features.Map.Note]).
	FeatureNote string `json:"feature_note,omitempty"`
	// Cells[k][cell] counts site k's rows per cell of a binned map.
	Cells    [][]int  `json:"cells,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Nulls counts the rows and episodes the null policy removed, per site.
	Nulls []traj.NullCount `json:"nulls,omitempty"`

	// cellLabels name the cells of a binned map, which the text's table
	// of Cells shows.
	cellLabels []string
}

// SiteSummary is one site's part of an [Inspection].
type SiteSummary struct {
	Site         string `json:"site"`
	Trajectories int    `json:"trajectories"`
	// RowsByStep[h-1] is the number of rows at step h.
	RowsByStep []int `json:"rows_by_step"`
	// Lengths[l-1] counts episodes of length l.
	Lengths []int `json:"episode_lengths"`
	// ActionCounts[a] counts rows taking action a.
	ActionCounts []int `json:"action_counts"`
	// Coverage[i] counts rows whose feature i is nonzero.
	Coverage []float64 `json:"coverage"`
}

// Inspect summarises the data (in memory).
func (d *Data) Inspect() (*Inspection, error) {
	if err := d.Held("an inspection"); err != nil {
		return nil, err
	}
	t := d.table
	rep := &Inspection{Rows: t.Rows, H: t.H, Actions: t.A, ActionLabels: t.Actions, Features: d.fmap.Kind.String(), D: d.fmap.Dim(),
		Sources: t.Sources, Nulls: t.Nulls, Warnings: d.warnings, Cells: binnedCells(&d.fmap, t), FeatureNote: d.fmap.Note()}
	if rep.Cells != nil {
		for cell := 0; cell < d.fmap.Cells(); cell++ {
			rep.cellLabels = append(rep.cellLabels, d.fmap.CellLabel(cell))
		}
	}
	if rep.ActionLabels == nil {
		rep.ActionLabels = []string{}
	}
	// Coverage and empty cells come from the diagnostics of a behaviour
	// policy, which needs no solve.
	sv := solve.NewSolver(d.stats, solve.DefaultSettings)
	p, _ := sv.Solve(nil, solve.Problem{Method: solve.Behaviour})
	dg := solve.Diagnose(d.stats, p)
	rep.Uncovered, rep.EmptyCells = dg.Uncovered, dg.EmptyCells
	for k, name := range t.Sites {
		s := SiteSummary{Site: name, Trajectories: t.Trajectories[k], RowsByStep: make([]int, t.H), Lengths: make([]int, t.H), ActionCounts: make([]int, t.A), Coverage: dg.Coverage[k]}
		for h := 1; h <= t.H; h++ {
			st := &t.Steps[h-1]
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				s.RowsByStep[h-1]++
				s.ActionCounts[st.Action[j]]++
				if st.Next[j] < 0 {
					s.Lengths[h-1]++
				}
			}
		}
		rep.Sites = append(rep.Sites, s)
	}
	return rep, nil
}

// binnedCells counts, for a binned map, the rows of each site in each
// cell: counts[k][cell]. Nil for other maps.
func binnedCells(m *features.Map, t *traj.Table) [][]int {
	if m.Kind != features.Binned {
		return nil
	}
	counts := make([][]int, len(t.Sites))
	for k := range counts {
		counts[k] = make([]int, m.Cells())
	}
	for h := range t.Steps {
		st := &t.Steps[h]
		for k := range t.Sites {
			for i := int(st.SiteStart[k]); i < int(st.SiteStart[k+1]); i++ {
				counts[k][m.Cell(st.State[i*t.W:(i+1)*t.W])]++
			}
		}
	}
	return counts
}
