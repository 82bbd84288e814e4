// Package quantile computes sample quantiles.
package quantile

import "math"

// Type7 returns the type 7 quantile (Hyndman and Fan; R's default) of
// sorted at probability p in [0,1]: the linear interpolation between the
// order statistics at position p (n-1). It panics if sorted is empty.
func Type7(sorted []float64, p float64) float64 {
	pos := p * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}
