package features

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseBins(t *testing.T) {
	for _, c := range []struct {
		spec string
		want Bins
	}{
		{"lactate:1,2.5,4", Bins{Column: "lactate", Cuts: []float64{1, 2.5, 4}}},
		{"sofa:q4", Bins{Column: "sofa", Quantiles: 4}},
		{"a:b:3", Bins{Column: "a:b", Cuts: []float64{3}}},
	} {
		got, err := ParseBins(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if got.Column != c.want.Column || got.Quantiles != c.want.Quantiles || !slices.Equal(got.Cuts, c.want.Cuts) {
			t.Errorf("%s: got %+v, want %+v", c.spec, got, c.want)
		}
		if got.String() != c.spec {
			t.Errorf("%s: String gives %q", c.spec, got.String())
		}
	}
	for _, bad := range []string{"lactate", "lactate:", ":1,2", "x:2,1", "x:1,1", "x:q1", "x:qa", "x:1,nan", "x:1,,2", "x:inf"} {
		if _, err := ParseBins(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestQuantileCuts checks the type 7 definition against values worked by
// hand (R: quantile(1:10, c(.25,.5,.75)) = 3.25, 5.5, 7.75) and that
// coinciding cut points are kept once.
func TestQuantileCuts(t *testing.T) {
	v := []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	if got := QuantileCuts(v, 4); !slices.Equal(got, []float64{3.25, 5.5, 7.75}) {
		t.Errorf("quartiles of 1..10: %v", got)
	}
	// 0,0,0,0,0,0,1,2: quartiles 0, 0, 0.25 -> 0, 0.25.
	ties := []float64{0, 0, 0, 0, 0, 0, 1, 2}
	if got := QuantileCuts(ties, 4); !slices.Equal(got, []float64{0, 0.25}) {
		t.Errorf("quartiles with ties: %v", got)
	}
	if got := QuantileCuts([]float64{5, 5, 5}, 3); !slices.Equal(got, []float64{5}) {
		t.Errorf("constant column: %v", got)
	}
	if QuantileCuts(nil, 4) != nil {
		t.Error("no values: want nil")
	}
}

// TestBinnedCell checks bins closed on the right and the row-major cell
// numbering on a hand-worked case.
func TestBinnedCell(t *testing.T) {
	m := Map{Kind: Binned, A: 2, Bins: []Bins{{Column: "x", Cuts: []float64{1, 2}}, {Column: "y", Cuts: []float64{10}}}}
	if m.Cells() != 6 || m.Dim() != 12 || m.Width() != 2 {
		t.Fatalf("cells %d, d %d, width %d; want 6, 12, 2", m.Cells(), m.Dim(), m.Width())
	}
	for _, c := range []struct {
		x, y float64
		cell int
	}{
		{0, 0, 0}, {1, 10, 0}, {1.5, 10, 2}, {1.5, 10.5, 3}, {2, 11, 3}, {2.01, -5, 4}, {9, 99, 5},
	} {
		s := []float64{c.x, c.y}
		if got := m.Cell(s); got != c.cell {
			t.Errorf("cell of (%g, %g) = %d, want %d", c.x, c.y, got, c.cell)
		}
		idx := make([]int32, 1)
		val := make([]float64, 1)
		if n := m.Phi(s, 1, idx, val); n != 1 || idx[0] != int32(c.cell*2+1) || val[0] != 1 {
			t.Errorf("phi(%g, %g; a=1) = e_%d, want e_%d", c.x, c.y, idx[0], c.cell*2+1)
		}
		if b := m.CellBins(c.cell); m.Cell([]float64{[]float64{0.5, 1.5, 3}[b[0]], []float64{5, 20}[b[1]]}) != c.cell {
			t.Errorf("CellBins(%d) = %v does not invert Cell", c.cell, b)
		}
	}
	if got := m.Bins[0].BinLabel(1); got != "1<x<=2" {
		t.Errorf("label %q", got)
	}
	if b := m.Blocks(); !b.Diagonal() {
		t.Error("binned blocks not diagonal")
	}
}

// TestSoftBinnedHand checks phi on a hand-worked case: centres x: 0, 10,
// 20 and y: 1, 2 (K = 5); x = 15, y = 0.5 in action 1 gives x's
// memberships (0, .5, .5), y's (1, 0), averaged: coordinates 5 + (1, 2, 3)
// with .25, .25, .5.
func TestSoftBinnedHand(t *testing.T) {
	m := Map{Kind: SoftBinned, A: 2, Bins: []Bins{{Column: "x", Cuts: []float64{0, 10, 20}}, {Column: "y", Cuts: []float64{1, 2}}}}
	if m.Dim() != 10 || m.MaxNonzeros() != 4 {
		t.Fatalf("d = %d, max nonzeros %d; want 10, 4", m.Dim(), m.MaxNonzeros())
	}
	idx := make([]int32, 4)
	val := make([]float64, 4)
	n := m.Phi([]float64{15, 0.5}, 1, idx, val)
	if !slices.Equal(idx[:n], []int32{6, 7, 8}) || !slices.Equal(val[:n], []float64{0.25, 0.25, 0.5}) {
		t.Errorf("phi = %v at %v, want [.25 .25 .5] at [6 7 8]", val[:n], idx[:n])
	}
	n = m.Phi([]float64{10, 2.75}, 0, idx, val)
	if !slices.Equal(idx[:n], []int32{1, 4}) || !slices.Equal(val[:n], []float64{0.5, 0.5}) {
		t.Errorf("phi at a centre and beyond the last = %v at %v, want [.5 .5] at [1 4]", val[:n], idx[:n])
	}
	b := m.Blocks()
	if b.Len() != 2 || b.MaxSize() != 5 {
		t.Errorf("soft-binned blocks: %d of max size %d, want 2 of 5", b.Len(), b.MaxSize())
	}
}

// TestSoftBinnedSimplex draws many rows, with values at, between, below
// and above the centres, and checks that phi(s, a) lies on the simplex in
// action a's block for every action, that Dot agrees with phi, and that
// phi is continuous: values just either side of a centre give nearly
// equal phi.
func TestSoftBinnedSimplex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := Map{Kind: SoftBinned, A: 3, Bins: []Bins{
		{Column: "lactate", Cuts: []float64{1, 2, 4, 8}},
		{Column: "sofa", Cuts: []float64{0, 5}},
		{Column: "age", Cuts: []float64{30, 50, 65, 80, 90}},
	}}
	K := 11
	d := m.Dim()
	coef := make([]float64, d)
	for i := range coef {
		coef[i] = rng.NormFloat64()
	}
	draw := func(cuts []float64) float64 {
		switch rng.IntN(4) {
		case 0: // at a centre
			return cuts[rng.IntN(len(cuts))]
		case 1: // below the first
			return cuts[0] - 100*rng.Float64()
		case 2: // above the last
			return cuts[len(cuts)-1] + 100*rng.Float64()
		}
		lo, hi := cuts[0], cuts[len(cuts)-1]
		return lo + (hi-lo)*rng.Float64()
	}
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	dense := func(s []float64, a int) []float64 {
		out := make([]float64, d)
		n := m.Phi(s, a, idx, val)
		for x := 0; x < n; x++ {
			out[idx[x]] = val[x]
		}
		return out
	}
	for trial := 0; trial < 20000; trial++ {
		s := []float64{draw(m.Bins[0].Cuts), draw(m.Bins[1].Cuts), draw(m.Bins[2].Cuts)}
		if err := m.CheckSimplex(s, 1e-14); err != nil {
			t.Fatalf("state %v: %v", s, err)
		}
		for a := 0; a < m.A; a++ {
			n := m.Phi(s, a, idx, val)
			ref := 0.0
			for x := 0; x < n; x++ {
				if int(idx[x])/K != a || (x > 0 && idx[x] <= idx[x-1]) || !(val[x] > 0) {
					t.Fatalf("state %v, a=%d: nonzeros %v at %v: outside action a's block, not ascending or not positive", s, a, val[:n], idx[:n])
				}
				ref += val[x] * coef[idx[x]]
			}
			if got := m.Dot(s, a, coef); got != ref {
				t.Fatalf("Dot = %v, phi^T coef = %v", got, ref)
			}
		}
	}
	// Continuity at every centre of every column, and at nearby points.
	for j, b := range m.Bins {
		for _, c := range b.Cuts {
			for _, eps := range []float64{1e-9, 1e-6} {
				s := []float64{3, 2, 60}
				s[j] = c - eps
				lo := dense(s, 1)
				s[j] = c + eps
				hi := dense(s, 1)
				for i := range lo {
					if math.Abs(lo[i]-hi[i]) > 1e-5 {
						t.Fatalf("%s at %g -+ %g: phi[%d] jumps from %v to %v", b.Column, c, eps, i, lo[i], hi[i])
					}
				}
			}
		}
	}
}

func TestCheckBins(t *testing.T) {
	one := []Bins{{Column: "x", Cuts: []float64{1}}}
	if err := CheckBins(Binned, one); err != nil {
		t.Errorf("binned with one cut: %v", err)
	}
	if err := CheckBins(SoftBinned, one); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("soft-binned with one centre: %v", err)
	}
	if err := CheckBins(Binned, []Bins{{Column: "x", Cuts: []float64{1}}, {Column: "x", Cuts: []float64{2}}}); err == nil {
		t.Error("a column twice: no error")
	}
}

// TestSeparate checks the action-block scale rule: lactate, SOFA and age
// (medians 2, 6, 60) warn on magnitudes; shares of a whole and the
// benchmark's uniform [0,1]^3 states do not; two columns of one scale
// whose row sums span 1 to 1000 warn on the sums.
func TestSeparate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var clinical, shares, uniform, wide []float64
	for i := 0; i < 2000; i++ {
		clinical = append(clinical, 0.5+3*rng.Float64(), float64(rng.IntN(13)), 20+70*rng.Float64())
		a, b := rng.Float64(), rng.Float64()
		if i%3 == 0 {
			a = 0
		}
		shares = append(shares, a*0.3, b, 1-b)
		uniform = append(uniform, rng.Float64(), rng.Float64(), rng.Float64())
		x := math.Pow(10, 3*rng.Float64())
		wide = append(wide, x, x*(0.5+rng.Float64()))
	}
	cols := []string{"lactate", "sofa", "age"}
	if why := MeasureScales(cols, clinical).Separate(); !strings.Contains(why, "magnitudes") || !strings.Contains(why, "age") || !strings.Contains(why, "lactate") {
		t.Errorf("clinical columns: %q", why)
	}
	if why := MeasureScales([]string{"s1", "s2", "s3"}, uniform).Separate(); why != "" {
		t.Errorf("uniform states: %q", why)
	}
	if why := MeasureScales([]string{"a", "b", "c"}, shares).Separate(); why != "" {
		t.Errorf("shares: %q", why)
	}
	if why := MeasureScales([]string{"x", "y"}, wide).Separate(); !strings.Contains(why, "row sums") {
		t.Errorf("wide sums: %q", why)
	}
}
