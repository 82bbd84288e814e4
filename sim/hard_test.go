package sim

import (
	"math"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

func TestHardClosedForm(t *testing.T) {
	s0 := [][]float64{{0}}
	for _, nmin := range []int{1, 50, 8000} {
		for seed := uint64(0); seed < 3; seed++ {
			m, err := NewHard(Params{MinTrajectories: nmin, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			p := m.P()
			H := float64(m.Horizon())
			min1, min2 := math.Inf(1), math.Inf(1)
			n1, n2 := m.Counts()
			for k := range p {
				delta := math.Sqrt(3/(2*float64(max(1, n1[k]+n2[k])))) / 8
				if p[k][0] != 0.5+delta || p[k][1] != 0.5-delta || p[k][2] != 0.5-delta {
					t.Fatalf("N_min %d seed %d site %d: p = %v, delta = %g", nmin, seed, k, p[k], delta)
				}
				min1, min2 = min(min1, p[k][0]), min(min2, p[k][1])
			}
			vstar := m.OptimalValue(s0)[0]
			if want := (H - 1) * min1; math.Abs(vstar-want) > 1e-12 {
				t.Errorf("N_min %d seed %d: V*_1(s0) = %.15g, want (H-1) min_k p1 = %.15g", nmin, seed, vstar, want)
			}
			if cf := m.OptimalValueClosedForm(); math.Abs(vstar-cf) > 1e-12 {
				t.Errorf("closed form %g, DP %g", cf, vstar)
			}
			for a := 0; a < m.A; a++ {
				always := func(int, []float64) int { return a }
				v := m.PolicyValue(always, s0)[0]
				want := (H - 1) * min1
				switch a {
				case 0:
				case 1:
					want = (H - 1) * min2
				default:
					want = (H - 1) * min2 // p3 = min(p1, p2) = p2
				}
				if math.Abs(v-want) > 1e-12 {
					t.Errorf("N_min %d seed %d: always b%d: V = %.15g, want %.15g", nmin, seed, a+1, v, want)
				}
				if so := m.SubOpt(a); math.Abs(so-(vstar-v)) > 1e-12 {
					t.Errorf("SubOpt(%d) = %g, want V* - V = %g", a, so, vstar-v)
				}
			}
		}
	}
}

func TestHardFirstActionCounts(t *testing.T) {
	m, err := NewHard(Params{MinTrajectories: 70, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	n1, n2 := m.Counts()
	for seed := uint64(0); seed < 3; seed++ {
		tab, err := m.Sample(seed)
		if err != nil {
			t.Fatal(err)
		}
		ct, _ := m.SampleCompressed(seed)
		checkCompressed(t, ct, m.Trajectories())
		for name, tt := range map[string]*traj.Table{"sample": tab, "compressed": ct} {
			st := &tt.Steps[0]
			c1, c2 := make([]float64, len(n1)), make([]float64, len(n1))
			for j := 0; j < st.Len(); j++ {
				w := 1.0
				if st.Weight != nil {
					w = st.Weight[j]
				}
				switch st.Action[j] {
				case 0:
					c1[st.Site(j)] += w
				case 1:
					c2[st.Site(j)] += w
				}
			}
			for k := range n1 {
				if c1[k] != float64(n1[k]) || c2[k] != float64(n2[k]) {
					t.Errorf("%s seed %d site %d: first-action counts %g, %g; the model's delta uses %d, %d", name, seed, k+1, c1[k], c2[k], n1[k], n2[k])
				}
			}
		}
	}
}

// TestHardCompressedAgrees compares the two samplers' laws loosely: the
// share of site k's trajectories in s1 at step 2 and the rewards.
func TestHardCompressedAgrees(t *testing.T) {
	m, err := NewHard(Params{MinTrajectories: 400, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	const R = 20
	var good [2][]float64
	for i := range good {
		good[i] = make([]float64, len(m.Sites()))
	}
	for r := uint64(0); r < R; r++ {
		tab, _ := m.Sample(r)
		ct, _ := m.SampleCompressed(r)
		for i, st := range [2]*stepView{{tab.Steps[1].State, nil, tab.Steps[1].SiteStart}, {ct.Steps[1].State, ct.Steps[1].Weight, ct.Steps[1].SiteStart}} {
			for k := range good[i] {
				for j := int(st.start[k]); j < int(st.start[k+1]); j++ {
					w := 1.0
					if st.weight != nil {
						w = st.weight[j]
					}
					if st.state[j] == 1 {
						good[i][k] += w / R
					}
				}
			}
		}
	}
	for k, n := range m.Trajectories() {
		se := math.Sqrt(float64(n)*0.25/R) * math.Sqrt2
		if d := math.Abs(good[0][k] - good[1][k]); d > 5*se {
			t.Errorf("site %d: mean s1 count at step 2: sample %g, compressed %g (5 se = %g)", k+1, good[0][k], good[1][k], 5*se)
		}
	}
}

type stepView struct {
	state, weight []float64
	start         []int32
}
