package features_test

import (
	"fmt"

	"github.com/grmdp/grmdp/features"
)

// A spec names the map; the data give its sizes. Here three state columns
// that are shares of one whole, and two actions.
func ExampleSpec_Map() {
	sp := features.Spec{Kind: features.ActionBlock, StateColumns: []string{"s1", "s2", "s3"}}
	m := sp.Map(2, 3, 0)
	fmt.Println("d =", m.Dim())

	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	n := m.Phi([]float64{1, 1, 2}, 1, idx, val)
	for i := range n {
		fmt.Printf("phi[%d] = %g\n", idx[i], val[i])
	}
	// Output:
	// d = 6
	// phi[3] = 0.25
	// phi[4] = 0.25
	// phi[5] = 0.5
}
