package federate

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Policy returns the job's policy once every round is folded: the same
// fields a central solve of the method sets, with one source per folded
// message (its site, round and SHA-256) and per site data file.
func Policy(j *Job, s *State) (*solve.Policy, error) {
	if !s.Done(j) {
		return nil, fmt.Errorf("federate: job %s is at round %d of %d: the policy comes after the last round", j.ID, s.Round, j.Rounds())
	}
	p, err := policyOf(j, s)
	if err != nil {
		return nil, err
	}
	p.ValueEstimate, _, _ = Diagnose(j, s, p)
	return p, nil
}

// policyOf returns the policy of the runs solved so far (every step is
// solved once the last solve round is folded).
func policyOf(j *Job, s *State) (*solve.Policy, error) {
	p := &solve.Policy{Method: j.Method, Map: j.Map, H: j.H, D: j.Map.Dim(), A: j.Map.A, Lambda: j.Lambda, C: j.C, Xi: j.Xi,
		BetaGiven: j.BetaGiven, Fallback: j.Fallback, ValueEstimate: math.NaN(), BehaviourAction: behaviourTables(s),
		EvidenceCounts: evidenceCounts(j, s), ActionLabels: j.Rules.ActionLabels}
	if p.Fallback == "" {
		p.Fallback = solve.FallbackBehaviour
	}
	for _, b := range s.Blocks {
		p.BlockLabels = append(p.BlockLabels, int(b))
	}
	rows := 0
	for k := range s.Order {
		rows += s.Rows[k]
	}
	p.Rows = rows
	pl, err := planOf(j, s.Order, s.Trajectories)
	if err != nil {
		return nil, err
	}
	p.Groups = pl.Groups
	for _, r := range s.Runs {
		steps := make([]solve.StepCoef, j.H)
		for h, c := range r.Steps {
			steps[h] = *c
			if h < len(r.Cond) {
				steps[h].Cond = r.Cond[h]
			}
		}
		p.Runs = append(p.Runs, solve.PolicyRun{Group: r.Name, Beta: r.Beta, Steps: steps})
	}
	if len(p.Runs) > 0 {
		p.Beta = p.Runs[0].Beta
	}
	seen := map[string]bool{}
	for _, m := range s.Messages {
		p.Sources = append(p.Sources, traj.Source{Path: "message: site " + m.Site + ", round " + strconv.Itoa(m.Round) + ", " + m.File,
			Size: m.Bytes, Fingerprint: m.SHA256, Rows: int64(m.StepRows)})
		for _, src := range m.Sources {
			key := m.Site + "\x00" + src.Fingerprint
			if seen[key] {
				continue
			}
			seen[key] = true
			src.Path = "site " + m.Site + " data: " + src.Path
			p.Sources = append(p.Sources, src)
		}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

// behaviourTables returns the policy's behaviour tables: the folded ones
// completed with the most frequent action over all steps where a step has
// no counts (solve.CompleteBehaviour), once every step's counts are
// folded; the folded ones before, and in a job whose state does not keep
// the counts.
func behaviourTables(s *State) [][]int32 {
	a := s.BehaviourActions
	if len(a) != len(s.Behaviour) || slices.ContainsFunc(a, func(c []float64) bool { return c == nil }) {
		return s.Behaviour
	}
	return solve.CompleteBehaviour(s.Behaviour, a)
}
