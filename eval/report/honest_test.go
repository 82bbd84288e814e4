package report

import (
	"strings"
	"testing"

	"github.com/grmdp/grmdp/eval"
)

// With identification bounds, a model, observed care and warnings, the
// report shows each in words: the exact column, the bounds and support,
// "not identified" for a flagged site, the observed returns and the
// warnings.
func TestMarkdownBoundsObservedWarnings(t *testing.T) {
	in := sampleInput()
	e := *in.Eval
	e.HasBounds, e.H = true, 4
	e.Lower, e.Upper, e.Identified, e.Support = 1, 3.5, false, 0.25
	e.BoundsCILow, e.BoundsCIHigh = 0.9, 3.6
	e.ValueBias = -0.01
	e.Sites = append([]eval.SiteValue(nil), e.Sites...)
	for k := range e.Sites {
		e.Sites[k].Exact, e.Sites[k].Lower, e.Sites[k].Upper, e.Sites[k].Support = 2.5, 2, 2.2, 0.9
		e.Sites[k].Identified = k == 0
	}
	e.Observed = []eval.ObservedValue{{Site: "north", Value: 1.875, CILow: 1.7, CIHigh: 2}}
	e.Warnings = []string{"the interval [1, 2] of site x's value does not contain its estimate 3"}
	in.Eval = &e
	in.Model = &eval.ExactValues{OptimalValue: 3, PolicyValue: 2, Suboptimality: 1, ValueGap: 0.5}
	md := markdown(in, plots{})
	for _, want := range []string{
		"exact value (model)", "| 2.5 |", "identification bounds", "[1, 3.5]", "**not identified**",
		"| [2, 2.2] | 0.9 | yes |", "| [2, 2.2] | 0.9 | **no** |", "Observed care", "| north | 1.875 | [1.7, 2] |",
		"does not contain its estimate 3", "basic bootstrap", "bootstrap bias",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// With too few permutations for any p-value to fall below 0.05, the
// report says the settings cannot find a difference, and never reports
// "no difference" as a finding.
func TestPValueReadingImpossibleSettings(t *testing.T) {
	e := *sampleInput().Eval
	e.Permutations = 15
	for i := range e.Delta {
		e.Delta[i].PValue = 1.0 / 16
	}
	got := pValueReading(&e)
	if !strings.Contains(got, "cannot find a difference") || strings.Contains(got, "No cluster shows") {
		t.Errorf("15 permutations: got %q", got)
	}
}
