package eval

import (
	"math"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// The bootstrap's weights: replicate b counts trajectory i Poisson(1)
// times, the draw a function of (seed, b, i) alone (see the package
// documentation).

// golden is 2^64 / phi, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// mix64 is splitmix64's finaliser: a bijection of 64-bit words whose
// outputs pass statistical tests as independent uniforms for consecutive
// inputs.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// poissonCDF[k] is P(X <= k) for X ~ Poisson(1); the last entry is 1, so
// that inversion ends there (P(X > 19) < 1e-18, below the uniform's
// resolution of 2^-53).
var poissonCDF = func() [20]float64 {
	var c [20]float64
	p, sum := math.Exp(-1), 0.0
	for k := range c {
		if k > 0 {
			p /= float64(k)
		}
		sum += p
		c[k] = sum
	}
	c[len(c)-1] = 1
	return c
}()

// poissonBound[k] is the least v with float64(v) * 2^-53 >= poissonCDF[k]:
// for v < 2^53 the two comparisons agree, both sides being the exact
// scaling by 2^53 of the other's.
var poissonBound = func() [20]uint64 {
	var c [20]uint64
	for k, p := range poissonCDF {
		c[k] = uint64(math.Ceil(p * 0x1p53))
	}
	return c
}()

// replicateKey returns the part of the counter that depends on (seed, b).
func replicateKey(seed, b uint64) uint64 {
	return mix64(mix64(seed+golden) + (b+1)*golden)
}

// poissonCount returns the Poisson(1) count of the trajectory whose
// counter part is ti (trajKey) in the replicate whose key is rk: the
// uniform mix64(rk ^ ti) >> 11 / 2^53 turned into a count by inversion.
func poissonCount(rk, ti uint64) uint8 {
	return poissonInvert(mix64(rk^ti) >> 11)
}

// poissonInvert returns the Poisson(1) count of the uniform v * 2^-53,
// v < 2^53: the least k with v * 2^-53 < poissonCDF[k]. It compares the
// integer v with poissonBound, the first three bounds without branches (a
// count above 2 has probability 0.08).
func poissonInvert(v uint64) uint8 {
	k := b2u(v >= poissonBound[0]) + b2u(v >= poissonBound[1]) + b2u(v >= poissonBound[2])
	if k == 3 {
		for v >= poissonBound[k] {
			k++
		}
	}
	return uint8(k)
}

// b2u returns 1 for true, 0 for false.
func b2u(b bool) int {
	if b {
		return 1
	}
	return 0
}

// trajKey returns the part of the counter that depends on the trajectory.
func trajKey(i int) uint64 { return mix64(uint64(i) + golden) }

// poissonCounts returns every replicate's count of every trajectory of t,
// Counts[i*B+b] (see solve.Replicates): a function of (seed, b, i) alone,
// so any count can be computed in any order (here in parallel over
// ranges of trajectories).
func poissonCounts(t *traj.Table, seed uint64, B, nworkers int) []uint8 {
	n := 0
	for _, x := range t.Trajectories {
		n += x
	}
	keys := make([]uint64, B)
	for b := range keys {
		keys[b] = replicateKey(seed, uint64(b))
	}
	out := make([]uint8, n*B)
	var g errgroup.Group
	g.SetLimit(workers.Or(nworkers))
	for _, c := range chunks(n, 64) {
		g.Go(func() error {
			for i := c[0]; i < c[1]; i++ {
				ti := trajKey(i)
				row := out[i*B : (i+1)*B]
				for b, rk := range keys {
					row[b] = poissonCount(rk, ti)
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// chunks splits 0..n into at most parts contiguous ranges.
func chunks(n, parts int) [][2]int {
	var out [][2]int
	size := max(1, (n+parts-1)/parts)
	for lo := 0; lo < n; lo += size {
		out = append(out, [2]int{lo, min(n, lo+size)})
	}
	return out
}

// observedReplicates returns each replicate's observed returns per site
// (see observedReturns): per trajectory its weighted return and its
// weighted step-1 rows (0 for a censored one), then per replicate their count-weighted sums over
// each site's trajectories.
func observedReplicates(t *traj.Table, counts []uint8, B int) [][]float64 {
	K := len(t.Sites)
	n := len(counts) / max(B, 1)
	ret, first := make([]float64, n), make([]float64, n)
	cw := censorWeights(t)
	for h := range t.Steps {
		s := &t.Steps[h]
		for j, r := range s.Reward {
			w := returnWeight(t, cw, s, j)
			ret[s.Traj[j]] += w * r
			if h == 0 {
				first[s.Traj[j]] += w
			}
		}
	}
	out := make([][]float64, B)
	sum, rows := make([]float64, B), make([]float64, B)
	for b := range out {
		out[b] = make([]float64, K)
	}
	off := 0
	for k := 0; k < K; k++ {
		clear(sum)
		clear(rows)
		for i := off; i < off+t.Trajectories[k]; i++ {
			row := counts[i*B : (i+1)*B]
			for b, c := range row {
				if c != 0 {
					sum[b] += float64(c) * ret[i]
					rows[b] += float64(c) * first[i]
				}
			}
		}
		for b := range out {
			out[b][k] = sum[b] / rows[b]
		}
		off += t.Trajectories[k]
	}
	return out
}
