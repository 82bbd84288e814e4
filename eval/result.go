package eval

import "encoding/json"

// Result is an evaluation as it is reported (grmdp eval --json and the
// result of a federated evaluation): the report of the policy named
// Policy, with what its caller adds. It marshals itself as one JSON
// object, a value that is NaN (not computed) as null.
type Result struct {
	// Policy names the policy evaluated (its file) and Method its method.
	Policy, Method string
	*Report
	// Settings are the settings the evaluation records.
	Settings map[string]string
	// Exact holds the values under a known model (nil without one).
	Exact *ExactValues
	// Agreement is the policy's agreement with the data's recorded
	// actions (nil when unknown).
	Agreement *Agreement
	// InSample says that the policy was learned from the evaluated rows,
	// and Sample says so in a line ("" when it was not).
	InSample bool
	Sample   string
	// Federated describes a federated evaluation (nil for one from
	// rows).
	Federated *Federated
	// CensoredBy names, in the text (WriteText), what cut the censored
	// episodes ("": the truncate rule for NULL states); JSON leaves it
	// out.
	CensoredBy string
}

// Federated says how a federated evaluation was computed: its job, its
// rounds and the bytes of their messages, what sums cannot give and was
// left out, and notes on what differs from an evaluation from rows.
type Federated struct {
	Job     string   `json:"job"`
	Rounds  int      `json:"rounds"`
	Bytes   int64    `json:"bytes"`
	LeftOut []string `json:"left_out"`
	Notes   []string `json:"notes"`
}

// MarshalJSON writes the policy and its method, the report's values (see
// [Report.MarshalJSON]), Delta_h with its sum and yardstick (null without
// Delta_h), the bootstrap and permutation settings, the exact values under
// a model, the settings, the observed care, the warnings, the notes and
// the return range, the agreement, whether the evaluation is in sample
// and, for a federated evaluation, how it was computed. A federated
// evaluation's notes are under "federated", and its top-level notes and
// return range are null.
func (r *Result) MarshalJSON() ([]byte, error) {
	doc := struct {
		Policy string `json:"policy"`
		Method string `json:"method"`
		reportValues
		Delta         []DeltaValue `json:"delta"`
		DeltaSum      *num         `json:"delta_sum"`
		Yardstick     *num         `json:"yardstick"`
		Bootstrap     int          `json:"bootstrap"`
		Permutations  int          `json:"permutations"`
		Seed          uint64       `json:"seed"`
		OptimalValue  *num         `json:"optimal_value,omitempty"`
		RobustValue   *num         `json:"robust_value,omitempty"`
		Suboptimality *num         `json:"suboptimality,omitempty"`
		// ValueGap is null for policies without a value estimate
		// (pevi-avg, pevi-min, behaviour).
		ValueGap    *num              `json:"value_gap,omitempty"`
		ModelStates int               `json:"model_states,omitempty"`
		Settings    map[string]string `json:"settings"`
		Observed    []ObservedValue   `json:"observed"`
		Warnings    []string          `json:"warnings"`
		Notes       []string          `json:"notes"`
		ReturnRange []float64         `json:"return_range"`
		Agreement   *Agreement        `json:"agreement"`
		InSample    bool              `json:"in_sample"`
		Federated   *Federated        `json:"federated,omitempty"`
	}{Policy: r.Policy, Method: r.Method, reportValues: r.values(), Delta: nonNil(r.Delta), Bootstrap: r.Bootstrap, Permutations: r.Permutations,
		Seed: r.Seed, Settings: r.Settings, Observed: nonNil(r.Observed), Warnings: nonNil(r.Warnings), Agreement: r.Agreement,
		InSample: r.InSample, Federated: r.Federated}
	if len(r.Delta) > 0 {
		doc.DeltaSum, doc.Yardstick = finite(r.DeltaSum), finite(r.Yardstick)
	}
	if x := r.Exact; x != nil {
		gap := num(x.ValueGap)
		doc.OptimalValue, doc.RobustValue, doc.Suboptimality, doc.ValueGap = finite(x.OptimalValue), finite(x.PolicyValue), finite(x.Suboptimality), &gap
		doc.ModelStates = x.States
	}
	if r.Federated == nil {
		doc.Notes, doc.ReturnRange = nonNil(r.Notes), []float64{r.ReturnLo, r.ReturnHi}
	}
	return json.Marshal(doc)
}

// nonNil returns s, or an empty slice for nil (written as [] rather than
// null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalJSON writes the agreement with its shares NaN for no rows as
// null.
func (a *Agreement) MarshalJSON() ([]byte, error) {
	type site struct {
		Site       string  `json:"site"`
		Rows       float64 `json:"rows"`
		Agreement  num     `json:"agreement"`
		NoEvidence num     `json:"no_evidence"`
	}
	doc := struct {
		Rows       float64 `json:"rows"`
		Agreement  num     `json:"agreement"`
		NoEvidence num     `json:"no_evidence"`
		Sites      []site  `json:"sites"`
	}{a.Rows, num(a.Share), num(a.NoEvidence), []site{}}
	for _, s := range a.Sites {
		doc.Sites = append(doc.Sites, site{s.Site, s.Rows, num(s.Share), num(s.NoEvidence)})
	}
	return json.Marshal(doc)
}
