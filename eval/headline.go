package eval

import "math"

// RobustMeaning says in one line what the robust value is, for the line
// that follows the headline.
const RobustMeaning = "the value under the worst mixture of the sites' models (the paper's adversary), " +
	"which can lie below every site's own value"

// Headline returns the report's headline: the worst site's value with its
// interval (the worst site by the headline estimator, with the interval of
// the minimum over sites that [WorstOf] forms from the sites' intervals
// when the report has one) and the estimator's name. It returns an empty site when the report has no sites.
func (r *Report) Headline() (site string, e Estimate, estimator string) {
	if r.Worst != nil {
		return r.Worst.Site, r.Worst.Estimate, r.Worst.Estimator
	}
	for _, s := range r.Sites {
		if s.Site == r.WorstSite {
			return s.Site, Estimate{Value: s.Value, CILow: s.CILow, CIHigh: s.CIHigh}, s.Estimator
		}
	}
	return "", Estimate{Value: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}, ""
}
