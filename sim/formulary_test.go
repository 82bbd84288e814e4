package sim

import (
	"math"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// tinyTabular returns a random tabular model with sub-stochastic kernels
// (episodes may end), as the formulary scenario has.
func tinyTabular(K, S, A, H int, seed uint64) *finite {
	g := newRNG(seed, 42)
	fm := features.Map{Kind: features.Tabular, A: A, S: S, StateColumns: []string{"state"}}
	f := &finite{fmap: fm, K: K, H: H}
	for s := 0; s < S; s++ {
		f.states = append(f.states, []float64{float64(s)})
	}
	for k := 0; k < K; k++ {
		var ths [][]float64
		var mus [][]sparse
		for h := 0; h < H; h++ {
			th := make([]float64, S*A)
			rows := make([]sparse, S*A)
			for i := range th {
				th[i] = g.Float64()
				p := make([]float64, S)
				tot := 0.0
				for s := range p {
					p[s] = g.Float64()
					tot += p[s]
				}
				keep := g.uniform(0.6, 1)
				for s := range p {
					p[s] *= keep / tot
				}
				rows[i] = dense(p)
			}
			ths = append(ths, th)
			mus = append(mus, rows)
		}
		f.theta = append(f.theta, ths)
		f.mu = append(f.mu, mus)
	}
	return f
}

// bruteValue returns the robust value V^pi_1(s) of the policy table
// pi[h][s] by enumerating every adversary: a site for each (h, s) (only
// the coordinate (s, pi(h,s)) matters), and taking the worst per start
// state.
func bruteValue(f *finite, pi [][]int) []float64 {
	S, A, H, K := len(f.states), f.fmap.A, f.H, f.K
	worst := make([]float64, S)
	for s := range worst {
		worst[s] = math.Inf(1)
	}
	choice := make([]int, H*S)
	V := make([]float64, S)
	next := make([]float64, S)
	for {
		clear(next)
		for h := H; h >= 1; h-- {
			for s := 0; s < S; s++ {
				k := choice[(h-1)*S+s]
				i := s*A + pi[h-1][s]
				v := f.theta[k][h-1][i]
				row := f.mu[k][h-1][i]
				for x, s2 := range row.Next {
					v += row.P[x] * next[s2]
				}
				V[s] = v
			}
			copy(next, V)
		}
		for s := range worst {
			worst[s] = min(worst[s], V[s])
		}
		// next adversary
		x := 0
		for x < len(choice) && choice[x] == K-1 {
			choice[x] = 0
			x++
		}
		if x == len(choice) {
			return worst
		}
		choice[x]++
	}
}

func TestTabularRobustDPBruteForce(t *testing.T) {
	const K, S, A, H = 2, 3, 2, 3
	for seed := uint64(0); seed < 3; seed++ {
		f := tinyTabular(K, S, A, H, seed)
		c := &common{fmap: f.fmap, H: H, eval: f}
		states := f.states
		vstar := c.OptimalValue(states)
		best := make([]float64, S)
		for s := range best {
			best[s] = math.Inf(-1)
		}
		pi := make([][]int, H)
		for h := range pi {
			pi[h] = make([]int, S)
		}
		for code := 0; code < 1<<(S*H); code++ {
			for h := 0; h < H; h++ {
				for s := 0; s < S; s++ {
					pi[h][s] = (code >> (h*S + s)) & 1
				}
			}
			brute := bruteValue(f, pi)
			dp := c.PolicyValue(func(h int, st []float64) int { return pi[h-1][int(st[0])] }, states)
			for s := range brute {
				if math.Abs(brute[s]-dp[s]) > 1e-12 {
					t.Fatalf("seed %d policy %b state %d: robust DP %g, brute force %g", seed, code, s, dp[s], brute[s])
				}
				best[s] = max(best[s], brute[s])
			}
		}
		for s := range best {
			if math.Abs(best[s]-vstar[s]) > 1e-12 {
				t.Errorf("seed %d state %d: V* by DP %g, max-min by brute force %g", seed, s, vstar[s], best[s])
			}
		}
	}
}

func TestFormularyData(t *testing.T) {
	m, err := NewFormulary(Params{Seed: 1, Trajectories: []int{300, 300, 300, 300, 300}})
	if err != nil {
		t.Fatal(err)
	}
	if fm := m.Map(); fm.S != 240 || fm.A != 8 || fm.Dim() != 1920 {
		t.Fatalf("map %+v: want S = 240, A = 8", fm)
	}
	tab, err := m.Sample(3)
	if err != nil {
		t.Fatal(err)
	}
	used := make([][]bool, len(tab.Sites))
	for k := range used {
		used[k] = make([]bool, tab.A)
	}
	ended := 0
	for h := range tab.Steps {
		st := &tab.Steps[h]
		for j := 0; j < st.Len(); j++ {
			used[st.Site(j)][st.Action[j]] = true
			if st.Next[j] < 0 && h < tab.H-1 {
				ended++
			}
		}
	}
	for k := range used {
		for a, u := range used[k] {
			restricted := k == m.spec.RestrictedSite && a >= m.spec.RestrictedActions
			if u == restricted {
				t.Errorf("site %d action %d: used = %v", k+1, a, u)
			}
		}
	}
	if ended == 0 {
		t.Error("no episode ended before H")
	}
	// V* from the exported tables, by the tabular robust recursion written
	// out, equals the model's.
	V := make([]float64, m.S)
	for h := m.H; h >= 1; h-- {
		nv := make([]float64, m.S)
		for s := 0; s < m.S; s++ {
			nv[s] = math.Inf(-1)
			for a := 0; a < m.A; a++ {
				q := math.Inf(1)
				for k := 0; k < m.K; k++ {
					v := m.Reward(k, s, a)
					if h < m.H {
						next, p := m.Transition(k, s, a)
						for x, s2 := range next {
							v += p[x] * V[s2]
						}
					}
					q = min(q, v)
				}
				nv[s] = max(nv[s], q)
			}
		}
		V = nv
	}
	all := make([][]float64, m.S)
	for s := range all {
		all[s] = []float64{float64(s)}
	}
	for s, v := range m.OptimalValue(all) {
		if math.Abs(v-V[s]) > 1e-12 {
			t.Fatalf("state %d: V* %g, tabular recursion %g", s, v, V[s])
		}
	}
	for k := 0; k < m.K; k++ {
		for s := 0; s < m.S; s++ {
			tot := 0.0
			for a := 0; a < m.A; a++ {
				tot += m.Behaviour(k, s, a)
				if r := m.Reward(k, s, a); r < 0 || r > 1 {
					t.Fatalf("reward %g", r)
				}
			}
			if math.Abs(tot-1) > 1e-12 {
				t.Fatalf("site %d state %d: behaviour sums to %g", k+1, s, tot)
			}
		}
	}
}

// TestFormularySamplerMatchesModel compares the mean return of sampled
// episodes with the behaviour policy's expected return computed from the
// model's tables.
func TestFormularySamplerMatchesModel(t *testing.T) {
	m, err := NewFormulary(Params{Seed: 2, Trajectories: []int{20000}})
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	V := make([]float64, m.S)
	for h := m.H; h >= 1; h-- {
		nv := make([]float64, m.S)
		for s := 0; s < m.S; s++ {
			for a := 0; a < m.A; a++ {
				b := m.Behaviour(k, s, a)
				if b == 0 {
					continue
				}
				q := m.Reward(k, s, a)
				if h < m.H {
					next, p := m.Transition(k, s, a)
					for x, s2 := range next {
						q += p[x] * V[s2]
					}
				}
				nv[s] += b * q
			}
		}
		V = nv
	}
	want := 0.0
	for s, p := range m.Initial(k) {
		want += p * V[s]
	}
	tab, err := m.Sample(9)
	if err != nil {
		t.Fatal(err)
	}
	ret := make([]float64, tab.Trajectories[0])
	for h := range tab.Steps {
		st := &tab.Steps[h]
		for j, r := range st.Reward {
			ret[st.Traj[j]] += r
		}
	}
	mean, sq := 0.0, 0.0
	for _, r := range ret {
		mean += r
		sq += r * r
	}
	n := float64(len(ret))
	mean /= n
	se := math.Sqrt((sq/n - mean*mean) / n)
	if math.Abs(mean-want) > 4*se {
		t.Errorf("mean return %g, model's expected return %g (4 se = %g)", mean, want, 4*se)
	}
}
