package federate

// The coordinator's checks of what it folds, beyond the protocol's (job,
// round, site, sizes): what a site's rule can have released, silence,
// and the site's data staying the same between rounds. Each failure
// refuses the message, naming the file and the check, before anything is
// folded.

import (
	"fmt"
	"math"
	"slices"

	"github.com/grmdp/grmdp/traj"
)

// checkReleased refuses a message whose released quantities the job's
// disclosure control cannot have produced: every count of rows (the
// features', the bounds' cells') a whole number that is 0 or at least the
// job's min count; the action counts, coverage and decisions without
// evidence non-negative, and whole and 0 or at least the min count unless
// the site's rows are weighted (they are weighted sums then);
// for maps whose features are indicators, each Gram diagonal entry of the
// step equal to the feature's count (its weighted count for weighted
// rows: then zero where the count is, and zero or not where it is not,
// since a row of weight 0, such as a censored episode's last row, is
// counted and adds nothing); and a silent step's
// message holding no sums at all.
func checkReleased(name string, j *Job, m *Message) error {
	K := float64(j.Disclosure.MinCount)
	count := func(what string, xs []float64, whole bool) error {
		for i, x := range xs {
			switch {
			case math.IsNaN(x) || math.IsInf(x, 0) || x < 0:
				return refusef("%s: check counts: %s %d is %v, not a count", name, what, i, x)
			case whole && x != math.Trunc(x):
				return refusef("%s: check counts: %s %d is %v, not a whole number of rows", name, what, i, x)
			case whole && x > 0 && x < K:
				return refusef("%s: check counts: %s %d is %v, below the job's min count %v (a released count is 0 or at least %v)", name, what, i, x, K, K)
			}
		}
		return nil
	}
	if err := count("feature count", m.Counts, true); err != nil {
		return err
	}
	if err := count("action count", m.Behaviour, !m.Weighted); err != nil {
		return err
	}
	for _, v := range m.Extra {
		switch v.Name {
		case "bound_n":
			if err := count(v.Name, v.Values, true); err != nil {
				return err
			}
		case "coverage", "no_evidence":
			if err := count(v.Name, v.Values, !m.Weighted); err != nil {
				return err
			}
		}
	}
	if m.Silent {
		if m.StepRows != 0 || slices.ContainsFunc(m.Counts, nonzero) || slices.ContainsFunc(m.Behaviour, nonzero) ||
			slices.ContainsFunc(m.stepGram(j), nonzero) || slices.ContainsFunc(m.RHS, func(r []float64) bool { return slices.ContainsFunc(r, nonzero) }) {
			return refusef("%s: check silent: the message says step %d is silent at site %q, yet it holds sums", name, m.Step, m.Site)
		}
	}
	if hasEvidence(j) && len(m.Counts) == j.Map.Dim() {
		g := m.stepGram(j)
		l := layoutOf(j)
		for i, c := range m.Counts {
			at := l.Off[l.Blocks.Of[i]]
			if at >= len(g) {
				break
			}
			if x := g[at]; !m.Weighted && x != c || m.Weighted && x != 0 && c == 0 {
				return refusef("%s: check gram: the Gram's diagonal entry of feature %d is %v, its released count %v (for this map they are one number)", name, i, x, c)
			}
		}
	}
	return nil
}

func nonzero(x float64) bool { return x != 0 }

// stepGram returns the message's Gram of its own step: a stationary
// message holds every step's, in step order.
func (m *Message) stepGram(j *Job) []float64 {
	if len(m.GramRows) == 0 || m.Step < 1 || len(m.Gram)%j.H != 0 {
		return m.Gram
	}
	n := len(m.Gram) / j.H
	return m.Gram[(m.Step-1)*n : m.Step*n]
}

// checkSources refuses a message whose data files differ from those the
// site's first folded message of the job named (base name, size,
// fingerprint, rows): the site's data changed between rounds, whatever
// its totals say.
func checkSources(name string, s *State, m *Message) error {
	for _, pr := range s.Messages {
		if pr.Site != m.Site {
			continue
		}
		if !slices.EqualFunc(pr.Sources, m.Sources, func(a, b traj.Source) bool { return a == b }) {
			return refusef("%s: check data: site %q's data files changed since round %d (%s, then %s): every round must read the same data",
				name, m.Site, pr.Round, describeSources(m.Sources), describeSources(pr.Sources))
		}
		return nil
	}
	return nil
}

func describeSources(src []traj.Source) string {
	if len(src) == 0 {
		return "no files"
	}
	out := ""
	for i, s := range src {
		if i > 0 {
			out += ", "
		}
		fp := s.Fingerprint[:min(12, len(s.Fingerprint))]
		out += fmt.Sprintf("%s %d bytes %d rows fingerprint %s", s.Path, s.Size, s.Rows, fp)
	}
	return out
}
