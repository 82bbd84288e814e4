package dataset

import "math"

// PenaltyGrid returns n penalty constants from lo to hi (both included),
// log-spaced when lo > 0 and evenly spaced otherwise: the candidates of a
// penalty path ([Solved.PenaltyPath]). It needs 0 <= lo < hi and n >= 2.
func PenaltyGrid(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		x := float64(i) / float64(n-1)
		if lo > 0 {
			out[i] = math.Exp(math.Log(lo) + x*(math.Log(hi)-math.Log(lo)))
		} else {
			out[i] = lo + x*(hi-lo)
		}
	}
	out[0], out[n-1] = lo, hi
	return out
}
