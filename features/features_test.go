package features

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDotAllMatchesDotAndPhi(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	maps := []Map{
		{Kind: Tabular, A: 3, S: 5},
		{Kind: ActionBlock, A: 4, P: 3},
		{Kind: Indicator, A: 5},
		{Kind: Precomputed, A: 2, D: 4},
		{Kind: Binned, A: 3, Bins: []Bins{{Column: "x", Cuts: []float64{0.2, 0.5}}, {Column: "y", Cuts: []float64{0.7}}}},
		{Kind: SoftBinned, A: 3, Bins: []Bins{{Column: "x", Cuts: []float64{0.2, 0.5}}, {Column: "y", Cuts: []float64{0, 0.4, 0.9}}}},
	}
	for _, m := range maps {
		d := m.Dim()
		coef := make([]float64, d)
		for i := range coef {
			coef[i] = rng.NormFloat64()
		}
		for trial := 0; trial < 50; trial++ {
			state := make([]float64, m.Width())
			switch m.Kind {
			case Tabular:
				state[0] = float64(rng.IntN(m.S))
			case Indicator:
				state[0] = float64(rng.IntN(3))
			case ActionBlock:
				for j := range state {
					if rng.IntN(3) > 0 {
						state[j] = rng.Float64()
					}
				}
				state[rng.IntN(m.P)] = 0.25
			case Binned, SoftBinned:
				for j := range state {
					state[j] = 1.2*rng.Float64() - 0.1
				}
			case Precomputed:
				for a := 0; a < m.A; a++ {
					s := 0.0
					for j := 0; j < m.D; j++ {
						state[a*m.D+j] = rng.Float64()
						s += state[a*m.D+j]
					}
					for j := 0; j < m.D; j++ {
						state[a*m.D+j] /= s
					}
				}
			}
			if err := m.CheckSimplex(state, 1e-12); err != nil {
				t.Fatalf("%v: %v", m.Kind, err)
			}
			all := make([]float64, m.A)
			m.DotAll(all, state, coef)
			idx := make([]int32, m.MaxNonzeros())
			val := make([]float64, m.MaxNonzeros())
			for a := 0; a < m.A; a++ {
				if got, want := all[a], m.Dot(state, a, coef); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%v: DotAll[%d] = %v, Dot = %v", m.Kind, a, got, want)
				}
				n := m.Phi(state, a, idx, val)
				ref := 0.0
				for x := 0; x < n; x++ {
					if idx[x] < 0 || int(idx[x]) >= d {
						t.Fatalf("%v: index %d outside 0..%d", m.Kind, idx[x], d-1)
					}
					ref += val[x] * coef[idx[x]]
				}
				if math.Abs(ref-all[a]) > 1e-12 {
					t.Fatalf("%v: phi^T coef = %v, Dot = %v", m.Kind, ref, all[a])
				}
			}
		}
	}
}

func TestBlocks(t *testing.T) {
	m := Map{Kind: ActionBlock, A: 3, P: 2}
	b := m.Blocks()
	if b.Len() != 3 || b.MaxSize() != 2 || b.Diagonal() {
		t.Fatalf("action-block blocks: got %d blocks of max size %d", b.Len(), b.MaxSize())
	}
	add, done := DiscoverBlocks(6)
	add([]int32{0, 3})
	add([]int32{3, 5})
	add([]int32{1})
	got := done()
	// {0,3,5}, {1}, {2}, {4}
	if got.Len() != 4 || got.Of[0] != got.Of[3] || got.Of[3] != got.Of[5] || got.Of[1] == got.Of[0] {
		t.Fatalf("discovered blocks %+v", got)
	}
	for i := 0; i < 6; i++ {
		bl := got.Of[i]
		if got.Coord[got.Start[bl]+got.Pos[i]] != int32(i) {
			t.Fatalf("coordinate %d: Coord/Pos disagree", i)
		}
	}
}
