package federate

import "github.com/grmdp/grmdp/solve"

// The evidence counts of a federated policy: for the maps whose features
// are indicators of (state cell, action) (solve.HasEvidenceCounts, with a
// diagonal layout), a central policy stores per step the number of rows
// across sites behind each feature (solve.Policy.EvidenceCounts, the
// diagonal of the pooled Gram under disclosure control), which grmdp show
// prints beside each decision. A site's message already carries its
// released counts (a feature counted at fewer than the job's min count is
// withheld and sent as 0, never as the number, as in its Gram); the
// coordinator sums them over sites, in the central solve's site order,
// into the state, and the policy takes them once every step is folded.

// hasEvidence reports whether the job's policy stores evidence counts.
func hasEvidence(j *Job) bool {
	b := j.Map.Blocks()
	return solve.HasEvidenceCounts(j.Map.Kind) && b.Diagonal()
}

// foldEvidence sets next.Evidence[h-1], step h's evidence counts: the
// released counts of the round's messages summed in next.Order.
func foldEvidence(j *Job, next *State, h int, bySite map[string]*Incoming) {
	if !hasEvidence(j) {
		return
	}
	if next.Evidence == nil {
		next.Evidence = make([][]float64, j.H)
	}
	sum := make([]float64, j.Map.Dim())
	for _, site := range next.Order {
		for i, c := range bySite[site].Msg.Counts {
			sum[i] += c
		}
	}
	next.Evidence[h-1] = sum
}

// evidenceCounts returns the policy's evidence counts, or nil when the
// map has none or a step's are missing (a state from before they were
// kept).
func evidenceCounts(j *Job, s *State) [][]float64 {
	if !hasEvidence(j) || len(s.Evidence) != j.H {
		return nil
	}
	for _, e := range s.Evidence {
		if len(e) != j.Map.Dim() {
			return nil
		}
	}
	return s.Evidence
}
