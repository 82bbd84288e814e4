package experiment

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the confidence level of every interval the package reports.
const Level = 0.95

// tQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom; NaN when df < 1.
func tQuantile(p, df float64) float64 {
	if !(df >= 1) {
		return math.NaN()
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// Interval is a sample's mean with its two-sided t-interval.
type Interval struct {
	Mean, Low, High float64
	// SD is the sample standard deviation (divisor n-1), Median the median.
	SD, Median float64
	N          int
}

// MeanCI returns the mean of x and its two-sided t-interval at level:
// mean ± t_{(1+level)/2, n-1} sd/sqrt(n). The interval (and SD) are NaN
// when x has fewer than two values, and everything is NaN for an empty x.
func MeanCI(x []float64, level float64) Interval {
	n := len(x)
	iv := Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN(), SD: math.NaN(), Median: math.NaN(), N: n}
	if n == 0 {
		return iv
	}
	iv.Mean = stat.Mean(x, nil)
	s := slices.Clone(x)
	slices.Sort(s)
	iv.Median = (s[(n-1)/2] + s[n/2]) / 2
	if n < 2 {
		return iv
	}
	iv.SD = stat.StdDev(x, nil)
	half := tQuantile(0.5+level/2, float64(n-1)) * iv.SD / math.Sqrt(float64(n))
	iv.Low, iv.High = iv.Mean-half, iv.Mean+half
	return iv
}

// Line is an ordinary least-squares fit y = Intercept + Slope x.
type Line struct {
	Intercept, Slope float64
	// Low and High bound the slope's two-sided t-interval (n-2 degrees of
	// freedom); NaN with fewer than three points.
	Low, High float64
	// SE is the slope's standard error; R2 the coefficient of
	// determination.
	SE, R2 float64
	N      int
}

// OLS fits y = a + b x by least squares and returns the slope's
// t-interval at level and R^2. With fewer than two points, or all x
// equal, everything is NaN.
func OLS(x, y []float64, level float64) Line {
	n := len(x)
	if len(y) != n {
		panic("experiment: OLS: x and y differ in length")
	}
	l := Line{Intercept: math.NaN(), Slope: math.NaN(), Low: math.NaN(), High: math.NaN(), SE: math.NaN(), R2: math.NaN(), N: n}
	if n < 2 {
		return l
	}
	xbar, ybar := stat.Mean(x, nil), stat.Mean(y, nil)
	var sxx, sxy, syy float64
	for i := range x {
		dx, dy := x[i]-xbar, y[i]-ybar
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return l
	}
	l.Slope = sxy / sxx
	l.Intercept = ybar - l.Slope*xbar
	sse := 0.0
	for i := range x {
		r := y[i] - (l.Intercept + l.Slope*x[i])
		sse += r * r
	}
	if syy > 0 {
		l.R2 = 1 - sse/syy
	}
	if n < 3 {
		return l
	}
	l.SE = math.Sqrt(sse / float64(n-2) / sxx)
	half := tQuantile(0.5+level/2, float64(n-2)) * l.SE
	l.Low, l.High = l.Slope-half, l.Slope+half
	return l
}

// LogLog fits log(y) = a + b log(x) by OLS over the points with x > 0 and
// y > 0 (natural logarithms; the slope does not depend on the base). It
// returns the fit and the indices of the points it left out.
func LogLog(x, y []float64, level float64) (Line, []int) {
	var lx, ly []float64
	var skipped []int
	for i := range x {
		if x[i] > 0 && y[i] > 0 && !math.IsInf(y[i], 0) {
			lx = append(lx, math.Log(x[i]))
			ly = append(ly, math.Log(y[i]))
			continue
		}
		skipped = append(skipped, i)
	}
	return OLS(lx, ly, level), skipped
}
