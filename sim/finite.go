package sim

import (
	"math"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// sparse is a measure on the finite state set: mass P[x] on state Next[x].
// A row may sum to less than one: the rest is the episode ending (value 0).
type sparse struct {
	Next []int32   `json:"next"`
	P    []float64 `json:"prob"`
}

// dense returns the sparse form of p, dropping zeros.
func dense(p []float64) sparse {
	var s sparse
	for i, x := range p {
		if x > 0 {
			s.Next = append(s.Next, int32(i))
			s.P = append(s.P, x)
		}
	}
	return s
}

// finite is a multi-site linear MDP on a finite state set, given by its
// atoms: theta[k][h-1] in R^d and mu[k][h-1][i], a measure on the states,
// for i = 0..d-1. Its robust recursion is exact:
//
//	w_{h,i} = min_k [theta^k_{h,i} + sum_s' mu^k_{h,i}(s') V_{h+1}(s')]
//	V_h(s)  = max_a phi(s,a)^T w_h   (or phi(s, pi(h,s))^T w_h)
//
// Rows of mu may be shared between steps and coordinates.
type finite struct {
	fmap   features.Map
	states [][]float64
	K, H   int
	theta  [][][]float64
	mu     [][][]sparse
}

func (f *finite) weights(pi Policy, sites []int) [][]float64 {
	if sites == nil {
		sites = allSites(f.K)
	}
	d := f.fmap.Dim()
	S := len(f.states)
	V := make([]float64, S) // V_{h+1}
	ws := make([][]float64, f.H)
	buf := make([]float64, f.fmap.Width())
	for h := f.H; h >= 1; h-- {
		w := make([]float64, d)
		for i := range w {
			best := math.Inf(1)
			for _, k := range sites {
				v := f.theta[k][h-1][i]
				if h < f.H {
					row := &f.mu[k][h-1][i]
					for x, s := range row.Next {
						v += row.P[x] * V[s]
					}
				}
				best = min(best, v)
			}
			w[i] = best
		}
		ws[h-1] = w
		if h == 1 {
			break
		}
		for s, st := range f.states {
			if pi == nil {
				_, V[s] = greedy(&f.fmap, st, w)
				continue
			}
			copy(buf, st)
			V[s] = f.fmap.Dot(st, act(pi, f.fmap.A, h, buf), w)
		}
	}
	return ws
}

// crow is one row of a compressed table: n transitions from state s under
// action a to state next (-1 at step H), with reward sum rsum.
type crow struct {
	s, a, next int32
	n          int
	rsum       float64
}

// compressedTable assembles a weighted Table from rows[k][h-1], each list
// sorted by (s, a, next). states holds the state vectors by index.
func compressedTable(sites []string, N []int, H, A int, states [][]float64, rows [][][]crow) *traj.Table {
	K := len(sites)
	W := len(states[0])
	t := &traj.Table{Sites: append([]string(nil), sites...), Trajectories: append([]int(nil), N...), A: A, H: H, W: W, Steps: make([]traj.Step, H)}
	// first[k][s] is the index at the step of site k's first row in state s.
	first := make([][]int32, K)
	for k := range first {
		first[k] = make([]int32, len(states))
	}
	for h := H; h >= 1; h-- {
		st := &t.Steps[h-1]
		m := 0
		for k := 0; k < K; k++ {
			m += len(rows[k][h-1])
		}
		st.SiteStart = make([]int32, K+1)
		st.Traj = make([]int32, 0, m)
		st.Action = make([]int32, 0, m)
		st.Reward = make([]float64, 0, m)
		st.State = make([]float64, 0, m*W)
		st.Next = make([]int32, 0, m)
		st.Weight = make([]float64, 0, m)
		for k := 0; k < K; k++ {
			for _, r := range rows[k][h-1] {
				nx := int32(-1)
				if r.next >= 0 && h < H {
					nx = first[k][r.next]
				}
				st.Traj = append(st.Traj, int32(len(st.Traj)))
				st.Action = append(st.Action, r.a)
				st.Reward = append(st.Reward, r.rsum/float64(r.n))
				st.State = append(st.State, states[r.s]...)
				st.Next = append(st.Next, nx)
				st.Weight = append(st.Weight, float64(r.n))
			}
			st.SiteStart[k+1] = int32(len(st.Traj))
		}
		t.Rows += m
		for k := 0; k < K; k++ {
			for s := range first[k] {
				first[k][s] = -1
			}
			for j := int(st.SiteStart[k+1]) - 1; j >= int(st.SiteStart[k]); j-- {
				first[k][rows[k][h-1][j-int(st.SiteStart[k])].s] = int32(j)
			}
		}
	}
	return t
}
