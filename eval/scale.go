package eval

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/traj"
)

// Range is the range [Lo, Hi] of an episode's total reward. The zero
// Range means "not stated": [0, H RewardMax].
type Range struct {
	Lo, Hi float64
}

// IsZero reports whether r is the zero Range.
func (r Range) IsZero() bool { return r.Lo == 0 && r.Hi == 0 }

// Check returns an error unless r is zero or a finite range with Lo < Hi
// inside the values rewards in [0, RewardMax] over H steps can reach.
func (r Range) Check() error {
	if r.IsZero() {
		return nil
	}
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0) || r.Lo >= r.Hi {
		return fmt.Errorf("eval: return range [%g, %g]: want finite LO < HI", r.Lo, r.Hi)
	}
	if r.Lo < 0 {
		return fmt.Errorf("eval: return range [%g, %g]: rewards lie in [0, %g], so a return is never below 0", r.Lo, r.Hi, RewardMax)
	}
	return nil
}

// ParseRange reads a range "LO,HI" and checks it ([Range.Check]); ""
// is the zero Range.
func ParseRange(s string) (Range, error) {
	if s == "" {
		return Range{}, nil
	}
	var r Range
	lo, hi, ok := strings.Cut(s, ",")
	var err1, err2 error
	if ok {
		r.Lo, err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
		r.Hi, err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
	}
	if !ok || err1 != nil || err2 != nil {
		return Range{}, fmt.Errorf("eval: return range %q: want LO,HI, two numbers", s)
	}
	if err := r.Check(); err != nil {
		return Range{}, fmt.Errorf("eval: return range %s: %s", s, strings.TrimPrefix(err.Error(), "eval: return range "))
	}
	return r, nil
}

// returnRange returns the range the report uses: r when stated, else
// [0, H RewardMax].
func returnRange(r Range, H int) Range {
	if !r.IsZero() {
		return r
	}
	return Range{0, float64(H) * RewardMax}
}

// clamp returns x clipped into [r.Lo, r.Hi] (NaN stays NaN).
func (r Range) clamp(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	return min(max(x, r.Lo), r.Hi)
}

// clip clips every interval and bound of the report into its return
// range: a value's interval or bound outside the range says nothing the
// range does not. Point estimates are left as they are (an estimate
// outside the range is then outside its interval, which flag warns about).
func (r *Report) clip() {
	g := Range{r.ReturnLo, r.ReturnHi}
	est := func(e *Estimate) { e.CILow, e.CIHigh = g.clamp(e.CILow), g.clamp(e.CIHigh) }
	r.ValueCILow, r.ValueCIHigh = g.clamp(r.ValueCILow), g.clamp(r.ValueCIHigh)
	r.Lower, r.Upper = g.clamp(r.Lower), g.clamp(r.Upper)
	r.BoundsCILow, r.BoundsCIHigh = g.clamp(r.BoundsCILow), g.clamp(r.BoundsCIHigh)
	for k := range r.Sites {
		s := &r.Sites[k]
		s.CILow, s.CIHigh = g.clamp(s.CILow), g.clamp(s.CIHigh)
		s.Lower, s.Upper = g.clamp(s.Lower), g.clamp(s.Upper)
		s.BoundsCILow, s.BoundsCIHigh = g.clamp(s.BoundsCILow), g.clamp(s.BoundsCIHigh)
		for name, e := range s.Estimates {
			est(&e)
			s.Estimates[name] = e
		}
	}
	for k := range r.Observed {
		o := &r.Observed[k]
		o.CILow, o.CIHigh = g.clamp(o.CILow), g.clamp(o.CIHigh)
	}
	if r.Worst != nil {
		est(&r.Worst.Estimate)
		for name, e := range r.Worst.Estimates {
			est(&e.Estimate)
			r.Worst.Estimates[name] = e
		}
	}
}

// observedSpan returns the smallest and largest return of t's uncensored
// trajectories of positive weight (NaN, NaN when there are none).
func observedSpan(t *traj.Table) (lo, hi float64) {
	n := 0
	for _, k := range t.Trajectories {
		n += k
	}
	ret, seen := make([]float64, n), make([]bool, n)
	for h := range t.Steps {
		s := &t.Steps[h]
		for j, x := range s.Traj {
			if x < 0 || int(x) >= n {
				continue
			}
			ret[x] += s.Reward[j]
			if h == 0 && returnWeight(t, nil, s, j) > 0 {
				seen[x] = true
			}
		}
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, ok := range seen {
		if ok {
			lo, hi = min(lo, ret[i]), max(hi, ret[i])
		}
	}
	if lo > hi {
		return math.NaN(), math.NaN()
	}
	return lo, hi
}

// setScale records the return range and, when it was not stated and every
// observed return lies in a span narrower than IdentifiedShare of it,
// notes that the range should be stated.
func (r *Report) setScale(t *traj.Table, stated Range) {
	g := returnRange(stated, t.H)
	r.ReturnLo, r.ReturnHi, r.ReturnRangeStated = g.Lo, g.Hi, !stated.IsZero()
	if r.ReturnRangeStated {
		return
	}
	lo, hi := observedSpan(t)
	if !math.IsNaN(lo) && hi-lo < IdentifiedShare*(g.Hi-g.Lo) {
		r.Notes = append(r.Notes, fmt.Sprintf("every observed return lies in [%.4g, %.4g], narrower than %g%% of the assumed return range [%g, %g] (H steps of rewards in [0, %g]): "+
			"state the range of an episode's total reward with --return-range LO,HI (for a 0/1 outcome, --return-range 0,1), "+
			"so that the bounds, the intervals and \"identified\" use it", lo, hi, 100*IdentifiedShare, g.Lo, g.Hi, RewardMax))
	}
}
