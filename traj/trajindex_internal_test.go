package traj

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// gallop finds what a linear scan finds, from any start, on sorted lists
// with repeated keys.
func TestGallop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := rng.IntN(40)
		keys := make([]int, n)
		for i := range keys {
			keys[i] = rng.IntN(30)
		}
		slices.Sort(keys)
		key := rng.IntN(32) - 1
		want := 0
		for want < n && keys[want] < key {
			want++
		}
		i := 0
		if want > 0 {
			i = rng.IntN(want + 1)
		}
		if got := gallop(i, n, func(m int) bool { return keys[m] < key }); got != want {
			t.Fatalf("gallop(%d, %d) for %d in %v = %d, want %d", i, n, key, keys, got, want)
		}
	}
}

// sortStrKeys orders keys as canonicalOrder ranks labels.
func TestSortStrKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var labels []string
		var data []byte
		var ends []int
		for range rng.IntN(30) {
			l := fmt.Sprintf("%03x", rng.IntN(1000))[:1+rng.IntN(3)]
			if rng.IntN(5) == 0 {
				l = ""
			}
			labels = append(labels, l)
			data = append(data, l...)
			ends = append(ends, len(data))
		}
		got := sortStrKeys(data, ends)
		var want []string
		for _, i := range canonicalOrder(labels, false) {
			want = append(want, labels[i])
		}
		var have []string
		for i := range got.len() {
			have = append(have, got.at(i))
		}
		if !slices.Equal(have, want) {
			t.Fatalf("sortStrKeys(%q) = %q, want %q", labels, have, want)
		}
	}
}
