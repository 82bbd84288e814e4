package cluster

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// bruteAverageLinkage is average linkage straight from its definition:
// at each step, recompute the average similarity of every pair of
// clusters from the site pairs, and merge the best pair, ties going to
// the pair earliest in (first cluster, second cluster) order of smallest
// sites. Clusters are kept sorted by smallest site.
func bruteAverageLinkage(sim [][]float64, m int) [][]int {
	var clusters [][]int
	for i := range sim {
		clusters = append(clusters, []int{i})
	}
	for len(clusters) > m {
		bi, bj, bv := -1, -1, 0.0
		for i := range clusters {
			for j := i + 1; j < len(clusters); j++ {
				var sum float64
				for _, x := range clusters[i] {
					for _, y := range clusters[j] {
						sum += sim[x][y]
					}
				}
				v := sum / float64(len(clusters[i])*len(clusters[j]))
				if bi < 0 || v > bv {
					bi, bj, bv = i, j, v
				}
			}
		}
		merged := append(append([]int{}, clusters[bi]...), clusters[bj]...)
		slices.Sort(merged)
		clusters[bi] = merged
		clusters = append(clusters[:bj], clusters[bj+1:]...)
	}
	return clusters
}

// randomSimilarities returns a random symmetric n×n matrix whose values
// are draw() for each pair.
func randomSimilarities(n int, draw func() float64) ([][]float64, *similarities) {
	sim := make([][]float64, n)
	for i := range sim {
		sim[i] = make([]float64, n)
	}
	s := &similarities{name: "random", sites: make([]string, n), val: make([]float64, n*n)}
	for i := range n {
		s.sites[i] = strconv.Itoa(i)
		for j := i + 1; j < n; j++ {
			v := draw()
			sim[i][j], sim[j][i] = v, v
			s.val[i*n+j], s.val[j*n+i] = v, v
		}
	}
	return sim, s
}

func TestAverageLinkageMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draws := []struct {
		name string
		draw func() float64
	}{
		// Quarters in [-1, 1]: many exact ties, and sums of up to
		// 14*14 such values are exact, so both sides see the same floats.
		{"quarters", func() float64 { return float64(rng.IntN(9)-4) / 4 }},
		// Only two values: ties everywhere.
		{"binary", func() float64 { return float64(rng.IntN(2)) }},
		// Fine dyadic values: ties are rare, sums still exact.
		{"dyadic", func() float64 { return float64(rng.IntN(2049)-1024) / 1024 }},
		// Continuous values; exact ties have probability 0.
		{"continuous", func() float64 { return rng.NormFloat64() }},
	}
	for _, d := range draws {
		for trial := range 60 {
			n := 1 + rng.IntN(14)
			sim, s := randomSimilarities(n, d.draw)
			for m := 1; m <= n; m++ {
				got := s.averageLinkage(m)
				want := bruteAverageLinkage(sim, m)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s trial %d, n=%d, M=%d: got %v, want %v\nmatrix %v", d.name, trial, n, m, got, want, sim)
				}
			}
		}
	}
}

// Huge similarities are scaled before summing, so the merges are those
// of the same matrix scaled down, not an overflow to Inf or NaN.
func TestAverageLinkageHugeValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		n := 2 + rng.IntN(10)
		sim, s := randomSimilarities(n, func() float64 { return float64(rng.IntN(9)-4) / 4 })
		_, big := randomSimilarities(n, func() float64 { return 0 })
		for i := range s.val {
			big.val[i] = math.Ldexp(s.val[i], 1022) // up to 2^1022
		}
		for m := 1; m <= n; m++ {
			got := big.averageLinkage(m)
			want := bruteAverageLinkage(sim, m)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, n=%d, M=%d: got %v, want %v", trial, n, m, got, want)
			}
		}
	}
}

// A Parse of a random matrix, written as CSV with permuted integer sites,
// gives the brute-force partition mapped back to site names.
func TestAverageLinkageThroughParse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 20 {
		n := 2 + rng.IntN(10)
		sim, _ := randomSimilarities(n, func() float64 { return float64(rng.IntN(9)-4) / 4 })
		// Site i is named 3*i+1 (so numeric and lexical order differ once
		// n > 3); rows and columns are written in a random order.
		perm := rng.Perm(n)
		var b strings.Builder
		b.WriteString("site")
		for _, p := range perm {
			fmt.Fprintf(&b, ",%d", 3*p+1)
		}
		b.WriteString("\n")
		for _, p := range perm {
			fmt.Fprintf(&b, "%d", 3*p+1)
			for _, q := range perm {
				fmt.Fprintf(&b, ",%v", sim[p][q])
			}
			b.WriteString("\n")
		}
		m := 1 + rng.IntN(n)
		a, err := Parse(strings.NewReader(b.String()), "s.csv", Options{M: m})
		if err != nil {
			t.Fatalf("trial %d: %v\n%s", trial, err, b.String())
		}
		var want [][]string
		for _, c := range bruteAverageLinkage(sim, m) {
			var names []string
			for _, i := range c {
				names = append(names, strconv.Itoa(3*i+1))
			}
			want = append(want, names)
		}
		if got := sitesOf(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d, M=%d: got %v, want %v\n%s", trial, m, got, want, b.String())
		}
	}
}

// components agrees with a brute-force closure on random matrices.
func TestComponentsMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 100 {
		n := 1 + rng.IntN(12)
		sim, s := randomSimilarities(n, func() float64 { return float64(rng.IntN(9)-4) / 4 })
		th := float64(rng.IntN(9)-4) / 4
		// Label each site with the smallest site it reaches.
		label := make([]int, n)
		for i := range label {
			label[i] = i
		}
		for changed := true; changed; {
			changed = false
			for i := range n {
				for j := range n {
					if i != j && sim[i][j] >= th && label[j] < label[i] {
						label[i], changed = label[j], true
					}
				}
			}
		}
		if got, want := s.components(th), partition(label); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d, T=%v: got %v, want %v", trial, th, got, want)
		}
	}
}

func BenchmarkAverageLinkage(b *testing.B) {
	for _, n := range []int{50, 200, 800} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			_, s := randomSimilarities(n, rng.Float64)
			for b.Loop() {
				s.averageLinkage(1)
			}
		})
	}
}
