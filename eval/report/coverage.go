package report

import (
	"fmt"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// CoverageOf counts, per site of st's table and feature of its map, the
// rows that observe it ([solve.Coverage]), labelling each
// feature by its action and state part.
func CoverageOf(st *solve.Stats) *Coverage {
	cov := &Coverage{Sites: st.Table.Sites, Counts: solve.Coverage(st), Actions: st.Table.Actions}
	m := &st.Map
	for i := 0; i < m.Dim(); i++ {
		cov.Features = append(cov.Features, featureLabel(m, i))
		cov.FeatureAction = append(cov.FeatureAction, m.ActionOf(i))
	}
	return cov
}

// featureLabel names feature i for people: its action and state part.
func featureLabel(m *features.Map, i int) string {
	switch m.Kind {
	case features.Tabular:
		return fmt.Sprintf("s%d:a%d", i/m.A, i%m.A)
	case features.ActionBlock:
		return fmt.Sprintf("a%d:%s", i/m.P, m.StateColumns[i%m.P])
	case features.Indicator:
		switch {
		case i < m.A:
			return fmt.Sprintf("s0:a%d", i)
		case i == m.A:
			return "s1"
		default:
			return "s2"
		}
	}
	return m.FeatureLabel(i)
}

// ForResult is the report of the evaluation res of policy p on the data
// whose statistics are st: p's settings and warnings, res's values, exact
// values and agreement, and the coverage of st's features (the caller
// adds the commands).
func ForResult(title string, p *solve.Policy, res *eval.Result, st *solve.Stats) Input {
	in := Input{
		Title: title,
		Policy: PolicyInfo{Method: string(p.Method), Features: p.Map.Describe(), H: p.H, D: p.D, A: p.A, Beta: p.Beta, Lambda: p.Lambda,
			Fallback: string(p.Fallback)},
		Eval:      res.Report,
		Model:     res.Exact,
		Notes:     p.Warnings,
		Agreement: res.Agreement,
		Coverage:  CoverageOf(st),
	}
	for _, g := range p.Groups {
		in.Policy.Groups = append(in.Policy.Groups, g.Name)
	}
	return in
}
