package dataset

import "testing"

// TestChooseNeedsGain: a learned candidate with the highest score is not
// chosen unless it beats the fallback at every site (gain above 0); among
// the eligible the highest score wins, the more pessimistic on ties.
func TestChooseNeedsGain(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cand := func(score, gain *float64) ScoredSettings {
		return ScoredSettings{C: f(0), Lambda: f(1), Score: score, Gain: gain}
	}
	fb := ScoredSettings{Candidate: Candidate{Fallback: true}, Score: f(0.2), Gain: f(0)}
	for _, tc := range []struct {
		name  string
		cands []ScoredSettings
		want  int
	}{
		{"higher score, no gain", []ScoredSettings{fb, cand(f(0.5), f(-0.1))}, 0},
		{"higher score, gain 0", []ScoredSettings{fb, cand(f(0.5), f(0))}, 0},
		{"gain, score below the fallback's", []ScoredSettings{fb, cand(f(0.1), f(0.05))}, 0},
		{"gain, no gain recorded", []ScoredSettings{fb, cand(f(0.5), nil)}, 0},
		{"gain and score", []ScoredSettings{fb, cand(f(0.3), f(0.05)), cand(f(0.6), f(-1)), cand(f(0.4), f(0.01))}, 3},
		{"tie to the earlier", []ScoredSettings{fb, cand(f(0.4), f(0.05)), cand(f(0.4), f(0.5))}, 1},
	} {
		s := &Selection{Candidates: tc.cands}
		s.choose()
		if s.Index != tc.want {
			t.Errorf("%s: chose %d, want %d", tc.name, s.Index, tc.want)
		}
	}
}
