package federate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// Incoming is a message read from a file, with the file's provenance.
type Incoming struct {
	File   string
	Bytes  int64
	SHA256 string
	Msg    *Message
}

// Fold checks one round's messages and folds them into the state: every
// expected site exactly once, each for this job, round and step, under at
// least the job's thresholds, with the job's sizes. It returns the next
// state and leaves s unchanged; any refusal is an error wrapping
// ErrRefused.
func Fold(ctx context.Context, j *Job, s *State, in []Incoming) (*State, error) {
	if s.Done(j) {
		return nil, refusef("job %s is finished (all %d rounds folded)", j.ID, j.Rounds())
	}
	r := s.Round
	if j.ValueRound(r) {
		return foldValue(j, s, in)
	}
	h := j.StepOf(r)
	layout, bySite, from, err := checkSolveRound(j, s, in, h)
	if err != nil {
		return nil, err
	}
	next := cloneState(s)
	if r == 0 {
		if err := next.start(j, bySite); err != nil {
			return nil, err
		}
	}
	if j.Map.Kind == features.Precomputed {
		next.Blocks = labelsOf(layout)
	}
	K := len(next.Order)
	grams := make([][]solve.Gram, K)
	for k, site := range next.Order {
		grams[k] = gramsOf(j, bySite[site].Msg, from[site], layout)
	}
	pl, err := planOf(j, next.Order, next.Trajectories)
	if err != nil {
		return nil, err
	}
	rd := solve.Round{Passes: pl.Passes, Settings: settingsOf(j)}
	coefs, err := rd.Solve(ctx, layout, h, solve.RoundSums{Grams: grams, RHS: rhsOf(next.Order, bySite, pl.Passes)})
	if err != nil {
		return nil, err
	}
	for i, c := range coefs {
		run := &next.Runs[i]
		if !finite(c.W) {
			return nil, refusef("round %d: run %s's coefficients are not finite: a message holds a non-finite sum", r, run.Name)
		}
		run.Steps[h-1] = c
		if run.Cond == nil {
			run.Cond = make([][]float64, j.H)
		}
		run.Cond[h-1] = c.Cond
	}
	tab, acts := behaviourOf(j, next.Order, bySite)
	next.Behaviour[h-1] = tab
	if next.BehaviourActions != nil {
		next.BehaviourActions[h-1] = acts
	}
	foldEvidence(j, next, h, bySite)
	next.addProvenance(r, bySite)
	next.Round++
	return next, nil
}

// checkSolveRound checks a solve round's messages (checkRound, then each
// message's step, runs and sizes) and returns the round's Gram layout, the
// messages by site and the layout each site's Gram is packed in.
func checkSolveRound(j *Job, s *State, in []Incoming, h int) (*solve.Layout, map[string]*Incoming, map[string]*solve.Layout, error) {
	var msgs []*Message
	for i := range in {
		msgs = append(msgs, in[i].Msg)
	}
	layout, err := jobLayout(j, s, msgs)
	if err != nil {
		return nil, nil, nil, err
	}
	bySite, err := checkRound(j, s, in, "")
	if err != nil {
		return nil, nil, nil, err
	}
	from := map[string]*solve.Layout{}
	for i := range in {
		m, name := in[i].Msg, in[i].File
		switch {
		case m.Step != h:
			return nil, nil, nil, refusef("%s: message for step %d, the job is at step %d (round %d)", name, m.Step, h, s.Round)
		case !slices.Equal(m.Runs, siteRuns(j, m.Site)):
			return nil, nil, nil, refusef("%s: message carries runs %v, the job's are %v", name, m.Runs, siteRuns(j, m.Site))
		}
		ml, err := msgLayout(name, j, m, layout)
		if err != nil {
			return nil, nil, nil, err
		}
		if err := m.checkShape(name, j, ml); err != nil {
			return nil, nil, nil, err
		}
		from[m.Site] = ml
	}
	return layout, bySite, from, nil
}

// behaviourOf returns the behaviour table of the round's step from the
// sites' action counts, summed in site order, and the step's counts per
// action (solve.BehaviourTable).
func behaviourOf(j *Job, order []string, bySite map[string]*Incoming) ([]int32, []float64) {
	S, discrete := solve.BehaviourCells(&j.Map)
	var sum []float64
	for _, site := range order {
		b := bySite[site].Msg.Behaviour
		if sum == nil {
			sum = make([]float64, len(b))
		}
		for i, v := range b {
			sum[i] += v
		}
	}
	return solve.BehaviourTable(sum, S, j.Map.A, discrete)
}

// rhsOf returns each pass's right-hand side per site in order, from the
// round's messages (nil for a site outside the pass).
func rhsOf(order []string, bySite map[string]*Incoming, passes []solve.Pass) [][][]float64 {
	out := make([][][]float64, len(passes))
	for i, pass := range passes {
		out[i] = make([][]float64, len(order))
		for k, site := range order {
			m := bySite[site].Msg
			if at := slices.Index(m.Runs, pass.Name); at >= 0 {
				out[i][k] = m.RHS[at]
			}
		}
	}
	return out
}

// start sets round 0's facts: the site order, trajectory and row counts,
// and the runs with their penalty scales.
func (s *State) start(j *Job, bySite map[string]*Incoming) error {
	numeric := bySite[j.Sites[0]].Msg.Numeric
	for _, site := range j.Sites {
		if bySite[site].Msg.Numeric != numeric {
			return refusef("%s: site %q's site column is %s, site %q's is %s: every site must use one type", bySite[site].File, site,
				kindOf(bySite[site].Msg.Numeric), j.Sites[0], kindOf(numeric))
		}
	}
	order := slices.Clone(j.Sites)
	if numeric {
		var err error
		slices.SortFunc(order, func(a, b string) int {
			x, e1 := strconv.ParseInt(a, 10, 64)
			y, e2 := strconv.ParseInt(b, 10, 64)
			if e1 != nil || e2 != nil {
				err = fmt.Errorf("federate: site names %q, %q are not integers, but the site column is", a, b)
			}
			return cmpInt(x, y)
		})
		if err != nil {
			return err
		}
	} else {
		slices.Sort(order)
	}
	s.Order, s.Numeric = order, numeric
	s.Trajectories, s.Rows = make([]int, len(order)), make([]int, len(order))
	for k, site := range order {
		s.Trajectories[k], s.Rows[k] = bySite[site].Msg.Trajectories, bySite[site].Msg.Rows
	}
	pl, err := planOf(j, order, s.Trajectories)
	if err != nil {
		return err
	}
	runs := runsOf(j, pl, order)
	for _, r := range runs {
		if math.IsNaN(r.Beta) || math.IsInf(r.Beta, 0) {
			return fmt.Errorf("federate: the penalty beta is %v with c %g and xi %g: use a larger xi or a smaller c, or give beta", r.Beta, j.C, j.Xi)
		}
	}
	s.Runs = runs
	s.Behaviour = make([][]int32, j.H)
	s.BehaviourActions = make([][]float64, j.H)
	return nil
}

func kindOf(numeric bool) string {
	if numeric {
		return "integer"
	}
	return "string"
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// cloneState returns a deep enough copy of s for Fold to change.
func cloneState(s *State) *State {
	c := *s
	c.Order = slices.Clone(s.Order)
	c.Trajectories = slices.Clone(s.Trajectories)
	c.Rows = slices.Clone(s.Rows)
	c.Runs = make([]Run, len(s.Runs))
	for i, r := range s.Runs {
		c.Runs[i] = r
		c.Runs[i].Steps = slices.Clone(r.Steps)
		c.Runs[i].Cond = slices.Clone(r.Cond)
	}
	c.Behaviour = slices.Clone(s.Behaviour)
	c.BehaviourActions = slices.Clone(s.BehaviourActions)
	c.Evidence = slices.Clone(s.Evidence)
	c.Messages = slices.Clone(s.Messages)
	return &c
}
