package sim

import (
	"math"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// trapStats returns, per (site, step), the weighted occupancy of each grid
// state, the trap count in each state, and the reward sum of each action,
// flattened.
func trapStats(m *Trap, tab *traj.Table) []float64 {
	S := len(m.grid)
	index := map[string]int{}
	for s, x := range m.grid {
		index[fmtState(x)] = s
	}
	per := 2*S + 2
	out := make([]float64, len(tab.Sites)*tab.H*per)
	for h := 1; h <= tab.H; h++ {
		st := &tab.Steps[h-1]
		for j := 0; j < st.Len(); j++ {
			w := 1.0
			if st.Weight != nil {
				w = st.Weight[j]
			}
			s, ok := index[fmtState(st.State[j*tab.W:(j+1)*tab.W])]
			if !ok {
				panic("state off the grid")
			}
			base := (st.Site(j)*tab.H + h - 1) * per
			out[base+s] += w
			a := int(st.Action[j])
			if a == 1 {
				out[base+S+s] += w
			}
			out[base+2*S+a] += w * st.Reward[j]
		}
	}
	return out
}

func TestTrapCountAndStructure(t *testing.T) {
	for _, N := range [][]int{{3, 9, 400}, {20, 30, 50}} {
		m, err := NewTrap(Params{Trajectories: N, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		tab, _ := m.Sample(1)
		ct, _ := m.SampleCompressed(1)
		checkCompressed(t, ct, N)
		for _, tt := range []*traj.Table{tab, ct} {
			for h := 1; h <= tt.H; h++ {
				st := &tt.Steps[h-1]
				traps := make([]float64, len(N))
				for j := 0; j < st.Len(); j++ {
					if st.Action[j] == 1 {
						w := 1.0
						if st.Weight != nil {
							w = st.Weight[j]
						}
						traps[st.Site(j)] += w
					}
				}
				for k := range N {
					want := min(m.spec.TrapCount, N[k])
					if traps[k] != float64(want) || want >= 10 {
						t.Errorf("N %v step %d site %d: trap taken %g times, want %d (< 10)", N, h, k+1, traps[k], want)
					}
				}
			}
		}
	}
}

// TestTrapCompressedAgrees checks loosely, over seeds, that the two
// samplers have the same law: every mean statistic agrees within 5
// standard errors, and the mean squared z-score is near 1.
func TestTrapCompressedAgrees(t *testing.T) {
	m, err := NewTrap(Params{MinTrajectories: 30, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	const R = 60
	var sum, sq [2][]float64
	for r := uint64(0); r < R; r++ {
		tab, _ := m.Sample(100 + r)
		ct, _ := m.SampleCompressed(100 + r)
		for i, x := range [][]float64{trapStats(m, tab), trapStats(m, ct)} {
			if sum[i] == nil {
				sum[i], sq[i] = make([]float64, len(x)), make([]float64, len(x))
			}
			for j, v := range x {
				sum[i][j] += v
				sq[i][j] += v * v
			}
		}
	}
	z2, n := 0.0, 0
	for j := range sum[0] {
		var mean, vr [2]float64
		for i := range mean {
			mean[i] = sum[i][j] / R
			vr[i] = (sq[i][j]/R - mean[i]*mean[i]) * R / (R - 1)
		}
		se := math.Sqrt((vr[0] + vr[1]) / R)
		if se == 0 {
			if mean[0] != mean[1] {
				t.Errorf("statistic %d: constant %g in one sampler, %g in the other", j, mean[0], mean[1])
			}
			continue
		}
		z := (mean[0] - mean[1]) / se
		if math.Abs(z) > 5 {
			t.Errorf("statistic %d: per-trajectory mean %g, compressed %g, z = %.2f", j, mean[0], mean[1], z)
		}
		z2 += z * z
		n++
	}
	if z2/float64(n) > 1.5 {
		t.Errorf("mean squared z-score %.3f over %d statistics: the samplers' laws differ", z2/float64(n), n)
	}
}

func TestTrapLargeN(t *testing.T) {
	m, err := NewTrap(Params{MinTrajectories: 2_000_000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ct, err := m.SampleCompressed(5)
	if err != nil {
		t.Fatal(err)
	}
	checkCompressed(t, ct, m.Trajectories())
	S := len(m.grid)
	if maxRows := len(m.Sites()) * m.Horizon() * 2 * S * S; ct.Rows > maxRows {
		t.Errorf("%d rows for N_min = 2e6, want at most %d", ct.Rows, maxRows)
	}
	// Mean rewards over millions of draws are close to the model's.
	var rs, ws [2]float64
	for h := range ct.Steps {
		st := &ct.Steps[h]
		for j, w := range st.Weight {
			rs[st.Action[j]] += w * st.Reward[j]
			ws[st.Action[j]] += w
		}
	}
	if got := rs[0] / ws[0]; math.Abs(got-0.70) > 1e-3 {
		t.Errorf("safe mean reward %g, want 0.70", got)
	}
}

func TestTrapSafeIsOptimal(t *testing.T) {
	m, err := NewTrap(Params{Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	P := m.P
	for h, w := range m.OptimalWeights() {
		for j := 0; j < P; j++ {
			if d := w[j] - w[P+j]; math.Abs(d-0.05) > 1e-12 {
				t.Fatalf("step %d coordinate %d: w*(safe) - w*(trap) = %g, want 0.05", h+1, j, d)
			}
		}
	}
	states := m.InitialStates(200, 1)
	vstar := m.OptimalValue(states)
	vtrap := m.PolicyValue(func(int, []float64) int { return 1 }, states)
	for i := range states {
		if d := vstar[i] - vtrap[i]; math.Abs(d-0.05*float64(m.Horizon())) > 1e-12 {
			t.Fatalf("always-trap suboptimality %g, want 0.05 H = %g", d, 0.05*float64(m.Horizon()))
		}
	}
	if n := len(m.States()); n != 15 {
		t.Errorf("%d grid states, want 15", n)
	}
}
