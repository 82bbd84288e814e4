package sim

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Random streams. Every random quantity is drawn from a PCG generator whose
// seed is derived from the user's seed, a stream tag and the indices of the
// task (site, step, coordinate), never from a generator shared between
// goroutines: results do not depend on scheduling.
const (
	streamParams   uint64 = iota + 1 // model parameters (New)
	streamData                       // per-trajectory sampler (Sample)
	streamCompress                   // compressed sampler (SampleCompressed)
	streamEval                       // Monte Carlo samples of exact evaluation
	streamInit                       // InitialStates
	streamCounts                     // first-action counts of the hard instance (New)
)

// mix is the splitmix64 finalizer.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// deriveSeed hashes a seed and a list of tags into a new seed.
func deriveSeed(seed uint64, tags ...uint64) uint64 {
	h := mix(seed ^ 0x6a09e667f3bcc909)
	for _, t := range tags {
		h = mix(h ^ mix(t+0x3c6ef372fe94f82b))
	}
	return h
}

// rng is a PCG generator together with its source, so that gonum's
// distributions (which take a rand.Source) draw from the same stream.
type rng struct {
	src *rand.PCG
	*rand.Rand
}

// newRNG returns the generator of the given seed and tags.
func newRNG(seed uint64, tags ...uint64) rng {
	s := deriveSeed(seed, tags...)
	src := rand.NewPCG(s, mix(s^0xa54ff53a5f1d36f1))
	return rng{src: src, Rand: rand.New(src)}
}

// uniform returns a draw from U[lo, hi).
func (g rng) uniform(lo, hi float64) float64 { return lo + (hi-lo)*g.Float64() }

// beta returns a draw from Beta(a, b).
func (g rng) beta(a, b float64) float64 {
	return distuv.Beta{Alpha: a, Beta: b, Src: g.src}.Rand()
}

// gamma returns a draw from Gamma(shape, 1).
func (g rng) gamma(shape float64) float64 {
	return distuv.Gamma{Alpha: shape, Beta: 1, Src: g.src}.Rand()
}

// bernoulli returns 1 with probability p, else 0.
func (g rng) bernoulli(p float64) float64 {
	if g.Float64() < p {
		return 1
	}
	return 0
}

// binomial returns a draw from Binomial(n, p).
func (g rng) binomial(n int, p float64) int {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	}
	return int(distuv.Binomial{N: float64(n), P: p, Src: g.src}.Rand())
}

// categorical returns an index drawn with probabilities proportional to p
// (which need not sum to one; its sum must be positive).
func (g rng) categorical(p []float64) int {
	total := 0.0
	for _, x := range p {
		total += x
	}
	u := g.Float64() * total
	last := 0
	for i, x := range p {
		if x <= 0 {
			continue
		}
		last = i
		if u < x {
			return i
		}
		u -= x
	}
	return last
}

// multinomial writes to dst a draw from Multinomial(n, p) with
// probabilities proportional to the weights p (by conditional binomials; the
// last positive weight takes the remainder, so the counts sum to n).
func (g rng) multinomial(dst []int, n int, p []float64) {
	rest := 0.0
	last := -1
	for i, x := range p {
		if x > 0 {
			rest += x
			last = i
		}
	}
	for i, x := range p {
		dst[i] = 0
		if n == 0 || x <= 0 {
			continue
		}
		if i == last {
			dst[i] = n
			n = 0
			continue
		}
		c := g.binomial(n, min(1, x/rest))
		dst[i] = c
		n -= c
		rest -= x
	}
}

// distinct returns t distinct integers drawn uniformly from 0..n-1 (Floyd's
// algorithm), in the order drawn. It needs t <= n.
func (g rng) distinct(t, n int) []int {
	out := make([]int, 0, t)
	seen := make(map[int]bool, t)
	for j := n - t; j < n; j++ {
		x := g.IntN(j + 1)
		if seen[x] {
			x = j
		}
		seen[x] = true
		out = append(out, x)
	}
	return out
}
