package features

import (
	"fmt"
	"strconv"
	"strings"
)

// CellLabel names a binned map's cell by its columns' bins, joined by
// " & " ("lactate<=2 & sofa>6").
func (m *Map) CellLabel(cell int) string {
	var parts []string
	for j, b := range m.CellBins(cell) {
		parts = append(parts, m.Bins[j].BinLabel(b))
	}
	return strings.Join(parts, " & ")
}

// FeatureLabel names coordinate i of a binned map ("a2:lactate<=2 &
// sofa>6", action and cell) or of a soft-binned map ("a2:lactate~4",
// action and centre); other coordinates are "phiI".
func (m *Map) FeatureLabel(i int) string {
	switch m.Kind {
	case Binned:
		return fmt.Sprintf("a%d:%s", i%m.A, m.CellLabel(i/m.A))
	case SoftBinned:
		k := m.Dim() / m.A
		a, c := i/k, i%k
		for _, b := range m.Bins {
			if c < len(b.Cuts) {
				return fmt.Sprintf("a%d:%s~%s", a, b.Column, strconv.FormatFloat(b.Cuts[c], 'g', 6, 64))
			}
			c -= len(b.Cuts)
		}
	}
	return fmt.Sprintf("phi%d", i)
}

// StateColumn names the map's state column j: its data column, or sJ+1
// when the map does not record the columns' names.
func (m *Map) StateColumn(j int) string {
	if j < len(m.StateColumns) {
		return m.StateColumns[j]
	}
	return "s" + strconv.Itoa(j+1)
}

// Note says in one sentence what the map does to its state columns, or ""
// for the maps that read their state as it is.
func (m *Map) Note() string {
	switch m.Kind {
	case ActionBlock:
		cols := strings.Join(m.StateColumns, ", ")
		return fmt.Sprintf("the action-block map divides each row's %s by their sum across those columns (phi(s, a) = s/||s||_1 in action a's block): right for shares of one whole", cols)
	case Binned:
		var parts []string
		for _, b := range m.Bins {
			parts = append(parts, fmt.Sprintf("%s (%d bins)", b.Column, len(b.Cuts)+1))
		}
		return fmt.Sprintf("the binned map cuts %s into %d cells, one feature per cell and action", strings.Join(parts, ", "), m.Cells())
	case SoftBinned:
		var parts []string
		for _, b := range m.Bins {
			parts = append(parts, fmt.Sprintf("%s (%d centres)", b.Column, len(b.Cuts)))
		}
		return fmt.Sprintf("the soft-binned map gives %s triangular memberships and averages them in action a's block", strings.Join(parts, ", "))
	}
	return ""
}

// Describe names the map and says what it does, in one line: "binned:
// cuts lactate (3 bins) into 3 cells, ...", or the kind alone.
func (m *Map) Describe() string {
	if n := m.Note(); n != "" {
		return m.Kind.String() + ": " + strings.TrimPrefix(n, "the "+m.Kind.String()+" map ")
	}
	return m.Kind.String()
}

// Describe says what b's cut points are: "cut points 2, 4", followed by
// "(the data's K-quantiles)" for quantile bins.
func (b Bins) Describe() string {
	parts := make([]string, len(b.Cuts))
	for i, c := range b.Cuts {
		parts[i] = strconv.FormatFloat(c, 'g', -1, 64)
	}
	s := "cut points " + strings.Join(parts, ", ")
	if b.Quantiles > 0 {
		s += fmt.Sprintf(" (the data's %d-quantiles)", b.Quantiles)
	}
	return s
}
