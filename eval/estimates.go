package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/grmdp/grmdp/solve"
)

// Estimate is one estimator's value with its bootstrap interval (NaN
// without a bootstrap, or where the estimator is undefined). NaN is
// written as JSON null.
type Estimate struct {
	Value  float64 `json:"value"`
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
}

// MarshalJSON writes NaN and infinities as null.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Value  *float64 `json:"value"`
		CILow  *float64 `json:"ci_low"`
		CIHigh *float64 `json:"ci_high"`
	}{finitePtr(e.Value), finitePtr(e.CILow), finitePtr(e.CIHigh)})
}

func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// WorstEstimate is one estimator's worst site: the site whose value is
// the lowest, that value, and the interval of the minimum over sites
// formed from the sites' own intervals ([WorstOf]: from the smallest low
// end to the smallest high end).
type WorstEstimate struct {
	Site string `json:"site"`
	Estimate
}

// MarshalJSON writes the site beside the estimate's fields.
func (w WorstEstimate) MarshalJSON() ([]byte, error) {
	e, err := w.Estimate.MarshalJSON()
	if err != nil {
		return nil, err
	}
	site, err := json.Marshal(w.Site)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"site":`), site...), append([]byte(","), e[1:]...)...), nil
}

// WorstSite is the worst site by each estimator, with the headline's
// estimator named.
type WorstSite struct {
	// Estimator names the headline (the estimate of Site, Value, CILow and
	// CIHigh).
	Estimator string `json:"estimator"`
	WorstEstimate
	// Estimates holds every estimator's worst site (min over sites).
	Estimates map[string]WorstEstimate `json:"estimates"`
}

// MarshalJSON writes the headline's fields beside the estimator's name
// and every estimator's worst site.
func (w WorstSite) MarshalJSON() ([]byte, error) {
	head, err := w.WorstEstimate.MarshalJSON()
	if err != nil {
		return nil, err
	}
	rest, err := json.Marshal(struct {
		Estimator string                   `json:"estimator"`
		Estimates map[string]WorstEstimate `json:"estimates"`
	}{w.Estimator, w.Estimates})
	if err != nil {
		return nil, err
	}
	return append(append(head[:len(head)-1], ','), rest[1:]...), nil
}

// setEstimates evaluates the estimators that do not trust the model from
// what the sweep gathered (c) and sets them in the report beside FQE: per
// site the value of each estimator with its interval, the effective
// sample size and the trajectories an off-formulary choice zeroed, and
// per estimator the worst site. reps are FQE's replicates.
func (rep *Report) setEstimates(ctx context.Context, c *opeCollector, counts []uint8, B int, reps []solve.ReplicateValue, level float64) error {
	sums, err := c.sums(ctx, counts)
	if err != nil {
		return err
	}
	K, H, nb := len(rep.Sites), c.t.H, 1+B
	nan := math.NaN()
	// vals[e][col*K+k]: estimator e's value at site k in column col.
	vals := make([][]float64, len(Estimators))
	for e := range vals {
		vals[e] = make([]float64, nb*K)
	}
	for k := 0; k < K; k++ {
		vals[0][k] = rep.Sites[k].Value
		for b := 0; b < B; b++ {
			vals[0][(1+b)*K+k] = nan
			if b < len(reps) {
				vals[0][(1+b)*K+k] = reps[b].Sites[k]
			}
		}
		for col := 0; col < nb; col++ {
			vals[1][col*K+k], vals[2][col*K+k] = sums[k].estimates(col, nb, H)
		}
	}
	rep.reps.estimates, rep.reps.sites = vals, K
	x := make([]float64, B)
	interval := func(theta float64, rep func(b int) float64) Estimate {
		if B == 0 || math.IsNaN(theta) {
			return Estimate{Value: theta, CILow: nan, CIHigh: nan}
		}
		for b := range x {
			x[b] = rep(b)
		}
		lo, hi, _ := basicCI(theta, x, level)
		return Estimate{Value: theta, CILow: lo, CIHigh: hi}
	}
	for k := range rep.Sites {
		s := &rep.Sites[k]
		s.Estimator = FQE
		s.Estimates = map[string]Estimate{}
		for e, name := range Estimators {
			s.Estimates[name] = interval(vals[e][k], func(b int) float64 { return vals[e][(1+b)*K+k] })
		}
		// FQE's interval is the one setIntervals set.
		s.Estimates[FQE] = Estimate{Value: s.Value, CILow: s.CILow, CIHigh: s.CIHigh}
		s.ESS = sums[k].ess()
		s.OffFormulary = sums[k].offFormulary
	}
	worst := WorstSite{Estimator: FQE, Estimates: map[string]WorstEstimate{}}
	ests := make([]Estimate, K)
	for _, name := range Estimators {
		for k := range rep.Sites {
			ests[k] = rep.Sites[k].Estimates[name]
		}
		w, site := WorstOf(ests)
		we := WorstEstimate{Estimate: w}
		if site >= 0 {
			we.Site = rep.Sites[site].Site
		}
		worst.Estimates[name] = we
	}
	worst.WorstEstimate = worst.Estimates[FQE]
	rep.Worst = &worst
	rep.Estimator = FQE
	return nil
}

// WorstOf returns the worst of the sites' estimates: the smallest value
// (sites whose value is NaN are left out), the index of its site (-1 when
// every value is NaN), and the interval of the minimum over sites formed
// from the sites' own intervals,
//
//	[min_k CILow_k, min_k CIHigh_k]
//
// over the sites with a value. It covers the smallest of the sites' true
// values V_k whenever every site's interval covers its own: the truly
// worst site's low end is at most its value, so the smallest low end is
// too; and every site's high end is at least its value, which is at least
// the smallest value, so the smallest high end is too. The low end misses
// only when the truly worst site's low end misses, at most the one-sided
// rate (1-level)/2 of one interval; the high end only when some site's
// high end falls below the smallest true value, which a site well above
// it does not do, so at most the one-sided rate summed over the sites
// whose values are close to the minimum. The interval is NaN when any
// site with a value has no interval (no bootstrap).
//
// The basic bootstrap interval of the minimum (each replicate's minimum
// over its sites) is not used here (the cross-fitted choice of settings
// ranks by it, for its pairing; see the package documentation): the minimum is not a smooth function of the
// sites' values where two are close, each replicate's minimum picks the
// site whose resampling happened to fall lowest, so the replicates' minima
// sit below the estimate, and the basic interval reflects that downward
// shift upward: it is optimistic, and undercovers the worst site.
func WorstOf(sites []Estimate) (Estimate, int) {
	nan := math.NaN()
	w, at := Estimate{Value: nan, CILow: nan, CIHigh: nan}, -1
	lo, hi := math.Inf(1), math.Inf(1)
	for k, s := range sites {
		if math.IsNaN(s.Value) {
			continue
		}
		if at < 0 || s.Value < w.Value {
			w.Value, at = s.Value, k
		}
		lo, hi = math.Min(lo, s.CILow), math.Min(hi, s.CIHigh)
	}
	if at >= 0 {
		w.CILow, w.CIHigh = lo, hi
	}
	return w, at
}

// LowESS is the effective sample size below which the disagreement
// warning adds that WDR itself rests on too few trajectories to be read
// alone.
const LowESS = 30

// Disagree reports whether FQE and WDR disagree at site k of the
// report: the basic interval at the report's level of their paired
// difference FQE - WDR, formed replicate by replicate from the bootstrap
// replicates both estimators share, excludes 0. It is false without a
// bootstrap, or where either estimator is undefined.
func (r *Report) Disagree(k int) bool {
	s := &r.Sites[k]
	if s.Estimates == nil {
		return false
	}
	return Disagree(s.Estimates[FQE].Value, s.Estimates[WDR].Value, r.Replicates(FQE), r.Replicates(WDR), k, r.Level)
}

// Disagree reports whether two estimates of one site's value, f and w,
// disagree beyond sampling error: the basic bootstrap interval at level
// of their difference f - w, whose replicates are fr[b][k] - wr[b][k]
// (the two estimators' replicates b, paired: the same resampled
// trajectories), excludes 0. NaN replicates are ignored; it is false
// without replicates or when f or w is NaN.
//
// Testing the paired difference is stronger than asking whether the two
// estimates' own intervals overlap: the estimators share each
// replicate's trajectories, so their errors are correlated, and the
// difference varies less than either estimate does.
func Disagree(f, w float64, fr, wr [][]float64, k int, level float64) bool {
	if math.IsNaN(f) || math.IsNaN(w) || len(fr) == 0 || len(fr) != len(wr) {
		return false
	}
	x := make([]float64, len(fr))
	for b := range x {
		x[b] = fr[b][k] - wr[b][k]
	}
	lo, hi, _ := basicCI(f-w, x, level)
	return lo > 0 || hi < 0
}

// estimateWarnings says where FQE and WDR disagree beyond sampling error
// ([Report.Disagree]: the paired difference's interval excludes 0):
// FQE's linear model may be misspecified, and WDR, which corrects it with
// the data's own returns, is the one to read, unless its effective sample
// size is below LowESS.
func (r *Report) estimateWarnings() []string {
	var out []string
	for k := range r.Sites {
		s := &r.Sites[k]
		if !r.Disagree(k) {
			continue
		}
		f, w := s.Estimates[FQE], s.Estimates[WDR]
		out = append(out, DisagreementWarning(s.Site, f, w, s.ESS))
	}
	return out
}

// DisagreementWarning is the warning that FQE's estimate f and WDR's w of
// a site's value disagree, with WDR's effective sample size ess.
func DisagreementWarning(site string, f, w Estimate, ess float64) string {
	msg := fmt.Sprintf("site %s: fitted-Q (FQE) %.4g [%.4g, %.4g] and weighted doubly robust (WDR) %.4g [%.4g, %.4g] disagree beyond their intervals: "+
		"the fitted-Q model may be misspecified; read WDR", site, f.Value, f.CILow, f.CIHigh, w.Value, w.CILow, w.CIHigh)
	if ess < LowESS {
		msg += fmt.Sprintf(", but its importance weights rest on an effective %.3g trajectories (below %d), too few for its interval to be trusted: neither estimate is reliable at this site", ess, LowESS)
	}
	return msg
}

// LowESSWarning is the warning that a site's importance weights rest on
// an effective sample size ess below LowESS, so that PDWIS's and WDR's
// intervals there are not to be trusted.
func LowESSWarning(site string, ess float64) string {
	return fmt.Sprintf("site %s: the importance weights of PDWIS and WDR rest on an effective %.3g trajectories (below %d): their intervals are too narrow to be trusted", site, ess, LowESS)
}
