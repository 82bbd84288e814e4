package solve

// DiagnoseSums returns the diagnostics of policy p over sites (in the
// solve's order) from sums alone, as a coordinator that holds no row has
// them: noev[k] and rows[k] are site k's weighted rows without evidence
// and its weighted rows (every step), coverage[k][i] its rows whose
// feature i is nonzero, empty the (site, step) cells without rows, and
// p's steps carry the condition numbers of their Lambda_h^g. The penalty's
// share of the value range is not among them (nil): [DiagnoseSampled]
// estimates it at every 8th row of the whole table.
func DiagnoseSums(p *Policy, sites []string, H int, noev, rows []float64, coverage [][]float64, empty []Cell) *Diagnostics {
	dg := &Diagnostics{NoEvidenceBySite: map[string]float64{}, EmptyCells: empty}
	dg.finishFrom(sites, &p.Map, p.A, H, coverage, p, noev, rows)
	return dg
}
