package dataset

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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

// ParsePenaltyGrid reads "LO:HI:N", the [PenaltyGrid] of N constants from
// LO to HI, with 0 <= LO < HI finite and 2 <= N <= 1000.
func ParsePenaltyGrid(s string) ([]float64, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return nil, fmt.Errorf("dataset: penalty grid %q: want LO:HI:N, e.g. 1e-5:1e-2:7", s)
	}
	lo, err1 := strconv.ParseFloat(f[0], 64)
	hi, err2 := strconv.ParseFloat(f[1], 64)
	n, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || !(lo >= 0) || !(hi > lo) || n < 2 || n > 1000 || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("dataset: penalty grid %q: want 0 <= LO < HI and 2 <= N <= 1000", s)
	}
	return PenaltyGrid(lo, hi, n), nil
}
