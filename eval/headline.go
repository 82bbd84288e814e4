package eval

// RobustMeaning says in one line what the robust value is, for the line
// that follows the headline.
const RobustMeaning = "the value under the worst mixture of the sites' models (the paper's adversary), " +
	"which can lie below every site's own value"

// Headline returns the report's headline: the worst site by the headline
// estimator, its value, and the interval of the minimum over sites that
// [WorstOf] forms from the sites' intervals, with the estimator's name.
// It returns an empty site when the report has no sites.
func (r *Report) Headline() (site string, e Estimate, estimator string) {
	if r.Worst != nil {
		return r.Worst.Site, r.Worst.Estimate, r.Worst.Estimator
	}
	sites := make([]Estimate, len(r.Sites))
	for k, s := range r.Sites {
		sites[k] = Estimate{Value: s.Value, CILow: s.CILow, CIHigh: s.CIHigh}
	}
	w, at := WorstOf(sites)
	if at < 0 {
		return "", w, ""
	}
	return r.Sites[at].Site, w, r.Sites[at].Estimator
}
