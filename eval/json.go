package eval

import (
	"encoding/json"
	"math"
)

// num is a float64 that marshals NaN and the infinities as null.
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

// MarshalJSON writes the report's values: the robust value with its
// interval and bias, the pessimistic value, beta, the worst site, every site's
// values, and the identification bounds and support. A value that is NaN
// (not computed) is null; so are the bounds' identified flags of a map
// whose features are not indicators. evaluation_features, first, names
// the evaluation's map when it is not the policy's own. Delta, Observed
// and Warnings are left to the document that holds the report
// ([Result]).
func (r *Report) MarshalJSON() ([]byte, error) { return json.Marshal(r.values()) }

// reportSite is a site's values in the JSON of a [Report].
type reportSite struct {
	Site         string `json:"site"`
	Value        num    `json:"value"`
	CILow        num    `json:"ci_low"`
	CIHigh       num    `json:"ci_high"`
	ExactValue   *num   `json:"exact_value,omitempty"`
	Bias         num    `json:"bias"`
	Lower        num    `json:"lower"`
	Upper        num    `json:"upper"`
	BoundsCILow  num    `json:"bounds_ci_low"`
	BoundsCIHigh num    `json:"bounds_ci_high"`
	Support      num    `json:"support"`
	Identified   *bool  `json:"identified"`
	// Estimator names the estimate of value, ci_low and ci_high;
	// Estimates holds every estimator's; ESS is the importance
	// weights' effective sample size.
	Estimator string              `json:"estimator"`
	Estimates map[string]Estimate `json:"estimates"`
	ESS       num                 `json:"ess"`
	// Censored is the number of the site's censored trajectories,
	// which no estimate of a return counts.
	Censored int `json:"censored"`
}

// reportValues are the keys of a [Report]'s JSON.
type reportValues struct {
	// EvaluationFeatures describes the evaluation's map when it is not
	// the policy's own (absent otherwise).
	EvaluationFeatures string       `json:"evaluation_features,omitempty"`
	PolicyValue        float64      `json:"policy_value"`
	PessimisticValue   float64      `json:"pessimistic_value"`
	ValueCILow         num          `json:"value_ci_low"`
	ValueCIHigh        num          `json:"value_ci_high"`
	Beta               float64      `json:"beta"`
	WorstSite          string       `json:"worst_site"`
	Sites              []reportSite `json:"sites"`
	Bias               num          `json:"bias"`
	Lower              num          `json:"lower"`
	Upper              num          `json:"upper"`
	BoundsCILow        num          `json:"bounds_ci_low"`
	BoundsCIHigh       num          `json:"bounds_ci_high"`
	Support            num          `json:"support"`
	Identified         *bool        `json:"identified"`
	// Estimator names the estimator of policy_value; Worst is the
	// worst site by each estimator.
	Estimator string     `json:"estimator"`
	Worst     *WorstSite `json:"worst"`
}

func (r *Report) values() reportValues {
	doc := reportValues{EvaluationFeatures: r.EvaluationFeatures, PolicyValue: r.PolicyValue, PessimisticValue: r.PessimisticValue, ValueCILow: num(r.ValueCILow), ValueCIHigh: num(r.ValueCIHigh),
		Beta: r.Beta, WorstSite: r.WorstSite, Sites: []reportSite{}, Bias: num(r.ValueBias), Lower: num(r.Lower), Upper: num(r.Upper),
		BoundsCILow: num(r.BoundsCILow), BoundsCIHigh: num(r.BoundsCIHigh), Support: num(r.Support),
		Estimator: r.Estimator, Worst: r.Worst}
	for _, sv := range r.Sites {
		s := reportSite{Site: sv.Site, Value: num(sv.Value), CILow: num(sv.CILow), CIHigh: num(sv.CIHigh), Bias: num(sv.Bias),
			Lower: num(sv.Lower), Upper: num(sv.Upper), BoundsCILow: num(sv.BoundsCILow), BoundsCIHigh: num(sv.BoundsCIHigh), Support: num(sv.Support),
			Estimator: sv.Estimator, Estimates: sv.Estimates, ESS: num(sv.ESS), Censored: sv.Censored, ExactValue: finite(sv.Exact)}
		if r.HasBounds {
			s.Identified = &sv.Identified
		}
		doc.Sites = append(doc.Sites, s)
	}
	if r.HasBounds {
		doc.Identified = &r.Identified
	}
	return doc
}

// finite returns x as a num, or nil when x is NaN or infinite.
func finite(x float64) *num {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	n := num(x)
	return &n
}

// MarshalJSON writes the value with NaN bounds of its interval as null.
func (v ObservedValue) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Site     string  `json:"site"`
		Value    float64 `json:"value"`
		CILow    num     `json:"ci_low"`
		CIHigh   num     `json:"ci_high"`
		Censored int     `json:"censored"`
	}{v.Site, v.Value, num(v.CILow), num(v.CIHigh), v.Censored})
}

// MarshalJSON writes the cell with a NaN p-value (no permutations) as
// null.
func (v DeltaValue) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Step    int     `json:"step"`
		Cluster string  `json:"cluster"`
		Delta   float64 `json:"delta"`
		PValue  num     `json:"p_value"`
	}{v.Step, v.Cluster, v.Delta, num(v.PValue)})
}
