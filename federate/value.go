package federate

// The value round: after the last backward round each site evaluates the
// job's runs at its own rows with the coefficients the state now holds and
// sends the sums that a central solve's value estimate and diagnostics are
// made of (solve.Solver.SiteValues, the driver's own value sweep).

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/grmdp/grmdp/solve"
)

// Round kinds of a message (Message.Kind); "" is a solve round.
const (
	KindValue = "value"
	KindEval  = "eval"
)

// ValueSums is the value round's result, per site in the state's Order.
type ValueSums struct {
	// V1 and Rows are the sum of Vhat_1 over the site's step-1 rows and
	// their number, for the job's one run (empty for pevi-avg, pevi-min
	// and behaviour, whose value a central solve does not estimate
	// either); Released[k] is false for a site that withheld them.
	V1       []float64 `json:"v1,omitempty"`
	Rows     []float64 `json:"rows,omitempty"`
	Released []bool    `json:"released,omitempty"`
	// NoEvidence is each site's number of rows (every step) whose decision
	// has no evidence; NoEvidenceReleased[k] is false for a site that
	// withheld it (a count below the job's min count).
	NoEvidence         []float64 `json:"no_evidence,omitempty"`
	NoEvidenceReleased []bool    `json:"no_evidence_released,omitempty"`
	// Coverage[k][i] counts site k's released rows (every step) whose
	// feature i is nonzero.
	Coverage [][]float64 `json:"coverage"`
}

// valueRuns names the runs the value round evaluates: the job's one run
// when the method has a value estimate.
func valueRuns(j *Job) []string {
	switch j.Method {
	case solve.Behaviour, solve.PEVIAvg, solve.PEVIMin:
		return nil
	}
	return []string{"all"}
}

// released returns the fewest rows a sum over a site's rows may come from:
// the larger of the min rows and the min count.
func releasedFrom(dc solve.Disclosure) int { return max(dc.MinRows, dc.MinCount) }

// valueMessage computes site's message for the value round: per value
// run, the sum of Vhat_1 over its step-1 rows and their number ("value"),
// its rows without evidence over every step ("no_evidence") and its
// released feature counts over every step ("coverage"). A site with fewer
// step-1 rows than the larger of min rows and min count withholds the
// value sums; a no-evidence count below min count (and above 0) is
// withheld too. The coverage sums released counts, each 0 or at least the
// min count.
func valueMessage(ctx context.Context, j *Job, s *State, in SiteInput) (*Message, error) {
	st := in.Stats
	t := st.Table
	dc := st.Disclosure()
	tot, err := totalsOf(st, in.StepRows)
	if err != nil {
		return nil, err
	}
	m := &Message{FormatVersion: FormatVersion, JobID: j.ID, Round: s.Round, Step: 0, Kind: KindValue, Site: in.Site, Map: j.Map,
		Numeric: in.Numeric, Trajectories: tot.Trajectories, Rows: tot.Rows, Weighted: tot.Weighted, Disclosure: dc, Sources: in.Sources}
	m.StepRows = float64(t.Steps[0].Len())
	runs := valueRuns(j)
	var passes []solve.Pass
	var coefs [][]*solve.StepCoef
	for _, name := range runs {
		run := s.run(name)
		if run == nil {
			return nil, refusef("the job's state lacks run %s", name)
		}
		passes = append(passes, solve.Pass{Name: name, Groups: [][]int{{0}}, PEVI: run.PEVI, Beta: run.Beta})
		coefs = append(coefs, run.Steps)
	}
	noev := 0.0
	if len(passes) > 0 {
		sums, err := solve.NewSolver(st, settingsOf(j)).SiteValues(ctx, passes, coefs, true)
		if err != nil {
			return nil, err
		}
		for i, name := range runs {
			m.Runs = append(m.Runs, name)
			if t.Steps[0].Len() < releasedFrom(dc) {
				m.Withheld = append(m.Withheld, "value "+name)
			} else {
				m.Extra = append(m.Extra, Vec{"value", int32(i), []float64{sums[i].V1[0], sums[i].Rows[0]}})
			}
		}
		for _, x := range sums[0].NoEvidence {
			noev += x[0]
		}
	}
	switch j.Method {
	case solve.Behaviour:
		// Behaviour cloning always has its decision.
	case solve.PEVIAvg, solve.PEVIMin:
		// A combined policy's decisions, at every row of the site (a
		// central solve samples every stride-th row of tables over
		// solve.SampleRows rows).
		p, err := policyOf(j, s)
		if err != nil {
			return nil, err
		}
		_, ev, err := solve.ActAll(ctx, p, t, 0, 1)
		if err != nil {
			return nil, err
		}
		for _, e := range ev {
			if !e {
				noev++
			}
		}
	}
	if small(noev, float64(t.Rows), dc.MinCount) || small(noev, float64(tot.Rows), dc.MinCount) {
		m.Withheld = append(m.Withheld, "no_evidence")
	} else {
		m.Extra = append(m.Extra, Vec{"no_evidence", 0, []float64{noev}})
	}
	m.Extra = append(m.Extra, Vec{"coverage", 0, slices.Clone(solve.Coverage(st)[0])})
	m.seal()
	return m, nil
}

// extraVector reports whether a vector of that name belongs in a message
// of that kind.
func extraVector(kind, name string) bool {
	switch kind {
	case KindValue:
		return name == "value" || name == "no_evidence" || name == "coverage"
	case KindEval:
		return slices.Contains(evalVectors, name)
	}
	return false
}

// vector returns the message's extra vector name, index i, or nil.
func (m *Message) vector(name string, i int32) []float64 {
	for _, v := range m.Extra {
		if v.Name == name && v.Index == i {
			return v.Values
		}
	}
	return nil
}

// foldValue folds the value round: every site once, each for this job and
// round, with its vectors of the job's sizes.
func foldValue(j *Job, s *State, in []Incoming) (*State, error) {
	r := s.Round
	bySite, err := checkRound(j, s, in, KindValue)
	if err != nil {
		return nil, err
	}
	runs := valueRuns(j)
	d := j.Map.Dim()
	K := len(s.Order)
	v := &ValueSums{Coverage: make([][]float64, K)}
	if len(runs) > 0 {
		v.V1, v.Rows, v.Released = make([]float64, K), make([]float64, K), make([]bool, K)
	}
	v.NoEvidence, v.NoEvidenceReleased = make([]float64, K), make([]bool, K)
	for k, site := range s.Order {
		inc := bySite[site]
		m := inc.Msg
		if !slices.Equal(m.Runs, runs) {
			return nil, refusef("%s: message carries runs %v, the value round's are %v", inc.File, m.Runs, runs)
		}
		cov := m.vector("coverage", 0)
		if len(cov) != d {
			return nil, refusef("%s: coverage has %d values, the job's map needs %d", inc.File, len(cov), d)
		}
		v.Coverage[k] = cov
		if x := m.vector("no_evidence", 0); x != nil {
			if len(x) != 1 || !finite(x) || x[0] < 0 {
				return nil, refusef("%s: the no-evidence count %v is not a count", inc.File, x)
			}
			v.NoEvidence[k], v.NoEvidenceReleased[k] = x[0], true
		}
		if len(runs) == 0 {
			continue
		}
		if x := m.vector("value", 0); x != nil {
			if len(x) != 2 || !finite(x) || x[1] < 0 {
				return nil, refusef("%s: the value sums %v are not a sum and a row count", inc.File, x)
			}
			v.V1[k], v.Rows[k], v.Released[k] = x[0], x[1], true
		} else if !slices.Contains(m.Withheld, "value all") {
			return nil, refusef("%s: corrupted: the value sums are neither sent nor withheld", inc.File)
		}
	}
	next := cloneState(s)
	next.Value = v
	next.addProvenance(r, bySite)
	next.Round++
	return next, nil
}

// checkRound checks that in holds one message of the given kind ("" for
// a solve round) for the state's round from every site of the job, each
// for this job, round and map, under at least the job's thresholds, from
// the data of round 0 (after round 0), and returns them by site.
func checkRound(j *Job, s *State, in []Incoming, kind string) (map[string]*Incoming, error) {
	r := s.Round
	bySite := map[string]*Incoming{}
	for i := range in {
		m, name := in[i].Msg, in[i].File
		switch {
		case m.JobID != j.ID:
			return nil, refusef("%s: message for job %s, this is job %s", name, m.JobID, j.ID)
		case m.Kind != kind:
			return nil, refusef("%s: a message of a %s round (round %d), the job is at a %s round (round %d)", name, kindName(m.Kind), m.Round, kindName(kind), r)
		case m.Round != r:
			return nil, refusef("%s: message for round %d, the job is at round %d", name, m.Round, r)
		case !contains(j.Sites, m.Site):
			return nil, refusef("%s: message from site %q, which is not one of the job's sites %v", name, m.Site, j.Sites)
		case bySite[m.Site] != nil:
			return nil, refusef("%s: site %q sent twice this round (also %s)", name, m.Site, bySite[m.Site].File)
		case m.Disclosure.MinCount < j.Disclosure.MinCount || m.Disclosure.MinRows < j.Disclosure.MinRows:
			return nil, refusef("%s: site %q applied min count %d and min rows %d, below the job's %d and %d", name, m.Site,
				m.Disclosure.MinCount, m.Disclosure.MinRows, j.Disclosure.MinCount, j.Disclosure.MinRows)
		case !sameMap(&m.Map, &j.Map):
			return nil, refusef("%s: message for a %s map with A = %d, the job's is %s with A = %d", name, m.Map.Kind, m.Map.A, j.Map.Kind, j.Map.A)
		}
		bySite[m.Site] = &in[i]
	}
	var missing []string
	for _, site := range j.Sites {
		if bySite[site] == nil {
			missing = append(missing, site)
		}
	}
	if len(missing) > 0 {
		return nil, refusef("round %d: no message from site %v", r, missing)
	}
	for k, site := range s.Order {
		m := bySite[site].Msg
		if m.Numeric != s.Numeric || m.Trajectories != s.Trajectories[k] || m.Rows != s.Rows[k] {
			return nil, refusef("%s: site %q's data changed since round 0 (trajectories %d, rows %d; then %d, %d)",
				bySite[site].File, site, m.Trajectories, m.Rows, s.Trajectories[k], s.Rows[k])
		}
	}
	for i := range in {
		if err := checkSources(in[i].File, s, in[i].Msg); err != nil {
			return nil, err
		}
		if err := checkReleased(in[i].File, j, in[i].Msg); err != nil {
			return nil, err
		}
	}
	return bySite, nil
}

func kindName(kind string) string {
	switch kind {
	case "":
		return "solve"
	case KindEval:
		return "evaluation"
	}
	return kind
}

func finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// addProvenance records the round's messages in site order.
func (s *State) addProvenance(r int, bySite map[string]*Incoming) {
	for _, site := range s.Order {
		inc := bySite[site]
		s.Messages = append(s.Messages, Provenance{Round: r, Site: site, File: inc.File, SHA256: inc.SHA256,
			Checksum: inc.Msg.Checksum, Bytes: inc.Bytes, StepRows: inc.Msg.StepRows, Sources: inc.Msg.Sources})
	}
}

// Diagnose returns the job's value estimate and the diagnostics of a
// central solve that sums make: the share of decisions without evidence
// (overall and per site; only for the methods whose central diagnostics
// take it from the backward pass), the features a site never observes,
// the (site, step) cells that released no rows, and the condition numbers
// of every Lambda_h^g. The penalty's share of the value range is left out
// (nil): a central solve samples it at every 8th row of the whole table,
// which no site can reproduce. notes says what differs from a central
// solve (withheld sums).
func Diagnose(j *Job, s *State, p *solve.Policy) (value float64, dg *solve.Diagnostics, notes []string) {
	v := s.Value
	value = math.NaN()
	K := len(s.Order)
	if v == nil {
		return value, nil, nil
	}
	noev := make([]float64, K)
	rows := make([]float64, K)
	var withheldV, withheldN []string
	if len(v.V1) == K {
		sum, n := 0.0, 0.0
		for k := range s.Order {
			if v.Released[k] {
				sum += v.V1[k]
				n += v.Rows[k]
			} else {
				withheldV = append(withheldV, s.Order[k])
			}
		}
		if n > 0 {
			value = sum / n
		}
	}
	for k := range s.Order {
		rows[k] = float64(s.Rows[k])
		if v.NoEvidenceReleased[k] {
			noev[k] = v.NoEvidence[k]
		} else {
			withheldN = append(withheldN, s.Order[k])
		}
	}
	var empty []solve.Cell
	for h := 1; h <= j.H; h++ {
		for _, pr := range s.Messages {
			if pr.Round == j.H-h && pr.StepRows == 0 {
				empty = append(empty, solve.Cell{Site: pr.Site, Step: h})
			}
		}
	}
	dg = solve.DiagnoseSums(p, s.Order, j.H, noev, rows, v.Coverage, empty)
	if len(withheldV) > 0 {
		notes = append(notes, fmt.Sprintf("the value estimate is over the initial states of the sites that released their sums: sites %v have fewer than %d step-1 rows", withheldV, releasedFrom(j.Disclosure)))
	}
	if len(withheldN) > 0 {
		notes = append(notes, fmt.Sprintf("sites %v withheld their number of decisions without evidence (fewer than %d): it counts as 0 in the shares", withheldN, j.Disclosure.MinCount))
		for _, site := range withheldN {
			delete(dg.NoEvidenceBySite, site)
		}
	}
	return value, dg, notes
}
